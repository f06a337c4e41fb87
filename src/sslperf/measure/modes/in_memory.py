"""In memory, in pinned harness workers (the serve protocol, harness/main.c): every case of `speed` and `api`, TLS
handshakes, resumption and bulk transfer with client and server in one process. A pass starts a fresh worker per
library (pyperf's idea: the interval then covers what differs between processes — memory layout, page placement,
the moment — not only what varies inside one). In each pass a case is prepared and checked in every worker,
calibrated (first pass) so one sample lasts the target time, warmed up (the warm-up round thrown away), then
sampled in the scheduler's rounds; a case whose single operation is slow (RSA-4096 key generation) gets fewer
samples, so no case takes longer than MAX_CASE_SECONDS per library."""

from __future__ import annotations


from sslperf import figures, negotiation
from sslperf.libs.model import Lib
from sslperf.measure import environment
from sslperf.cases.ids import Case
from sslperf.measure.harness_client import HarnessCrashed, Worker, harness_binary
from sslperf.measure.modes import base
from sslperf.results import Measurement
from sslperf.verdict import waits

MAX_CASE_SECONDS = 15.0
MIN_SAMPLES = 3
RETAKES = 2             # a sample that waited for its CPU is taken again at most this many times
FUTILE_RETAKES = 3      # retakes in a row that waited again: the CPU is shared all along, the case retakes no more
# What a sample's reply may carry beside its samples: how long it waited for its CPU and how often it was put on it;
# TLS: each side's CPU time and each handshake's wall time.
REPLY_FIGURES = (figures.WAIT, figures.SLICES, figures.CLIENT_CPU, figures.SERVER_CPU, figures.OP_WALL)


def _waited(reply: dict) -> bool:
    """Whether a sample reply's sample waited for its CPU (verdict.waits.WAITED of its wall time)."""
    return any(waits.sample_waited(w, wall) for w, wall in zip(reply.get(figures.WAIT) or (), reply["wall_ns"]))


class Workers:
    """One pinned harness worker per library, restarted when one dies; what the in-memory and the counting
    modes share."""

    def __init__(self, ctx: base.Context):
        self.ctx = ctx
        self.env = {**environment.mask_env(ctx.settings.mask), **ctx.env}
        self.binaries = {lib.name: harness_binary(lib) for lib in ctx.libs}     # compiled once, not per process
        self.workers: dict[str, Worker] = {}

    def spawn(self, libs: list[Lib]) -> None:
        """Fresh worker processes for `libs`."""
        self.close()
        for lib in libs:
            self.workers[lib.name] = Worker(lib, self.env, cpu=self.ctx.settings.cpu,
                                            binary=self.binaries[lib.name],
                                            fixed_layout=self.ctx.settings.fixed_layout)

    def call(self, lib: Lib, line: str, timeout: float) -> dict:
        try:
            return self.workers[lib.name].request(line, timeout).data
        except HarnessCrashed as crash:
            self.workers[lib.name].restart()
            return {"type": "error", "reason": crash.message}

    def pid(self, lib: Lib) -> int:
        return self.workers[lib.name].pid

    def prepare(self, case: Case, libs: list[Lib]) -> tuple[dict[str, dict], dict[str, dict]]:
        """`case` prepared (and so checked) in each library's worker: the replies of those ready, of those not."""
        ready, refused = {}, {}
        for lib in libs:
            reply = self.call(lib, f"prepare {case.id}", timeout=300)
            (ready if reply["type"] == "prepared" else refused)[lib.name] = reply
        return ready, refused

    def first(self, case: Case, libs: list[Lib], batch=lambda iters: iters) -> tuple[dict[str, Measurement],
                                                                                     dict[str, int]]:
        """The case prepared and its batch calibrated in each worker: per library its result (n/a or an error
        where it cannot run the case) and, where it can, its batch size (`batch` of the calibrated one)."""
        results: dict[str, Measurement] = {}
        iters: dict[str, int] = {}
        prepared, refused = self.prepare(case, libs)
        for lib in libs:
            if lib.name in refused:
                reply = refused[lib.name]
                results[lib.name] = Measurement.of(case, lib.name, "n/a" if reply["type"] == "na" else "error",
                                                reply.get("reason"))
                continue
            reply = prepared[lib.name]
            m = results[lib.name] = Measurement.of(case, lib.name, unit=reply["unit"], bytes_per_op=reply["bytes_per_op"],
                                                note=reply.get("note"), negotiated=negotiation.recorded(reply))
            target_ns = int(self.ctx.settings.target_ms * 1e6)
            calibrated = self.call(lib, f"calibrate {case.id} {target_ns}", timeout=300)
            if calibrated["type"] == "calibrated":
                iters[lib.name] = batch(calibrated["iters"])
            else:
                m.status, m.reason = "error", calibrated.get("reason")
        return results, iters

    def release(self, case: Case, libs: list[Lib]) -> None:
        for lib in libs:
            if lib.name in self.workers:
                self.call(lib, f"release {case.id}", timeout=60)

    def close(self) -> None:
        for worker in self.workers.values():
            worker.close()
        self.workers = {}


class Session(base.Session):
    def __init__(self, mode, ctx, cases):
        super().__init__(mode, ctx, cases)
        self.workers = Workers(ctx)
        self.iters: dict[tuple[str, str], int] = {}
        self.units: dict[tuple[str, str], tuple[str, int]] = {}      # (case, library) → (unit, bytes per op)
        self.futile: dict[str, int] = {}      # case → retakes in a row that waited again (each pass starts anew)
        ctx.run.environment["pinned_cpu"] = ctx.settings.cpu

    def open_pass(self, number: int) -> None:
        self.workers.spawn(base.pass_order(self.ctx.libs, number))
        self.futile = {}

    def prepare(self, case: Case, libs: list[Lib]) -> base.Prepared:
        results, iters = self.workers.first(case, libs)
        self.iters.update({(case.id, name): n for name, n in iters.items()})
        self.units.update({(case.id, name): (m.unit, m.bytes_per_op) for name, m in results.items()})
        ready = [lib for lib in libs if lib.name in iters]
        # The warm-up also tells how long a round takes, which bounds the samples of a case whose operation is slow.
        round_ns = self._warm_up(case, ready)
        samples = self.ctx.settings.samples
        if round_ns:
            budget = int(MAX_CASE_SECONDS * max(len(ready), 1) * 1e9 / round_ns)
            samples = max(MIN_SAMPLES, min(samples, budget))
        return base.Prepared(results, samples)

    def reprepare(self, case: Case, libs: list[Lib]) -> dict[str, str]:
        prepared, refused = self.workers.prepare(case, libs)
        self._warm_up(case, [lib for lib in libs if lib.name in prepared])
        return {name: reply.get("reason") or "no reason given" for name, reply in refused.items()}

    def take(self, case: Case, lib: Lib) -> Measurement:
        reply = self._sample(case, lib)
        retaken = 0
        # A sample that waited for its CPU is taken again (the last stands): a burst of other work passes, and a
        # short sample often fits in one turn on a CPU it shares. Where retakes keep waiting (the CPU is shared all
        # along) they stop for the case, and the verdict rule sees the waits (verdict.waits).
        while reply["type"] == "samples" and _waited(reply) and retaken < RETAKES and \
                self.futile.get(case.id, 0) < FUTILE_RETAKES:
            reply = self._sample(case, lib)
            retaken += 1
            self.futile[case.id] = self.futile.get(case.id, 0) + 1 if _waited(reply) else 0
        unit, bytes_per_op = self.units[(case.id, lib.name)]
        return round_of(case, lib.name, reply, unit, bytes_per_op, self.workers.pid(lib), retaken)

    def release(self, case: Case, libs: list[Lib]) -> None:
        self.workers.release(case, libs)

    def close_pass(self) -> None:
        self.workers.close()

    def close(self) -> None:
        self.workers.close()

    def cpus(self) -> set[int]:
        return {self.ctx.settings.cpu} if self.ctx.settings.cpu is not None else set()

    def _sample(self, case: Case, lib: Lib) -> dict:
        return self.workers.call(lib, f"sample {case.id} {self.iters[(case.id, lib.name)]} 1",
                                 timeout=max(120, 50 * self.ctx.settings.target_ms / 1000))

    def _warm_up(self, case: Case, ready: list[Lib]) -> int:
        """Warm-up rounds, thrown away; the wall time of the last one."""
        round_ns = 0
        for _ in range(self.ctx.settings.warmup_samples):
            round_ns = sum(reply["wall_ns"][0] if reply["type"] == "samples" else 0
                           for reply in (self._sample(case, lib) for lib in ready))
        return round_ns



def round_of(case: Case, lib: str, reply: dict, unit: str, bytes_per_op: int, process: int, retaken: int) -> Measurement:
    """One round's result from a worker's `sample` reply (or its failure): the samples, the reply's figures, the
    worker process and how often the sample was taken again. A probe's import reads its driver's replies here too."""
    if reply.get("type") != "samples":
        return Measurement.of(case, lib, "error", reply.get("reason") or "no reason given")
    got = Measurement.of(case, lib, unit=unit, bytes_per_op=bytes_per_op, ops=list(reply["ops"]),
                         wall_ns=list(reply["wall_ns"]), cpu_ns=list(reply["cpu_ns"]))
    got.figures = {key: list(reply[key]) for key in REPLY_FIGURES if key in reply}
    got.figures[figures.PROCESS] = [process] * len(got.ops)
    if figures.WAIT in got.figures:
        got.figures[figures.RETAKEN] = [retaken] * len(got.ops)
    return got


MODE_TEMPLATES = ("cipher", "digest", "mac", "sig", "kex", "kem", "keygen", "api", "tls/handshake", "tls/resume",
                  "tls/transfer")
MODE = base.Mode("in-memory", "in memory, in pinned harness workers", MODE_TEMPLATES, base.ALL_BACKENDS,
                 (*REPLY_FIGURES, figures.RETAKEN), base.TIME_METRICS, Session)
