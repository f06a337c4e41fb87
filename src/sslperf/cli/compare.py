"""`sslperf compare`: libraries or runs side by side, with verdicts."""

from __future__ import annotations

import json
import sys

import click
from rich.markup import escape

from sslperf import compare as comparing
from sslperf.cli.common import make_console, open_store
from sslperf.cli.options import Finite
from sslperf.errors import SslperfError
from sslperf.noise.applied import above_threshold, floor_for
from sslperf.profiling import explain
from sslperf.profiling.render import print_explanation
from sslperf.report import verdict_tables

console = make_console()
err_console = make_console(stderr=True)
EXIT_REGRESSION = 4


@click.command()
@click.argument("items", nargs=-1, required=True)
@click.option("--metric", type=click.Choice(["wall", "cpu", "instructions"]), default="wall", show_default=True)
@click.option("--filter", "patterns", multiple=True, help="Keep cases whose id matches this glob or substring.")
@click.option("--threshold", type=Finite(0, 100), default=2.0, show_default=True,
              help="Noise threshold in %: smaller changes are `~` even when significant.")
@click.option("--alpha", type=Finite(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              help="Significance level of the test (a t test across worker processes; Mann-Whitney U on "
                   "samples for runs without process records).")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "md", "github", "json"]), default="table",
              show_default=True,
              help="markdown (or md): the verdict, the slow-downs worst first, the method and noise floor, every "
                   "case; github: the same for a pull-request comment, the full tables folded.")
@click.option("--fail-above", type=Finite(0, 100, max_open=True), metavar="PCT",
              help=f"Exit with code {EXIT_REGRESSION} when a case is significantly slower than the baseline by "
                   "more than PCT % (a CI gate).")
@click.option("--explain", "explain_top", type=click.IntRange(0, 50), default=0, metavar="N",
              help="Profile the N largest significant slow-downs on both libraries with callgrind and show the "
                   "functions whose share moved most (needs valgrind and both libraries in hand).")
@click.pass_context
def compare(ctx, items, metric, patterns, threshold, alpha, fmt, fail_above, explain_top) -> None:
    """Compare libraries (their latest runs) or runs; the first is the baseline.

    \b
    ITEMS are library names (`openssl-1.1.1w`, `system`), run ids (or a
    unique prefix, or `latest`), or RUN:LIB for one library of a run. A run
    with several libraries gives a column for each.
    \b
    A library's run, like `latest`, is the newest complete run you made
    yourself (speed, api, tls or an import): never one that was interrupted
    or crashed, nor one recommend, noise, bisect or track made for their own use.
    Give a run id to use any other. The run picked for each column is
    printed first.
    \b
    Examples:
      sslperf compare openssl-1.1.1w openssl-3.0 openssl-3.6
      sslperf compare 20261121-2026 latest --fail-above 5
    """
    store = open_store(ctx)
    columns, runs = comparing.resolve(store, items)
    if len(columns) < 2:
        raise SslperfError("A comparison needs at least two columns (libraries or runs).")
    floors, floor_note = floor_for(store, (run.environment.get("host") for run in runs.values()))
    result = comparing.compare(columns, runs, metric, threshold / 100, alpha, patterns, floors)
    if not result.rows:
        raise SslperfError("The compared runs have no case in common.",
                           hint="Measure the same suite on each (e.g. `sslperf speed --quick --lib A --lib B`).")
    if fmt == "table":
        console.print(f"[dim]{escape(floor_note)}[/dim]")
        below = above_threshold(floors, threshold / 100, {row.cells[0].family for row in result.rows})
        if below:
            console.print(f"[yellow]warning:[/] --threshold {threshold:g}% is below this machine's measured noise "
                          f"floor for {escape(', '.join(below))}: changes that small are indistinguishable from "
                          "noise here, "
                          "so the floor is used instead.")
    for line in comparing.picked_lines(columns, runs):       # which run each column is: on stderr when stdout is data
        (console if fmt == "table" else err_console).print(f"[dim]{escape(line)}[/dim]", soft_wrap=True)
    if fmt == "json":
        click.echo(json.dumps(result.to_dict(), indent=1))
    elif fmt in ("markdown", "md", "github"):
        click.echo(verdict_tables.to_markdown(result, floor_note, fail_above, github=fmt == "github"))
    else:
        for table in verdict_tables.tables(result):
            console.print(table)
    for said in (result.noisy_runs(), result.waited()):
        if said:
            (console if fmt == "table" else err_console).print(f"[yellow]warning:[/] {escape(said)}", soft_wrap=True)
    if fmt == "table":
        for said in result.parameters():
            console.print(f"[bold]negotiated:[/] {escape(said)}", soft_wrap=True)
        for line in comparing.split_lines(result, runs):
            console.print(escape(line), soft_wrap=True)
    if explain_top and fmt == "table":
        _explain(result, explain_top)
    if fail_above is not None:
        regressions = result.regressions(fail_above)
        for row, column, change in regressions:
            (console if fmt == "table" else err_console).print(
                f"[bold red]regression:[/] {escape(row.case)} on {escape(column.label)}: {change.percent:+.1f}% "
                f"({escape(change.evidence())})", soft_wrap=True)
        if regressions:
            sys.exit(EXIT_REGRESSION)


def _explain(result, top: int) -> None:
    """Why: each of the `top` largest significant slow-downs profiled on its two libraries."""
    if not result.regressions(0.0):
        console.print("--explain: no significant slow-down to explain.")
        return
    if not explain.available():
        console.print("[yellow]--explain needs valgrind (callgrind) to profile both sides; it is not installed.[/]")
        return
    base = result.columns[0]
    for found in explain.slowdowns(result, top):
        if found.problem:
            console.print(f"[yellow]not explained: {escape(found.row.case)} on {escape(found.column.label)}: "
                          f"{escape(found.problem)}[/]",
                          soft_wrap=True)
            continue
        console.print(f"[bold]Why {escape(found.row.case)} is {-found.change.percent:.1f}% slower on "
                      f"{escape(found.column.label)} than on {escape(base.label)}[/] (callgrind, the harness loop "
                      "only; shares of all instructions):",
                      soft_wrap=True)
        print_explanation(*found.profiles, 10, console)
