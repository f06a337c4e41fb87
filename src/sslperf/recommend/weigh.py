"""Every choice `recommend` makes between two measured options asks the one verdict rule (sslperf.verdict): an
option goes before another only where the rule calls it cheaper. Options the rule does not tell apart (a tie `~`,
or `?` with too little to test) are said to tie, with the rule that ordered them instead; the ratios the advice
argues with carry their 95% CI, so two runs' figures are seen to overlap; and noisy evidence is said."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from sslperf import figures, negotiation
from sslperf.recommend.costs import Evidence, summed
from sslperf.results import Measurement
from sslperf.stats import NOISY_CI
from sslperf.verdict import DEFAULT_ALPHA, SIGNIFICANT, Change, Policy, judge

T = TypeVar("T")
NAMED = 6        # noisy figures named in the warning; the rest counted


@dataclass(frozen=True)
class Cost:
    """What one option costs: its cases (summed), as the CPU is or with AES-NI hidden, in wall time or of a figure
    (a TLS side's CPU time)."""
    label: str
    cases: tuple[str, ...]
    masked: bool = False
    figure: str | None = None


@dataclass
class Tie:
    """Two options next to each other in an order that the verdict rule does not tell apart."""
    first: str
    second: str
    change: Change | None      # the first against the second, as rates: its ratio is the second's cost over the
                               # first's (None: not both measured)
    rule: str                  # what ordered them instead

    def text(self) -> str:
        return f"{self.first} and {self.second} tie ({_why(self.change)}): {self.rule}" + beside(self.change)

    def as_dict(self) -> dict:
        c = self.change
        return {"first": self.first, "second": self.second, "verdict": c.verdict if c else "?",
                "cost_ratio": c.ratio if c else None, "low": c.low if c else None, "high": c.high if c else None,
                "p": c.p if c else None, "method": c.method if c else None, "rule": self.rule,
                "parameters": c.parameters if c else None, "text": self.text()}


class Weigh:
    """Verdicts between the options of one body of evidence (each pair judged once)."""

    def __init__(self, evidence: Evidence):
        self.evidence = evidence
        self.policy = Policy(run_noise=evidence.noise)
        self._judged: dict[tuple[Cost, Cost], Change | None] = {}

    def versus(self, dear: Cost, cheap: Cost) -> Change | None:
        """The verdict on `cheap` against `dear`, as rates: `faster` means `cheap` costs less, and the ratio is
        dear's cost over cheap's. Paired by process when both come from one run and the same worker processes
        (the in-memory mode marks every sample with its pass's worker, the same for every case of a library)."""
        if (dear, cheap) not in self._judged:
            self._judged[(dear, cheap)] = self._judge(dear, cheap)
        return self._judged[(dear, cheap)]

    def cheaper(self, x: Cost, y: Cost) -> bool:
        """Whether the rule calls `x` cheaper than `y`."""
        change = self.versus(y, x)
        return change is not None and change.verdict == "faster"

    def rank(self, options: Sequence[T], cost: Callable[[T], Cost], preference: Callable[[T], tuple],
             rule: Callable[[T, T], str]) -> tuple[list[T], list[Tie]]:
        """`options` cheapest first as far as the rule tells them apart: each place goes to an option no other
        remaining one is called cheaper than, among several such the first by `preference` (the stated rule for
        ties, worded by `rule(first, second)`). Every significant verdict holds in the order; the neighbours it
        does not tell apart are returned as ties."""
        remaining, order = list(options), []
        while remaining:
            free = [x for x in remaining if not any(self.cheaper(cost(y), cost(x)) for y in remaining if y is not x)]
            pick = min(free or remaining, key=preference)
            order.append(pick)
            remaining.remove(pick)
        ties = []
        for first, second in zip(order, order[1:]):
            change = self.versus(cost(second), cost(first))
            if change is None or change.verdict not in SIGNIFICANT:
                ties.append(Tie(cost(first).label, cost(second).label, change, rule(first, second)))
        return order, ties

    def _judge(self, dear: Cost, cheap: Cost) -> Change | None:
        base, other = self._measured(dear), self._measured(cheap)
        if base is None or other is None:
            return None
        runs = {self.evidence.run_of(case, c.masked) for c in (dear, cheap) for case in c.cases}
        marks = [(m.figures or {}).get(figures.PROCESS) for m in (base, other)]
        paired = len(runs) == 1 and bool(marks[0]) and marks[0] == marks[1]
        change = judge(base, other, "wall", self.policy, paired, tuple(r for r in runs if r))
        if change is not None and change.parameters:
            # One library's two cases: named by the options weighed rather than twice by the library.
            change.parameters = negotiation.difference(base, other, dear.label, cheap.label) or change.parameters
        return change

    def _measured(self, cost: Cost) -> Measurement | None:
        parts = [self.evidence.measurement(case, cost.masked) for case in cost.cases]
        return summed(parts, cost.figure) if all(parts) else None


def beside(change: Change | None) -> str:
    """` (X negotiates X25519 where Y negotiates X25519MLKEM768)`: what the two connections negotiated differently,
    said beside their comparison; empty where they negotiated the same (or are not connections)."""
    return f" ({change.parameters})" if change is not None and change.parameters else ""


def times(change: Change | None) -> str:
    """`60×`: the dearer option's cost over the cheaper one's (put `interval` beside it)."""
    return f"{_number(change.ratio)}×" if change is not None else "?×"


def interval(change: Change | None) -> str:
    """`[48, 75]`: the 95% CI of `times` (its p where the test gives no interval)."""
    if change is None:
        return "(not measured)"
    if change.low is None or change.high is None or change.method == "exact":
        return f"({change.evidence()})"
    return f"[{_number(change.low, change.ratio)}, {_number(change.high, change.ratio)}]"


def less(change: Change | None) -> str:
    """`83% less [80, 85]`: what the cheaper option saves of the dearer one's cost, with its 95% CI."""
    if change is None:
        return "? less"
    saved = lambda ratio: (1 - 1 / ratio) * 100        # noqa: E731
    if change.low is None or change.high is None:
        return f"{saved(change.ratio):.0f}% less ({change.evidence()})"
    return f"{saved(change.ratio):.0f}% less [{saved(change.low):.0f}, {saved(change.high):.0f}]"


def noise_warnings(evidence: Evidence) -> list[str]:
    """A warning, naming them, when the evidence has figures with a CI wider than ±NOISY_CI or comes from runs
    that recorded noise (a busy CPU, load, wide intervals)."""
    noisy, recorded = evidence.noisy(), evidence.recorded_noise()
    if not noisy and not recorded:
        return []
    parts = []
    if noisy:
        named = ", ".join(f"{figure} ±{width * 100:.1f}%" for figure, width in noisy[:NAMED])
        more = f" and {len(noisy) - NAMED} more" if len(noisy) > NAMED else ""
        parts.append(f"{len(noisy)} figure(s) have a 95% CI wider than ±{NOISY_CI:.0%}: {named}{more}")
    parts += [f"run {run_id} recorded: {'; '.join(flags)}" for run_id, flags in recorded.items()]
    return ["warning: the evidence is noisy — " + "; ".join(parts) + ". Choices the noise leaves open are called "
            "ties and ordered by the rule stated; measure again on a quiet machine (--fresh) for a sharper answer."]


def _why(change: Change | None) -> str:
    if change is None:
        return "not both measured"
    if change.verdict == "?":
        return f"too few processes to test: {change.evidence()}"
    if change.p is not None and change.p >= DEFAULT_ALPHA:
        return f"within noise, {change.evidence(2)}"
    return (f"{abs(change.percent):.1f}% apart, under the {change.threshold * 100:.0f}% threshold"
            + (f"; {change.noisy}" if change.noisy else ""))


def _number(x: float, like: float | None = None) -> str:
    """`x` with the digits its size calls for (those of `like`, for an interval beside its ratio)."""
    size = x if like is None else like
    return f"{x:,.0f}" if size >= 20 else f"{x:.1f}" if size >= 2 else f"{x:.2f}"
