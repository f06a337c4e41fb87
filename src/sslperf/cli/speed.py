"""`sslperf speed`: the primitives suite."""

from __future__ import annotations

import time

import click
from rich.markup import escape

from sslperf.cli.common import deliver, list_cases, make_console, plural, progress_bar, store_unless
from sslperf.cli.options import placement_options, provider_options, run_options, thread_options
from sslperf.libs import fips
from sslperf.measure import environment, modes, plan, suites

console = make_console()
err_console = make_console(stderr=True)


@click.command()
@run_options(None, None, "Target wall time of one sample, in ms (default: the depth's).")
@click.option("--quick", "depth", flag_value="quick", help="A core set of cases, ~20 ms samples (under a minute).")
@click.option("--full", "depth", flag_value="full", help="Every case, longer samples, all key generations.")
@click.option("--sizes", help="Extra buffer sizes for ciphers, digests and MACs, e.g. 1350,4096.")
@click.option("--workload", type=click.Choice(["record", "speed-compat", "both"]), default="record",
              show_default=True,
              help="record: what a TLS stack does (same on every lib); speed-compat: each version's own "
                   "`openssl speed` loop; both: side by side.")
@click.option("--case", "case_ids", multiple=True, help="Measure exactly this case (repeatable).")
@click.option("--cpu-mask", type=click.Choice(sorted(environment.MASKS)),
              help="Pretend the CPU lacks instructions (via OPENSSL_ia32cap): no-aesni shows what a client "
                   "without AES-NI gets.")
@click.option("--list", "list_only", is_flag=True, help="List the cases that would run, and stop.")
@provider_options
@thread_options(("own", "libctx"), "own", "the chosen cases (choose a few with --case or --filter)")
@placement_options
@click.pass_context
def speed(ctx, lib_names, patterns, time_ms, samples, metric, as_json, out, force, no_store, depth, sizes, workload,
          case_ids, cpu_mask, list_only, providers, fips_modules, thread_list, thread_seconds, thread_mode, cpu,
          no_pin, fixed_layout, processes) -> None:
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
    depth = depth or "default"
    workloads = ("record", "speed-compat") if workload == "both" else (workload,)
    extra_sizes = suites.parse_sizes(sizes) if sizes else ()
    cases = suites.select([suites.parse_case(c) for c in case_ids] if case_ids else
                          suites.suite(depth, extra_sizes, workloads), patterns)
    if list_only:
        return list_cases(cases)
    plan_of_depth = suites.DEPTHS[depth]
    settings = plan.settings(time_ms or plan_of_depth.target_ms, samples or plan_of_depth.samples, cpu, no_pin,
                             processes, cpu_mask, metric, fixed_layout)
    libs = fips.columns(lib_names, providers, fips_modules)
    store = store_unless(ctx, no_store)
    started = time.monotonic()
    if thread_list:
        run = modes.run_threads(libs, cases, store, tuple(plan.counts(thread_list, "--threads", plan.MAX_THREADS)),
                                thread_seconds, thread_mode, "sslperf speed")
        metric = "wall"
    else:
        with progress_bar(console if not as_json else err_console) as bar:
            task = bar.add_task("compiling the harness", total=None)

            def report(what: str, done: int, total: int) -> None:
                bar.update(task, description=escape(what), completed=done, total=total)

            run = modes.run_cases(libs, cases, settings, store, "sslperf speed",
                                  {"depth": depth, "workload": workload, "metric": metric}, progress=report)
    deliver(run, console, metric, as_json, out, force, no_store,
            f"{plural(len(cases), 'case')} × {plural(len(libs), 'library')} in {time.monotonic() - started:.0f} s")
