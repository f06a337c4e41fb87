"""`sslperf profile`: where one case spends its time, on one library or two
side by side."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click
from rich.markup import escape

from sslperf.cli.common import make_console, write_output
from sslperf.cli.options import Finite, OutputPath, force_option, out_dir_callback
from sslperf.libs import fips
from sslperf.measure import suites
from sslperf.profiling import record, render

console = make_console()
progress = make_console(stderr=True)


@click.command()
@click.argument("case_id", metavar="CASE")
@click.option("--lib", "-l", "lib_name", required=True, help="Library to profile.")
@click.option("--vs", "vs_name", help="A second library: both side by side, and the functions whose share changed "
                                      "most.")
@click.option("--tool", type=click.Choice(["auto", "perf", "callgrind"]), default="auto", show_default=True,
              help="perf samples CPU time (needs perf_event_open); callgrind counts instructions on a simulated "
                   "CPU (slow, deterministic, works anywhere). auto: perf when `perf record` works here.")
@click.option("--seconds", type=Finite(0.1, 600), default=5.0, show_default=True,
              help="How long the loop runs per library (under callgrind: simulated, so far fewer operations).")
@click.option("--iterations", type=click.IntRange(1, 10**9), help="Run exactly this many operations instead.")
@click.option("--top", type=click.IntRange(1, 200), default=15, show_default=True, help="Functions per table.")
@click.option("--out", type=OutputPath(directory=True), callback=out_dir_callback,
              help="Directory for the raw profiles, the tool's reports and profile.json "
                   "[default: sslperf-profile/TIME-CASE].")
@force_option
@click.option("--json", "as_json", is_flag=True, help="Print profile.json instead of tables.")
def profile(case_id, lib_name, vs_name, tool, seconds, iterations, top, out, force, as_json) -> None:
    """Profile one case (a `speed`, `api` or `tls` case id) on a library:
    the top functions by self and by inclusive cost. With --vs, two libraries
    side by side and the functions whose share changed most, as the curl
    investigation of OpenSSL 3.0's slower new connections found `sa_doall` and
    `ossl_method_store_cache_flush`.

    Only the harness's timed loop is profiled; keys, contexts and the checked
    first operation are made before it. Built libraries are static and keep
    their symbol table, so names are real; the `debug-symbols` variant adds -g.

    \b
    Examples:
      sslperf profile tls/handshake/tls1.3/x25519/ecdsa-p256/new --lib openssl-1.1.1w --vs openssl-3.0
      sslperf profile sig/ecdsa-p256/sign --lib openssl-3.6 --tool callgrind --iterations 200
    """
    case = suites.parse_case(case_id)
    libs = fips.columns((lib_name, vs_name) if vs_name else (lib_name,))
    chosen, why = record.choose_tool(tool)
    if out is None:         # the default place is checked like one given (an unwritable working directory)
        out = out_dir_callback(None, None, Path("sslperf-profile") / f"{time.strftime('%Y%m%d-%H%M%S')}-"
                                                                    f"{case.id.replace('/', '_')}")
    record.check_outputs(out, force, libs, chosen)
    progress.print(f"profiling with {escape(chosen)}: {escape(why)}")
    profiles = record.record_into(out, force, libs, case, chosen, seconds, iterations,
                                  lambda line: progress.print(escape(line)))
    result = render.as_dict(case.id, chosen, why, out, profiles, top)
    write_output(out / "profile.json", json.dumps(result, indent=1), "profile.json", force=force)
    if as_json:
        click.echo(json.dumps(result, indent=1))
        return
    render.print_profiles(profiles, chosen, why, top, out, console)
