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
        if m.family == "threads":
            continue                        # threads_charts: against the thread count
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
    return charts + threads_charts(run, floors, lib_run, noise, len(charts))


def threads_charts(run, floors, lib_run: Callable[[str], str], noise, first: int = 0) -> list[dict]:
    """Per case and thread mode swept (`sslperf scale`, `tls threads`): the rate of all threads against the
    thread count (every view the other charts have), then the scaling efficiency against it with its interval
    (scale.efficiency, computed here; the page only draws it)."""
    from sslperf.scale import plot, sweep

    libs = {lib.name: lib.name for lib in run.libs}
    by_case: dict[tuple[str, str], dict] = {}
    for m in run.measurements:
        if m.family == "threads" and m.size:
            parts = m.parts
            by_case.setdefault((parts["case"], parts["mode"]), {})[(m.lib, m.size)] = Cell(m, lib_run(m.lib))
    charts: list[dict] = []
    efficiency = plot.by_case(sweep.curves(run))
    for (case, mode), cells in by_case.items():
        counts = sorted({n for _, n in cells})
        made = chart(f"threads-{first + len(charts)}", f"{case} [{mode}] across threads", "size", counts,
                     [f"{n} thread{'s' if n > 1 else ''}" for n in counts], libs, cells,
                     next(iter(cells.values())).measurement.unit, floors=floors, noise=noise)
        if made is None:
            continue
        made["x_title"] = "threads (log scale)"
        charts.append(made)
        curves = efficiency.get((case, mode), [])
        if len(counts) >= 2 and curves:
            charts.append({"id": f"threads-{first + len(charts)}", "title": f"{case} [{mode}]: scaling efficiency",
                           "kind": "efficiency", "x": counts, "x_labels": [str(n) for n in counts], "unit": "ratio",
                           "metrics": ["wall"], "note": "rate at N / (N × rate at 1), with its 95% interval",
                           "series": [{"key": c.lib, "legend": libs.get(c.lib, c.lib)} for c in curves],
                           "points": {c.lib: _efficiency_points(c, plot.series(c)) for c in curves}})
    return charts


def _efficiency_points(curve, data: dict) -> list[dict]:
    return [{"x": n, "y": 100 * e, "lo": None if lo is None else 100 * lo, "hi": None if hi is None else 100 * hi,
             "method": p.efficiency.method if p.efficiency else ("definition" if n == 1 else "none")}
            for n, e, lo, hi, p in zip(data["threads"], data["efficiency"], data["efficiency_low"],
                                       data["efficiency_high"], curve.points) if e is not None]
