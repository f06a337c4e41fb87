"""A against B (and C …): benchstat-like tables of verdicts.

Each column is one library in one run. Rows are the cases the baseline
(first column) has; every other column shows its median, CI and the change
against the baseline with its 95% CI, and the verdict the one rule gives it
(sslperf.verdict: significant and beyond the threshold, else `~`).

A geometric-mean row per group sums a column up.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sslperf.measure.suites import select_ids
from sslperf.results import Measurement, Run
from sslperf.stats import Summary, geometric_mean
from sslperf.verdict import DEFAULT_ALPHA, DEFAULT_THRESHOLD, Change, Floors, Policy, judge, waits


@dataclass(frozen=True)
class Column:
    label: str
    run_id: str
    lib: str


@dataclass
class Row:
    case: str
    group: str
    label: str
    unit: str
    cells: list[Measurement | None]
    summaries: list[Summary | None]
    changes: list[Change | None]         # one per column; None for the baseline
    metric: str = "wall"                 # what its figures and changes rest on: the comparison's, or "cpu" (waits)


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

    def noisy_runs(self) -> str | None:
        """What the compared runs recorded that widened the verdicts between them, in a sentence (None: nothing)."""
        widened = [c for row in self.rows for c in row.changes if c is not None and c.noisy]
        if not widened:
            return None
        flags = "; ".join(dict.fromkeys(c.noisy for c in widened))
        most = max(c.threshold for c in widened)
        return (f"{len(widened)} verdict(s) compare runs that recorded noise ({flags}): a change smaller than the "
                f"spread they recorded between their worker processes (up to {most:.0%}) is not called between them. "
                "Measure again on a quiet machine, or compare within one run (`sslperf speed --lib A --lib B`).")

    def waited(self) -> str | None:
        """What waiting for the CPU did to the compared samples, in a sentence (None: no sample waited)."""
        said = [c.waited for row in self.rows for c in row.changes if c is not None and c.waited]
        if not said:
            return None
        cpu = sum(1 for row in self.rows if row.metric == "cpu")
        return (f"samples waited for the workers' CPU, which another task held, in {len(said)} comparison(s): those "
                "samples are never the basis of a verdict" + (f"; {cpu} row(s) marked cpu are CPU time, which "
                                                              "leaves the waits out" if cpu else "")
                + ". For wall time, measure again with the CPU to itself.")

    def parameters(self) -> list[str]:
        """Per compared pair whose connections negotiated different parameters, `case on column: what` (the verdict
        beside it is the deployed difference, not the library's alone)."""
        return list(dict.fromkeys(f"{row.label} on {column.label}: {change.parameters}" for row in self.rows
                                  for column, change in zip(self.columns, row.changes)
                                  if change is not None and change.parameters))

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


def change(base: Measurement, other: Measurement, metric: str, threshold: float = DEFAULT_THRESHOLD,
           alpha: float = DEFAULT_ALPHA, paired: bool = False, floors: Floors | None = None) -> Change | None:
    """`other` against `base` by the one rule (sslperf.verdict.judge), with these settings."""
    return judge(base, other, metric, Policy(threshold, alpha, floors or {}), paired)


def compare(columns: list[Column], runs: dict[str, Run], metric: str = "wall", threshold: float = DEFAULT_THRESHOLD,
            alpha: float = DEFAULT_ALPHA, patterns: tuple[str, ...] = (), floors: Floors | None = None) -> Comparison:
    """Compare `columns` (the first is the baseline) over their common cases; between runs, each run's recorded
    noise (Run.noise) widens the threshold as the one rule says."""
    policy = Policy(threshold, alpha, floors or {}, {rid: run.noise() for rid, run in runs.items()})
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
        shown = waits.row_metric([c for c in cells if c is not None], metric)    # CPU time where samples waited
        summaries = [c.summary(shown) if c and c.status == "ok" else None for c in cells]
        changes: list[Change | None] = [None]
        for cell in cells[1:]:
            ok = base.status == "ok" and cell is not None and cell.status == "ok"
            other = columns[len(changes)]
            paired = ok and columns[0].run_id == other.run_id
            row = [c for c in cells if c is not None and c.status == "ok"]
            changes.append(judge(base, cell, metric, policy, paired, (columns[0].run_id, other.run_id), row)
                           if ok else None)
        result.rows.append(Row(case_id, base.group, base.label, base.unit, cells, summaries, changes, shown))
    return result
