"""The deterministic tier: instructions per operation of an in-memory case, counted by callgrind inside the
harness's loop only (or by the CPU's own counters where the harness can open them; measure.instructions). The case
is prepared, checked and its batch sized natively in a worker (the target time); then each round counts that batch
in a fresh process. A library whose inputs were deterministic counts the same in every process, so with
`count_exact_once` its first count is its last."""

from __future__ import annotations

from sslperf import figures
from sslperf.errors import SslperfError
from sslperf.libs.model import Lib
from sslperf.measure import instructions
from sslperf.cases.ids import Case
from sslperf.measure.harness_client import Worker
from sslperf.measure.modes import base, in_memory
from sslperf.results import Measurement

COUNTERS_SAID = {"auto": "the CPU's own (perf_event_open, user space) where the harness can open it, else "
                         "callgrind inside the loop only",
                 "perf": "the CPU's own (perf_event_open, user space)", "callgrind": "callgrind, inside the loop only"}


class Session(base.Session):
    def __init__(self, mode, ctx, cases):
        super().__init__(mode, ctx, cases)
        self.choice = instructions.counter_choice()
        self.workers = in_memory.Workers(ctx)
        self.iters: dict[tuple[str, str], int] = {}
        self.exact: dict[tuple[str, str], bool] = {}
        self.units: dict[tuple[str, str], tuple[str, int]] = {}
        self.hw = {lib.name: self._hardware(lib) for lib in ctx.libs}
        env = ctx.run.environment
        env["pinned_cpu"] = ctx.settings.cpu
        env["instruction_counter"] = COUNTERS_SAID[self.choice]
        env["hardware_instruction_counter"] = "; ".join(dict.fromkeys(
            state.removeprefix("none: ") if state.startswith("none") else f"present ({state})"
            for state in self.hw.values()))
        refused = {name: state for name, state in self.hw.items() if state.startswith("none")}
        if self.choice == "perf" and refused:
            name, state = next(iter(refused.items()))
            raise SslperfError(f"{instructions.COUNTER_VARIABLE}=perf asks for the CPU's own instruction counter, "
                               f"but the harness for {name} cannot open it here ({state.removeprefix('none: ')}).",
                               hint="A VM without a virtual PMU or a container without perf_event access has none; "
                                    "unset the variable (auto falls back to callgrind) or set it to callgrind.")

    def _hardware(self, lib: Lib) -> str:
        """What `lib`'s harness says of the CPU's counters."""
        with Worker(lib, self.workers.env, binary=self.workers.binaries[lib.name]) as worker:
            reply = worker.request("info", timeout=60).data
        return str(reply.get("hw_counters") or "none: not reported by the harness")

    def prepare(self, case: Case, libs: list[Lib]) -> base.Prepared:
        self.workers.spawn(libs)
        try:
            results, iters = self.workers.first(case, libs, instructions.batch)
            self.workers.release(case, libs)
        finally:
            self.workers.close()
        self.iters.update({(case.id, name): n for name, n in iters.items()})
        self.units.update({(case.id, name): (m.unit, m.bytes_per_op) for name, m in results.items()})
        return base.Prepared(results, self.passes)

    def take(self, case: Case, lib: Lib) -> Measurement | None:
        key = (case.id, lib.name)
        if self.exact.get(key) and self.ctx.settings.count_exact_once:
            return None
        try:
            counted = self._count(lib, case.id, self.iters[key])
        except SslperfError as failed:
            return Measurement.of(case, lib.name, "error", failed.message)
        self.exact[key] = counted.deterministic
        unit, bytes_per_op = self.units[key]
        got = Measurement.of(case, lib.name, unit=unit, bytes_per_op=bytes_per_op, ops=[self.iters[key]],
                          counter=counted.counter, deterministic=counted.deterministic)
        got.figures = {figures.INSTRUCTIONS: [counted.instructions]}
        if counted.cycles is not None:
            got.figures[figures.CYCLES] = [counted.cycles]
        self.ctx.run.environment.setdefault("instruction_counters", {})[lib.name] = counted.counter
        return got

    def _count(self, lib: Lib, case_id: str, iters: int) -> instructions.Counted:
        """One count with the chosen counter: the CPU's own where the harness can open it (auto, perf), else
        callgrind."""
        available = not self.hw.get(lib.name, "none").startswith("none")
        env, cpu = self.workers.env, self.ctx.settings.cpu
        if self.choice in ("auto", "perf") and available:
            return instructions.hardware_count(lib, case_id, iters, env, cpu)
        return instructions.count(lib, case_id, iters, env, cpu)

    def close(self) -> None:
        self.workers.close()

    def cpus(self) -> set[int]:
        return {self.ctx.settings.cpu} if self.ctx.settings.cpu is not None else set()


MODE = base.Mode("instructions", "instructions counted inside the loop", in_memory.MODE_TEMPLATES,
                 base.ALL_BACKENDS, (figures.INSTRUCTIONS, figures.CYCLES), base.TIME_METRICS, Session,
                 counter="instructions")
