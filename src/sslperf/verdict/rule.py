"""The one rule for faster / slower / tie. Every output that says one of them — compare's tables and its gate,
bisect's steps and their explanations, track and regressions, recommend, the report's tables and figures, the
terminal's change column — asks here, so that two outputs of the same data never disagree.

The kernel is `decide`: a change is called only when it is significant (p < alpha) and larger than the
threshold (on the log scale: a slow-down to 1/1.3 as large as a speed-up to 1.3); otherwise it is a tie (`~`), and
with too little to test, unknown (`?`). The threshold is the larger
of --threshold, this machine's measured noise floor for the family (`sslperf noise`), and — between runs that
recorded noise (a busy CPU, load, wide intervals, a moving clock) — the spread those runs recorded.

`judge` applies it to two measurements. The test rests on worker processes, not single samples, because the
samples of one process share its memory layout and moment and are not independent:
- both from one interleaved run: per round the ratio B/A (taken back to back), its median per process, and a t
  test on the log ratios across processes ("paired");
- from different runs: per process the median of each side, Welch's t test on their logs ("processes");
- runs without process records (older ones, imports): Mann-Whitney U on the samples ("samples");
- instruction counts from deterministic inputs, the same in every process: the change is exact ("exact");
- counts of two different counters (the CPU's own, callgrind) are never paired: `?` ("different counters").
A process's figure is the median of its logs, so a ratio and its inverse are one change (the median of an even
number of ratios averaged in linear space called two copies of one library +422% apart when half their rounds were
0.1 and half 10). With fewer than 3 units on a side — worker processes where the samples say which, else samples —
no test is possible and the verdict is `?`, with the reason.

On wall time, samples that waited for their CPU (another task held it) are never units: waits.basis says what is
left out, when CPU time stands in, and when nothing is left to measure (`?`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sslperf import figures, negotiation
from sslperf.results import Measurement
from sslperf.stats import RatioTest, mann_whitney_p, paired_ratio, welch_ratio
from sslperf.verdict import waits

MIN_SAMPLES_FOR_TEST = 3
DEFAULT_THRESHOLD = 0.02     # --threshold: the smallest change called (before the noise floor)
DEFAULT_ALPHA = 0.05         # --alpha
SIGNIFICANT = ("faster", "slower")
WORDS = {"faster": "faster", "slower": "slower", "~": "tie", "?": "unknown"}
SYMBOLS = {"faster": "▲", "slower": "▼", "~": "~", "?": "?"}

Floors = dict[tuple[str, str], float]      # (kind "within"/"across", family) → floor


@dataclass
class Change:
    ratio: float                 # other / baseline (rates: > 1 is faster)
    p: float | None
    verdict: str                 # "faster", "slower", "~" or "?"
    low: float | None = None     # 95% CI of the ratio, where the test gives one
    high: float | None = None
    method: str = "samples"      # "exact", "paired", "processes", "samples" or "different counters"
    threshold: float = 0.0       # the smallest change called: max(--threshold, the noise floor, the runs' noise)
    floor: float | None = None   # the noise floor that applied, when one was measured
    noisy: str | None = None     # what the runs recorded that widened the threshold, when they did
    basis: str = "wall"          # the time the change rests on: the metric asked, or "cpu" when samples waited
    waited: str | None = None    # what waiting for the CPU did to the samples (left out, CPU time), when any did
    why: str | None = None       # why the verdict is `?`, when it is
    parameters: str | None = None   # the two connections negotiated different parameters: what (one sentence)

    @property
    def percent(self) -> float:
        return (self.ratio - 1) * 100

    @property
    def word(self) -> str:
        """faster, slower, tie or unknown."""
        return WORDS[self.verdict]

    @property
    def symbol(self) -> str:
        """▲ faster, ▼ slower, ~ tie, ? unknown."""
        return SYMBOLS[self.verdict]

    def evidence(self, digits: int = 3) -> str:
        """`p=0.012`, or `exact` for deterministic counts (no test: nothing varies)."""
        return "exact" if self.method == "exact" else f"p={self.p:.{digits}f}" if self.p is not None else "n too small"


@dataclass
class Policy:
    """How changes are called: --threshold, --alpha, the noise floors and the noise the runs recorded."""
    threshold: float = DEFAULT_THRESHOLD
    alpha: float = DEFAULT_ALPHA
    floors: Floors = field(default_factory=dict)
    run_noise: dict[str, dict] = field(default_factory=dict)     # run id → what it recorded (Run.noise())

    def threshold_for(self, method: str, family: str, runs: tuple[str, ...] = ()) -> tuple[float, float | None,
                                                                                        str | None]:
        """(the threshold, the floor that applied, what recorded noise widened it) for a change of `family`
        measured `method` between `runs`."""
        floor = self.floors.get(("within" if method == "paired" else "across", family))
        threshold = max(self.threshold, floor or 0.0)
        said = None
        if method != "paired" and len(set(runs)) > 1:      # only between runs: within one, drift is paired away
            recorded = [self.run_noise.get(r) or {} for r in set(runs)]
            flagged = [n for n in recorded if n.get("flags")]
            if flagged:
                spread = max(n.get("spread", 0.0) for n in recorded)
                threshold = max(threshold, spread)
                said = "; ".join(dict.fromkeys(f for n in flagged for f in n["flags"]))
        return threshold, floor, said


def beyond(ratio: float, threshold: float) -> bool:
    """Whether `ratio` is a larger change than `threshold`, on the log scale: a slow-down to 1/1.3 is as large as a
    speed-up to 1.3, and a threshold above 100% (runs that recorded that much noise) still leaves a slow-down
    that can be called."""
    return ratio > 0 and abs(math.log(ratio)) > math.log1p(threshold)


def decide(ratio: float, p: float | None, threshold: float, alpha: float) -> str:
    """The verdict on a ratio (> 1: faster) with its p: called only when significant and beyond the threshold."""
    if p is None or math.isnan(ratio):
        return "?"
    return ("faster" if ratio > 1 else "slower") if p < alpha and beyond(ratio, threshold) else "~"


def decide_exact(ratio: float, threshold: float) -> str:
    """The verdict on an exact ratio (deterministic instruction counts: nothing varies, no test)."""
    return ("faster" if ratio > 1 else "slower") if beyond(ratio, threshold) else "~"


def judge(base: Measurement, other: Measurement, metric: str, policy: Policy | None = None,
          paired: bool = False, runs: tuple[str, ...] = (), row: list[Measurement] | None = None) -> Change | None:
    """`other` against `base` by `metric` (rates: a ratio above 1 is faster); None when either has no figure.
    `paired`: both from one interleaved run; `runs`: the ids of the runs they come from (their recorded noise);
    `row`: every measurement of the table row the two are in, when the row's figures are shown on one basis
    (waits.basis over the row: CPU time for all, where any pair's samples waited). A change between connections
    that negotiated different parameters (`default` cases of two releases) says so in `parameters`: the verdict
    is the deployed difference, not the library's alone."""
    change = _judge(base, other, metric, policy or Policy(), paired, runs, row)
    if change is not None:
        change.parameters = negotiation.difference(base, other)
    return change


def _judge(base: Measurement, other: Measurement, metric: str, policy: Policy, paired: bool,
           runs: tuple[str, ...], row: list[Measurement] | None) -> Change | None:
    a, b = base.rates(metric), other.rates(metric)
    if not a or not b:
        return None
    if metric == "instructions" and _counter(base) != _counter(other):
        # perf counts user-space instructions on this CPU; callgrind counts on its simulated one: not one scale.
        return Change(b[0] / a[0] if a[0] else math.nan, None, "?", method="different counters")
    if metric == "instructions" and _exact(base, a) and _exact(other, b):
        ratio = b[0] / a[0]
        return Change(ratio, None, decide_exact(ratio, policy.threshold), ratio, ratio, "exact", policy.threshold)
    chosen = _basis(base, other, metric, row)
    if chosen.abstain:          # no test: it would rest on samples that waited (the method says which it would be)
        sa, sb = base.summary(metric), other.summary(metric)
        method = process_test(base, other, metric, paired)[1]
        return Change(sb.median / sa.median if sa.median else math.nan, None, "?", method=method,
                      threshold=policy.threshold, basis=metric, waited=chosen.reason, why=chosen.reason)
    metric = chosen.metric
    a, b = _kept_rates(base, metric, chosen.keep[0]), _kept_rates(other, metric, chosen.keep[1])
    test, method, why = process_test(base, other, metric, paired, chosen.keep)
    threshold, floor, noisy = policy.threshold_for(method, base.family, runs)
    if chosen.reason is not None and metric == "cpu":       # CPU time beside another task: its refills too
        threshold = max(threshold, waits.CONTENDED)
    said = {"basis": metric, "waited": chosen.reason}
    if test is not None:
        return Change(test.ratio, test.p, decide(test.ratio, test.p, threshold, policy.alpha), test.low, test.high,
                      method, threshold, floor, noisy, **said)
    ratio = _median(b) / _median(a) if a and b and _median(a) else math.nan
    if why is None and (len(a) < MIN_SAMPLES_FOR_TEST or len(b) < MIN_SAMPLES_FOR_TEST):
        why = f"fewer than {MIN_SAMPLES_FOR_TEST} samples on a side ({len(a)} and {len(b)})"
    if why is not None:
        return Change(ratio, None, "?", method=method, threshold=threshold, floor=floor, noisy=noisy, why=why,
                      **said)
    p = mann_whitney_p(a, b)
    return Change(ratio, p, decide(ratio, p, threshold, policy.alpha), method=method, threshold=threshold,
                  floor=floor, noisy=noisy, **said)


Keep = tuple[tuple[bool, ...] | None, ...]


def _basis(base: Measurement, other: Measurement, metric: str, row: list[Measurement] | None) -> waits.Basis:
    """What the pair is judged on: decided over its row where one is given (its keep: the pair's own)."""
    if not row or not any(m is base for m in row) or not any(m is other for m in row):
        return waits.basis([base, other], metric)
    found = waits.basis(row, metric)
    index = {id(m): i for i, m in enumerate(row)}
    return waits.Basis(found.metric, (found.keep[index[id(base)]], found.keep[index[id(other)]]), found.reason,
                       found.waited, found.samples)


def _kept_rates(m: Measurement, metric: str, keep: tuple[bool, ...] | None) -> list[float]:
    """The rates of `m` that may be units (keep: waits.basis's; None: all)."""
    rates = m.rates(metric)
    return rates if keep is None or len(keep) != len(rates) else [r for r, k in zip(rates, keep) if k]


def process_test(base: Measurement, other: Measurement, metric: str, paired: bool,
                 keep: Keep = (None, None)) -> tuple[RatioTest | None, str, str | None]:
    """The ratio test a comparison of two measurements rests on, its method, and — when there is none to make
    although the samples say which worker process took them — why not (the verdict is then `?`). `keep`: per side,
    the samples that may be units (waits.basis; None: all)."""
    a, b = base.rates(metric), other.rates(metric)
    kept_a, kept_b = (_kept(k, len(values)) for k, values in zip(keep, (a, b)))
    if paired and len(a) == len(b):
        ratios = [(i, y / x) for i, (x, y) in enumerate(zip(a, b)) if x > 0 and kept_a[i] and kept_b[i]]
        rounds = _by_process(base, ratios, len(a))
        if rounds is not None and len(rounds) >= MIN_SAMPLES_FOR_TEST:
            return paired_ratio([_median([math.log(r) for r in group]) for group in rounds]), "paired", None
    pa = _by_process(base, [(i, x) for i, x in enumerate(a) if kept_a[i]], len(a))
    pb = _by_process(other, [(i, y) for i, y in enumerate(b) if kept_b[i]], len(b))
    if pa is not None and pb is not None:
        if min(len(pa), len(pb)) >= MIN_SAMPLES_FOR_TEST:
            return welch_ratio([_median([math.log(x) for x in p]) for p in pa],
                               [_median([math.log(x) for x in p]) for p in pb]), "processes", None
        return None, "processes", (f"samples from {len(pa)} and {len(pb)} worker processes: a test needs "
                                   f"{MIN_SAMPLES_FOR_TEST} on each side (the samples of one process are not "
                                   "independent)")
    return None, "samples", None


def _kept(keep: tuple[bool, ...] | None, n: int) -> tuple[bool, ...]:
    return keep if keep is not None and len(keep) == n else (True,) * n


def _by_process(m: Measurement, values: list[tuple[int, float]], n: int) -> list[list[float]] | None:
    """`values` ((sample index, value), in order) grouped by the worker process that took each sample; None when
    the measurement's `n` samples do not say which process took them."""
    pids = (m.figures or {}).get(figures.PROCESS)
    if not pids or len(pids) != n:
        return None
    groups: dict[int, list[float]] = {}
    for index, value in values:
        groups.setdefault(pids[index], []).append(value)
    return list(groups.values())


def _counter(m: Measurement) -> str:
    """What counted a measurement's instructions (older runs: callgrind, the only counter then)."""
    return m.counter or "callgrind"


def _exact(m: Measurement, rates: list[float]) -> bool:
    """Counts made from deterministic inputs that repeat in every process (to a part in a million); a single
    such count stands for all of them."""
    return bool(m.deterministic) and bool(rates) and max(rates) <= min(rates) * (1 + 1e-6)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
