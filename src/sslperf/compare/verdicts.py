"""A against B (and C …): benchstat-like tables and verdicts.

Each column is one library in one run. Rows are the cases the baseline
(first column) has; every other column shows its median, CI and the change
against the baseline with its 95% CI, and a verdict only when the change is
significant (p < alpha) and larger than the noise threshold; otherwise `~`.

The test rests on worker processes, not on single samples, because samples
from one process share its memory layout and moment and are not
independent: two processes of the very same library differ by more than
their samples' spread says.
- Both columns from one interleaved run: per round the ratio B/A (the two
  samples were taken back to back), the median ratio per worker process, and
  a t test on the log ratios across processes ("paired").
- Columns from different runs: per process the median rate of each side,
  Welch's t test on their logs ("processes").
- Runs without process records (older runs): Mann-Whitney U on the samples.
- Instruction counts made from deterministic inputs (the same in every
  process, one process enough): the change is exact, no test ("exact").
- Instruction counts of two different counters (the CPU's own, callgrind)
  are never paired: `?` ("different counters").
With fewer than 3 units on a side no test is possible and the verdict is
`?`. The threshold a change must exceed is the larger of `--threshold` and
this machine's measured noise floor for the family (`sslperf noise`):
within one run for paired changes, across runs otherwise. A geometric-mean
row per group sums a column up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sslperf.measure.suites import select_ids
from sslperf import figures
from sslperf.results import Measurement, Run
from sslperf.stats import (
    RatioTest,
    Summary,
    geometric_mean,
    mann_whitney_p,
    paired_ratio,
    welch_ratio,
)

MIN_SAMPLES_FOR_TEST = 3
DEFAULT_THRESHOLD = 0.02     # --threshold: the smallest change called (before the noise floor)
DEFAULT_ALPHA = 0.05         # --alpha


@dataclass(frozen=True)
class Column:
    label: str
    run_id: str
    lib: str


@dataclass
class Change:
    ratio: float                 # other / baseline (rates: > 1 is faster)
    p: float | None
    verdict: str                 # "faster", "slower", "~" or "?"
    low: float | None = None     # 95% CI of the ratio, where the test gives one
    high: float | None = None
    method: str = "samples"      # "exact", "paired", "processes", "samples" or "different counters" (see above)
    threshold: float = 0.0       # the smallest change called: max(--threshold, the noise floor)
    floor: float | None = None   # the noise floor that applied, when one was measured

    @property
    def percent(self) -> float:
        return (self.ratio - 1) * 100

    def evidence(self, digits: int = 3) -> str:
        """`p=0.012`, or `exact` for deterministic counts (no test: nothing varies)."""
        return "exact" if self.method == "exact" else f"p={self.p:.{digits}f}"


@dataclass
class Row:
    case: str
    group: str
    label: str
    unit: str
    cells: list[Measurement | None]
    summaries: list[Summary | None]
    changes: list[Change | None]         # one per column; None for the baseline


@dataclass
class Comparison:
    columns: list[Column]
    metric: str
    threshold: float
    alpha: float
    rows: list[Row] = field(default_factory=list)

    def groups(self) -> dict[str, list[Row]]:
        out: dict[str, list[Row]] = {}
        for row in self.rows:
            out.setdefault(row.group, []).append(row)
        return out

    def geomeans(self, rows: list[Row]) -> list[float | None]:
        """Per column, the geometric mean of ratios to the baseline."""
        out: list[float | None] = [None]
        for index in range(1, len(self.columns)):
            ratios = [r.changes[index].ratio for r in rows if r.changes[index] is not None]
            out.append(geometric_mean(ratios) if ratios else None)
        return out

    def regressions(self, above_percent: float) -> list[tuple[Row, Column, Change]]:
        """Significant slow-downs larger than `above_percent`."""
        found = []
        for row in self.rows:
            for column, change in zip(self.columns, row.changes):
                if change and change.verdict == "slower" and -change.percent > above_percent:
                    found.append((row, column, change))
        return found

    def to_dict(self) -> dict:
        return {
            "columns": [vars(c) for c in self.columns], "metric": self.metric, "threshold": self.threshold,
            "alpha": self.alpha,
            "rows": [{"case": r.case, "group": r.group, "unit": r.unit,
                      "cells": [s.as_dict() if s else None for s in r.summaries],
                      "changes": [vars(c) | {"percent": c.percent} if c else None for c in r.changes]}
                     for r in self.rows],
            "geomeans": {g: self.geomeans(rows) for g, rows in self.groups().items()},
        }


def _by_process(m: Measurement, values: list[float]) -> list[list[float]] | None:
    """`values` (one per sample) grouped by the worker process that took them, in order."""
    pids = (m.figures or {}).get(figures.PROCESS)
    if not pids or len(pids) != len(values):
        return None
    groups: dict[int, list[float]] = {}
    for pid, value in zip(pids, values):
        groups.setdefault(pid, []).append(value)
    return list(groups.values())


def _counter(m: Measurement) -> str:
    """What counted a measurement's instructions (older runs: callgrind, the only counter then)."""
    return m.counter or "callgrind"


def _exact(m: Measurement, rates: list[float]) -> bool:
    """Counts made from deterministic inputs that repeat in every process (to
    a part in a million); a single such count stands for all of them."""
    return (bool(m.deterministic) and bool(rates)
            and max(rates) <= min(rates) * (1 + 1e-6))


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def process_test(base: Measurement, other: Measurement, metric: str, paired: bool) -> tuple[RatioTest | None, str]:
    """The ratio test a comparison of two measurements rests on, and its method."""
    a, b = base.rates(metric), other.rates(metric)
    if paired and len(a) == len(b):
        rounds = _by_process(base, [y / x for x, y in zip(a, b) if x > 0])
        if rounds is not None and len(rounds) >= MIN_SAMPLES_FOR_TEST:
            return paired_ratio([math.log(_median(r)) for r in rounds]), "paired"
    pa, pb = _by_process(base, a), _by_process(other, b)
    if pa is not None and pb is not None and min(len(pa), len(pb)) >= MIN_SAMPLES_FOR_TEST:
        return welch_ratio([math.log(_median(p)) for p in pa], [math.log(_median(p)) for p in pb]), "processes"
    return None, "samples"


Floors = dict[tuple[str, str], float]      # (kind "within"/"across", family) → floor


def change(base: Measurement, other: Measurement, metric: str, threshold: float, alpha: float,
           paired: bool = False, floors: Floors | None = None) -> Change | None:
    a, b = base.rates(metric), other.rates(metric)
    if not a or not b:
        return None
    if metric == "instructions" and _counter(base) != _counter(other):
        # perf counts user-space instructions on this CPU; callgrind counts on its simulated one: not one scale.
        return Change(b[0] / a[0] if a[0] else math.nan, None, "?", method="different counters")
    if metric == "instructions" and _exact(base, a) and _exact(other, b):
        # Deterministic counts (harness/deterministic.c, the differential batch):
        # every process counted the same, so the change is known exactly and
        # one process per side is enough.
        ratio = b[0] / a[0]
        verdict = ("faster" if ratio > 1 else "slower") if abs(ratio - 1) > threshold else "~"
        return Change(ratio, None, verdict, ratio, ratio, "exact", threshold, None)
    test, method = process_test(base, other, metric, paired)
    floor = (floors or {}).get(("within" if method == "paired" else "across", base.family))
    threshold = max(threshold, floor or 0.0)
    if test is not None:
        significant = test.p < alpha and abs(test.ratio - 1) > threshold
        verdict = ("faster" if test.ratio > 1 else "slower") if significant else "~"
        return Change(test.ratio, test.p, verdict, test.low, test.high, method, threshold, floor)
    sa_, sb = base.summary(metric), other.summary(metric)
    ratio = sb.median / sa_.median if sa_.median else math.nan
    if len(a) < MIN_SAMPLES_FOR_TEST or len(b) < MIN_SAMPLES_FOR_TEST:
        return Change(ratio, None, "?", threshold=threshold, floor=floor)
    p = mann_whitney_p(a, b)
    verdict = ("faster" if ratio > 1 else "slower") if p < alpha and abs(ratio - 1) > threshold else "~"
    return Change(ratio, p, verdict, method=method, threshold=threshold, floor=floor)


def compare(columns: list[Column], runs: dict[str, Run], metric: str = "wall", threshold: float = DEFAULT_THRESHOLD,
            alpha: float = DEFAULT_ALPHA, patterns: tuple[str, ...] = (), floors: Floors | None = None) -> Comparison:
    """Compare `columns` (the first is the baseline) over their common cases."""
    def index(column: Column) -> dict[str, Measurement]:
        return {m.case: m for m in runs[column.run_id].measurements if m.lib == column.lib}

    tables = [index(c) for c in columns]
    result = Comparison(columns, metric, threshold, alpha)
    case_ids = select_ids(list(tables[0]), patterns)
    for case_id in case_ids:
        cells = [t.get(case_id) for t in tables]
        if sum(1 for c in cells if c is not None) < 2:
            continue
        base = cells[0]
        summaries = [c.summary(metric) if c and c.status == "ok" else None for c in cells]
        changes: list[Change | None] = [None]
        for cell in cells[1:]:
            ok = base.status == "ok" and cell is not None and cell.status == "ok"
            paired = ok and columns[0].run_id == columns[len(changes)].run_id
            changes.append(change(base, cell, metric, threshold, alpha, paired, floors) if ok else None)
        result.rows.append(Row(case_id, base.group, base.label, base.unit, cells, summaries, changes))
    return result
