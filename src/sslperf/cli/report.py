"""`sslperf report`: interactive HTML pages (a run, a case's history across
runs, a library across hosts) and PNG/SVG figures for export."""

from __future__ import annotations


import click

from sslperf import userfiles
from sslperf.cli.common import OutputPath, force_option, make_console, open_store, out_dir_callback
from sslperf.errors import SslperfError

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
@click.option("--case", "case_patterns", multiple=True, metavar="PATTERN",
              help="Only these cases in --hosts (repeatable; default: all).")
@click.option("--lib", "lib_names", multiple=True, metavar="LIB",
              help="Only these libraries in --hosts, as FLAVOR-VERSION or a run's name (repeatable).")
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
      sslperf report --history sig/ecdsa-p256/sign --history 'cipher/aes-128-gcm/encrypt/*' --out report/
      sslperf --db postgresql://perf@db/sslperf report --hosts --lib openssl-3.6.3 --out fleet/
    """
    from sslperf.report import page

    store = open_store(ctx)
    files = userfiles.Batch(out, force)       # every page and figure checked before the first is written
    if run_ids or not (history or hosts_view):
        _run_report(store, run_ids or ("latest",), files, formats, metric, baseline)
    if history:
        _history(store, history, host_names, files)
    if hosts_view:
        _hosts(store, case_patterns, host_names, lib_names, files)
    page.link_pages(files)
    for path in files.commit():
        console.print(f"wrote {path}")


def _run_report(store, run_ids, files: userfiles.Batch, formats, metric: str, baseline: str | None) -> None:
    from sslperf.report import html, plots
    from sslperf.results import merge

    runs = [store.load(run_id) for run_id in run_ids]
    run = merge(runs)
    hosts = {r.environment.get("host") for r in runs}
    names = [lib.name for lib in run.libs]
    if baseline and baseline not in names:
        raise SslperfError(f"--baseline {baseline} is not a library of the report ({', '.join(names)}).",
                           hint="Give one of the libraries listed, as the report names them.")
    wanted = set(formats or ("png", "svg", "html"))
    image_formats = tuple(f for f in ("png", "svg") if f in wanted)
    figures = plots.all_figures(run, files, image_formats, metric) if image_formats else []
    if "html" in wanted:
        floors = _floors(store, hosts.pop() if len(hosts) == 1 else None)      # one host's floor, or none
        files.add("report.html", html.render(run, figures, files.directory, metric, floors, baseline))
    elif not figures:
        measured = sum(1 for m in run.measurements if m.status == "ok")
        raise SslperfError(
            f"Nothing to draw for run {run.id}: it holds {measured} measured result"
            f"{'' if measured == 1 else 's'}, and the {'/'.join(sorted(wanted)).upper()} figures need sizes, "
            "signatures, key exchanges or handshakes measured on at least one library.",
            hint="Add --format html for the page with every result, or report a run with those cases.")


def _floors(store, host: str | None) -> dict:
    """The noise floors measured on `host` (none for several hosts or an unknown one)."""
    return {key: f["floor"] for key, f in store.floors(host).items()} if host else {}


def _history(store, patterns, host_names, files: userfiles.Batch) -> None:
    from sslperf.measure.suites import select_ids
    from sslperf.report import history

    stored = store.stored_cases()
    if not stored:
        raise SslperfError("The store holds no measured results yet, so there is no history to draw.",
                           hint="Measure first (e.g. `sslperf speed --quick`), or give --db for another store.")
    results = store.results(select_ids(stored, tuple(patterns)), list(host_names) or None)
    if not results:
        raise SslperfError(f"No stored run of host {', '.join(host_names)} measured {' or '.join(patterns)}.",
                           hint="`sslperf runs list` shows the runs and their hosts; leave out --host for all.")
    hosts = sorted({r.host for r in results})
    charts = history.history_charts(results, _floors(store, hosts[0] if len(hosts) == 1 else None))
    files.add("history.html", history.render(charts, tuple(patterns), hosts, len({r.run_id for r in results})))


def _hosts(store, case_patterns, host_names, lib_names, files: userfiles.Batch) -> None:
    from sslperf.measure.suites import select_ids
    from sslperf.report import hosts

    stored = store.stored_cases()
    results = store.results(select_ids(stored, tuple(case_patterns)) if stored else [], list(host_names) or None)
    charts = hosts.hosts_charts(results, tuple(lib_names))
    found = sorted({r.host for r in results})
    if not charts:
        raise SslperfError(
            f"No library{' of ' + ', '.join(lib_names) if lib_names else ''} was measured on two hosts or more in "
            f"this store (hosts in it: {', '.join(found) or 'none'}).",
            hint="Gather runs from several machines in one store with --db postgresql://… (or SSLPERF_DB); a "
                 "machine's name in the store is its hostname, or SSLPERF_HOST when set.")
    files.add("hosts.html", hosts.render(charts, results))
