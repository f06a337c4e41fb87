"""`sslperf compare`: libraries or runs side by side, with verdicts."""

from __future__ import annotations

import json
import sys

import click

from rich.markup import escape

from sslperf.cli.common import Finite, make_console, open_store
from sslperf.errors import SslperfError

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
@click.option("--format", "fmt", type=click.Choice(["table", "md", "json"]), default="table", show_default=True)
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
    or crashed, nor one recommend, noise or bisect made for their own use.
    Give a run id to use any other. The run picked for each column is
    printed first.
    \b
    Examples:
      sslperf compare openssl-1.1.1w openssl-3.0 openssl-3.6
      sslperf compare 20261121-2026 latest --fail-above 5
    """
    from sslperf.compare import compare as build_comparison
    from sslperf.report import comparison as view

    store = open_store(ctx)
    columns, runs = _columns(store, items)
    if len(columns) < 2:
        raise SslperfError("A comparison needs at least two columns (libraries or runs).")
    floors, floor_note = _floors(store, runs)
    result = build_comparison(columns, runs, metric, threshold / 100, alpha, patterns, floors)
    if not result.rows:
        raise SslperfError("The compared runs have no case in common.",
                           hint="Measure the same suite on each (e.g. `sslperf speed --quick --lib A --lib B`).")
    if fmt == "table":
        console.print(f"[dim]{floor_note}[/dim]")
        below = sorted({f"{family} ({kind}: {value * 100:.1f}%)" for (kind, family), value in floors.items()
                        if value > threshold / 100 and any(r.cells[0].family == family for r in result.rows)})
        if below:
            console.print(f"[yellow]warning:[/] --threshold {threshold:g}% is below this machine's measured noise "
                          f"floor for {', '.join(below)}: changes that small are indistinguishable from noise here, "
                          "so the floor is used instead.")
    for line in picked_lines(columns, runs):       # which run each column is: on stderr when stdout is data
        (console if fmt == "table" else err_console).print(f"[dim]{escape(line)}[/dim]", soft_wrap=True)
    if fmt == "json":
        click.echo(json.dumps(result.to_dict(), indent=1))
    elif fmt == "md":
        click.echo(view.to_markdown(result))
    else:
        for table in view.tables(result):
            console.print(table)
    if explain_top and fmt == "table":
        _explain(result, explain_top)
    if fail_above is not None:
        regressions = result.regressions(fail_above)
        for row, column, change in regressions:
            console.print(f"[bold red]regression:[/] {row.case} on {column.label}: {change.percent:+.1f}% "
                          f"(p={change.p:.3f})", soft_wrap=True)
        if regressions:
            sys.exit(EXIT_REGRESSION)


def picked_lines(columns, runs) -> list[str]:
    """One line per column: the run it comes from, who made it and when, and how it was chosen."""
    lines = []
    for column in columns:
        run = runs[column.run_id]
        source = run.settings.get("source") or "?"
        state = "" if run.state in ("complete", None) else f", {run.state}"
        how = run.settings.get("picked_as")
        lines.append(f"{column.label}: run {run.id} ({source}, {_when(run.started)}{state})"
                     + (f" — {how}" if how and how != "given" else ""))
    return lines


def _when(started: str | None) -> str:
    """`2026-11-22T21:44:05+00:00` → `2026-11-22 21:44 UTC`."""
    import datetime as dt

    try:
        moment = dt.datetime.fromisoformat(started or "")
    except ValueError:
        return started or "?"
    zone = "" if moment.tzinfo is None else (" UTC" if moment.utcoffset() == dt.timedelta(0) else moment.strftime(" %z"))
    return moment.strftime("%Y-%m-%d %H:%M") + zone


def _explain(result, top: int) -> None:
    """Why: each of the `top` largest significant slow-downs profiled on its two libraries."""
    from sslperf.libs import installed
    from sslperf.profiling.explain import available, profile_pair
    from sslperf.profiling.render import print_explanation

    slower = sorted(result.regressions(0.0), key=lambda found: found[2].ratio)[:top]
    if not slower:
        console.print("--explain: no significant slow-down to explain.")
        return
    if not available():
        console.print("[yellow]--explain needs valgrind (callgrind) to profile both sides; it is not installed.[/]")
        return
    base = result.columns[0]
    for row, column, change in slower:
        try:
            older, newer = installed.find(base.lib), installed.find(column.lib)
        except SslperfError as exc:
            console.print(f"[yellow]not explained: {row.case} on {column.label}: {exc.message}[/]", soft_wrap=True)
            continue
        console.print(f"[bold]Why {row.case} is {-change.percent:.1f}% slower on {column.label} than on "
                      f"{base.label}[/] (callgrind, the harness loop only; shares of all instructions):",
                      soft_wrap=True)
        print_explanation(*profile_pair(older, newer, row.case), 10, console)


def _floors(store, runs: dict) -> tuple[dict, str]:
    """The noise floor measured on the runs' host (when they share one), and a line saying which."""
    hosts = {run.environment.get("host") for run in runs.values()}
    if len(hosts) != 1 or None in hosts:
        return {}, "noise floor: none applies (the runs come from different hosts); --threshold alone decides"
    [host] = hosts
    found = store.floors(host)
    if not found:
        return {}, (f"noise floor: not measured on {host}; --threshold alone decides (measure it with "
                    "`sslperf noise`)")
    measured = max(f["measured"] for f in found.values())
    return ({key: f["floor"] for key, f in found.items()},
            f"noise floor of {host} (sslperf noise, {measured}) applies: a change must exceed max(--threshold, "
            "the family's floor within a run or across runs)")


def _columns(store, items):
    from sslperf.compare import Column
    from sslperf.libs import installed

    columns, runs, picked = [], {}, {}
    for item in items:
        run_part, _, lib_part = item.partition(":")
        run_id = _as_run(store, run_part)
        if run_id is None:
            name = item
            run_id = store.latest_run_with(name)
            if run_id is None:
                try:
                    name = installed.find(item).name     # openssl-3.0 → openssl-3.0.8
                except SslperfError:
                    pass
                run_id = store.latest_run_with(name)
            if run_id is None:
                raise store.no_latest_with(name)
            names = [name]
            picked[run_id] = picked.get(run_id) or f"the newest complete run of yours with {name}"
        else:
            names = None
            picked[run_id] = picked.get(run_id) or ("`latest`: the newest complete run of yours"
                                                    if run_part == "latest" else "given")
        run = runs.get(run_id) or store.load(run_id)
        runs[run_id] = run
        if names is None:
            names = [lib_part] if lib_part else [lib.name for lib in run.libs]
            unknown = [n for n in names if n not in {lib.name for lib in run.libs}]
            if unknown:
                raise SslperfError(f"Run {run_id} has no library `{unknown[0]}`; it has "
                                   f"{', '.join(lib.name for lib in run.libs)}.")
        for name in names:
            columns.append(Column(name, run_id, name))
    labels = [c.lib for c in columns]
    if len(set(labels)) != len(labels):   # the same lib from two runs: tell them apart
        columns = [Column(f"{c.lib}@{c.run_id}", c.run_id, c.lib) for c in columns]
    for run_id, how in picked.items():
        runs[run_id].settings = {**runs[run_id].settings, "picked_as": how}
    return columns, runs


def _as_run(store, text: str) -> str | None:
    """The run `text` names, None when it names none (then it is a library)."""
    if text == "latest":
        return store.resolve(text)     # no run counts as latest: say why, rather than look for a library "latest"
    if not text or not store.matching_runs(text):
        return None
    return store.resolve(text)     # an ambiguous prefix is an error, not a library name
