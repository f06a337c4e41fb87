"""What a run records of its own noise, for the verdicts that compare it with another run (sslperf.verdict):
the conditions it warned about (flags: a busy CPU, load, wide intervals, a moving clock) and how far its worker
processes of one case spread apart (spread: the 90th percentile over its results of the range of the
per-process medians, relative to their median). Within one run that spread is paired away; between two runs
a machine busy with other work moves one run against the other by about as much, so a verdict between runs that
recorded noise must exceed it."""

from __future__ import annotations

import numpy as np

from sslperf import figures
from sslperf.results import Measurement, Run

SPREAD_PERCENTILE = 90


def process_spread(m: Measurement, metric: str = "wall") -> float | None:
    """The range of `m`'s per-process median rates over their median (None with fewer than 2 processes)."""
    rates, pids = m.rates(metric), (m.figures or {}).get(figures.PROCESS)
    if not pids or len(pids) != len(rates):
        return None
    by_process: dict[int, list[float]] = {}
    for pid, rate in zip(pids, rates):
        by_process.setdefault(pid, []).append(rate)
    medians = [float(np.median(v)) for v in by_process.values()]
    if len(medians) < 2 or not np.median(medians):
        return None
    return (max(medians) - min(medians)) / float(np.median(medians))


def summarise(run: Run, flags: list[str]) -> dict:
    """The run's noise record: its flags and its spread."""
    spreads = [s for m in run.measurements if m.status == "ok" and (s := process_spread(m)) is not None]
    spread = float(np.percentile(spreads, SPREAD_PERCENTILE)) if spreads else 0.0
    return {"flags": flags, "spread": round(spread, 4)}
