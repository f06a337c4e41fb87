"""The data behind the interactive report: charts as plain dicts (JSON for
the page's script), each with every view precomputed — absolute figures per
metric, and every series relative to every other with the ratio's CI from
the test `compare` uses (paired where both come from one interleaved run,
across worker processes otherwise) — so the page switches views without
computing statistics itself.

A chart has categories on x (cases, libraries) or buffer sizes (drawn on a
log axis with a tick at each size), and series (libraries, or hosts). A cell is a Measurement and
the run it came from; only cells of one run are paired."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from sslperf import families
from sslperf.verdict import DEFAULT_ALPHA, DEFAULT_THRESHOLD, Policy, judge
from sslperf.results import METRICS, Measurement

ALPHA, THRESHOLD = DEFAULT_ALPHA, DEFAULT_THRESHOLD      # compare's defaults


@dataclass(frozen=True)
class Cell:
    measurement: Measurement
    run_id: str


def metrics_present(measurements: list[Measurement]) -> list[str]:
    """The metrics some measurement has samples of, in METRICS order."""
    return [metric for metric in METRICS if any(m.rates(metric) for m in measurements)]


def _point(m: Measurement, metric: str) -> dict | None:
    s = m.summary(metric)
    if s is None:
        return None
    return {"y": s.median, "lo": s.ci_low, "hi": s.ci_high, "n": s.n}


def ratio_point(found) -> dict | None:
    """A compare.Change as the page reads it: % of the baseline, its CI, p, verdict and method."""
    if found is None or not math.isfinite(found.ratio):     # a zero baseline (an imported 0.00) has no ratio
        return None
    return {"y": 100 * found.ratio, "lo": None if found.low is None else 100 * found.low,
            "hi": None if found.high is None else 100 * found.high, "p": found.p, "verdict": found.verdict,
            "method": found.method}


def _relative(base: Cell, other: Cell, metric: str, floors=None, noise=None) -> dict | None:
    """The one rule's verdict, as compare gives it: with the noise floors and what the runs recorded (noise:
    run id → Run.noise())."""
    return ratio_point(judge(base.measurement, other.measurement, metric,
                             Policy(THRESHOLD, ALPHA, floors or {}, noise or {}),
                             paired=base.run_id == other.run_id, runs=(base.run_id, other.run_id)))


def chart(chart_id: str, title: str, kind: str, x: list, x_labels: list[str],
          series: dict[str, str], cells: dict[tuple[str, object], Cell], unit: str,
          note: str = "", floors=None, noise=None) -> dict | None:
    """One chart. `series` maps a series key to its legend text; `cells` maps
    (series key, x value) to a Cell. Returns None when nothing is drawable."""
    usable = {k: c for k, c in cells.items() if c.measurement.status == "ok"}
    metrics = metrics_present([c.measurement for c in usable.values()])
    if not metrics:
        return None
    keys = [k for k in series if any((k, value) in usable for value in x)]
    absolute = {metric: {k: [(_point(usable[(k, value)].measurement, metric) if (k, value) in usable else None)
                             for value in x] for k in keys} for metric in metrics}
    relative = {metric: {base: {k: [(_relative(usable[(base, value)], usable[(k, value)], metric, floors, noise)
                                     if (base, value) in usable and (k, value) in usable else None)
                                    for value in x] for k in keys if k != base} for base in keys}
                for metric in metrics}
    return {"id": chart_id, "title": title, "kind": kind, "x": x, "x_labels": x_labels, "unit": unit,
            "series": [{"key": k, "legend": series[k]} for k in keys], "metrics": metrics,
            "absolute": absolute, "relative": relative, "note": note}


def run_charts(run, floors=None, lib_run: Callable[[str], str] | None = None, noise=None) -> list[dict]:
    """A run's charts: a line chart of rate against size per throughput
    algorithm and operation, and a bar chart per family group of the rest."""
    lib_run = lib_run or (lambda lib: run.id)
    libs = {lib.name: lib.name for lib in run.libs}
    by_size: dict[tuple, dict] = {}
    by_group: dict[str, dict] = {}
    for m in run.measurements:
        cell = Cell(m, lib_run(m.lib))
        if m.unit == "bytes" and m.size and families.family(m.family).throughput:
            key = (m.group, m.algorithm, m.operation, m.workload)
            by_size.setdefault(key, {})[(m.lib, m.size)] = cell
        else:
            by_group.setdefault(m.group, {})[(m.lib, m.case)] = cell
    charts = []
    for (group, algorithm, operation, workload), cells in by_size.items():
        sizes = sorted({size for _, size in cells})
        title = f"{algorithm} {operation}" + (f" [{workload}]" if workload != "record" else "")
        kind = "size" if len(sizes) >= 2 else "bars"
        made = chart(f"size-{len(charts)}", title, kind, sizes, [f"{s} B" for s in sizes], libs, cells, "bytes",
                     note=group, floors=floors, noise=noise)
        if made:
            charts.append(made)
    for group in families.ordered(by_group):
        cells = by_group[group]
        cases = list(dict.fromkeys(case for _, case in cells))
        labels = [next(c.measurement.label for (lib, case_id), c in cells.items() if case_id == case)
                  for case in cases]
        unit = next(iter(cells.values())).measurement.unit
        made = chart(f"group-{len(charts)}", group, "bars", cases, labels, libs, cells, unit, floors=floors,
                     noise=noise)
        if made:
            charts.append(made)
    return charts
