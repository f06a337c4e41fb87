"""Any case of `speed`, `api` or `tls` across threads, as OpenSSL's perftools run every test with 1…N threads:
the harness's one thread runner (`harness threads CASE N MS MODE`), three ways to share the library —

- own:    each thread prepares the case itself (its own keys, contexts and, for handshakes, its own SSL_CTX pair);
          the library's global state is shared;
- libctx: the same, and each thread has its own OSSL_LIB_CTX as its default (perftools' -l; OpenSSL 3.0+ only);
- shared: TLS handshakes on one SSL_CTX pair shared by every thread.

A case is `threads/MODE/NNN/<case>`; each thread count is a case of its own, so the scheduler interleaves the
counts and the libraries in every round. One round is one run of every thread for the round's time: a sample of
all their operations over its wall time. The harness prepares the case once before any thread starts, so an n/a
comes from that check and a failure inside a thread is an error with its reason."""

from __future__ import annotations

from dataclasses import dataclass

from sslperf import figures
from sslperf.errors import SslperfError
from sslperf.libs.model import Lib
from sslperf.measure import environment
from sslperf import pinning
from sslperf.cases.ids import Case, make
from sslperf.measure.harness_client import HarnessError, call
from sslperf.measure.modes import base
from sslperf.results import Measurement

MODES = ("own", "libctx", "shared")
ROUNDS = 3                      # every thread count at least this many times, interleaved


@dataclass(frozen=True)
class Options:
    milliseconds: int = 2000            # how long every thread runs, per round
    pin: bool = True                    # thread i on the i-th CPU this process may use (else they float)
    one_thread_rounds: int = 2          # rounds of 1 thread per round of the others: its rate is the divisor of
                                        # every efficiency, and alone on a CPU it varies most
    explain: bool = False               # after the sweep: why the largest count scales as it does (scale.contention)


def case(of: Case | str, n: int, mode: str) -> Case:
    return make("threads", mode=mode, size=n, case=of.id if isinstance(of, Case) else of)


class Session(base.Session):
    def __init__(self, mode, ctx, cases):
        super().__init__(mode, ctx, cases)
        cpus = pinning.allowed()
        self.env = {**ctx.env, **environment.mask_env(ctx.settings.mask)}
        if self.options.pin:
            self.env["SSLPERF_THREAD_CPUS"] = ",".join(map(str, cpus))
        ctx.run.environment["placement"] = {"thread_cpus": cpus, "threads_pinned": self.options.pin}
        if self.options.explain:
            self.finishing = ("explaining the largest count: lock waits under sslperf's interposer, then CPU shares "
                              "under perf, at N threads and at 1")

    def prepare(self, case: Case, libs: list[Lib]) -> base.Prepared:
        n = int(case.part("size"))
        results = {lib.name: ready(case, lib.name) for lib in libs}
        return base.Prepared(results, self.passes * (self.options.one_thread_rounds if n == 1 else 1))

    def take(self, case: Case, lib: Lib) -> Measurement:
        ms = self.options.milliseconds
        m = Measurement.of(case, lib.name, unit="ops", note=case.part("mode"))
        try:
            reply = call(lib, "threads", case.part("case"), str(int(case.part("size"))), str(ms), case.part("mode"),
                         timeout=120 + ms / 1000, env=self.env, ok_codes=None, cpu=set(pinning.allowed())).last
        except HarnessError as failed:
            m.status, m.reason = "error", failed.message
            return m
        return round_of(case, lib.name, reply)

    def finish(self, results: list[Measurement]) -> list[str]:
        """Thread counts beyond the CPUs this process may use share cores: say so (and only then). With `explain`,
        the contention of the largest count with a CPU per thread against 1 thread, per library and case
        (run.settings["contention"])."""
        if self.options.explain:
            self._explain()
        return oversubscribed(self.cases, len(pinning.allowed()))

    def _explain(self) -> None:
        from sslperf.measure import contention

        found = self.ctx.run.settings.setdefault("contention", [])
        # The largest count that has a CPU per thread: beyond, waits for a core would pass for contention.
        cpus = len(pinning.allowed())
        counts: dict[tuple[str, str], set[int]] = {}
        for c in self.cases:
            counts.setdefault((c.part("case"), c.part("mode")), set()).add(int(c.part("size")))
        largest = {key: max((n for n in found_counts if n <= cpus), default=min(found_counts))
                   for key, found_counts in counts.items()}
        for (inner, mode), n in largest.items():
            for lib in self.ctx.libs:
                if n < 2 or self.mode.lacking(lib):
                    continue
                try:
                    found.append(contention.explain(lib, inner, n, self.options.milliseconds, mode,
                                                    self.env).as_dict())
                except SslperfError as failed:
                    found.append({"lib": lib.name, "case": inner, "mode": mode, "threads": n,
                                  "problem": failed.message})

    def cpus(self) -> set[int]:
        return set(pinning.allowed())


def oversubscribed(cases: list[Case], cpus: int) -> list[str]:
    """The warning for thread counts beyond `cpus` (the CPUs the threads may use), or none."""
    over = sorted({int(c.part("size")) for c in cases if c.family == "threads" and int(c.part("size")) > cpus})
    if not over:
        return []
    return [f"{', '.join(map(str, over))} thread{'s' if over != [1] else ''} on {cpus} CPU"
            f"{'s' if cpus > 1 else ''}: beyond {cpus} the threads share cores, so those figures show time-sharing, "
            "not how the library scales; a machine with more CPUs shows where it stops scaling (`sslperf scale`)."]


def ready(case: Case, lib: str) -> Measurement:
    """A thread count's result before its first round (no harness is asked: the runner checks the case itself)."""
    n = int(case.part("size"))
    return Measurement.of(case, lib, unit="ops", note=case.part("mode"), operation=f"{n} thread{'s' if n > 1 else ''}")


def round_of(case: Case, lib: str, reply: dict) -> Measurement:
    """One round's result from `harness threads`' reply (or why it failed). A probe's import reads its replies here."""
    m = Measurement.of(case, lib, unit="ops", note=case.part("mode"))
    if reply.get("type") != "threads":
        m.status = "n/a" if reply.get("type") == "na" else "error"
        m.reason = reply.get("reason") or "an operation failed"
        return m
    if reply.get("bytes_per_op"):
        m.unit, m.bytes_per_op = "bytes", reply["bytes_per_op"]
    m.ops, m.wall_ns = [sum(reply["ops"])], [reply["wall_ns"]]
    m.figures = {figures.PER_THREAD: list(reply["ops"])}
    if reply.get("wait_ns"):                # the threads' run-queue wait, all together: preemption, not locks
        m.figures[figures.WAIT] = [sum(reply["wait_ns"])]
    if reply.get("op_wall_ns"):             # TLS handshakes: a uniform sample of each thread's latencies
        m.figures[figures.OP_WALL] = list(reply["op_wall_ns"])
    return m


MODE = base.Mode("threads", "across threads", ("threads",), base.ALL_BACKENDS,
                 (figures.PER_THREAD, figures.OP_WALL, figures.WAIT),
                 base.WALL_ONLY, Session, where=(("mode", MODES),), options=Options)
