"""`sslperf speed`: the primitives suite."""

from __future__ import annotations

import time

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sslperf.measure import environment, suites
from sslperf.cli.common import (METRIC_HELP, Finite, find_libs, list_cases, make_console, measure, out_file_option,
                                placement_options, plural, provider_options, refuse_nothing_measured, run_across_threads,
                                show, thread_options,
                                with_providers, write_output)
from sslperf.cli.common import settings as make_settings

console = make_console()
err_console = make_console(stderr=True)


@click.command()
@click.option("--lib", "-l", "lib_names", multiple=True, help="Library to measure (repeatable; default: system).")
@click.option("--quick", "depth", flag_value="quick", help="A core set of cases, ~20 ms samples (under a minute).")
@click.option("--full", "depth", flag_value="full", help="Every case, longer samples, all key generations.")
@click.option("--sizes", help="Extra buffer sizes for ciphers, digests and MACs, e.g. 1350,4096.")
@click.option("--workload", type=click.Choice(["record", "speed-compat", "both"]), default="record",
              show_default=True,
              help="record: what a TLS stack does (same on every lib); speed-compat: each version's own "
                   "`openssl speed` loop; both: side by side.")
@click.option("--case", "case_ids", multiple=True, help="Measure exactly this case (repeatable).")
@click.option("--filter", "patterns", multiple=True, help="Keep cases whose id matches this glob or substring.")
@click.option("--time", "time_ms", type=Finite(1, 10000), help="Target wall time of one sample, in ms.")
@click.option("--samples", type=click.IntRange(1, 1000), help="Samples per case and library.")
@click.option("--cpu-mask", type=click.Choice(sorted(environment.MASKS)),
              help="Pretend the CPU lacks instructions (via OPENSSL_ia32cap): no-aesni shows what a client "
                   "without AES-NI gets.")
@click.option("--metric", type=click.Choice(["wall", "cpu", "instructions"]), default="wall", show_default=True,
              help=METRIC_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON instead of tables.")
@out_file_option("Also write the run as JSON here.")
@click.option("--list", "list_only", is_flag=True, help="List the cases that would run, and stop.")
@click.option("--no-store", is_flag=True, help="Do not keep the run in the results store.")
@provider_options
@thread_options(("own", "libctx"), "own", "the chosen cases (choose a few with --case or --filter)")
@placement_options
@click.pass_context
def speed(ctx, lib_names, depth, sizes, workload, case_ids, patterns, time_ms, samples, cpu_mask, metric, as_json,
          out, force, list_only, no_store, providers, fips_modules, thread_list, thread_seconds, thread_mode, cpu, no_pin,
          fixed_layout, processes) -> None:
    """Measure ciphers, AEADs, digests, MACs, signatures, key exchange and
    KEMs of one or more libraries in one interleaved run.

    \b
    Examples:
      sslperf speed --quick
      sslperf speed --quick --lib system --lib openssl-1.1.1w --lib openssl-3.6
      sslperf speed --quick --lib openssl-3.6 --cpu-mask no-aesni
      sslperf speed --lib openssl-3.0 --filter 'cipher/aes-128-gcm/encrypt/*' --workload both
      sslperf speed --case cipher/aes-128-gcm/encrypt/16384 --threads 1,2 --lib openssl-3.0 --lib openssl-3.6
      sslperf speed --quick --lib openssl-3.6 --provider default --provider fips --fips-module openssl-3.1.2+fips
    """
    # Imported here: numpy/scipy take half a second, which `sslperf libs` should not pay.
    from sslperf.report.terminal import print_run

    depth = depth or "default"
    extra_sizes = suites.parse_sizes(sizes) if sizes else ()
    workloads = ("record", "speed-compat") if workload == "both" else (workload,)
    if case_ids:
        cases = [suites.parse_case(c) for c in case_ids]
    else:
        cases = suites.suite(depth, extra_sizes, workloads)
    cases = suites.select(cases, patterns)
    if list_only:
        return list_cases(cases)
    plan = suites.DEPTHS[depth]
    settings = make_settings(time_ms or plan.target_ms, samples or plan.samples, cpu, no_pin, processes, cpu_mask,
                             metric, fixed_layout)
    libs = with_providers(find_libs(lib_names), providers, fips_modules)
    if thread_list:
        run = run_across_threads(ctx, libs, cases, thread_list, thread_seconds, thread_mode, "sslperf speed", no_store)
        if out:
            write_output(out, run.to_json(), "the run", _kept(run, no_store), force)
        return show(run, as_json, console, "wall", not no_store)
    started = time.monotonic()
    with _progress(console if not as_json else err_console) as bar:
        task = bar.add_task("compiling the harness", total=None)

        def report(what: str, done: int, total: int) -> None:
            bar.update(task, description=escape(what), completed=done, total=total)

        run = measure(ctx, libs, cases, settings, "sslperf speed",
                      {"depth": depth, "workload": workload, "metric": metric}, no_store=no_store, progress=report)
    elapsed = time.monotonic() - started
    if out:
        try:
            write_output(out, run.to_json(), "the run", _kept(run, no_store), force)
        except Exception:
            if not as_json:           # the figures are not lost with the file: print them first
                print_run(run, console, metric)
            raise
    if as_json:
        return show(run, True, console, metric, not no_store)
    print_run(run, console, metric)
    console.print(f"[dim]{plural(len(cases), 'case')} × {plural(len(libs), 'library')} in {elapsed:.0f} s"
                  + ("" if no_store else f"; stored as run {run.id}") + (f"; JSON written to {out}" if out else "")
                  + "[/dim]")
    refuse_nothing_measured(run, not no_store)


def _kept(run, no_store: bool) -> str:
    if no_store:
        return "The run was not stored (--no-store); run it again with another --out."
    return (f"The run is kept in the store as run {run.id}: `sslperf runs export {run.id} --out FILE` writes it "
            "elsewhere.")


def _progress(target: Console) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=target, transient=True, disable=not target.is_terminal)
