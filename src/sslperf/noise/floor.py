"""The A/A experiment and the floor it gives.

Within a run: the library and a second copy of it (its own worker
processes, the same binary) as two columns; a case's paired change between
them is pure noise. Across runs: the same library in run k against run 1.
Per family and kind the floor is the 95th percentile of the |change|s seen
(the larger neighbour when it falls between two; with few comparisons that
is the largest) — a verdict must exceed it, so an A/A change passes it at
most about 5% of the time, the rate the tests' alpha already allows —
together with how many false verdicts the plain threshold would have given.
(The largest change is kept too: on this VM one burst of interference can
move a single case by 30% between runs, and a floor that high would hide
every real regression smaller than that.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from sslperf.compare import Column, compare
from sslperf.libs.model import Lib
from sslperf.measure import environment, scheduler
from sslperf.results import Run

TWIN = "#2"          # the second column of the within-run experiment: LIB#2
FLOOR_PERCENTILE = 95


@dataclasses.dataclass
class Floor:
    kind: str                 # "within" (two columns of one run) or "across" (run k against run 1)
    family: str
    floor: float              # 95th percentile of |ratio - 1| (the "higher" neighbour)
    largest: float            # largest |ratio - 1| seen
    comparisons: int
    false_verdicts: int       # of those, called faster/slower at the plain threshold

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def twin(lib: Lib) -> Lib:
    """A second column of the same library (its own worker processes)."""
    return dataclasses.replace(lib, name=lib.name + TWIN)


def floors(runs: list[Run], lib: str, threshold: float = 0.02) -> list[Floor]:
    """The floors an A/A experiment's runs give, per kind and family."""
    seen: dict[tuple[str, str], list] = {}
    by_id = {run.id: run for run in runs}
    for run in runs:
        result = compare([Column("a", run.id, lib), Column("b", run.id, lib + TWIN)], by_id, threshold=threshold)
        for row in result.rows:
            if row.changes[1] is not None:
                seen.setdefault(("within", row.cells[0].family), []).append(row.changes[1])
    for run in runs[1:]:
        result = compare([Column("1", runs[0].id, lib), Column("k", run.id, lib)], by_id, threshold=threshold)
        for row in result.rows:
            if row.changes[1] is not None:
                seen.setdefault(("across", row.cells[0].family), []).append(row.changes[1])
    out = []
    for (kind, family), changes in sorted(seen.items()):
        sizes = [abs(c.ratio - 1) for c in changes]
        out.append(Floor(kind, family, float(np.percentile(sizes, FLOOR_PERCENTILE, method="higher")), max(sizes),
                         len(changes), sum(c.verdict in ("faster", "slower") for c in changes)))
    return out


def experiment(lib: Lib, count: int, measure: Callable[[list[Lib]], Run]) -> list[Run]:
    """`count` back-to-back runs of `lib` and its twin (`measure` runs one)."""
    return [measure([lib, twin(lib)]) for _ in range(count)]


def measure_floors(lib: Lib, count: int, cases: list, settings, store, threshold: float,
                   before_each: Callable[[int], None] = lambda n: None) -> tuple[list[Run], list[Floor]]:
    """The A/A experiment on `lib` (`count` runs of `cases`, each with its
    twin) and the floors it gives, kept in `store` for this host, where
    compare, bisect and report find them (noise.applied.floor_for)."""
    runs = []

    def one(libs: list[Lib]) -> Run:
        before_each(len(runs) + 1)
        runs.append(scheduler.measure(libs, cases, settings, store, "sslperf noise", {"suite": "noise"}))
        return runs[-1]

    experiment(lib, count, one)
    found = floors(runs, lib.name, threshold)
    store.save_floors(runs[0].environment["host"], environment.capture()["time"], lib.name,
                      [f.as_dict() for f in found], [r.id for r in runs])
    return runs, found
