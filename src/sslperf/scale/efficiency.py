"""Scaling efficiency: rate at N threads / (N × rate at 1 thread) of the same case, library and thread mode."""

from __future__ import annotations

from sslperf.results import Measurement


def efficiency(measurements: list[Measurement], metric: str = "wall") -> dict[tuple[str, str], float]:
    """Per (case id, library), the median rate at N over N times the median rate at 1 thread."""
    one = {(m.algorithm, m.lib, m.note): m.summary(metric).median for m in measurements
           if m.status == "ok" and m.size == 1 and m.summary(metric)}
    out = {}
    for m in measurements:
        base = one.get((m.algorithm, m.lib, m.note))
        if base and m.status == "ok" and m.summary(metric) and m.size:
            out[(m.case, m.lib)] = m.summary(metric).median / (m.size * base)
    return out
