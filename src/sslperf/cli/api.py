"""`sslperf api`: how you call the library matters (the OpenSSL tuning talk)."""

from __future__ import annotations


import click

from sslperf.measure import suites
from sslperf.cli.common import (METRIC_HELP, Finite, find_libs, make_console, measure, placement_options, provider_options,
                                run_across_threads, settings, show, thread_options, with_providers)
from sslperf.measure.session import certificates

console = make_console()


@click.command()
@click.option("--lib", "-l", "lib_names", multiple=True, help="Library to measure (repeatable; default: system).")
@click.option("--filter", "patterns", multiple=True, help="Keep cases whose id matches this glob or substring.")
@click.option("--time", "time_ms", type=Finite(1, 10000), default=20, show_default=True,
              help="Target wall time of one sample, in ms.")
@click.option("--samples", type=click.IntRange(1, 1000), default=10, show_default=True)
@click.option("--metric", type=click.Choice(["wall", "cpu", "instructions"]), default="wall", show_default=True,
              help=METRIC_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON instead of tables.")
@click.option("--no-store", is_flag=True, help="Do not keep the run in the results store.")
@provider_options
@thread_options(("own", "libctx"), "own", "the chosen cases (choose a few with --filter)")
@placement_options
@click.pass_context
def api(ctx, lib_names, patterns, time_ms, samples, metric, as_json, no_store, providers, fips_modules, thread_list,
        thread_seconds, thread_mode, cpu, no_pin, fixed_layout, processes) -> None:
    """µs per call of the same work done different ways: implicit vs explicit
    fetch, reused contexts and key schedules, HMAC context duplication, the
    cost of a fetch and of SSL_CTX_new, CA file vs hashed directory, PEM
    parsing. Libraries without the 3.x API run the closest equivalent (marked
    † and explained in --json) or show n/a.

    \b
    Example (the tuning talk's slides for three versions):
      sslperf api --lib openssl-1.1.1w --lib openssl-3.0 --lib openssl-3.6
      sslperf api --filter api/fetch/sha256 --threads 1,2 --thread-mode libctx --lib openssl-3.6
    """
    cases = suites.select(suites.api_cases(), patterns)
    libs = with_providers(find_libs(lib_names), providers, fips_modules)
    if thread_list:
        return show(run_across_threads(ctx, libs, cases, thread_list, thread_seconds, thread_mode, "sslperf api",
                                       no_store), as_json, console, "wall", not no_store)
    with certificates(libs[0]) as workdir:     # for the CA-store and PEM cases
        run = measure(ctx, libs, cases, settings(time_ms, samples, cpu, no_pin, processes, metric=metric, fixed_layout=fixed_layout), "sslperf api", {"suite": "api"},
                      {"SSLPERF_CERT_DIR": str(workdir)}, no_store)
    show(run, as_json, console, metric, not no_store)
    if as_json:
        return
    notes = {m.note for m in run.measurements if m.note}
    for note in sorted(notes):
        console.print(f"[dim]† {note}[/dim]")
