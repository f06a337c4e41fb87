"""The search itself, apart from building and measuring (which a Probe does).

Points are ordered oldest first. A step measures a midpoint together with the
two ends of the interval in one interleaved run, and every change is read as
newer against older with the paired test of `compare` (its threshold is the
larger of --threshold and the machine's noise floor). The midpoint is then:
- like the older end: the change lies after it;
- like the newer end: the change lies before it;
- clearly between the two (significantly different from both, in the
  direction of the whole change): the change came in more than one step,
  and both halves are searched;
- outside the two (a significant change against the direction of the whole,
  or the ends alike but the midpoint not): the history is not monotonic. No
  single boundary is named; the step is shown, and each half whose ends
  differ is searched on, so every step is reported with its sign;
- like neither clearly (no significant change to either end): measured
  again, longer, once; then reported as unclear.
A midpoint that does not build, or cannot run the case, is skipped as with
`git bisect skip`: the nearest other point inside the interval is tried.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from sslperf.results import Run
from sslperf.verdict import SIGNIFICANT, Change


class Probe(Protocol):
    def build(self, index: int) -> str | None:
        """Build point `index` (cached builds return at once); None when it
        built, else why it cannot be used."""

    def measure(self, indexes: list[int], longer: bool) -> Run:
        """One interleaved run of the points, each measurement named by its point."""

    def change(self, run: Run, older: int, newer: int) -> Change | None:
        """`newer` against `older` in `run` (paired), None when either has no
        result; `unusable(run, index)` says why."""

    def unusable(self, run: Run, index: int) -> str | None: ...


@dataclass
class Step:
    number: int
    lo: int
    mid: int | None
    hi: int
    longer: bool
    run: Run
    total: Change | None                  # hi against lo
    to_mid: Change | None = None          # mid against lo
    from_mid: Change | None = None        # hi against mid
    verdict: str = ""                     # see VERDICTS

    def as_dict(self) -> dict:
        return {"step": self.number, "lo": self.lo, "mid": self.mid, "hi": self.hi, "longer": self.longer,
                "run_id": self.run.id, "verdict": self.verdict,
                "total": _change_dict(self.total), "to_mid": _change_dict(self.to_mid),
                "from_mid": _change_dict(self.from_mid)}


VERDICTS = {
    "older": "like the older end",
    "newer": "like the newer end",
    "between": "between the ends: a change in several steps",
    "contradicts": "outside the ends: not monotonic",
    "unclear": "unclear",
    "ends": "the ends only",
}


@dataclass
class Boundary:
    before: int
    after: int                    # after == before + 1 for a found step; wider when unclear or untestable
    change: Change | None         # after against before
    kind: str                     # "step", "unclear" or "untestable"
    share: float | None = None    # of the whole change, in log terms

    def as_dict(self) -> dict:
        return {"before": self.before, "after": self.after, "kind": self.kind, "share": self.share,
                "change": _change_dict(self.change)}


@dataclass
class Outcome:
    status: str = ""              # "found", "nothing", "not-monotonic", "unclear", "untestable"
    total: Change | None = None   # newest against oldest, from the first step
    steps: list[Step] = field(default_factory=list)
    boundaries: list[Boundary] = field(default_factory=list)
    contradictions: list[Step] = field(default_factory=list)
    skipped: dict[int, str] = field(default_factory=dict)    # point → why it was skipped

    def as_dict(self) -> dict:
        return {"status": self.status, "total": _change_dict(self.total),
                "steps": [s.as_dict() for s in self.steps],
                "boundaries": [b.as_dict() for b in self.boundaries],
                "contradictions": [s.number for s in self.contradictions],
                "skipped": {str(k): v for k, v in self.skipped.items()}}


def _change_dict(change: Change | None) -> dict | None:
    return None if change is None else {**vars(change), "percent": change.percent}


def significant(change: Change | None) -> bool:
    return change is not None and change.verdict in SIGNIFICANT


def classify(total: Change | None, to_mid: Change | None, from_mid: Change | None) -> str:
    """Where the midpoint stands between the ends (a key of VERDICTS)."""
    down = total is not None and total.ratio < 1
    moved = [c for c in (to_mid, from_mid) if significant(c)]
    if not significant(total):
        return "contradicts" if moved else "unclear"
    if any((c.ratio < 1) != down for c in moved):
        return "contradicts"
    if significant(to_mid) and significant(from_mid):
        return "between"
    if significant(from_mid):
        return "older"
    if significant(to_mid):
        return "newer"
    return "unclear"


class Search:
    def __init__(self, size: int, probe: Probe, max_steps: int = 64,
                 on_step: Callable[[Step], None] | None = None):
        self.size = size
        self.on_step = on_step
        self.probe = probe
        self.max_steps = max_steps
        self.outcome = Outcome()
        self.pairs: dict[tuple[int, int], Change] = {}     # every (older, newer) change measured, latest wins

    def run(self) -> Outcome:
        lo, hi = 0, self.size - 1
        for end in (lo, hi):
            problem = self.probe.build(end)
            if problem:
                raise EndUnusable(end, problem)
        first = self._step(lo, self._midpoint(lo, hi), hi, longer=False)
        self.outcome.total = first.total
        if not significant(first.total) and first.verdict != "contradicts":
            self.outcome.status = "nothing"
            return self.outcome
        self._search(lo, hi, first)
        self._conclude()
        return self.outcome

    def _search(self, lo: int, hi: int, step: Step | None) -> None:
        pending: list[tuple[int, int, Step | None]] = [(lo, hi, step)]
        while pending:
            lo, hi, step = pending.pop()
            if hi - lo == 1:
                self.outcome.boundaries.append(Boundary(lo, hi, self.pairs.get((lo, hi)), "step"))
                continue
            if step is None:
                if len(self.outcome.steps) >= self.max_steps:
                    self.outcome.boundaries.append(Boundary(lo, hi, self.pairs.get((lo, hi)), "unclear"))
                    continue
                step = self._step(lo, self._midpoint(lo, hi), hi, longer=False)
            if step.mid is None:        # no point inside builds and runs the case
                self.outcome.boundaries.append(Boundary(lo, hi, self.pairs.get((lo, hi)), "untestable"))
                continue
            if step.verdict == "unclear":
                step = self._step(lo, step.mid, hi, longer=True)
            mid = step.mid
            if step.verdict == "older":
                pending.append((mid, hi, None))
            elif step.verdict == "newer":
                pending.append((lo, mid, None))
            elif step.verdict == "between":
                pending += [(mid, hi, None), (lo, mid, None)]
            elif step.verdict == "contradicts":
                # not one direction: say so, and go on into each half whose ends differ, so every
                # step is shown with its sign (a change that came and went inside a half whose ends
                # agree stays unseen, which the answer says)
                self.outcome.contradictions.append(step)
                if significant(step.from_mid):
                    pending.append((mid, hi, None))
                if significant(step.to_mid):
                    pending.append((lo, mid, None))
            else:
                self.outcome.boundaries.append(Boundary(lo, hi, self.pairs.get((lo, hi)), "unclear"))

    def _midpoint(self, lo: int, hi: int) -> int | None:
        """The point inside (lo, hi) nearest its middle that builds."""
        centre = (lo + hi) / 2
        for index in sorted(range(lo + 1, hi), key=lambda i: (abs(i - centre), i)):
            if index in self.outcome.skipped:
                continue
            problem = self.probe.build(index)
            if problem is None:
                return index
            self.outcome.skipped[index] = problem
        return None

    def _step(self, lo: int, mid: int | None, hi: int, longer: bool) -> Step:
        while True:
            indexes = [lo, hi] if mid is None else [lo, mid, hi]
            run = self.probe.measure(indexes, longer)
            for end in (lo, hi):
                problem = self.probe.unusable(run, end)
                if problem:
                    raise EndUnusable(end, problem)
            if mid is not None and (problem := self.probe.unusable(run, mid)):
                self.outcome.skipped[mid] = problem
                mid = self._midpoint(lo, hi)
                continue
            break
        step = Step(len(self.outcome.steps) + 1, lo, mid, hi, longer, run, self._change(run, lo, hi))
        if mid is not None:
            step.to_mid = self._change(run, lo, mid)
            step.from_mid = self._change(run, mid, hi)
            step.verdict = classify(step.total, step.to_mid, step.from_mid)
        else:
            step.verdict = "ends"
        self.outcome.steps.append(step)
        if self.on_step:
            self.on_step(step)
        return step

    def _change(self, run: Run, older: int, newer: int) -> Change | None:
        change = self.probe.change(run, older, newer)
        if change is not None:
            self.pairs[(older, newer)] = change
        return change

    def _conclude(self) -> None:
        outcome = self.outcome
        whole = math.log(outcome.total.ratio) if significant(outcome.total) and outcome.total.ratio > 0 else 0.0
        for boundary in outcome.boundaries:
            if boundary.change is not None and boundary.change.ratio > 0 and whole:
                boundary.share = math.log(boundary.change.ratio) / whole
        outcome.boundaries.sort(key=lambda b: (-(b.share or 0.0), b.before))
        kinds = {b.kind for b in outcome.boundaries}
        if outcome.contradictions:
            outcome.status = "not-monotonic"
        elif kinds == {"step"}:
            outcome.status = "found"
        elif "step" in kinds:
            outcome.status = "partly found"
        else:
            outcome.status = "unclear" if "unclear" in kinds else "untestable"


class EndUnusable(Exception):
    """An end of the search cannot be built or cannot run the case."""

    def __init__(self, index: int, problem: str):
        super().__init__(problem)
        self.index = index
        self.problem = problem
