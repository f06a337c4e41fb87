"""`sslperf api`: how you call the library matters (seed 000)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import click
from rich.console import Console

from sslperf import suites
from sslperf.cli.common import open_store
from sslperf.errors import SslperfError
from sslperf.libs import installed

console = Console(highlight=False, soft_wrap=True)
CA_CERTIFICATES = 150


@click.command()
@click.option("--lib", "-l", "lib_names", multiple=True, help="Library to measure (repeatable; default: system).")
@click.option("--filter", "patterns", multiple=True, help="Keep cases whose id matches this glob or substring.")
@click.option("--time", "time_ms", type=click.FloatRange(1, 10000), default=20, show_default=True,
              help="Target wall time of one sample, in ms.")
@click.option("--samples", type=click.IntRange(1, 1000), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON instead of tables.")
@click.option("--no-store", is_flag=True, help="Do not keep the run in the results store.")
@click.pass_context
def api(ctx, lib_names, patterns, time_ms, samples, as_json, no_store) -> None:
    """µs per call of the same work done different ways: implicit vs explicit
    fetch, reused contexts and key schedules, HMAC context duplication, the
    cost of a fetch and of SSL_CTX_new, CA file vs hashed directory, PEM
    parsing. Libraries without the 3.x API run the closest equivalent (marked
    † and explained in --json) or show n/a.

    \b
    Example (seed 000's slides for three versions):
      sslperf api --lib openssl-1.1.1w --lib openssl-3.0 --lib openssl-3.6
    """
    from sslperf.native import harness_binary
    from sslperf.report.terminal import print_run
    from sslperf.runner import Runner, Settings

    cases = suites.select(suites.api_cases(), patterns)
    libs = [installed.find(name) for name in (lib_names or ("system",))]
    store = None if no_store else open_store(ctx)
    # Certificates and keys for the CA-store and PEM cases: private, per run.
    workdir = Path(tempfile.mkdtemp(prefix="sslperf-api-"))
    try:
        made = subprocess.run([str(harness_binary(libs[0])), "mkcerts", str(workdir), str(CA_CERTIFICATES)],
                              capture_output=True, text=True, timeout=300)
        if made.returncode != 0:
            raise SslperfError(f"Making the test certificates with {libs[0].name} failed: {made.stderr.strip()[-300:]}")
        runner = Runner(libs, Settings(time_ms, samples), {"suite": "api"}, {"SSLPERF_API_DIR": str(workdir)})
        run = runner.run
        try:
            if store:
                store.begin(run, source="sslperf api")
            runner.measure(cases, on_measurement=(lambda m: store.add(run.id, m)) if store else None)
        finally:
            runner.close()
            if store:
                store.finish(run)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if as_json:
        click.echo(json.dumps(run.to_dict(), indent=1))
        return
    print_run(run, console)
    notes = {m.note for m in run.measurements if m.note}
    for note in sorted(notes):
        console.print(f"[dim]† {note}[/dim]")
