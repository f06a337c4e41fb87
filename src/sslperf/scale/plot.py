"""A thread sweep's curves as PNG and SVG (matplotlib): per case and thread mode, the rate against the thread
count and the scaling efficiency against it, one line per library with its 95% intervals as error bars, in the
report's colour-blind-safe palette (report/palette.py) with a marker per library too. `sslperf scale --plot`
and `sslperf report` draw the same figures."""

from __future__ import annotations

import re
from pathlib import Path

from sslperf.plotting import palette
from sslperf.plotting.mpl import Figure, save, subplots
from sslperf.scale.sweep import Curve
from sslperf.userfiles import Batch

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def series(curve: Curve) -> dict:
    """What a curve is drawn from: thread counts, rates with their intervals, efficiencies with theirs (1 thread
    is 100% by definition, without an interval)."""
    pts = curve.points
    effs = [p.efficiency for p in pts]
    return {"threads": [p.threads for p in pts], "rate": [p.rate for p in pts],
            "rate_low": [p.ci[0] for p in pts], "rate_high": [p.ci[1] for p in pts],
            "efficiency": [1.0 if p.threads == 1 else (e.value if e else None) for p, e in zip(pts, effs)],
            "efficiency_low": [None if e is None or p.threads == 1 else e.low for p, e in zip(pts, effs)],
            "efficiency_high": [None if e is None or p.threads == 1 else e.high for p, e in zip(pts, effs)]}


def by_case(curves: list[Curve]) -> dict[tuple[str, str], list[Curve]]:
    """The curves of each (case, thread mode), libraries in the order they came."""
    found: dict[tuple[str, str], list[Curve]] = {}
    for curve in curves:
        if curve.points:
            found.setdefault((curve.case, curve.mode), []).append(curve)
    return found


def _figure(case: str, mode: str, found: list[Curve], libs: list[str]):
    fig, (top, bottom) = subplots(2, 1, figsize=(7, 7), sharex=True)
    for curve in found:
        index = libs.index(curve.lib) if curve.lib in libs else len(libs)
        data = series(curve)
        colour, marker = palette.series_colour(index), MARKERS[index % len(MARKERS)]
        top.errorbar(data["threads"], data["rate"],
                     yerr=[[r - lo for r, lo in zip(data["rate"], data["rate_low"])],
                           [hi - r for r, hi in zip(data["rate"], data["rate_high"])]],
                     label=curve.lib, color=colour, marker=marker, capsize=3)
        shown = [(n, e, lo, hi) for n, e, lo, hi in zip(data["threads"], data["efficiency"],
                                                           data["efficiency_low"], data["efficiency_high"])
                 if e is not None]
        bottom.errorbar([s[0] for s in shown], [100 * s[1] for s in shown],
                        yerr=[[100 * (s[1] - s[2]) if s[2] is not None else 0 for s in shown],
                              [100 * (s[3] - s[1]) if s[3] is not None else 0 for s in shown]],
                        color=colour, marker=marker, capsize=3, label=curve.lib)
    unit = "bytes/s" if found[0].points[0].unit == "bytes" else "operations/s"
    top.set_ylabel(f"all threads, {unit}")
    top.set_ylim(bottom=0)
    top.set_title(f"{case} [{mode}]: rate and scaling efficiency (95% intervals)", fontsize=9)
    bottom.axhline(100, color=palette.TIE, lw=0.8, ls="--")
    bottom.set_ylabel("efficiency, % (rate at N / (N × rate at 1))")
    bottom.set_xlabel("threads")
    bottom.set_xscale("log", base=2)
    counts = sorted({p.threads for c in found for p in c.points})
    bottom.set_xticks(counts, [str(n) for n in counts])
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return fig


def figures(curves: list[Curve], files: Batch, formats: tuple[str, ...] = ("png", "svg"),
            libs: list[str] | None = None) -> list[Figure]:
    """One figure per case and thread mode, added to `files` (nothing is written before all are checked)."""
    libs = libs or list(dict.fromkeys(c.lib for c in curves))
    made = []
    for (case, mode), found in by_case(curves).items():
        name = "scale-" + re.sub(r"[^a-z0-9]+", "-", f"{case}-{mode}".lower()).strip("-")
        made.append(Figure(name, f"{case} [{mode}] across threads",
                           save(_figure(case, mode, found, libs), files, name, formats)))
    return made


def draw(curves: list[Curve], out: Path, formats: tuple[str, ...] = ("png", "svg"), force: bool = False) -> list[Path]:
    """`sslperf scale --plot`: the figures written into `out`; the files written (all checked before the first)."""
    files = Batch(out, force)
    figures(curves, files, formats)
    return files.commit()
