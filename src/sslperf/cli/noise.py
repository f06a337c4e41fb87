"""`sslperf noise`: measure this machine's noise floor (an A/A experiment)."""

from __future__ import annotations

import json

import click
from rich.markup import escape
from rich.table import Table

from sslperf.cli.common import make_console, open_store
from sslperf.cli.options import Finite, placement_options
from sslperf.measure import limits, verbs
from sslperf.noise import floor

console = make_console()
err_console = make_console(stderr=True)


@click.command()
@click.option("--lib", "-l", "lib_name", default="system", show_default=True, help="The library to measure twice.")
@click.option("--runs", "count", type=click.IntRange(int(limits.NOISE_RUNS.low), int(limits.NOISE_RUNS.high)),
              default=3, show_default=True, help="Back-to-back runs (each with the library as two columns).")
@click.option("--threshold", type=Finite(limits.NOISE_THRESHOLD.low, limits.NOISE_THRESHOLD.high), default=2.0,
              show_default=True, help="The plain threshold in %, to count the false verdicts it would give.")
@click.option("--filter", "patterns", multiple=True, help="Keep cases whose id matches this glob or substring.")
@click.option("--json", "as_json", is_flag=True)
@placement_options
@click.pass_context
def noise(ctx, lib_name, count, threshold, patterns, as_json, cpu, no_pin, fixed_layout, processes) -> None:
    """Measure the noise floor of this machine: the quick primitives suite
    with one library as two columns (the same binary in its own worker
    processes), run back to back. Per family it keeps the largest change
    seen within a run and across runs; `compare` then calls no change
    smaller than that floor (and says so).

    \b
    Example:
      sslperf noise --runs 3
      sslperf compare RUN_A RUN_B        # uses the floor measured here
    """
    request = verbs.from_params("noise", ctx.params)
    runs, floors = floor.measure_floors(
        request, open_store(ctx),
        lambda n: err_console.print(f"[dim]A/A run {n} of {count} ({len(request.cases)} cases × 2 columns)…[/dim]"))
    show(runs, floors, threshold, as_json)


def show(runs, floors, threshold: float, as_json: bool) -> None:
    """The floors an A/A experiment gave (here or on a fleet machine: measure-request prints the same)."""
    env, lib, count = runs[0].environment, runs[0].libs[0].name, len(runs)
    if as_json:
        click.echo(json.dumps({"host": env["host"], "runs": [r.id for r in runs],
                               "floors": [f.as_dict() for f in floors]}, indent=1))
        return
    table = Table(title=f"noise floor of {escape(str(env['host']))} ({escape(str(env.get('cpu_model')))}), "
                        f"{escape(lib)}, {count} runs: the 95th "
                        "percentile of the A/A changes (the largest one)", title_justify="left")
    for column in ("family", "within a run (largest)", f"false verdicts at {threshold:g}%",
                   "across runs (largest)", f"false verdicts at {threshold:g}%"):
        table.add_column(column, justify="left" if column == "family" else "right")
    by = {(f.kind, f.family): f for f in floors}
    for family in sorted({f.family for f in floors}):
        cells = [escape(family)]
        for kind in ("within", "across"):
            f = by.get((kind, family))
            cells += [f"{f.floor * 100:.1f}% ({f.largest * 100:.1f}%)", f"{f.false_verdicts} of {f.comparisons}"] \
                if f else ["", ""]
        table.add_row(*cells)
    console.print(table)
    console.print(f"[dim]stored for {escape(str(env['host']))}; runs {escape(', '.join(r.id for r in runs))}. "
                  "`sslperf compare` now "
                  "calls no change smaller than these floors.[/dim]")
