"""`sslperf runs …`: the runs kept in the store."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sslperf.cli.common import open_store

console = Console(highlight=False, soft_wrap=True)


@click.group()
def runs() -> None:
    """List, show, delete and export the runs in the store."""


@runs.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def list_cmd(ctx, as_json: bool) -> None:
    """Runs, newest first."""
    rows = open_store(ctx).list()
    if as_json:
        click.echo(json.dumps([{k: v for k, v in row.items() if k not in ("environment", "settings")} | {
            "settings": row["settings"]} for row in rows], indent=1, default=str))
        return
    table = Table(title=f"Runs in {open_store(ctx)._safe_url()}")
    for column in ("id", "started", "source", "host", "libraries", "results", "state"):
        table.add_column(column, no_wrap=column in ("id", "started"))
    for row in rows:
        state = "complete" if row["complete"] else "incomplete"
        table.add_row(row["id"], row["started"], row["source"], escape(row["host"] or ""),
                      escape(", ".join(row["libs"])), str(row["measurements"]), state)
    console.print(table)


@runs.command("show")
@click.argument("run_id", default="latest")
@click.option("--metric", type=click.Choice(["wall", "cpu", "instructions"]), default="wall", show_default=True)
@click.pass_context
def show_cmd(ctx, run_id: str, metric: str) -> None:
    """The tables of one run (an id, a unique prefix of one, or `latest`)."""
    from sslperf.report.terminal import print_run

    run = open_store(ctx).load(run_id)
    if not run.complete:
        console.print("[yellow]this run is incomplete: it was interrupted or is still going[/]")
    print_run(run, console, metric)


@runs.command("rm")
@click.argument("run_ids", nargs=-1, required=True)
@click.pass_context
def rm_cmd(ctx, run_ids: tuple[str, ...]) -> None:
    """Delete runs."""
    store = open_store(ctx)
    for run_id in run_ids:
        full = store.resolve(run_id)
        store.delete(full)
        console.print(f"deleted {full}")


@runs.command("export")
@click.argument("run_id", default="latest")
@click.option("--format", "fmt", type=click.Choice(["json", "csv", "md"]), default="json", show_default=True)
@click.option("--metric", type=click.Choice(["wall", "cpu", "instructions"]), default="wall", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write here instead of stdout.")
@click.pass_context
def export_cmd(ctx, run_id: str, fmt: str, metric: str, out: Path | None) -> None:
    """One run as JSON (every sample), CSV (statistics per result) or Markdown."""
    from sslperf.report import export

    run = open_store(ctx).load(run_id)
    text = run.to_json() if fmt == "json" else export.to_csv(run, metric) if fmt == "csv" else \
        export.to_markdown(run, metric)
    if out:
        out.write_text(text)
        console.print(f"wrote {out}")
    else:
        click.echo(text, nl=False)
