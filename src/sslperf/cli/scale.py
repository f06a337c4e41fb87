"""`sslperf scale`: how a case's rate grows with threads, per library, and why it stops growing."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.markup import escape

from sslperf.cli import common
from sslperf.cli.common import make_console
from sslperf.cli.options import (OutputPath, checked_target, details_option, finite, int_range, out_dir_callback,
                                 out_file_option,
                                 provider_options)
from sslperf.measure import limits

console = make_console()
err_console = make_console(stderr=True)


@click.command()
@click.option("--lib", "-l", "lib_names", multiple=True, help="Library to sweep (repeatable; default: system).")
@click.option("--case", "case_ids", multiple=True,
              help="A case of speed, api or tls to sweep (repeatable; default: a full and a resumed TLS 1.3 "
                   "handshake and api/digest/sha256/implicit-fetch/64).")
@click.option("--filter", "patterns", multiple=True, help="Keep cases whose id matches this glob or substring.")
@click.option("--threads", "thread_list", metavar="N,N,…",
              help="Thread counts (default: 1, 2, 4, … up to the CPUs this process may use, and that count).")
@click.option("--thread-mode", type=click.Choice(("own", "libctx", "shared")), default="own", show_default=True,
              help="own: each thread its own keys and contexts, the library's global state shared; libctx: also "
                   "its own OSSL_LIB_CTX (OpenSSL 3.0+); shared: handshakes on one SSL_CTX pair.")
@click.option("--seconds", type=finite(limits.THREAD_SECONDS), default=1.0, show_default=True,
              help="How long every thread count runs, per round.")
@click.option("--rounds", type=int_range(limits.SCALE_ROUNDS), default=3, show_default=True,
              help="Rounds of every thread count, interleaved with the libraries (1 thread gets twice as many).")
@click.option("--no-pin", is_flag=True, help="Let the threads float instead of one per CPU.")
@click.option("--no-explain", is_flag=True,
              help="Do not explain the largest count with a CPU per thread (lock waits, CPU shares).")
@click.option("--plot", "plot_dir", type=OutputPath(directory=True), callback=out_dir_callback,
              help="Also draw the curves (PNG and SVG) into this directory.")
@click.option("--probe", "probe_out", type=OutputPath(), callback=checked_target, metavar="ARCHIVE",
              help="Measure nothing here: write the sweep as a probe (`sslperf probe build`) to run on another "
                   "machine — a many-core server — and `sslperf import` its results.")
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON instead of tables.")
@details_option
@out_file_option("Also write the run as JSON here.")
@click.option("--no-store", is_flag=True, help="Do not keep the run in the results store.")
@provider_options
@click.pass_context
def scale(ctx, **options) -> None:
    """Sweep thread counts for any case of speed, api or tls, the libraries interleaved in rounds, threads pinned
    one per CPU: each count's rate with its 95% CI, the scaling efficiency (rate at N / (N × rate at 1)) with its
    interval, per-operation latency percentiles (--details); then, for the largest count against 1 thread, where
    the threads were blocked (per lock and call site) and which functions' CPU share grew — what stops a library
    scaling (OpenSSL 3.0's fetch and namemap locks, reference counts).

    \b
    Examples:
      sslperf scale --lib openssl-1.1.1w --lib openssl-3.0 --lib openssl-3.6
      sslperf scale --lib system --case api/digest/sha256/implicit-fetch/64 --threads 1,2 --json
      sslperf scale --lib openssl-3.0 --case tls/resume/tls1.3/ticket/x25519/ecdsa-p256 --plot out/
      sslperf scale --lib openssl-1.1.1w --lib openssl-3.6 --threads 1,2,4,8,16,32,64 --probe sweep.tar.gz
    """
    from sslperf import pinning
    from sslperf.scale import plot, render, sweep

    o = options
    request = sweep.request(o["lib_names"], o["case_ids"], o["patterns"], o["thread_list"], o["thread_mode"],
                            o["seconds"], o["rounds"], not o["no_pin"], not o["no_explain"], o["providers"],
                            o["fips_modules"])
    said = err_console if o["as_json"] else console
    if o["probe_out"]:
        from sslperf.probe import archive

        built = archive.build(request, Path(o["probe_out"]), progress=lambda what: said.print(f"… {escape(what)}"))
        said.print(f"✓ probe {escape(built.manifest['probe'])}: the sweep of {len(request.cases)} cases (a case × a "
                   f"thread count) → {escape(str(o['probe_out']))}; on the target: tar xzf it && sh "
                   "sslperf-probe-*/run.sh, then sslperf import its results.tar.gz here")
        return
    run = _run(ctx, request, o, said)
    curves = sweep.curves(run)
    if o["plot_dir"]:
        written = plot.draw(curves, Path(o["plot_dir"]), force=o["force"])
        said.print(f"[dim]curves drawn: {escape(', '.join(str(p) for p in written))}[/dim]")
    if o["as_json"]:
        click.echo(json.dumps(sweep.as_dict(run, curves), indent=1))
    else:
        render.print_sweep(curves, sweep.contention_of(run), console, o["details"])
    small = render.small_machine(len(pinning.allowed()))
    if small and not o["as_json"]:
        console.print(f"[dim]{escape(small)}[/dim]", soft_wrap=True)
    for warning in run.warnings + sweep.one_thread_wider(run) + sweep.preempted(run):
        said.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True)
    store = common.store_unless(ctx, o["no_store"])
    common.refuse_unstored(run, store)
    common.refuse_nothing_measured(run, common.held(run, store))


def _run(ctx, request, o, said):
    """The sweep's run, measured with progress shown, kept (--out, the store) before anything is drawn."""
    import time

    from sslperf.cli.progress import steps

    from sslperf import pinning
    from sslperf.scale import render

    started = time.monotonic()
    counts = [int(n) for n in str(request.labels.get("threads", "")).split(",") if n]
    said.print(f"[dim]{escape(render.placement(pinning.allowed(), request.options['threads'].pin, counts))}[/dim]")
    store = common.store_unless(ctx, o["no_store"])
    with steps(said, "compiling the harness", prefix=False) as progress:
        run = request.run(store, progress)
    kept = common.held(run, store)
    if o["out"]:
        common.write_output(o["out"], run.to_json(), "the run", common.kept_hint(run, o["no_store"], kept),
                            o["force"])
    said.print(f"[dim]{len(request.cases)} cases (a case × a thread count) on {len(run.libs)} libraries in "
               f"{time.monotonic() - started:.0f} s" + (f"; stored as run {escape(run.id)}" if kept else "")
               + "[/dim]")
    return run
