"""The measurements `recommend` decides from, looked up by case: as the CPU is and with AES-NI hidden, each with
the run it came from and what that run recorded of its noise; and a cost made of several cases (a group's key
generation + derivation) as one measurement the verdict rule can weigh."""

from __future__ import annotations

import statistics

from sslperf import figures
from sslperf.results import Measurement
from sslperf.stats import NOISY_CI


class Evidence:
    """The measurements advice rests on, looked up by case id. `origin`: the run each came from (key: the case,
    or `case@masked` for the masked ones); `noise`: what each run recorded of its noise (Run.noise())."""

    def __init__(self, plain: list[Measurement], masked: list[Measurement], sources: list[str] | None = None,
                 origin: dict[str, str] | None = None, noise: dict[str, dict] | None = None):
        self.plain = {m.case: m for m in plain if m.status == "ok" and m.summary()}
        self.masked = {m.case: m for m in masked if m.status == "ok" and m.summary()}
        self.missing_reason = {m.case: m.reason or m.status for m in plain if m.status != "ok"}
        self.missing_status = {m.case: m.status for m in plain if m.status != "ok"}     # "n/a" or "error"
        self.sources = sources or []
        self.origin = origin or {}
        self.noise = noise or {}

    def measurement(self, case: str, masked: bool = False) -> Measurement | None:
        return (self.masked if masked else self.plain).get(case)

    def run_of(self, case: str, masked: bool = False) -> str | None:
        """The run `case` was measured in (None: not known, e.g. measurements given without their runs)."""
        return self.origin.get(f"{case}@masked" if masked else case)

    def micros(self, case: str, masked: bool = False) -> float | None:
        m = self.measurement(case, masked)
        return m.micros_per_op("wall") if m else None

    def micros_sum(self, cases: tuple[str, ...]) -> float | None:
        values = [self.micros(c) for c in cases]
        return None if any(v is None for v in values) else sum(values)

    def side_micros(self, case: str, side: str) -> float | None:
        """A TLS case's per-handshake CPU on one side ("client" or "server")."""
        m = self.plain.get(case)
        return m.figure_micros_per_op(SIDES[side]) if m else None

    def figure(self, case: str, masked: bool = False) -> str:
        """`0.52 µs (2.61 GB/s ±1.2%, n=15)`: a figure with its spread, for the argument."""
        m = self.measurement(case, masked)
        if not m:
            return "not measured"
        s = m.summary("wall")
        us = m.micros_per_op("wall")
        rate = (f"{s.median / 1e9:.2f} GB/s" if s.median >= 1e9 else f"{s.median / 1e6:.0f} MB/s") \
            if m.unit == "bytes" else f"{s.median:,.0f}/s"
        return f"{micros_text(us)} ({rate} ±{s.ci_half_width * 100:.1f}%, n={s.n})"

    def noisy(self) -> list[tuple[str, float]]:
        """(figure, CI half-width) of each measurement whose 95% CI is wider than ±NOISY_CI, widest first."""
        found = [(case + (" (AES-NI hidden)" if masked else ""), s.ci_half_width)
                 for masked, table in ((False, self.plain), (True, self.masked))
                 for case, m in table.items() if (s := m.summary("wall")) and s.ci_half_width > NOISY_CI]
        return sorted(found, key=lambda f: -f[1])

    def recorded_noise(self) -> dict[str, list[str]]:
        """run id → the noise flags it recorded (busy CPUs, load, wide CIs), for the runs that recorded any."""
        return {run_id: list(n["flags"]) for run_id, n in self.noise.items() if n and n.get("flags")}


SIDES = {"client": figures.CLIENT_CPU, "server": figures.SERVER_CPU}


def summed(parts: list[Measurement], figure: str | None = None) -> Measurement | None:
    """The cost of doing each of `parts` once, as one measurement (ns per operation as its wall time, of `figure`
    instead of the wall time where given): one sample per worker process, the sum of each part's median there, when
    every part was measured in the same processes (so the verdict rule can pair them by process); else sample by
    sample. A single part's wall time is the part itself."""
    if len(parts) == 1 and figure is None:
        return parts[0]
    costs = [_per_op(m, figure) for m in parts]
    if not all(costs):
        return None
    pids = [(m.figures or {}).get(figures.PROCESS) for m in parts]
    if all(p and len(p) == len(c) for p, c in zip(pids, costs)) and len({frozenset(p) for p in pids}) == 1:
        order = list(dict.fromkeys(pids[0]))
        totals = [sum(statistics.median([v for q, v in zip(p, c) if q == pid]) for p, c in zip(pids, costs))
                  for pid in order]
        marks: dict | None = {figures.PROCESS: order}
    else:
        totals = [sum(values) for values in zip(*costs)]
        marks = None
    first = parts[0]
    # What the connection negotiated stays with its cost (one case, or several that negotiated alike).
    same = all(m.negotiated == first.negotiated for m in parts)
    return Measurement(" + ".join(m.case for m in parts), first.family, first.group, first.algorithm,
                       first.operation, None, first.workload, first.lib, "ok", ops=[1] * len(totals),
                       wall_ns=totals, figures=marks, negotiated=first.negotiated if same else None)


def _per_op(m: Measurement, figure: str | None) -> list[float]:
    """ns per operation, sample by sample (of the wall time, or of `figure`)."""
    times = m.wall_ns if figure is None else (m.figures or {}).get(figure) or []
    if len(times) != len(m.ops):
        return []
    return [t / n for t, n in zip(times, m.ops) if n > 0 and t > 0]


def micros_text(us: float) -> str:
    if us >= 1000:
        return f"{us / 1000:,.2f} ms"
    return f"{us:,.1f} µs" if us >= 10 else f"{us:.2f} µs"
