"""`sslperf tls`: what a handshake costs."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import click
from rich.console import Console

from sslperf import suites
from sslperf.cli.common import measure
from sslperf.errors import SslperfError
from sslperf.libs import installed

console = Console(highlight=False, soft_wrap=True)
CA_CERTIFICATES = 150


def certificate_dir(lib) -> Path:
    """A private directory (0700) with the ~150-certificate CA bundle the
    clients load, made by the library's own harness; the caller removes it."""
    from sslperf.native import harness_binary

    workdir = Path(tempfile.mkdtemp(prefix="sslperf-certs-"))
    made = subprocess.run([str(harness_binary(lib)), "mkcerts", str(workdir), str(CA_CERTIFICATES)],
                          capture_output=True, text=True, timeout=300)
    if made.returncode != 0:
        shutil.rmtree(workdir, ignore_errors=True)
        raise SslperfError(f"Making the test certificates with {lib.name} failed: {made.stderr.strip()[-300:]}")
    return workdir


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
@click.pass_context
def tls(ctx, lib_names, depth, case_ids, patterns, time_ms, samples, as_json, no_store, list_only) -> None:
    """Full and resumed TLS 1.2/1.3 handshakes in memory (client and server in
    one process), per group and certificate type, with a shared client
    SSL_CTX or a new one with a CA load per connection (what curl did, seed
    001). Each handshake is checked for the version, group and cipher asked.

    \b
    Example (seed 001: 3.0 made new connections slower than 1.1.1):
      sslperf tls --lib openssl-1.1.1w --lib openssl-3.0 --lib openssl-3.6
    """
    from sslperf.report.terminal import print_run
    from sslperf.runner import Settings

    cases = [suites.parse_case(c) for c in case_ids] if case_ids else suites.tls_suite(depth or "default")
    cases = suites.select(cases, patterns)
    if list_only:
        for case in cases:
            click.echo(case.id)
        return
    libs = [installed.find(name) for name in (lib_names or ("system",))]
    workdir = certificate_dir(libs[0])
    try:
        run = measure(ctx, libs, cases, Settings(time_ms, samples), "sslperf tls", {"suite": "tls"},
                      {"SSLPERF_CERT_DIR": str(workdir)}, no_store)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if as_json:
        click.echo(json.dumps(run.to_dict(), indent=1))
        return
    print_run(run, console)
