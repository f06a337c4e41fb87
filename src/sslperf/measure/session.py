"""A measuring session as the verbs start it: the run recorded in the store
as it goes (begun before the first case, each result added as it ends,
finished even when interrupted), the private certificate directory the TLS
and API cases read, and the loopback / thread-scaling runs."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sslperf.errors import SslperfError
from sslperf.libs import arrivals
from sslperf.libs.model import Lib
from sslperf.measure import environment, loopback, pinning
from sslperf.measure.harness_client import Worker, call
from sslperf.measure.runner import Progress, Runner, Settings, lib_info
from sslperf.measure.suites import Case
from sslperf.results import Measurement, Run

CA_CERTIFICATES = 150
# The curl regression's two connection shapes, measured when no case is chosen.
CURL_SHAPES = [("tls1.3", "x25519", "ecdsa-p256"), ("tls1.2", "x25519", "rsa-2048")]


@contextmanager
def recorded(run: Run, store, source: str) -> Iterator[Callable[[Measurement], None]]:
    """Keep `run` in `store` (None: nowhere) while it is measured; yields the
    function that adds one finished measurement. An interrupted run keeps
    what it measured and stays marked incomplete.

    `run.state` is "running" from the start, then "complete" when the block
    ends normally, "interrupted" on Ctrl-C (KeyboardInterrupt, SystemExit)
    and "crashed" on any other exception, which is re-raised once the state
    is recorded; `run.finished` is set in every case.

    A store that fails does not lose what is measured: if it refuses the
    start, that error is raised before anything is measured; during the run
    a refused result stays in `run` and the store writes it again at the
    end (see Store). If that last write fails too, the run goes on as
    measured (printed, --json, --out) with a warning saying what the store
    lacks; it does not become an error, and an exception from the block
    wins over it."""
    import datetime as dt

    def keep(measurement: Measurement) -> None:
        if measurement.status == "n/a":      # a version that predates the algorithm says so, not "cannot make"
            lib = next((lib for lib in run.libs if lib.name == measurement.lib), None)
            if lib is not None:
                measurement.reason = arrivals.reason(lib.flavor, lib.version, measurement.case, measurement.reason)
        run.measurements.append(measurement)
        if store:
            store.add(run.id, measurement)

    run.state = "running"
    if store:
        store.begin(run, source=source)
    try:
        yield keep
        run.state = "complete"
    except (KeyboardInterrupt, SystemExit) as stopped:
        run.state = "interrupted"
        stopped.sslperf_run = (run, bool(store))        # for the CLI's message: which run, what is kept
        raise
    except BaseException:
        run.state = "crashed"
        raise
    finally:
        run.finished = run.finished or dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        if store:
            try:
                store.finish(run)
            except SslperfError as exc:
                run.warnings.append(f"The results store does not hold all of this run: {exc.message} "
                                    "Everything measured is in this output; keep it with --out or --json.")


def interrupted_run(exc: BaseException | None) -> tuple[Run | None, bool]:
    """The run a Ctrl-C stopped (found on the exception or what it wraps,
    e.g. click's Abort) and whether it went to a store; (None, False) if none."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        found = getattr(exc, "sslperf_run", None)
        if found:
            return found
        exc = exc.__cause__ or exc.__context__
    return None, False


def run_cases(libs: list[Lib], cases: list[Case], settings: Settings, store, source: str,
              extra_settings: dict | None = None, extra_env: dict | None = None,
              progress: Progress | None = None) -> Run:
    """`cases` on `libs`, interleaved, each finished case kept as it ends."""
    runner = Runner(libs, settings, extra_settings, extra_env)
    try:
        with recorded(runner.run, store, source) as keep:
            runner.measure(cases, progress, on_measurement=keep,
                           on_update=(lambda m: store.replace(runner.run.id, m)) if store else None)
    finally:
        runner.close()
    return runner.run


@contextmanager
def certificates(lib: Lib) -> Iterator[Path]:
    """A private directory (0700) with the ~150-certificate CA bundle, a key
    and a certificate, made by `lib`'s own harness; removed afterwards."""
    workdir = Path(tempfile.mkdtemp(prefix="sslperf-certs-"))
    try:
        made = call(lib, "mkcerts", str(workdir), str(CA_CERTIFICATES), timeout=300, ok_codes=None)
        if made.returncode != 0 or made.last.get("type") != "certs":
            raise SslperfError(f"Making the test certificates with {lib.name} failed: {made.stderr.strip()[-300:]}")
        yield workdir
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _new_run(libs: list[Lib], settings: dict) -> Run:
    run = Run.new(settings, environment.capture())
    for lib in libs:
        with Worker(lib) as worker:
            run.libs.append(lib_info(lib, worker.request("info", timeout=60).data))
    return run


def run_loopback(libs: list[Lib], cases: list[Case], cert_dir: Path, requests: int, server: Lib | None,
                 store, chosen: bool, client: str = "harness", on_curl: Callable[[str], None] | None = None,
                 curl_spec: str | None = None) -> Run:
    """Real HTTPS GETs over 127.0.0.1: the protocol/group/certificate of the
    chosen cases (at most four), else the curl regression's two shapes. The
    client is the harness's (a new and a shared client SSL_CTX), a real curl
    built against each library (`client="curl"`), or both side by side."""
    from sslperf.errors import BuildFailed
    from sslperf.libs import curl as curl_builds
    from sslperf.measure import curl_client

    run = _new_run(libs, {"suite": "tls-loopback", "requests": requests, "server_lib": server and server.name,
                          "client": client})
    server_cpu, client_cpu = pinning.loopback_cpus()
    run.environment["placement"] = {"server_cpu": server_cpu, "client_cpu": client_cpu}
    shapes = list(dict.fromkeys(tuple(c.id.split("/")[2:5]) for c in cases if c.id.startswith("tls/handshake/")))
    shapes = shapes[:4] if chosen else CURL_SHAPES
    curls, refused = {}, {}
    if client in ("curl", "both"):
        for lib in libs:
            try:
                if on_curl:
                    on_curl(f"curl against {lib.name}")
                curls[lib.name] = curl_builds.build(lib, curl_spec=curl_spec)
            except BuildFailed as failed:
                refused[lib.name] = failed.message
                run.warnings.append(failed.message.split("Last lines:")[0].strip() + (f" {failed.hint}" if failed.hint
                                                                                       else ""))
    with recorded(run, store, "sslperf tls") as keep:
        for proto, group, cert in shapes:
            for mode in (("new", "shared") if client != "curl" else ()):
                for lib in libs:
                    keep(loopback.loopback(lib, server or lib, cert_dir, proto, group, cert, mode, requests))
            for lib in libs if client != "harness" else ():
                if lib.name in curls:
                    keep(curl_client.requests(curls[lib.name], lib, server or lib, cert_dir, proto, group, cert,
                                              requests))
                else:
                    keep(Measurement(curl_client.case_id(proto, group, cert), "tls-loopback", loopback.LOOPBACK_GROUP,
                                     f"{group} {cert}", "get-curl", None, "record", lib.name, "n/a",
                                     reason=refused[lib.name].split("Last lines:")[0].strip()))
        run.complete = True
        run.finished = environment.capture()["time"]
    return run


def run_transfer_tcp(libs: list[Lib], cases: list[Case], cert_dir: Path, seconds: float, rounds: int,
                     store) -> Run:
    """The transfer cases over loopback TCP, kernel TLS off and on."""
    run = _new_run(libs, {"suite": "tls-transfer-tcp", "seconds": seconds, "rounds": rounds})
    server_cpu, client_cpu = pinning.loopback_cpus()
    run.environment["placement"] = {"server_cpu": server_cpu, "client_cpu": client_cpu}
    shapes = [c.id.split("/")[2:5] for c in cases if c.id.startswith("tls/transfer/")]
    with recorded(run, store, "sslperf tls") as keep:
        for proto, suite, size in shapes:
            for ktls in (False, True):
                for lib in libs:
                    keep(loopback.transfer(lib, cert_dir, proto, suite, int(size), int(seconds * 1000), rounds, ktls))
        kernel = sorted({m.reason.split("the kernel: ", 1)[1] for m in run.measurements
                         if m.reason and "the kernel: " in m.reason})
        if kernel:
            run.warnings.append(f"this kernel cannot do TLS itself ({kernel[0]}): every kernel-TLS row is n/a here; "
                                "on a kernel with the tls module (modprobe tls) and a library built with enable-ktls "
                                "(the +ktls variant), those rows show what handing the records to the kernel saves.")
        run.complete = True
        run.finished = environment.capture()["time"]
    return run


def run_memory(libs: list[Lib], cases: list[Case], cert_dir: Path, counts: list[int], store, chosen: bool) -> Run:
    """Bytes per TLS connection of each library, for each connection count:
    the chosen handshake cases (with a shared SSL_CTX), else the curl pattern's two."""
    from sslperf.measure import memory

    run = _new_run(libs, {"suite": "tls-memory", "connections": ",".join(map(str, counts))})
    picked = [c.id for c in cases if c.id.startswith("tls/handshake/") and c.id.endswith("/shared")] if chosen else []
    with recorded(run, store, "sslperf tls") as keep:
        for case_id in picked or memory.CASES:
            for lib in libs:
                keep(memory.per_connection(lib, cert_dir, case_id, counts))
        run.complete = True
        run.finished = environment.capture()["time"]
    return run


def run_threads(libs: list[Lib], cases: list[Case], cert_dir: Path, counts: list[int], seconds: float, rounds: int,
                store, mode: str = "shared", source: str = "sslperf tls") -> Run:
    """Each case's rate with each thread count (see measure.threads for the modes);
    mode "shared" takes the first handshake case (default: the curl pattern's)."""
    from sslperf.measure import threads

    run = _new_run(libs, {"suite": "threads", "threads": ",".join(map(str, counts)), "thread_mode": mode})
    run.environment["placement"] = {"thread_cpus": pinning.allowed()}
    if mode == "shared":
        chosen = [next((c.id for c in cases if c.id.startswith("tls/handshake/")),
                       "tls/handshake/tls1.3/x25519/ecdsa-p256/shared")]
    else:
        chosen = [c.id for c in cases]
    with recorded(run, store, source) as keep:
        for case_id in chosen:
            for lib in libs:
                for m in threads.across(lib, cert_dir, case_id, counts, int(seconds * 1000), rounds, mode):
                    keep(m)
        cpus = run.environment.get("cpus") or 1
        run.warnings.append(f"this machine has {cpus} CPU{'s' if cpus > 1 else ''}"
                            + (f": beyond {cpus} threads the figures show threads sharing cores, not lock "
                               "contention; only a machine with more CPUs shows where a library stops scaling "
                               "(OpenSSL 3.0's locks, openssl/openssl#23388)." if max(counts) > cpus else
                               f"; contention beyond {cpus} threads cannot show here."))
        run.complete = True
        run.finished = environment.capture()["time"]
    return run
