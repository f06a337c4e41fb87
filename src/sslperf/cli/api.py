"""`sslperf api`: how you call the library matters (the OpenSSL tuning talk)."""

from __future__ import annotations

import click

from sslperf.cli.common import make_console, show, store_unless, write_output
from sslperf.cli.options import placement_options, provider_options, run_options, thread_options
from sslperf.libs import fips
from sslperf.measure import modes, plan, suites

console = make_console()


@click.command()
@run_options(20, 10)
@provider_options
@thread_options(("own", "libctx"), "own", "the chosen cases (choose a few with --filter)")
@placement_options
@click.pass_context
def api(ctx, lib_names, patterns, time_ms, samples, metric, as_json, out, force, no_store, providers, fips_modules,
        thread_list, thread_seconds, thread_mode, cpu, no_pin, fixed_layout, processes) -> None:
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
    settings = plan.settings(time_ms, samples, cpu, no_pin, processes, metric=metric, fixed_layout=fixed_layout)
    libs = fips.columns(lib_names, providers, fips_modules)
    store = store_unless(ctx, no_store)
    if thread_list:
        run = modes.run_threads(libs, cases, store, tuple(plan.counts(thread_list, "--threads", plan.MAX_THREADS)),
                                thread_seconds, thread_mode, "sslperf api")
        metric = "wall"
    else:
        run = modes.run_cases(libs, cases, settings, store, "sslperf api", {"suite": "api"})
    if out:
        write_output(out, run.to_json(), "the run", force=force)
    show(run, as_json, console, metric, not no_store)
    if not as_json:
        for note in sorted({m.note for m in run.measurements if m.note}):
            console.print(f"[dim]† {note}[/dim]")
