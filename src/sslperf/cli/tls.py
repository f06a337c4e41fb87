"""`sslperf tls`: what a handshake costs."""

from __future__ import annotations


import click

from sslperf.cli.common import (METRIC_HELP, Finite, counts, find_libs, list_cases, make_console, measure, open_store,
                                placement_options, provider_options, settings, show, thread_options, with_providers)
from sslperf.errors import SslperfError
from sslperf.libs import installed
from sslperf.measure import suites
from sslperf.measure.session import certificates

console = make_console()
err_console = make_console(stderr=True)


@click.command()
@click.option("--lib", "-l", "lib_names", multiple=True, help="Library to measure (repeatable; default: system).")
@click.option("--quick", "depth", flag_value="quick", help="Eight cases: the curl pattern, groups, resumption.")
@click.option("--full", "depth", flag_value="full", help="Every protocol × group × certificate × SSL_CTX reuse.")
@click.option("--case", "case_ids", multiple=True, help="Measure exactly this case (repeatable).")
@click.option("--filter", "patterns", multiple=True, help="Keep cases whose id matches this glob or substring.")
@click.option("--time", "time_ms", type=Finite(1, 10000), default=50, show_default=True,
              help="Target wall time of one sample, in ms.")
@click.option("--samples", type=click.IntRange(1, 1000), default=10, show_default=True)
@click.option("--metric", type=click.Choice(["wall", "cpu", "instructions"]), default="wall", show_default=True,
              help=METRIC_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON instead of tables.")
@click.option("--no-store", is_flag=True, help="Do not keep the run in the results store.")
@click.option("--list", "list_only", is_flag=True, help="List the cases that would run, and stop.")
@click.option("--loopback", is_flag=True,
              help="Instead: real HTTPS GETs over 127.0.0.1 (connect, pretransfer, total per request), with a "
                   "new SSL_CTX per request (curl's way) and with a shared one.")
@click.option("--requests", type=click.IntRange(1, 10000), default=30, show_default=True,
              help="Requests per loopback measurement (the curl regression report timed 30).")
@click.option("--client", "client_kind", type=click.Choice(["harness", "curl", "both"]), default="harness",
              show_default=True,
              help="With --loopback: who makes the requests. curl: a real curl built from source against each "
                   "library (cached), one process per request, timed by curl's own -w; both: side by side with "
                   "the harness's curl-like client.")
@click.option("--curl", "curl_spec", metavar="VERSION",
              help="With --client curl/both: which curl (e.g. 8.17; default the newest the curl-sys crate carries; "
                   "curl 8.18 and later need OpenSSL 3.0).")
@click.option("--server-lib", help="Library of the loopback server (default: the same as the client), so the "
                                   "client side of a version change is seen alone.")
@thread_options(("shared", "own", "libctx"), "shared", "the chosen cases (default: the curl pattern's handshake)")
@click.option("--transfer", is_flag=True,
              help="Instead of handshakes: bulk transfer after one handshake (SSL_write/SSL_read in memory) per "
                   "protocol, cipher suite and write size (1 KiB, 16 KiB, 1 MiB), send and receive CPU apart; with "
                   "--loopback, over a real loopback TCP connection, kernel TLS off and on.")
@click.option("--memory", is_flag=True,
              help="Instead: bytes the library holds per established connection (client and server apart) and "
                   "the peak during the handshake, with --connections pairs taken through the handshake in "
                   "lockstep.")
@click.option("--connections", default="100,1000", show_default=True,
              help="With --memory: how many connections at once (a comma-separated list).")
@provider_options
@placement_options
@click.pass_context
def tls(ctx, lib_names, depth, case_ids, patterns, time_ms, samples, metric, as_json, no_store, list_only, loopback,
        requests, client_kind, curl_spec, server_lib, thread_list, thread_seconds, thread_mode, transfer, memory, connections,
        providers, fips_modules, cpu, no_pin, fixed_layout, processes) -> None:
    """Full and resumed TLS 1.2/1.3 handshakes in memory (client and server in
    one process), per group and certificate type, with a shared client
    SSL_CTX or a new one with a CA load per connection (what curl did in the
    1.1.1 → 3.0 regression). Each handshake is checked for the version, group
    and cipher asked.

    \b
    Examples (the curl 1.1.1 → 3.0 regression: 3.0 made new connections slower):
      sslperf tls --lib openssl-1.1.1w --lib openssl-3.0 --lib openssl-3.6
      sslperf tls --loopback --lib openssl-1.1.1w --lib openssl-3.0 --requests 30
      sslperf tls --loopback --lib openssl-3.0 --server-lib openssl-1.1.1w
      sslperf tls --loopback --client both --lib openssl-1.1.1w --lib openssl-3.0.2 --lib openssl-3.1.3
      sslperf tls --threads 1,2,4 --lib openssl-3.0 --lib openssl-3.6
      sslperf tls --transfer --lib openssl-3.6 --lib boringssl
    """
    from sslperf.measure import session

    if case_ids:
        cases = [suites.parse_case(c) for c in case_ids]
    elif transfer:
        cases = suites.transfer_suite(depth or "default")
    else:
        cases = suites.tls_suite(depth or "default")
    cases = suites.select(cases, patterns)
    if list_only:
        return list_cases(cases)
    chosen = [name for name, on in (("--loopback", loopback), ("--threads", thread_list), ("--memory", memory))
              if on]
    if client_kind != "harness" and not loopback:
        raise SslperfError("--client chooses who makes the loopback requests; it needs --loopback.",
                           hint="e.g. `sslperf tls --loopback --client curl --lib openssl-3.0`.")
    if transfer and memory:       # transfer cases go with threads or over loopback, not with memory
        chosen.insert(0, "--transfer")
    if len(chosen) > 1:
        raise SslperfError(f"{' and '.join(chosen)} are different measurements; give one of them.",
                           hint="Run them one after the other.")
    thread_counts = counts(thread_list, "--threads", 256) if thread_list else []
    memory_counts = counts(connections, "--connections", 100_000) if memory else []
    if thread_mode == "shared" and thread_list and transfer:
        raise SslperfError("--thread-mode shared shares one SSL_CTX between handshakes; bulk transfers run on "
                           "connections of their own.", hint="Use --thread-mode own (or libctx) with --transfer.")
    server = installed.find(server_lib) if server_lib else None
    libs = with_providers(find_libs(lib_names), providers, fips_modules)
    with certificates(libs[0]) as workdir:
        store = None if no_store else open_store(ctx)
        if loopback and transfer:
            run = session.run_transfer_tcp(libs, cases, workdir, max(time_ms, 250) / 1000, max(samples // 2, 3), store)
        elif loopback:
            run = session.run_loopback(libs, cases, workdir, requests, server, store, bool(case_ids or patterns),
                                       client_kind, lambda what: err_console.print(f"building {what} (cached "
                                                                                   "after the first time) …"),
                                       curl_spec)
        elif memory:
            run = session.run_memory(libs, cases, workdir, memory_counts, store, bool(case_ids or patterns))
        elif thread_list:
            run = session.run_threads(libs, cases, workdir, thread_counts, thread_seconds, max(samples // 3, 3), store,
                                      thread_mode)
        else:
            run = measure(ctx, libs, cases, settings(time_ms, samples, cpu, no_pin, processes, metric=metric, fixed_layout=fixed_layout), "sslperf tls", {"suite": "tls"},
                          {"SSLPERF_CERT_DIR": str(workdir)}, no_store)
    show(run, as_json, console, metric if not (loopback or thread_list or memory) else "wall", not no_store)
