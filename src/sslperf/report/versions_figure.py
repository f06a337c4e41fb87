"""versions.png: how cases moved from one version of a library to the next, from the one verdict rule.

The chain: a report's plain builds of one flavor in version order, one library per version (the first the
report names; variants and CPU masks are other questions, answered by the verdict table). Each
step between consecutive versions is `sslperf compare OLDER NEWER` over the same runs (summary.comparison):
its ratio, 95% CI, p and verdict. The cases drawn are chosen by a stated rule: the CASES with the largest
significant change in any step, largest first; a case that is a tie (~) in every step is left out. Those cases
are drawn in every step, a tie grey and marked ~; where a step could not be tested (one worker process, or
counts by different counters) no bar is drawn and the reason is written in its place."""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field

from matplotlib.patches import Patch

from sslperf.compare import Column
from sslperf.libs.versions import sort_key
from sslperf.report import summary
from sslperf.plotting import palette
from sslperf.plotting.mpl import Figure, save, subplots
from sslperf.results import Run
from sslperf.userfiles import Batch
from sslperf.verdict import DEFAULT_ALPHA, DEFAULT_THRESHOLD, SIGNIFICANT, SYMBOLS

CASES = 8


@dataclass
class Bar:
    case: str
    label: str
    step: tuple[str, str]              # (older library, newer library)
    verdict: str                       # "faster", "slower", "~" or "?" (no test: no bar)
    percent: float | None = None       # the change in rate, % (higher is faster)
    low: float | None = None           # its 95% CI, %
    high: float | None = None
    p: float | None = None
    evidence: str = ""                 # `p=0.012`, `exact`
    why: str = ""                      # why there is no bar

    @property
    def drawn(self) -> bool:
        """A bar is its change with its CI: none without a test, nor where the test gives no interval."""
        return self.verdict != "?" and self.low is not None and self.high is not None


@dataclass
class VersionChanges:
    """What versions.png draws."""
    steps: list[tuple[str, str]]
    cases: list[str]                   # chosen, largest significant change first
    labels: dict[str, str]
    bars: list[Bar] = field(default_factory=list)
    rule: str = ""
    untested: dict[tuple[str, str], str] = field(default_factory=dict)     # a step with no test at all: why


# Builds of a library's own defaults (an import's build is unknown); a named variant (fips, minimal …) is a
# question of its own, not a step in the version chain.
PLAIN_BUILDS = (None, "", "default", "unknown")


def chain(run: Run) -> list[list[str]]:
    """Per flavor, its plain builds in version order, one per version (the first the report names)."""
    by_flavor: dict[str, dict[str, str]] = {}
    for lib in run.libs:
        if lib.version and lib.variant in PLAIN_BUILDS:
            by_flavor.setdefault(lib.flavor or "", {}).setdefault(lib.version, lib.name)
    return [[versions[v] for v in sorted(versions, key=sort_key)] for _, versions in sorted(by_flavor.items())
            if len(versions) >= 2]


def _percent(ratio: float | None) -> float | None:
    return None if ratio is None else (ratio - 1) * 100


def _why(change) -> str:
    if change is None:
        return "not measured by both"
    if change.method == "different counters":
        return "no test: counted by different counters"
    return "no test: fewer than 3 samples or worker processes"


def version_changes(run: Run, metric: str = "wall", floors=None, originals: list[Run] | None = None,
                    count: int = CASES) -> VersionChanges | None:
    """The figure's data: per step of the chain, `compare`'s verdict on each chosen case; None without a
    step (no two versions of one flavor)."""
    lib_runs = run.settings.get("lib_runs") or {}
    steps = [(a, b) for libs in chain(run) for a, b in zip(libs, libs[1:])]
    if not steps:
        return None
    changes: dict[tuple[str, str], dict] = {}
    labels: dict[str, str] = {}
    for step in steps:
        cols = [Column(lib, lib_runs.get(lib, run.id), lib) for lib in step]
        result = summary.comparison(run, originals or [run], cols, metric, floors)
        changes[step] = {row.case: row.changes[1] for row in result.rows}
        labels.update({row.case: row.label for row in result.rows})
    size = {}
    for step in steps:
        for case, change in changes[step].items():
            if change is not None and change.verdict in SIGNIFICANT and change.ratio > 0:
                size[case] = max(size.get(case, 0.0), abs(math.log(change.ratio)))
    chosen = sorted(size, key=lambda case: -size[case])[:count]
    found = VersionChanges(steps, chosen, {c: labels[c] for c in chosen})
    for step in steps:
        if not changes[step]:
            found.untested[step] = "no case measured by both"
        elif all(c is None or c.verdict == "?" for c in changes[step].values()):
            found.untested[step] = _why(next((c for c in changes[step].values() if c is not None), None))
        for case in chosen:
            change = changes[step].get(case)
            if change is None or change.verdict == "?":
                found.bars.append(Bar(case, labels[case], step, "?", why=_why(change)))
                continue
            bar = Bar(case, labels[case], step, change.verdict, change.percent, _percent(change.low),
                      _percent(change.high), change.p, change.evidence())
            if not bar.drawn:      # runs without per-process records: a rank test on samples, no interval
                bar.why = (f"{change.symbol} {change.percent:+.1f}% {change.evidence()}, no CI: runs without "
                           "per-process records")
            found.bars.append(bar)
    found.rule = (f"the {len(chosen)} case{'s' if len(chosen) != 1 else ''} with the largest significant change "
                  f"between consecutive versions (at most {count}; cases that are ties in every step left out). "
                  f"Bars: change in rate with its 95% CI; verdict of `sslperf compare` (p < {DEFAULT_ALPHA} and beyond "
                  f"{DEFAULT_THRESHOLD:.0%} or the noise floor): ▲ faster, ▼ slower, ~ tie (grey)")
    return found


def draw(run: Run, files: Batch, formats: tuple[str, ...], metric: str = "wall", floors=None,
         originals: list[Run] | None = None) -> list[Figure]:
    found = version_changes(run, metric, floors, originals)
    if found is None:
        return []
    rows = max(len(found.cases), 1)
    # A library named without its version (system, a --lib-name) is labelled with it.
    named = {lib.name: lib.name if lib.version in lib.name else f"{lib.name} ({lib.version})" for lib in run.libs}
    width = 4.6 * len(found.steps) + 2.2
    fig, axes = subplots(1, len(found.steps), figsize=(width, 0.45 * rows + 2.2), squeeze=False, sharey=True,
                         sharex=True, layout="constrained")  # one scale for every step: a tie looks as small as it is
    for ax, step in zip(axes.flat, found.steps):
        ax.set_title(f"{named[step[0]]} → {named[step[1]]}", fontsize=9)
        ax.axvline(0, color="#555555", lw=0.8)
        ax.set_xlabel(f"change in rate, % ({metric} time; higher is faster)", fontsize=8)
        ax.grid(axis="x", alpha=0.3)
        if step in found.untested:
            ax.text(0.5, 0.5, found.untested[step], transform=ax.transAxes, ha="center", va="center", fontsize=8,
                    style="italic", color="#555555", wrap=True)
        for y, case in enumerate(found.cases):
            bar = next(b for b in found.bars if b.step == step and b.case == case)
            if not bar.drawn:
                if step not in found.untested:
                    ax.text(0, y, bar.why if bar.verdict != "?" else f"? {bar.why}", va="center", ha="left",
                            fontsize=7, style="italic", color="#555555")
                continue
            err = ([[bar.percent - bar.low], [bar.high - bar.percent]] if bar.low is not None
                   and bar.high is not None else None)
            ax.barh(y, bar.percent, xerr=err, capsize=3, color=palette.VERDICT[bar.verdict], height=0.6,
                    error_kw={"ecolor": "#222222", "lw": 1})
            ci = f" [{bar.low:+.1f}, {bar.high:+.1f}]" if bar.low is not None and bar.high is not None else ""
            # The figures on the other side of zero, where this row of this step has no bar.
            ax.annotate(f"{SYMBOLS[bar.verdict]} {bar.percent:+.1f}%{ci} {bar.evidence}", (0, y),
                        xytext=(-4 if bar.percent >= 0 else 4, 5), textcoords="offset points", fontsize=6.5,
                        ha="right" if bar.percent >= 0 else "left", va="center", color="#222222")
    reach = max([abs(v) for b in found.bars if b.drawn for v in (b.low, b.high, b.percent)] + [5.0])
    first = axes.flat[0]
    first.set_xlim(-1.15 * reach, 1.15 * reach)      # zero in the middle: room for the figures either side
    first.set_yticks(range(len(found.cases)))
    first.set_yticklabels([found.labels[c] for c in found.cases], fontsize=8)
    first.set_ylim(len(found.cases) - 0.5 if found.cases else 0.5, -0.7)
    if not found.cases:
        first.text(0.5, 0.5, "no case changed significantly between consecutive versions:\nevery case a tie (~) "
                   "or untested", transform=first.transAxes, ha="center", va="center", fontsize=9)
    handles = [Patch(facecolor=palette.VERDICT[v], label=f"{SYMBOLS[v]} {w}") for v, w in
               (("faster", "faster"), ("slower", "slower"), ("~", "tie"))]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=8)
    title = textwrap.wrap("Version over version: " + found.rule, int(width * 15))
    fig.suptitle("\n".join(title), fontsize=8.5)
    return [Figure("versions", "version over version", save(fig, files, "versions", formats))]
