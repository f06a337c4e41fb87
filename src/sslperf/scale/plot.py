"""A thread sweep's curves as PNG and SVG (matplotlib): per case, the rate against the thread count and the
scaling efficiency against it, one line per library with its 95% intervals as error bars, in a colour-blind-safe
palette (Okabe–Ito) with a marker per library too."""

from __future__ import annotations

import io
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from sslperf.scale.sweep import Curve  # noqa: E402
from sslperf.userfiles import Batch  # noqa: E402

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def series(curve: Curve) -> dict:
    """What a curve is drawn from: thread counts, rates with their intervals, efficiencies with theirs."""
    pts = curve.points
    effs = [p.efficiency for p in pts]
    return {"threads": [p.threads for p in pts], "rate": [p.rate for p in pts],
            "rate_low": [p.ci[0] for p in pts], "rate_high": [p.ci[1] for p in pts],
            "efficiency": [1.0 if p.threads == 1 else (e.value if e else None) for p, e in zip(pts, effs)],
            "efficiency_low": [None if e is None or p.threads == 1 else e.low for p, e in zip(pts, effs)],
            "efficiency_high": [None if e is None or p.threads == 1 else e.high for p, e in zip(pts, effs)]}


def draw(curves: list[Curve], out: Path, formats: tuple[str, ...] = ("png", "svg"), force: bool = False) -> list[Path]:
    """One figure per case and thread mode: rate (top) and efficiency (bottom) against threads; the files written
    (all checked before the first is)."""
    by_case: dict[tuple[str, str], list[Curve]] = {}
    for curve in curves:
        by_case.setdefault((curve.case, curve.mode), []).append(curve)
    files = Batch(out, force)
    for (case, mode), found in by_case.items():
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7), sharex=True)
        for index, curve in enumerate(found):
            data = series(curve)
            colour, marker = OKABE_ITO[index % len(OKABE_ITO)], MARKERS[index % len(MARKERS)]
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
        unit = "bytes/s" if found[0].points and found[0].points[0].unit == "bytes" else "operations/s"
        top.set_ylabel(f"all threads, {unit}")
        top.set_title(f"{case} [{mode}]: rate and scaling efficiency (95% intervals)", fontsize=9)
        bottom.axhline(100, color="#999999", lw=0.8, ls="--")
        bottom.set_ylabel("efficiency, %")
        bottom.set_xlabel("threads (one per CPU)")
        bottom.set_xscale("log", base=2)
        for ax in (top, bottom):
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        name = "scale-" + re.sub(r"[^a-z0-9]+", "-", f"{case}-{mode}".lower()).strip("-")
        for fmt in formats:
            buffer = io.BytesIO()
            fig.savefig(buffer, format=fmt, bbox_inches="tight", dpi=110 if fmt == "png" else None)
            files.add(f"{name}.{fmt}", buffer.getvalue())
        plt.close(fig)
    return files.commit()
