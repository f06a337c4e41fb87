"""`sslperf regressions`: where stored series changed, newest first."""

from __future__ import annotations

import json

import click
from rich.markup import escape

from sslperf import regressions
from sslperf.cli.common import make_console, open_store
from sslperf.cli.options import Finite
from sslperf.errors import SslperfError
from sslperf.measure.suites import select_ids
from sslperf.regressions import render

console = make_console()


@click.command()
@click.option("--filter", "patterns", multiple=True, help="Keep cases whose id matches this glob or substring.")
@click.option("--host", "hosts", multiple=True, help="Only runs of this host (default: every host, each its own series).")
@click.option("--metric", "metrics", multiple=True, type=click.Choice(["wall", "cpu", "instructions"]),
              help="The metric(s) whose series to search (default: wall and instructions).")
@click.option("--pvalue", type=Finite(0, 1, min_open=True, max_open=True), default=0.001, show_default=True,
              help="A change point needs a t test p below this (Otava's default).")
@click.option("--min-change", type=Finite(0, 100), default=1.0, show_default=True,
              help="A change point needs the level to move by at least this many %.")
@click.option("--window", type=click.IntRange(4, 10_000), default=30, show_default=True,
              help="Otava's sliding window, in points.")
@click.option("--all", "show_all", is_flag=True, help="List speed-ups too, not only slow-downs.")
@click.option("--json", "as_json", is_flag=True, help="Print the change points as JSON.")
@click.pass_context
def regressions_cmd(ctx, patterns, hosts, metrics, pvalue, min_change, window, show_all, as_json) -> None:
    """Find the points where stored series changed level: each case of each
    library line (flavor, variant, CPU mask) on each host is a series
    ordered by release, commit and date, searched with Apache Otava's
    E-Divisive means. Lists the slow-downs (with --all, the speed-ups too),
    newest first, with the change, its 95% interval and p.

    \b
    Examples:
      sslperf regressions
      sslperf regressions --metric instructions --filter 'tls/*' --all
      sslperf regressions --host lab-a --json
    """
    store = open_store(ctx)
    case_ids = select_ids(store.stored_cases(), patterns)
    if not case_ids:
        raise SslperfError("No stored case matches." if patterns else "The store holds no measurements yet.",
                           hint="Measure or import some runs first (`sslperf speed --quick`), or check --filter.")
    results = store.results(case_ids, list(hosts) or None)
    if hosts and not results:
        raise SslperfError(f"No stored run is from host {', '.join(hosts)}.",
                           hint="`sslperf runs list` shows each run's host.")
    settings = regressions.DetectionSettings(pvalue, min_change / 100, window)
    series = regressions.build_series(results, tuple(metrics) or ("wall", "instructions"))
    found = [c for s in series for c in regressions.find_change_points(s, settings)
             if show_all or c.verdict == "slower"]
    found = render.newest_first(found)
    if as_json:
        click.echo(json.dumps({"settings": vars(settings), "series": len(series),
                               "change_points": [render.to_dict(c) for c in found]}, indent=1))
        return
    console.print(f"[dim]{escape(render.method_line(settings, len(series), sum(len(s.points) for s in series)))}[/dim]")
    if not found:
        console.print("No change point" + ("." if show_all else " that slows a series down (--all lists speed-ups)."))
        return
    console.print(render.table(found))
    newest = found[0]
    console.print(f"To name the commit of the newest ({escape(newest.previous.label)} → "
                  f"{escape(newest.point.label)}), "
                  f"in a clone of "
                  f"the library's git repository: [bold]{escape(' '.join(render.bisect_command(newest)))}[/] "
                  "(CLONE: its path; --json gives this for every change point).", soft_wrap=True)
