"""A against B (and C …): benchstat-like tables and verdicts.

Each column is one library in one run. Rows are the cases the baseline
(first column) has; every other column shows its median, CI and the change
against the baseline, with a verdict only when the change is significant
(Mann-Whitney U, p < alpha) and larger than the noise threshold; otherwise
`~`. With fewer than 3 samples on a side no test is possible and the
verdict is `?`. A geometric-mean row per group sums a column up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sslperf.results import Measurement, Run
from sslperf.stats import Summary, geometric_mean, mann_whitney_p

MIN_SAMPLES_FOR_TEST = 3


@dataclass(frozen=True)
class Column:
    label: str
    run_id: str
    lib: str


@dataclass
class Change:
    ratio: float                 # other / baseline of the medians (rates: > 1 is faster)
    p: float | None
    verdict: str                 # "faster", "slower", "~" or "?"

    @property
    def percent(self) -> float:
        return (self.ratio - 1) * 100


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


def change(base: Measurement, other: Measurement, metric: str, threshold: float, alpha: float) -> Change | None:
    a, b = base.rates(metric), other.rates(metric)
    if not a or not b:
        return None
    sa_, sb = base.summary(metric), other.summary(metric)
    ratio = sb.median / sa_.median if sa_.median else math.nan
    if len(a) < MIN_SAMPLES_FOR_TEST or len(b) < MIN_SAMPLES_FOR_TEST:
        return Change(ratio, None, "?")
    p = mann_whitney_p(a, b)
    if p < alpha and abs(ratio - 1) > threshold:
        return Change(ratio, p, "faster" if ratio > 1 else "slower")
    return Change(ratio, p, "~")


def compare(columns: list[Column], runs: dict[str, Run], metric: str = "wall", threshold: float = 0.02,
            alpha: float = 0.05, patterns: tuple[str, ...] = ()) -> Comparison:
    """Compare `columns` (the first is the baseline) over their common cases."""
    from sslperf.measure.suites import select_ids

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
            changes.append(change(base, cell, metric, threshold, alpha) if ok else None)
        result.rows.append(Row(case_id, base.group, base.label, base.unit, cells, summaries, changes))
    return result
