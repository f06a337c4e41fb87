"""The measured runs the verbs start, each recorded the one way
(recording.record) and each making the certificates its cases read:

- cases:        the interleaved, pinned runner (speed, api, tls in memory);
- loopback:     real HTTPS GETs over 127.0.0.1 (the harness's client, a real curl, or both);
- transfer-tcp: bulk transfer over a loopback TCP connection, kernel TLS off and on;
- memory:       bytes per TLS connection, connections taken through the handshake in lockstep;
- quic:         QUIC over loopback UDP (GETs, transfer, memory), each beside TLS 1.3 over TCP;
- threads:      any case's rate with each thread count.

`tls(request, …)` runs the one `sslperf tls` asked for (plan.TlsRequest)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sslperf.errors import BuildFailed, SslperfError
from sslperf.libs import curl as curl_builds
from sslperf.libs.model import Lib, harness_backend
from sslperf.measure import certificates, curl_client, loopback, memory, netpath, pinning, threads
from sslperf.measure.case_ids import Case
from sslperf.measure.netpath import NetPath
from sslperf.measure.plan import THREAD_ROUNDS, TlsRequest, check_threads
from sslperf.measure.recording import Keep, new_run, record
from sslperf.measure.runner import Progress, Runner, Settings
from sslperf.results import Run

# The curl regression's two connection shapes, measured when no case is chosen.
CURL_SHAPES = [("tls1.3", "x25519", "ecdsa-p256"), ("tls1.2", "x25519", "rsa-2048")]
# QUIC beside TCP+TLS 1.3 when no case is chosen: the groups operators weigh, and RSA's bigger flight.
QUIC_SHAPES = [("x25519", "ecdsa-p256"), ("p-256", "ecdsa-p256"), ("x25519mlkem768", "ecdsa-p256"),
               ("x25519", "rsa-2048")]


def run_cases(libs: list[Lib], cases: list[Case], settings: Settings, store, source: str,
              extra_settings: dict | None = None, extra_env: dict | None = None,
              progress: Progress | None = None, cert_dir: Path | None = None) -> Run:
    """`cases` on `libs`, interleaved, each finished case kept as it ends;
    certificates made for cases that read them (unless `cert_dir` is given)."""
    with certificates.for_cases(libs, cases, cert_dir) as made:
        runner = Runner(libs, settings, extra_settings, {**(extra_env or {}), **certificates.env(made)})
        try:
            return record(runner.run, store, source, lambda keep: runner.measure(
                cases, progress, on_measurement=keep,
                on_update=(lambda m: store.replace(runner.run.id, m)) if store else None))
        finally:
            runner.close()


# Which harness backends have each mode beyond the in-memory cases (their harness's own commands).
MODE_BACKENDS = {
    "HTTPS over loopback TCP (--loopback)": ("openssl", "rustls", "wolfssl"),
    "bulk transfer over loopback TCP (--transfer --loopback)": ("openssl",),
    "memory per connection (--memory)": ("openssl", "rustls", "wolfssl"),
    "QUIC over loopback UDP (--quic)": ("openssl",),
}


def _refuse_other_backends(libs: list[Lib], mode: str) -> None:
    """Say before anything runs which libraries' harness lacks `mode`, rather than let it refuse a command."""
    other = [lib.name for lib in libs if harness_backend(lib.flavor) not in MODE_BACKENDS[mode]]
    if other:
        raise SslperfError(
            f"{', '.join(other)}: {mode} is not measured for this library yet.",
            hint="Every library runs the in-memory cases (handshakes, resumption, --transfer) and --threads; "
            f"{mode.split(' (')[0]} is measured for {', '.join(MODE_BACKENDS[mode])} libraries.")


def run_loopback(libs: list[Lib], cases: list[Case], store, request: TlsRequest,
                 on_build: Callable[[str], None] | None = None) -> Run:
    """Real HTTPS GETs over 127.0.0.1: the protocol/group/certificate of the
    chosen cases (at most four), else the curl regression's two shapes. The
    client is the harness's (a new and a shared client SSL_CTX), a real curl
    built against each library (`client="curl"`), or both side by side."""
    _refuse_other_backends(libs + ([request.server] if request.server else []), "HTTPS over loopback TCP (--loopback)")
    run = new_run(libs, {"suite": "tls-loopback", "requests": request.requests,
                         "server_lib": request.server and request.server.name, "client": request.client})
    server_cpu, client_cpu = pinning.loopback_cpus()
    run.environment["placement"] = {"server_cpu": server_cpu, "client_cpu": client_cpu}
    shapes = list(dict.fromkeys(tuple(c.id.split("/")[2:5]) for c in cases if c.id.startswith("tls/handshake/")))
    shapes = shapes[:4] if request.chosen else CURL_SHAPES
    curls, refused = {}, {}
    for lib in libs if request.client in ("curl", "both") else ():
        try:
            if on_build:
                on_build(f"curl against {lib.name}")
            curls[lib.name] = curl_builds.build(lib, curl_spec=request.curl)
        except BuildFailed as failed:
            refused[lib.name] = failed.message.split("Last lines:")[0].strip()
            run.warnings.append(refused[lib.name] + (f" {failed.hint}" if failed.hint else ""))

    def measure(keep: Keep) -> None:
        server = request.server
        with certificates.made_by(*libs, *([server] if server else [])) as cert_dir:
            for proto, group, cert in shapes:
                for ctx in ("new", "shared") if request.client != "curl" else ():
                    for lib in libs:
                        keep(loopback.loopback(lib, server or lib, cert_dir, proto, group, cert, ctx,
                                               request.requests))
                for lib in libs if request.client != "harness" else ():
                    if lib.name in curls:
                        keep(curl_client.requests(curls[lib.name], lib, server or lib, cert_dir, proto, group,
                                                  cert, request.requests))
                    else:
                        keep(curl_client.case(proto, group, cert).result(lib.name, "n/a", refused[lib.name]))
    return record(run, store, "sslperf tls", measure)


def run_quic(libs: list[Lib], cases: list[Case], store, request: TlsRequest) -> Run:
    """GETs each on a new connection over 127.0.0.1: QUIC over UDP (OpenSSL's own QUIC stack) and, for each
    library and shape in turn, TLS 1.3 over TCP with a shared client context, so that each QUIC row says what it
    costs against TCP+TLS. The groups and certificates of the chosen TLS 1.3 cases (at most four), else
    QUIC_SHAPES."""
    _refuse_other_backends(libs + ([request.server] if request.server else []), "QUIC over loopback UDP (--quic)")
    run = new_run(libs, {"suite": "tls-quic", "requests": request.requests,
                         "server_lib": request.server and request.server.name, "path": request.path.id})
    _describe_path(run, request.path)
    shapes = _quic_shapes(cases, request.chosen)

    def measure(keep: Keep) -> None:
        server = request.server
        with certificates.made_by(*libs, *([server] if server else [])) as cert_dir:
            for group, cert in shapes:
                for lib in libs:
                    tcp = loopback.loopback(lib, server or lib, cert_dir, "tls1.3", group, cert, "shared",
                                            request.requests) if not request.path.emulated else \
                        _tcp_not_over(request.path, lib, loopback.tcp_case(group, cert))
                    keep(tcp)
                    keep(loopback.against_tcp(loopback.quic(lib, server or lib, cert_dir, group, cert,
                                                            request.requests, request.path), tcp))
    return record(run, store, "sslperf tls", measure)


def run_quic_transfer(libs: list[Lib], cases: list[Case], store, seconds: float, rounds: int,
                      path: NetPath) -> Run:
    """Bulk transfer on one QUIC stream over loopback UDP (or `path`) and, just before it for each library and
    shape, TLS 1.3 over loopback TCP (kernel TLS off): per TLS 1.3 transfer case's suite and write size."""
    _refuse_other_backends(libs, "QUIC over loopback UDP (--quic)")
    run = new_run(libs, {"suite": "tls-quic-transfer", "seconds": seconds, "rounds": rounds, "path": path.id})
    _describe_path(run, path)
    shapes = list(dict.fromkeys(tuple(c.id.split("/")[3:5]) for c in cases
                                if c.id.startswith("tls/transfer/tls1.3/")))

    def measure(keep: Keep) -> None:
        with certificates.made_by(*libs) as cert_dir:
            for suite, size in shapes:
                for lib in libs:
                    ms = int(seconds * 1000)
                    tcp = loopback.transfer(lib, cert_dir, "tls1.3", suite, int(size), ms, rounds, False) \
                        if not path.emulated else _tcp_not_over(path, lib, loopback.tcp_transfer_case(suite, size))
                    keep(tcp)
                    keep(loopback.transfer_against_tcp(
                        loopback.quic_transfer(lib, cert_dir, suite, int(size), ms, rounds, path), tcp))
    return record(run, store, "sslperf tls", measure)


def _describe_path(run: Run, path: NetPath) -> None:
    """The run records its path, where its processes ran and whether the kernel could have emulated the path."""
    server_cpu, client_cpu = pinning.loopback_cpus()
    run.environment["placement"] = {"server_cpu": server_cpu, "client_cpu": client_cpu}
    run.environment["path"] = path.describe()
    if path.emulated:
        netem = netpath.kernel_netem()
        run.environment["kernel_netem"] = netem
        run.warnings.append(f"the path is emulated by sslperf's user-space UDP relay, for QUIC only (kernel netem: "
                            f"{netem.removeprefix('no: ')}); the TCP rows over it are n/a, and these rows are "
                            "compared only with rows over the same path.")


def _tcp_not_over(path: NetPath, lib: Lib, case: Case):
    return case.result(lib.name, "n/a", f"TCP over the emulated path ({path.id}) needs the kernel's netem; "
                                        "sslperf's relay carries UDP only")


def run_transfer_tcp(libs: list[Lib], cases: list[Case], store, seconds: float, rounds: int) -> Run:
    """The transfer cases over loopback TCP, kernel TLS off and on."""
    _refuse_other_backends(libs, "bulk transfer over loopback TCP (--transfer --loopback)")
    run = new_run(libs, {"suite": "tls-transfer-tcp", "seconds": seconds, "rounds": rounds})
    server_cpu, client_cpu = pinning.loopback_cpus()
    run.environment["placement"] = {"server_cpu": server_cpu, "client_cpu": client_cpu}
    shapes = [c.id.split("/")[2:5] for c in cases if c.id.startswith("tls/transfer/")]

    def measure(keep: Keep) -> None:
        with certificates.made_by(*libs) as cert_dir:
            for proto, suite, size in shapes:
                for ktls in (False, True):
                    for lib in libs:
                        keep(loopback.transfer(lib, cert_dir, proto, suite, int(size), int(seconds * 1000), rounds,
                                               ktls))
        kernel = sorted({m.reason.split("the kernel: ", 1)[1] for m in run.measurements
                         if m.reason and "the kernel: " in m.reason})
        if kernel:
            run.warnings.append(f"this kernel cannot do TLS itself ({kernel[0]}): every kernel-TLS row is n/a here; "
                                "on a kernel with the tls module (modprobe tls) and a library built with enable-ktls "
                                "(the +ktls variant), those rows show what handing the records to the kernel saves.")
    return record(run, store, "sslperf tls", measure)


def run_memory(libs: list[Lib], cases: list[Case], store, counts: tuple[int, ...], chosen: bool) -> Run:
    """Bytes per TLS connection of each library, for each connection count:
    the chosen handshake cases (with a shared SSL_CTX), else the curl pattern's two."""
    _refuse_other_backends(libs, "memory per connection (--memory)")
    run = new_run(libs, {"suite": "tls-memory", "connections": ",".join(map(str, counts))})
    picked = [c.id for c in cases if c.id.startswith("tls/handshake/") and c.id.endswith("/shared")] if chosen else []

    def measure(keep: Keep) -> None:
        with certificates.made_by(*libs) as cert_dir:
            for case_id in picked or memory.CASES:
                for lib in libs:
                    keep(memory.per_connection(lib, cert_dir, case_id, list(counts)))
    return record(run, store, "sslperf tls", measure)


def run_quic_memory(libs: list[Lib], cases: list[Case], store, counts: tuple[int, ...], chosen: bool) -> Run:
    """Bytes per QUIC connection over loopback UDP and, just before it for each library and shape, per TLS 1.3
    connection (in memory, as --memory counts it): the groups and certificates of the chosen TLS 1.3 cases (at
    most four), else QUIC_SHAPES."""
    _refuse_other_backends(libs, "QUIC over loopback UDP (--quic)")
    run = new_run(libs, {"suite": "tls-quic-memory", "connections": ",".join(map(str, counts))})
    shapes = _quic_shapes(cases, chosen)

    def measure(keep: Keep) -> None:
        with certificates.made_by(*libs) as cert_dir:
            for group, cert in shapes:
                for lib in libs:
                    tcp = memory.per_connection(lib, cert_dir, f"tls/handshake/tls1.3/{group}/{cert}/shared",
                                                list(counts))
                    keep(tcp)
                    keep(memory.against_tcp(memory.quic_per_connection(lib, cert_dir, group, cert, list(counts)),
                                            tcp))
    return record(run, store, "sslperf tls", measure)


def run_quic_threads(libs: list[Lib], cases: list[Case], store, request: TlsRequest) -> Run:
    """GETs from 1…N client threads at once (each a new connection per request) against one server per library
    and shape: QUIC (the server's one event loop taking N connections at once) and TLS 1.3 over TCP (N server
    worker threads), the thread counts interleaved over rounds. Each result's rate is requests per second of the
    whole loop; its samples keep every request's latency under that load."""
    _refuse_other_backends(libs, "QUIC over loopback UDP (--quic)")
    counts = list(request.threads)
    run = new_run(libs, {"suite": "tls-quic-threads", "requests": request.requests, "threads": ",".join(map(str, counts)),
                         "rounds": request.rounds, "path": request.path.id})
    _describe_path(run, request.path)
    shapes = _quic_shapes(cases, request.chosen)

    def measure(keep: Keep) -> None:
        with certificates.made_by(*libs) as cert_dir:
            for group, cert in shapes:
                for lib in libs:
                    kinds = {"quic": lambda n: loopback.quic(lib, lib, cert_dir, group, cert, request.requests,
                                                             request.path, n)}
                    if not request.path.emulated:
                        kinds["tcp"] = lambda n: loopback.loopback(lib, lib, cert_dir, "tls1.3", group, cert,
                                                                   "shared", request.requests, n)
                    ids = {"quic": loopback.quic_case(group, cert, request.path).id,
                           "tcp": loopback.tcp_case(group, cert).id}
                    results = {(kind, n): threads.clients_result(lib, ids[kind], n) for kind in kinds for n in counts}
                    for _ in range(request.rounds):
                        for n in counts:
                            for kind, measure_one in kinds.items():
                                threads.take_clients_round(results[(kind, n)], measure_one(n))
                    for m in results.values():
                        keep(m)
        cpus = run.environment.get("cpus") or 1
        run.warnings.append(f"the server runs on one CPU and every client thread on another ({cpus} CPUs here): the "
                            "figures show how each server copes with N connections at once on one core, not how it "
                            "scales across cores.")
    return record(run, store, "sslperf tls", measure)


def _quic_shapes(cases: list[Case], chosen: bool) -> list[tuple[str, str]]:
    """The groups and certificates of the chosen TLS 1.3 handshake cases (at most four), else QUIC_SHAPES."""
    shapes = list(dict.fromkeys(tuple(c.id.split("/")[3:5]) for c in cases
                                if c.id.startswith("tls/handshake/tls1.3/")))
    return shapes[:4] if chosen else QUIC_SHAPES


def run_threads(libs: list[Lib], cases: list[Case], store, counts: tuple[int, ...], seconds: float,
                mode: str = "shared", source: str = "sslperf tls", rounds: int = THREAD_ROUNDS) -> Run:
    """Each case's rate with each thread count (see measure.threads for the modes);
    mode "shared" takes the first handshake case (default: the curl pattern's)."""
    check_threads(cases if mode != "shared" else cases[:1], libs, list(counts), seconds)
    run = new_run(libs, {"suite": "threads", "threads": ",".join(map(str, counts)), "thread_mode": mode})
    run.environment["placement"] = {"thread_cpus": pinning.allowed()}
    if mode == "shared":
        chosen = [next((c.id for c in cases if c.id.startswith("tls/handshake/")),
                       "tls/handshake/tls1.3/x25519/ecdsa-p256/shared")]
    else:
        chosen = [c.id for c in cases]

    def measure(keep: Keep) -> None:
        with certificates.made_by(*libs) as cert_dir:
            for case_id in chosen:
                for lib in libs:
                    for m in threads.across(lib, cert_dir, case_id, list(counts), int(seconds * 1000), rounds,
                                            mode):
                        keep(m)
        cpus = run.environment.get("cpus") or 1
        run.warnings.append(f"this machine has {cpus} CPU{'s' if cpus > 1 else ''}"
                            + (f": beyond {cpus} threads the figures show threads sharing cores, not lock "
                               "contention; only a machine with more CPUs shows where a library stops scaling "
                               "(OpenSSL 3.0's locks, openssl/openssl#23388)." if max(counts) > cpus else
                               f"; contention beyond {cpus} threads cannot show here."))
    return record(run, store, source, measure)


def tls(request: TlsRequest, libs: list[Lib], cases: list[Case], settings: Settings, store,
        on_build: Callable[[str], None] | None = None) -> Run:
    """The `sslperf tls` run `request` asks for."""
    if request.mode == "transfer-tcp":
        return run_transfer_tcp(libs, cases, store, request.seconds, request.rounds)
    if request.mode == "loopback":
        return run_loopback(libs, cases, store, request, on_build)
    if request.mode == "quic":
        return run_quic(libs, cases, store, request)
    if request.mode == "quic-threads":
        return run_quic_threads(libs, cases, store, request)
    if request.mode == "quic-memory":
        return run_quic_memory(libs, cases, store, request.connections, request.chosen)
    if request.mode == "quic-transfer":
        return run_quic_transfer(libs, cases, store, request.seconds, request.rounds, request.path)
    if request.mode == "memory":
        return run_memory(libs, cases, store, request.connections, request.chosen)
    if request.mode == "threads":
        return run_threads(libs, cases, store, request.threads, request.thread_seconds, request.thread_mode,
                           rounds=request.rounds)
    return run_cases(libs, cases, settings, store, "sslperf tls", {"suite": "tls"})

