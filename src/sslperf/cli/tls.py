"""`sslperf tls`: what a handshake costs."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from sslperf import suites
from sslperf.cli.common import certificates, find_libs, list_cases, measure, open_store, show
from sslperf.errors import SslperfError
from sslperf.libs import installed

console = Console(highlight=False, soft_wrap=True)


@click.command()
@click.option("--lib", "-l", "lib_names", multiple=True, help="Library to measure (repeatable; default: system).")
@click.option("--quick", "depth", flag_value="quick", help="Eight cases: the curl pattern, groups, resumption.")
@click.option("--full", "depth", flag_value="full", help="Every protocol × group × certificate × SSL_CTX reuse.")
@click.option("--case", "case_ids", multiple=True, help="Measure exactly this case (repeatable).")
@click.option("--filter", "patterns", multiple=True, help="Keep cases whose id matches this glob or substring.")
@click.option("--time", "time_ms", type=click.FloatRange(1, 10000), default=50, show_default=True,
              help="Target wall time of one sample, in ms.")
@click.option("--samples", type=click.IntRange(1, 1000), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON instead of tables.")
@click.option("--no-store", is_flag=True, help="Do not keep the run in the results store.")
@click.option("--list", "list_only", is_flag=True, help="List the cases that would run, and stop.")
@click.option("--loopback", is_flag=True,
              help="Instead: real HTTPS GETs over 127.0.0.1 (connect, pretransfer, total per request), with a "
                   "new SSL_CTX per request (curl's way) and with a shared one.")
@click.option("--requests", type=click.IntRange(1, 10000), default=30, show_default=True,
              help="Requests per loopback measurement (seed 001 used 30).")
@click.option("--server-lib", help="Library of the loopback server (default: the same as the client), so the "
                                   "client side of a version change is seen alone.")
@click.option("--threads", "thread_list", help="Instead: handshakes/s on a shared SSL_CTX with these thread "
                                               "counts, e.g. 1,2,4.")
@click.option("--thread-seconds", type=click.FloatRange(0.1, 60), default=2.0, show_default=True)
@click.pass_context
def tls(ctx, lib_names, depth, case_ids, patterns, time_ms, samples, as_json, no_store, list_only, loopback,
        requests, server_lib, thread_list, thread_seconds) -> None:
    """Full and resumed TLS 1.2/1.3 handshakes in memory (client and server in
    one process), per group and certificate type, with a shared client
    SSL_CTX or a new one with a CA load per connection (what curl did, seed
    001). Each handshake is checked for the version, group and cipher asked.

    \b
    Examples (seed 001: 3.0 made new connections slower than 1.1.1):
      sslperf tls --lib openssl-1.1.1w --lib openssl-3.0 --lib openssl-3.6
      sslperf tls --loopback --lib openssl-1.1.1w --lib openssl-3.0 --requests 30
      sslperf tls --loopback --lib openssl-3.0 --server-lib openssl-1.1.1w
      sslperf tls --threads 1,2,4 --lib openssl-3.0 --lib openssl-3.6
    """
    from sslperf.runner import Settings

    cases = [suites.parse_case(c) for c in case_ids] if case_ids else suites.tls_suite(depth or "default")
    cases = suites.select(cases, patterns)
    if list_only:
        return list_cases(cases)
    libs = find_libs(lib_names)
    with certificates(libs[0]) as workdir:
        if loopback or thread_list:
            run = _extras(ctx, libs, cases, workdir, loopback, requests, server_lib, thread_list, thread_seconds,
                          samples, no_store, bool(case_ids or patterns))
        else:
            run = measure(ctx, libs, cases, Settings(time_ms, samples), "sslperf tls", {"suite": "tls"},
                          {"SSLPERF_CERT_DIR": str(workdir)}, no_store)
    show(run, as_json, console)


def _extras(ctx, libs, cases, workdir: Path, loopback: bool, requests: int, server_lib: str | None,
            thread_list: str | None, thread_seconds: float, rounds: int, no_store: bool, chosen: bool):
    """Loopback requests or thread scaling: each result is kept as it ends."""
    from sslperf import environment
    from sslperf import loopback as extra
    from sslperf.native import Worker
    from sslperf.results import LibInfo, Run

    run = Run.new({"suite": "tls-loopback" if loopback else "tls-threads", "requests": requests,
                   "server_lib": server_lib, "threads": thread_list}, environment.capture())
    for lib in libs:
        with Worker(lib) as worker:
            info = worker.request("info", timeout=60).data
        run.libs.append(LibInfo(lib.name, lib.flavor, lib.version, info.get("version_string", ""), lib.variant_label,
                                lib.kind, info.get("ia32cap")))
    store = None if no_store else open_store(ctx)
    if store:
        store.begin(run, source="sslperf tls")
    server = installed.find(server_lib) if server_lib else None
    try:
        if loopback:
            shapes = list(dict.fromkeys(tuple(c.id.split("/")[2:5]) for c in cases if c.id.startswith("tls/handshake/")))
            if chosen:     # the protocol/group/certificate of the cases asked for, at most four
                shapes = shapes[:4]
            else:          # by default, seed 001's two shapes
                shapes = [("tls1.3", "x25519", "ecdsa-p256"), ("tls1.2", "x25519", "rsa-2048")]
            for proto, group, cert in shapes:
                for mode in ("new", "shared"):
                    for lib in libs:
                        m = extra.loopback(lib, server or lib, workdir, proto, group, cert, mode, requests)
                        _keep(run, store, m)
        if thread_list:
            counts = _thread_counts(thread_list)
            case_id = next((c.id for c in cases if c.id.startswith("tls/handshake/")),
                           "tls/handshake/tls1.3/x25519/ecdsa-p256/shared")
            for lib in libs:
                for m in extra.threads(lib, workdir, case_id, counts, int(thread_seconds * 1000), max(rounds // 3, 3)):
                    _keep(run, store, m)
            cpus = run.environment.get("cpus") or 1
            if max(counts) > cpus:
                run.warnings.append(f"this machine has {cpus} CPUs: beyond {cpus} threads the figures show only "
                                    "threads sharing cores, not lock contention; on larger machines more threads "
                                    "would show where OpenSSL 3.0's locking stops scaling.")
        run.complete = True
    finally:
        run.finished = environment.capture()["time"]
        if store:
            store.finish(run)
    return run


def _keep(run, store, measurement) -> None:
    run.measurements.append(measurement)
    if store:
        store.add(run.id, measurement)


def _thread_counts(text: str) -> list[int]:
    try:
        counts = sorted({int(part) for part in text.split(",")})
    except ValueError:
        counts = []
    if not counts or counts[0] < 1 or counts[-1] > 256:
        raise SslperfError(f"`{text}` is not a list of thread counts between 1 and 256, e.g. --threads 1,2,4.")
    return counts
