"""Running cases × libraries: one harness worker per library, every case
prepared and checked in each, calibrated per library, then sampled in
rounds that alternate the libraries (A B, B A, …) so that machine drift
hits them alike. A library that cannot run a case records n/a with the
reason; a crash is recorded as an error and the run goes on."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from sslperf.measure import environment
from sslperf.libs.model import Lib
from sslperf.measure.harness_client import HarnessCrashed, Worker
from sslperf.results import LibInfo, Measurement, Run
from sslperf.stats import NOISY_CI
from sslperf.measure.suites import Case

# A case whose single operation outlasts the sample target (RSA-4096 key
# generation) gets fewer samples, so no case takes longer than this per lib.
MAX_CASE_SECONDS = 15.0
MIN_SAMPLES = 3
EXTRA_FIGURES = ("client_cpu_ns", "server_cpu_ns")      # TLS: each side's CPU time


@dataclass
class Settings:
    target_ms: float
    samples: int
    mask: str | None = None
    warmup_samples: int = 1

    def as_dict(self) -> dict:
        return {"target_ms": self.target_ms, "samples": self.samples, "mask": self.mask,
                "warmup_samples": self.warmup_samples}


Progress = Callable[[str, int, int], None]      # (what, done, total)


def lib_info(lib: Lib, reply: dict) -> LibInfo:
    """What a library says about itself (the harness's `info`), as the run records it."""
    return LibInfo(lib.name, reply.get("flavor", lib.flavor), lib.version, reply.get("version_string", ""),
                   lib.variant_label, lib.kind, reply.get("ia32cap"))


def _measurement(case: Case, lib: Lib, status: str, reason: str | None = None) -> Measurement:
    return Measurement(case.id, case.family, case.group, case.algorithm, case.operation, case.size, case.workload,
                       lib.name, status, reason)


class Runner:
    def __init__(self, libs: list[Lib], settings: Settings, extra_settings: dict | None = None,
                 extra_env: dict[str, str] | None = None):
        self.libs = libs
        self.settings = settings
        env = {**environment.mask_env(settings.mask), **(extra_env or {})}
        self.run = Run.new({**settings.as_dict(), **(extra_settings or {})}, environment.capture(settings.mask))
        self.workers: dict[str, Worker] = {}
        try:
            for lib in libs:
                worker = Worker(lib, env)
                self.workers[lib.name] = worker
                info = worker.request("info", timeout=60).data
                self.run.libs.append(lib_info(lib, info))
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        for worker in self.workers.values():
            worker.close()

    def measure(self, cases: list[Case], progress: Progress | None = None,
                on_measurement: Callable[[Measurement], None] | None = None) -> Run:
        """Measure every case on every lib; each measurement goes to
        `on_measurement` as its case ends (default: appended to the run)."""
        keep = on_measurement or self.run.measurements.append
        total = len(cases)
        for index, case in enumerate(cases):
            if progress:
                progress(case.id, index, total)
            for measurement in self._measure_case(case):
                keep(measurement)
        if progress:
            progress("done", total, total)
        self.run.finished = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        self.run.complete = True
        self.run.warnings = self._warnings()
        return self.run

    def _call(self, lib: Lib, line: str, timeout: float) -> dict:
        try:
            return self.workers[lib.name].request(line, timeout).data
        except HarnessCrashed as crash:
            self.workers[lib.name].restart()
            return {"type": "error", "reason": crash.message}

    def _measure_case(self, case: Case) -> list[Measurement]:
        results: dict[str, Measurement] = {}
        ready: list[Lib] = []
        iters: dict[str, int] = {}
        target_ns = int(self.settings.target_ms * 1e6)
        for lib in self.libs:
            reply = self._call(lib, f"prepare {case.id}", timeout=300)
            if reply["type"] != "prepared":
                status = "n/a" if reply["type"] == "na" else "error"
                results[lib.name] = _measurement(case, lib, status, reply.get("reason"))
                continue
            measurement = _measurement(case, lib, "ok")
            measurement.unit = reply["unit"]
            measurement.bytes_per_op = reply["bytes_per_op"]
            measurement.note = reply.get("note")
            calibrated = self._call(lib, f"calibrate {case.id} {target_ns}", timeout=300)
            if calibrated["type"] != "calibrated":
                measurement.status, measurement.reason = "error", calibrated.get("reason")
            else:
                iters[lib.name] = calibrated["iters"]
                ready.append(lib)
            results[lib.name] = measurement

        # Warm-up rounds first; they also tell how long a round takes, which
        # bounds the samples of a case whose single operation is slow.
        round_ns = 0
        for _ in range(self.settings.warmup_samples):
            round_ns = sum(self._sample(case, lib, results[lib.name], iters, keep=False) for lib in ready)
        samples = self.settings.samples
        if round_ns:
            budget = int(MAX_CASE_SECONDS * max(len(ready), 1) * 1e9 / round_ns)
            samples = max(MIN_SAMPLES, min(samples, budget))
        for round_index in range(samples):
            for lib in ready if round_index % 2 == 0 else reversed(ready):
                self._sample(case, lib, results[lib.name], iters, keep=True)
        for lib in ready:
            self._call(lib, f"release {case.id}", timeout=60)
        return [results[lib.name] for lib in self.libs]

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
            for key in EXTRA_FIGURES:
                if key in reply:
                    measurement.extra = measurement.extra or {}
                    measurement.extra.setdefault(key, []).extend(reply[key])
        return reply["wall_ns"][0]

    def _warnings(self) -> list[str]:
        warnings = environment.noise_warnings(self.run.environment, environment.capture(self.settings.mask))
        noisy = [m for m in self.run.measurements if m.status == "ok" and (s := m.summary()) and s.ci_half_width > NOISY_CI]
        if noisy:
            names = ", ".join(f"{m.case} on {m.lib}" for m in noisy[:3]) + (" …" if len(noisy) > 3 else "")
            warnings.append(f"{len(noisy)} result(s) have a 95% CI wider than ±{NOISY_CI:.0%} ({names}): the machine "
                            "is noisy or the samples are short; use --time to lengthen them or --samples for more.")
        return warnings
