"""`sslperf runs …`: the runs kept in the store."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from sslperf.cli.common import make_console, open_store, write_output
from sslperf.cli.options import details_option, out_file_option

console = make_console()


@click.group()
def runs() -> None:
    """List, show, delete and export the runs in the store."""


@runs.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def list_cmd(ctx, as_json: bool) -> None:
    """Runs, newest first, with their state: running, complete, interrupted
    (Ctrl-C) or crashed (stopped on an error). A run whose process was killed
    stays "running"; after a day it is shown as "running? … killed?"."""
    from sslperf.store.latest import describe_state

    rows = open_store(ctx).list()
    if as_json:
        click.echo(json.dumps([{k: v for k, v in row.items() if k not in ("environment", "settings")} | {
            "settings": row["settings"]} for row in rows], indent=1, default=str))
        return
    table = Table(title=f"Runs in {escape(open_store(ctx).shown_url())}")
    for column in ("id", "started", "source", "host", "libraries", "results", "state"):
        table.add_column(column, no_wrap=column in ("id", "started"))
    for row in rows:
        state = describe_state(row["state"], row["started"])
        table.add_row(escape(row["id"]), escape(row["started"]), escape(row["source"]), escape(row["host"] or ""),
                      escape(", ".join(row["libs"])), str(row["measurements"]), escape(state))
    console.print(table)


@runs.command("show")
@click.argument("run_id", default="latest")
@click.option("--metric", type=click.Choice(["wall", "cpu", "instructions"]),
              help="What the tables show (default: the run's own metric — a bisect's or track's — else wall time).")
@details_option
@click.pass_context
def show_cmd(ctx, run_id: str, metric: str | None, details: bool) -> None:
    """The tables of one run (an id, a unique prefix of one, or `latest`),
    with its warnings and, for a run that did not complete, its state.

    `latest` is the newest complete run you made yourself (speed, api, tls
    or an import): not one that was interrupted or crashed, nor one that
    recommend, noise, bisect or track made for their own use. A run id always works.
    """
    from sslperf.report.terminal import print_run
    from sslperf.store.latest import describe_state

    run = open_store(ctx).load(run_id)
    if run.state == "running":
        console.print(f"[yellow]this run is {escape(describe_state(run.state, run.started))}: it is still going, "
                      "or its process was killed[/]")
    elif run.state in ("interrupted", "crashed"):
        cases = len({m.case for m in run.measurements})
        console.print(f"[yellow]this run is incomplete: it was {escape(run.state)} "
                      f"({'stopped with Ctrl-C' if run.state == 'interrupted' else 'stopped on an error'}) with "
                      f"{cases} case{'' if cases == 1 else 's'} measured; its warnings are at the end[/]")
    elif not run.complete:
        console.print("[yellow]this run is incomplete: it was interrupted or is still going[/]")
    own = run.settings.get("metric")            # a bisect's or track's: what it was measured and judged by
    print_run(run, console, metric or (own if own in ("wall", "cpu", "instructions") else "wall"), details)
    if "bisect" in run.settings:
        from sslperf.bisect.render import stored_summary

        for line in stored_summary(run.settings["bisect"]):
            console.print(escape(line), soft_wrap=True)


@runs.command("rm")
@click.argument("run_ids", nargs=-1, required=True)
@click.option("--force", is_flag=True,
              help="Also delete a run still marked running by a process on another machine, which this one cannot "
                   "check (a run being measured on this machine is always refused: stop it first).")
@click.pass_context
def rm_cmd(ctx, run_ids: tuple[str, ...], force: bool) -> None:
    """Delete runs, by full id or a unique prefix of at least its date and
    time (YYYYMMDD-HHMMSS; never `latest`). A run still being measured is
    refused; one whose process is gone (killed, its machine rebooted) is deleted."""
    store = open_store(ctx)
    for full in store.to_delete(run_ids, force):     # all checked before anything is deleted
        run = store.load(full)
        store.delete(full)
        console.print(f"deleted {escape(full)} ({escape(run.started)}, "
                      f"{escape(', '.join(lib.name for lib in run.libs))}, "
                      f"{len(run.measurements)} result{'' if len(run.measurements) == 1 else 's'})")


@runs.command("export")
@click.argument("run_id", default="latest")
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "md", "bencher", "conbench", "hyperfine"]),
              default="json", show_default=True,
              help="json: everything, every sample; csv: statistics per result; md: tables; bencher: Bencher Metric "
                   "Format (`bencher run --adapter json --file FILE`); conbench: a list of Conbench benchmark results "
                   "(each the body of a `POST /api/benchmark-result`; CONBENCH_PROJECT_REPOSITORY, "
                   "CONBENCH_PROJECT_COMMIT and CONBENCH_PROJECT_PR_NUMBER, when set, name the commit measured); "
                   "hyperfine: an `sslperf exec` run as hyperfine's --export-json writes its results.")
@click.option("--metric", type=click.Choice(["wall", "cpu", "instructions"]), default="wall", show_default=True)
@out_file_option("Write here instead of stdout.")
@click.pass_context
def export_cmd(ctx, run_id: str, fmt: str, metric: str, out: Path | None, force: bool) -> None:
    """One run as JSON (every sample), CSV (statistics per result), Markdown,
    Bencher Metric Format or Conbench results (an id, a unique prefix, or
    `latest`: the newest complete run you made yourself, as for `runs show`)."""
    from sslperf.report import export, services

    github = services.github_from_env(os.environ) if fmt == "conbench" else None
    run = open_store(ctx).load(run_id)
    writers = {"json": lambda: run.to_json(), "csv": lambda: export.to_csv(run, metric),
               "md": lambda: export.to_markdown(run, metric), "bencher": lambda: services.to_bencher(run, metric),
               "conbench": lambda: services.to_conbench(run, metric, github), "hyperfine": lambda: export.to_hyperfine(run)}
    text = writers[fmt]()
    if out:
        write_output(out, text, f"run {run.id}", force=force)
        console.print(f"wrote {escape(str(out))}")
    else:
        click.echo(text, nl=False)
