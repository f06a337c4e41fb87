"""`sslperf tls`: what a handshake costs."""

from __future__ import annotations

import click

from sslperf.cli.common import list_cases, make_console, show, store_unless, write_output
from sslperf.cli.options import placement_options, provider_options, run_options, thread_options
from sslperf.libs import fips, installed
from sslperf.measure import modes, plan, suites

console = make_console()
err_console = make_console(stderr=True)


@click.command()
@run_options(50, 10)
@click.option("--quick", "depth", flag_value="quick", help="Eight cases: the curl pattern, groups, resumption.")
@click.option("--full", "depth", flag_value="full", help="Every protocol × group × certificate × SSL_CTX reuse.")
@click.option("--case", "case_ids", multiple=True, help="Measure exactly this case (repeatable).")
@click.option("--list", "list_only", is_flag=True, help="List the cases that would run, and stop.")
@click.option("--loopback", is_flag=True,
              help="Instead: real HTTPS GETs over 127.0.0.1 (connect, pretransfer, total per request), with a "
                   "new SSL_CTX per request (curl's way) and with a shared one.")
@click.option("--quic", is_flag=True,
              help="Instead: GETs each on a new QUIC connection over 127.0.0.1 UDP (OpenSSL 3.5+'s own QUIC "
                   "stack), beside the same GETs over TCP+TLS 1.3, so each QUIC row says what QUIC costs.")
@click.option("--path", "net_path", metavar="SETTINGS",
              help="With --quic: run over an emulated network path, e.g. rtt=50ms,jitter=2ms,loss=1% (sslperf's "
                   "user-space UDP relay; each result records its path and is compared only with the same path).")
@click.option("--requests", type=click.IntRange(1, 10000), default=30, show_default=True,
              help="Requests per loopback or QUIC measurement (the curl regression report timed 30).")
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
                   "lockstep; with --quic, per QUIC connection beside TLS 1.3's.")
@click.option("--connections", default="100,1000", show_default=True,
              help="With --memory: how many connections at once (a comma-separated list).")
@provider_options
@placement_options
@click.pass_context
def tls(ctx, lib_names, patterns, time_ms, samples, metric, as_json, out, force, no_store, depth, case_ids, list_only,
        loopback, quic, net_path, requests, client_kind, curl_spec, server_lib, thread_list, thread_seconds,
        thread_mode, transfer, memory, connections, providers, fips_modules, cpu, no_pin, fixed_layout,
        processes) -> None:
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
      sslperf tls --quic --lib openssl-3.5 --lib openssl-3.6 --lib openssl-4.0
      sslperf tls --quic --transfer --path rtt=50ms --lib openssl-3.5 --lib openssl-3.6
      sslperf tls --quic --memory --lib openssl-3.5 --lib openssl-4.0
      sslperf tls --threads 1,2,4 --lib openssl-3.0 --lib openssl-3.6
      sslperf tls --transfer --lib openssl-3.6 --lib boringssl
    """
    if case_ids:
        cases = [suites.parse_case(c) for c in case_ids]
    else:
        cases = (suites.transfer_suite if transfer else suites.tls_suite)(depth or "default")
    cases = suites.select(cases, patterns)
    if list_only:
        return list_cases(cases)
    request = plan.tls_request(loopback, transfer, memory, thread_list, client_kind, thread_mode, connections,
                               time_ms, samples, requests=requests, curl=curl_spec, thread_seconds=thread_seconds,
                               server=installed.find(server_lib) if server_lib else None, quic=quic,
                               path=net_path,
                               chosen=bool(case_ids or patterns))
    settings = plan.settings(time_ms, samples, cpu, no_pin, processes, metric=metric, fixed_layout=fixed_layout)
    libs = fips.columns(lib_names, providers, fips_modules)
    run = modes.tls(request, libs, cases, settings, store_unless(ctx, no_store),
                    lambda what: err_console.print(f"building {what} (cached after the first time) …"))
    if out:
        write_output(out, run.to_json(), "the run", force=force)
    show(run, as_json, console, metric if request.mode == "runner" else "wall", not no_store)
