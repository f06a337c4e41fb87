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
from sslperf.measure.request import TWIN, Request
from sslperf.results import Run

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
    """A second column of the same library (its own worker processes), as a request's `NAME#2` resolves to."""
    return dataclasses.replace(lib, name=lib.name + TWIN, spec=lib.name + TWIN)


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


def measure_floors(request: Request, store, before_each: Callable[[int], None] = lambda n: None
                   ) -> tuple[list[Run], list[Floor]]:
    """The A/A experiment a request asks for (measure.verbs' `noise`: a library and its TWIN, `repeat` runs back to
    back, the plain threshold as its label) and the floors it gives, kept in `store` for this host, where compare,
    bisect and report find them (noise.applied.floor_for). The same here and on a fleet machine (measure-request)."""
    runs = []
    for n in range(request.repeat):
        before_each(n + 1)
        runs.append(scheduler.measure(request, store))
    lib = runs[0].libs[0].name
    found = floors(runs, lib, float(request.labels.get("threshold", 0.02)))
    if store is not None:
        store.save_floors(runs[0].environment["host"], environment.capture()["time"], lib,
                          [f.as_dict() for f in found], [r.id for r in runs])
    return runs, found
