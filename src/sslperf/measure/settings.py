"""How a run is taken, whatever its modes: the sample time and count, the worker processes (passes), the CPU the
workers are pinned to, the counter (time or instructions) and the CPU what-if mask. Each mode's own options (GETs
per round, connection counts, thread time …) are its module's Options; measure.plan makes these from the verbs'
options."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from sslperf import pinning

PROCESSES = 5            # worker processes (passes) per case and library, by default


@dataclass
class Settings:
    target_ms: float
    samples: int
    mask: str | None = None
    warmup_samples: int = 1
    processes: int = PROCESSES
    cpu: int | None = field(default_factory=lambda: pinning.choose(None))    # None: not pinned
    counter: str = "time"       # "time": wall and CPU time; "instructions": counts, one per process
    fixed_layout: bool = False  # workers without address-space randomisation (all processes laid out alike)
    count_exact_once: bool = False   # instructions: a library whose inputs are deterministic counted in one process

    def as_dict(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_dict(data: dict) -> Settings:
        return Settings(**{k: v for k, v in data.items() if k in Settings.__dataclass_fields__})


# What a run's settings record beside its labels: these fields, the modes that measured it, and what the modes add
# as they run (thread contention, GETs per round, the loopback server, serve-load's plan). A label of one of these
# names would replace what the run was measured with, so the scheduler refuses it (scheduler.measure).
RECORDED = frozenset(Settings.__dataclass_fields__) | {"modes", "contention", "requests", "server_lib", "serve"}
