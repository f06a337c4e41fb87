"""One profile, whichever tool made it: each function's self and inclusive
share of the profiled cost, and what was profiled, with what, how long."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

# The harness function around the timed loop (harness/profile.c): all that is profiled.
LOOP_FUNCTION = "sslperf_profiled_loop"


@dataclass
class FunctionCost:
    name: str
    self_share: float           # % of the profiled cost spent in the function's own code
    inclusive_share: float      # % spent in it and in everything it calls


@dataclass
class Profile:
    lib: str
    version_string: str
    case: str
    tool: str                   # perf | callgrind
    unit: str                   # what `total` counts
    total: float                # cost of the whole profiled loop, in `unit`
    ops: int                    # operations the loop did
    wall_ns: int                # the loop's wall and CPU time (under callgrind: slowed down)
    cpu_ns: int
    scope: str                  # what was profiled, in words
    symbols: str                # how the names were found, in words
    raw: str                    # the tool's own output file
    reports: list[str]          # the tool's text reports that were parsed
    functions: list[FunctionCost] = field(default_factory=list)
    samples: int | None = None  # perf only

    @property
    def cost_per_op(self) -> float:
        return self.total / self.ops if self.ops else 0.0

    def function(self, name: str) -> FunctionCost | None:
        return next((f for f in self.functions if f.name == name), None)

    def top_self(self, n: int) -> list[FunctionCost]:
        return sorted(self.functions, key=lambda f: -f.self_share)[:n]

    def top_inclusive(self, n: int) -> list[FunctionCost]:
        """By inclusive share, without the frames around the whole loop (main,
        the loop, the case's run function: ~100% everywhere, they say nothing)."""
        loop = self.function(LOOP_FUNCTION)
        ceiling = (loop.inclusive_share if loop else 100.0) - 1.0     # perf loses a few stacks
        inner = [f for f in self.functions if f.inclusive_share < ceiling]
        return sorted(inner, key=lambda f: -f.inclusive_share)[:n]

    def to_dict(self) -> dict:
        return {**asdict(self), "cost_per_op": self.cost_per_op}

    @classmethod
    def from_dict(cls, data: dict) -> Profile:
        data = {k: v for k, v in data.items() if k != "cost_per_op"}
        return cls(**{**data, "functions": [FunctionCost(**f) for f in data.get("functions", [])]})
