"""`sslperf report`: interactive HTML pages (a run, a case's history across
runs, a library across hosts) and PNG/SVG figures for export."""

from __future__ import annotations

import click
from rich.markup import escape

from sslperf import userfiles
from sslperf.cli.common import make_console, open_store
from sslperf.cli.options import OutputPath, force_option, out_dir_callback
from sslperf.report import directory

console = make_console()


@click.command()
@click.argument("run_ids", nargs=-1)
@click.option("--out", type=OutputPath(directory=True), default="sslperf-report", callback=out_dir_callback,
              show_default=True,
              help="Directory for the pages and figures; files in it that sslperf did not write are left alone "
                   "(the report is then refused, unless --force).")
@force_option
@click.option("--format", "formats", type=click.Choice(["png", "svg", "html"]), multiple=True,
              help="What to write for the runs (repeatable; default: all three).")
@click.option("--metric", type=click.Choice(["wall", "cpu", "instructions"]), default="wall", show_default=True,
              help="The metric of the tables, rankings and exported figures (the page switches its charts itself).")
@click.option("--baseline", metavar="LIB", help="The library the relative views start from (default: the first).")
@click.option("--history", "history", multiple=True, metavar="CASE",
              help="Write history.html: these cases (ids, globs or substrings; repeatable) across every stored "
                   "run, by library version and by date, significant changes marked.")
@click.option("--hosts", "hosts_view", is_flag=True,
              help="Write hosts.html: each library measured on several hosts (a shared --db), host by host.")
@click.option("--host", "host_names", multiple=True, metavar="NAME",
              help="Only runs of this host, for --history and --hosts (repeatable; default: all hosts).")
@click.option("--case", "--filter", "case_patterns", multiple=True, metavar="PATTERN",
              help="Only these cases (ids, globs or substrings; repeatable; default: all), in the runs' page and "
                   "figures and in --hosts: one page and one versions.png of exactly the cases chosen.")
@click.option("--lib", "lib_names", multiple=True, metavar="LIB",
              help="Only these libraries (repeatable; default: all), as the run names them (in --hosts also "
                   "FLAVOR-VERSION).")
@click.pass_context
def report(ctx, run_ids, out, force, formats, metric, baseline, history, hosts_view, host_names, case_patterns,
           lib_names) -> None:
    """Write the report of runs (ids, unique prefixes or `latest`; several
    runs are merged): report.html, interactive and self-contained (it loads
    nothing from the network), and PNG/SVG figures for slides. With
    --history or --hosts, write the views across stored runs instead (add run
    ids to write both).

    \b
    Examples:
      sslperf speed --quick --lib openssl-1.1.1w --lib openssl-3.6 && sslperf report latest --out report/
      sslperf report latest --case 'sig/ecdsa-*' --lib openssl-3.0.8 --lib openssl-3.6.3 --out slide/
      sslperf report --history sig/ecdsa-p256/sign --history 'cipher/aes-128-gcm/encrypt/*' --out report/
      sslperf --db postgresql://perf@db/sslperf report --hosts --lib openssl-3.6.3 --out fleet/
    """
    files = userfiles.Batch(out, force)       # every page and figure checked before the first is written
    written = directory.write(open_store(ctx), files, run_ids, formats, metric, baseline, history, hosts_view,
                              host_names, case_patterns, lib_names)
    for path in written:
        console.print(f"wrote {escape(str(path))} ({directory.file_size(path.stat().st_size)})")
    if written:
        console.print(f"report: {escape(directory.size_summary(written))}")
