"""`sslperf report`: pictures and one HTML page."""

from __future__ import annotations

from pathlib import Path

import click

from sslperf.cli.common import make_console, open_store, output_dir

console = make_console()


@click.command()
@click.argument("run_ids", nargs=-1)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("sslperf-report"),
              callback=output_dir,
              show_default=True, help="Directory for the figures and report.html.")
@click.option("--format", "formats", type=click.Choice(["png", "svg", "html"]), multiple=True,
              help="What to write (repeatable; default: all three).")
@click.option("--metric", type=click.Choice(["wall", "cpu", "instructions"]), default="wall", show_default=True)
@click.pass_context
def report(ctx, run_ids, out, formats, metric) -> None:
    """Write PNG/SVG figures and a self-contained HTML report of runs
    (ids, unique prefixes or `latest`; several runs are merged).

    \b
    Example:
      sslperf speed --quick --lib openssl-1.1.1w --lib openssl-3.6 && sslperf report latest --out report/
    """
    from sslperf.report import html, plots
    from sslperf.results import merge

    store = open_store(ctx)
    runs = [store.load(run_id) for run_id in (run_ids or ("latest",))]
    run = merge(runs)
    wanted = set(formats or ("png", "svg", "html"))
    image_formats = tuple(f for f in ("png", "svg") if f in wanted) or (("svg",) if "html" in wanted else ())
    figures = plots.all_figures(run, out, image_formats, metric) if image_formats else []
    for figure in figures:
        for path in figure.files:
            console.print(f"wrote {path}")
    if "html" in wanted:
        console.print(f"wrote {html.write(run, figures, out, metric)}")
