"""Scaling efficiency: the rate at N threads over N times the rate at 1 thread, of the same case, library and
thread mode — 100% when N threads do N times the work. As a ratio with a 95% interval that accounts for both
rates' spread: the scheduler takes every thread count in each pass, moments apart, so the two rates pair pass by
pass (each pass's median rate at N over its median at 1), and a t interval on the logs of those ratios, divided by
N, is the efficiency's; with fewer than 3 passes in common, Welch's interval on the passes' medians; with fewer
still, none."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from sslperf import figures
from sslperf.results import Measurement
from sslperf.stats import paired_ratio, welch_ratio


@dataclass(frozen=True)
class Efficiency:
    value: float                    # rate at N / (N × rate at 1), the medians' ratio
    low: float | None               # its 95% interval (None: too few passes to tell)
    high: float | None
    method: str                     # "paired" (pass by pass), "processes" (Welch) or "medians"

    def as_dict(self) -> dict:
        return {"value": self.value, "low": self.low, "high": self.high, "method": self.method}


def _pass_medians(m: Measurement, metric: str) -> dict[int, float]:
    """Per pass (the figure PROCESS: each pass is a fresh harness run), the median rate."""
    rates, passes = m.rates(metric), (m.figures or {}).get(figures.PROCESS) or []
    by_pass: dict[int, list[float]] = {}
    for p, r in zip(passes, rates):
        by_pass.setdefault(p, []).append(r)
    return {p: statistics.median(v) for p, v in by_pass.items()}


def interval(one: Measurement, at_n: Measurement, threads: int, metric: str = "wall") -> Efficiency | None:
    """The efficiency of `at_n` (`threads` threads) against `one` (1 thread), with its interval."""
    if one.status != "ok" or at_n.status != "ok" or not one.summary(metric) or not at_n.summary(metric):
        return None
    value = at_n.summary(metric).median / (threads * one.summary(metric).median)
    a, b = _pass_medians(one, metric), _pass_medians(at_n, metric)
    common = sorted(set(a) & set(b))
    if len(common) >= 3:
        test, method = paired_ratio([math.log(b[p] / a[p]) for p in common]), "paired"
    else:
        test, method = welch_ratio([math.log(v) for v in a.values()], [math.log(v) for v in b.values()]), "processes"
    if test is None:
        return Efficiency(value, None, None, "medians")
    return Efficiency(value, test.low / threads, test.high / threads, method)


def efficiencies(measurements: list[Measurement], metric: str = "wall") -> dict[tuple[str, str], Efficiency]:
    """Per (case id, library) of a thread count, its efficiency against the 1-thread result of the same case,
    library and mode (results without one have none)."""
    one = {(m.algorithm, m.lib, m.note): m for m in measurements if m.status == "ok" and m.size == 1}
    out = {}
    for m in measurements:
        base = one.get((m.algorithm, m.lib, m.note))
        if base is not None and m.size and (found := interval(base, m, m.size, metric)) is not None:
            out[(m.case, m.lib)] = found
    return out


def efficiency(measurements: list[Measurement], metric: str = "wall") -> dict[tuple[str, str], float]:
    """Per (case id, library), the median rate at N over N times the median rate at 1 thread."""
    return {key: e.value for key, e in efficiencies(measurements, metric).items()}
