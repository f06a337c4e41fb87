"""Running cases × libraries. Every library's samples of a case come from
several fresh worker processes (pyperf's idea), so the interval covers what
differs between processes — memory layout, page placement, the moment — and
not only what varies inside one. The run goes in passes, each with fresh
workers, each giving every case a few rounds: a case's processes are spread
over the whole run, so a burst of interference (on this VM the vCPU runs at
~0.6× for a second now and then) meets one of them rather than all. In each
pass the case is prepared and checked, warmed up, and sampled in rounds that
alternate the libraries (A B, B A, …) so that drift hits them alike; the
rounds go on across passes. Every worker is pinned to one CPU (recorded).
A library that cannot run a case records n/a with the reason; a crash is
recorded as an error and the run goes on."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from sslperf.errors import SslperfError
from sslperf.libs.build import last_build
from sslperf.libs.model import Lib
from sslperf.measure import environment, instructions, pinning
from sslperf.measure.harness_client import HarnessCrashed, Worker, harness_binary
from sslperf.measure.suites import Case
from sslperf.results import (COUNTER_KEY, CYCLES_KEY, DETERMINISTIC_KEY, INSTRUCTIONS_KEY, OP_WALL_KEY, PROCESS_KEY,
                             LibInfo, Measurement, Run)
from sslperf.stats import NOISY_CI

# A case whose single operation outlasts the sample target (RSA-4096 key
# generation) gets fewer samples, so no case takes longer than this per lib.
MAX_CASE_SECONDS = 15.0
MIN_SAMPLES = 3
PROCESSES = 5            # worker processes per case and library, by default
# TLS: each side's CPU time per sample; each handshake's wall time (a uniform sample of each sample's, for percentiles)
EXTRA_FIGURES = ("client_cpu_ns", "server_cpu_ns", OP_WALL_KEY)


@dataclass
class Settings:
    target_ms: float
    samples: int
    mask: str | None = None
    warmup_samples: int = 1
    processes: int = PROCESSES
    cpu: int | None = field(default_factory=lambda: pinning.choose(None))    # None: not pinned
    counter: str = "time"       # "time": wall and CPU time; "instructions": callgrind counts, one per process
    fixed_layout: bool = False  # workers without address-space randomisation (all processes laid out alike)
    count_exact_once: bool = False   # instructions: a library whose inputs are deterministic counted in one process

    def as_dict(self) -> dict:
        return {"target_ms": self.target_ms, "samples": self.samples, "mask": self.mask,
                "warmup_samples": self.warmup_samples, "processes": self.processes, "cpu": self.cpu,
                "counter": self.counter, "fixed_layout": self.fixed_layout,
                "count_exact_once": self.count_exact_once}


Progress = Callable[[str, int, int], None]      # (what, done, total)


def lib_info(lib: Lib, reply: dict) -> LibInfo:
    """What a library says about itself (the harness's `info`), as the run records it."""
    return LibInfo(lib.name, reply.get("flavor", lib.flavor), lib.version, reply.get("version_string", ""),
                   lib.variant_label, lib.kind, reply.get("ia32cap"))


def _measurement(case: Case, lib: Lib, status: str, reason: str | None = None) -> Measurement:
    return case.result(lib.name, status, reason)


@dataclass
class _Plan:
    """One case's schedule across the passes of a run."""
    case: Case
    results: dict[str, Measurement]
    iters: dict[str, int]
    ready: list[Lib]
    samples: int = 0
    per_process: int = 0
    taken: int = 0          # rounds taken so far


class Runner:
    def __init__(self, libs: list[Lib], settings: Settings, extra_settings: dict | None = None,
                 extra_env: dict[str, str] | None = None):
        self.libs = libs
        self.settings = settings
        self.env = {**environment.mask_env(settings.mask), **(extra_env or {})}
        env = {**environment.capture(settings.mask), "pinned_cpu": settings.cpu}
        self.counter_choice = instructions.counter_choice() if settings.counter == "instructions" else ""
        self.hw_counters: dict[str, str] = {}      # per library, what its harness says of the CPU's counters
        if settings.counter == "instructions":
            env["instruction_counter"] = {
                "auto": "the CPU's own (perf_event_open, user space) where the harness can open it, else "
                        "callgrind inside the loop only", "perf": "the CPU's own (perf_event_open, user space)",
                "callgrind": "callgrind, inside the loop only"}[self.counter_choice]
        self.run = Run.new({**settings.as_dict(), **(extra_settings or {})}, env)
        busy = pinning.busy_warning(settings.cpu)
        if busy:
            self.run.warnings.append(busy)
        self.binaries = {lib.name: harness_binary(lib) for lib in libs}     # compiled once, not per process
        self.workers: dict[str, Worker] = {}
        try:
            self._spawn(libs)
            for lib in libs:
                reply = self.workers[lib.name].request("info", timeout=60).data
                self.run.libs.append(lib_info(lib, reply))
                self.hw_counters[lib.name] = str(reply.get("hw_counters") or "none: not reported by the harness")
                if reply.get("provider"):      # the FIPS module this column ran with, as it describes itself
                    self.run.environment.setdefault("providers", {})[lib.name] = reply["provider"]
            if settings.counter == "instructions":    # the harness opened (or could not open) the CPU's counters itself
                self.run.environment["hardware_instruction_counter"] = "; ".join(
                    dict.fromkeys(state.removeprefix("none: ") if state.startswith("none") else f"present ({state})"
                                  for state in self.hw_counters.values()))
            refused = {name: state for name, state in self.hw_counters.items() if state.startswith("none")}
            if self.counter_choice == "perf" and refused:
                name, state = next(iter(refused.items()))
                raise SslperfError(f"{instructions.COUNTER_VARIABLE}=perf asks for the CPU's own instruction counter, "
                                   f"but the harness for {name} cannot open it here "
                                   f"({state.removeprefix('none: ')}).",
                                   hint="A VM without a virtual PMU or a container without perf_event access has "
                                        "none; unset the variable (auto falls back to callgrind) or set it to "
                                        "callgrind.")
        finally:
            self.close()

    def _spawn(self, libs: list[Lib]) -> None:
        """Fresh worker processes for `libs`, pinned."""
        self.close()
        for lib in libs:
            self.workers[lib.name] = Worker(lib, self.env, cpu=self.settings.cpu, binary=self.binaries[lib.name],
                                            fixed_layout=self.settings.fixed_layout)

    def close(self) -> None:
        for worker in self.workers.values():
            worker.close()
        self.workers = {}

    def measure(self, cases: list[Case], progress: Progress | None = None,
                on_measurement: Callable[[Measurement], None] | None = None,
                on_update: Callable[[Measurement], None] | None = None) -> Run:
        """Measure every case on every lib. Time is taken in passes: each
        pass has fresh worker processes and gives every case a few rounds, so
        a case's processes are spread over the whole run and a burst of
        interference meets one of them, not all. A measurement goes to
        `on_measurement` when its first pass ends (default: appended to the
        run) and to `on_update` after each later pass."""
        keep = on_measurement or self.run.measurements.append
        try:
            if self.settings.counter == "instructions":
                for index, case in enumerate(cases):
                    if progress:
                        progress(case.id, index, len(cases))
                    for measurement in self._count_case(case):
                        keep(measurement)
            else:
                self._passes(cases, keep, on_update, progress)
        except KeyboardInterrupt:
            self.run.warnings += self._interrupted(cases)
            raise
        finally:
            self.close()
        if progress:
            progress("done", 1, 1)
        self.run.finished = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        self.run.complete = True
        self.run.warnings += self._warnings()
        return self.run

    def _passes(self, cases: list[Case], keep, on_update, progress: Progress | None) -> None:
        passes = max(1, self.settings.processes)
        total, done = len(cases) * passes, 0
        plans: list[_Plan] = []
        self._spawn(self.libs)
        for case in cases:                    # pass 1: prepare, check, calibrate, the first rounds
            if progress:
                progress(f"{case.id} (pass 1 of {passes})", done, total)
            plans.append(self._first_pass(case))
            for lib in self.libs:
                keep(plans[-1].results[lib.name])
            done += 1
        for number in range(2, passes + 1):
            self._spawn(self.libs)            # fresh processes for this pass
            for plan in plans:
                if progress:
                    progress(f"{plan.case.id} (pass {number} of {passes})", done, total)
                done += 1
                if plan.ready and plan.taken < plan.samples:
                    self._next_pass(plan)
                    for lib in self.libs:
                        if on_update:
                            on_update(plan.results[lib.name])

    def _call(self, lib: Lib, line: str, timeout: float) -> dict:
        try:
            return self.workers[lib.name].request(line, timeout).data
        except HarnessCrashed as crash:
            self.workers[lib.name].restart()
            return {"type": "error", "reason": crash.message}

    def _prepare(self, case: Case, libs: list[Lib]) -> tuple[dict[str, dict], dict[str, dict]]:
        """Prepare (and so check) `case` in each lib's current worker: the
        replies of the libs that are ready, and of those that are not."""
        ready, not_ready = {}, {}
        for lib in libs:
            reply = self._call(lib, f"prepare {case.id}", timeout=300)
            (ready if reply["type"] == "prepared" else not_ready)[lib.name] = reply
        return ready, not_ready

    def _first_process(self, case: Case) -> tuple[dict[str, Measurement], dict[str, int]]:
        """Fresh workers; the case prepared (and so checked) and its batch
        calibrated in each. Per library its measurement (n/a or an error
        where it cannot run the case) and, where it can, its batch size."""
        results: dict[str, Measurement] = {}
        iters: dict[str, int] = {}
        target_ns = int(self.settings.target_ms * 1e6)
        prepared, refused = self._prepare(case, self.libs)
        for lib in self.libs:
            if lib.name in refused:
                reply = refused[lib.name]
                results[lib.name] = _measurement(case, lib, "n/a" if reply["type"] == "na" else "error",
                                                 reply.get("reason"))
                continue
            m = results[lib.name] = _measurement(case, lib, "ok")
            reply = prepared[lib.name]
            m.unit, m.bytes_per_op, m.note = reply["unit"], reply["bytes_per_op"], reply.get("note")
            calibrated = self._call(lib, f"calibrate {case.id} {target_ns}", timeout=300)
            if calibrated["type"] == "calibrated":
                iters[lib.name] = calibrated["iters"] if self.settings.counter == "time" else \
                    instructions.batch(calibrated["iters"])
            else:
                m.status, m.reason = "error", calibrated.get("reason")
        return results, iters

    def _first_pass(self, case: Case) -> _Plan:
        """The case in this pass's workers: prepared, checked, calibrated,
        warmed up, its samples planned, its first rounds taken."""
        results, iters = self._first_process(case)
        plan = _Plan(case, results, iters, [lib for lib in self.libs if lib.name in iters])
        # The warm-up also tells how long a round takes, which bounds the
        # samples of a case whose single operation is slow.
        round_ns = self._warm_up(case, plan.ready, results, iters)
        plan.samples = self.settings.samples
        if round_ns:
            budget = int(MAX_CASE_SECONDS * max(len(plan.ready), 1) * 1e9 / round_ns)
            plan.samples = max(MIN_SAMPLES, min(plan.samples, budget))
        plan.per_process = math.ceil(plan.samples / max(1, min(self.settings.processes, plan.samples)))
        self._rounds(plan)
        return plan

    def _next_pass(self, plan: _Plan) -> None:
        """The case again in this pass's fresh workers: prepared (and so
        checked) again, warmed up, a few more rounds."""
        prepared, refused = self._prepare(plan.case, plan.ready)
        for name, reply in refused.items():
            plan.results[name].status = "error"
            plan.results[name].reason = f"ready in an earlier worker, then: {reply.get('reason')}"
        plan.ready = [lib for lib in plan.ready if lib.name in prepared]
        self._warm_up(plan.case, plan.ready, plan.results, plan.iters)
        self._rounds(plan)

    def _rounds(self, plan: _Plan) -> None:
        """This pass's rounds of the plan, the libraries alternating A B, B A."""
        for _ in range(min(plan.per_process, plan.samples - plan.taken)):
            for lib in plan.ready if plan.taken % 2 == 0 else plan.ready[::-1]:
                self._sample(plan.case, lib, plan.results[lib.name], plan.iters, keep=True)
            plan.taken += 1
        plan.ready = [lib for lib in plan.ready if plan.results[lib.name].status == "ok"]
        self._release(plan.case, plan.ready)

    def _count_case(self, case: Case) -> list[Measurement]:
        """Instructions per operation: the case prepared and checked in a
        worker, its batch sized there (the target time, natively), then one
        callgrind count of that batch per process, libraries alternating. A
        library whose inputs were deterministic counts the same in every
        process, so with `count_exact_once` its first count is its last."""
        self._spawn(self.libs)
        results, iters = self._first_process(case)
        self._release(case, self.libs)
        self.close()
        ready = [lib for lib in self.libs if lib.name in iters]
        for process in range(self.settings.processes):
            for lib in ready if process % 2 == 0 else ready[::-1]:
                m = results[lib.name]
                exact = (m.extra or {}).get(DETERMINISTIC_KEY)
                if m.status != "ok" or (process and exact and self.settings.count_exact_once):
                    continue
                try:
                    counted = self._count(lib, case.id, iters[lib.name])
                except SslperfError as failed:
                    m.status, m.reason = "error", failed.message
                    continue
                m.ops.append(iters[lib.name])
                m.extra = m.extra or {}
                m.extra.setdefault(INSTRUCTIONS_KEY, []).append(counted.instructions)
                m.extra.setdefault(PROCESS_KEY, []).append(process)
                m.extra[DETERMINISTIC_KEY] = counted.deterministic
                m.extra[COUNTER_KEY] = counted.counter
                if counted.cycles is not None:
                    m.extra.setdefault(CYCLES_KEY, []).append(counted.cycles)
                self.run.environment.setdefault("instruction_counters", {})[lib.name] = counted.counter
        return [results[lib.name] for lib in self.libs]

    def _count(self, lib: Lib, case_id: str, iters: int) -> instructions.Counted:
        """One count with the chosen counter: the CPU's own where the harness
        can open it (auto, perf), else callgrind; perf where there is none is
        an error that says why."""
        available = not self.hw_counters.get(lib.name, "none").startswith("none")
        if self.counter_choice == "perf" and not available:
            raise SslperfError(f"{instructions.COUNTER_VARIABLE}=perf, but the CPU's counters cannot be opened here "
                               f"({self.hw_counters.get(lib.name, 'none').removeprefix('none: ')}).")
        if self.counter_choice in ("auto", "perf") and available:
            return instructions.hardware_count(lib, case_id, iters, self.env, self.settings.cpu)
        return instructions.count(lib, case_id, iters, self.env, self.settings.cpu)

    def _warm_up(self, case: Case, ready: list[Lib], results: dict[str, Measurement], iters: dict[str, int]) -> int:
        """Warm-up rounds, thrown away; the wall time of the last one."""
        round_ns = 0
        for _ in range(self.settings.warmup_samples):
            round_ns = sum(self._sample(case, lib, results[lib.name], iters, keep=False) for lib in ready)
        return round_ns

    def _release(self, case: Case, libs: list[Lib]) -> None:
        for lib in libs:
            if lib.name in self.workers:
                self._call(lib, f"release {case.id}", timeout=60)

    def _sample(self, case: Case, lib: Lib, measurement: Measurement, iters: dict[str, int], keep: bool) -> int:
        """One sample of `case` on `lib`; returns its wall time in ns (0 on error)."""
        if measurement.status != "ok":
            return 0
        reply = self._call(lib, f"sample {case.id} {iters[lib.name]} 1",
                           timeout=max(120, 50 * self.settings.target_ms / 1000))
        if reply["type"] != "samples":
            measurement.status, measurement.reason = "error", reply.get("reason")
            return 0
        if keep:
            measurement.ops += reply["ops"]
            measurement.wall_ns += reply["wall_ns"]
            measurement.cpu_ns += reply["cpu_ns"]
            measurement.extra = measurement.extra or {}
            measurement.extra.setdefault(PROCESS_KEY, []).extend([self.workers[lib.name].pid] * len(reply["ops"]))
            for key in EXTRA_FIGURES:
                if key in reply:
                    measurement.extra.setdefault(key, []).extend(reply[key])
        return reply["wall_ns"][0]

    def _interrupted(self, cases: list[Case]) -> list[str]:
        """The warnings of a run stopped with Ctrl-C: what it holds, and the machine's state."""
        done = len({m.case for m in self.run.measurements})
        found = [f"this run was interrupted (Ctrl-C) with {done} of {len(cases)} case{'' if len(cases) == 1 else 's'} "
                 "measured: a case stopped before its last pass has fewer samples and worker processes than "
                 "asked, so its CI is wider and it is a weaker basis for a comparison."]
        try:
            found += self._warnings()
        except Exception:             # a second Ctrl-C or an unreadable /proc: the run's end matters more
            pass
        return found

    def _warnings(self) -> list[str]:
        warnings = environment.noise_warnings(self.run.environment, environment.capture(self.settings.mask),
                                              last_build())
        noisy = [m for m in self.run.measurements if m.status == "ok" and (s := m.summary()) and s.ci_half_width > NOISY_CI]
        if noisy:
            names = ", ".join(f"{m.case} on {m.lib}" for m in noisy[:3]) + (" …" if len(noisy) > 3 else "")
            warnings.append(f"{len(noisy)} result(s) have a 95% CI wider than ±{NOISY_CI:.0%} ({names}): the machine "
                            "is noisy or the samples are short; use --time to lengthen them or --samples for more.")
        return warnings
