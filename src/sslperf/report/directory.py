"""A report directory: what `sslperf report` writes into it — the page of
some runs (merged) with its PNG/SVG figures, the history of cases across
stored runs, the libraries across hosts — all added to one batch of files
(userfiles.Batch: every file checked before the first is written) with the
pages linked to each other and one copy of Plotly for them all."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from sslperf import userfiles
from sslperf.errors import SslperfError
from sslperf.measure.suites import select_ids
from sslperf.noise.applied import floor_for
from sslperf.report import figures, history_page, hosts_page, page_frame, run_page
from sslperf.results import Run, merge


def write(store, files: userfiles.Batch, run_ids: tuple[str, ...], formats: tuple[str, ...], metric: str,
          baseline: str | None, history_cases: tuple[str, ...], hosts_view: bool, host_names: tuple[str, ...],
          case_patterns: tuple[str, ...], lib_names: tuple[str, ...]) -> list[Path]:
    """Every page and figure asked for, written; the paths written."""
    if run_ids or not (history_cases or hosts_view):
        add_run_report(store, run_ids or ("latest",), files, formats, metric, baseline, case_patterns, lib_names)
    if history_cases:
        add_history(store, history_cases, host_names, files)
    if hosts_view:
        add_hosts(store, case_patterns, host_names, lib_names, files)
    page_frame.share_plotly(files)
    page_frame.link_pages(files)
    return files.commit()


def add_run_report(store, run_ids, files: userfiles.Batch, formats, metric: str, baseline: str | None,
                   case_patterns: tuple[str, ...] = (), lib_names: tuple[str, ...] = ()) -> None:
    """report.html of the runs (merged) and the PNG/SVG figures of `formats` (default: all three); with
    `case_patterns` and `lib_names`, of those cases and libraries only (a chart for a slide)."""
    whole = merge([store.load(run_id) for run_id in run_ids])
    run = chosen(whole, case_patterns, lib_names)          # checked against the runs together
    runs = [chosen(store.load(run_id), case_patterns, lib_names, strict=False) for run_id in run_ids]
    names = [lib.name for lib in run.libs]
    if baseline and baseline not in names:
        raise SslperfError(f"--baseline {baseline} is not a library of the report ({', '.join(names)}).",
                           hint="Give one of the libraries listed, as the report names them.")
    wanted = set(formats or ("png", "svg", "html"))
    image_formats = tuple(f for f in ("png", "svg") if f in wanted)
    floors, _ = floor_for(store, {r.environment.get("host") for r in runs})      # one host's floor, or none
    drawn = figures.all_figures(run, files, image_formats, metric, floors, runs) if image_formats else []
    if "html" in wanted:
        files.add("report.html", run_page.render(run, drawn, files.directory, metric, floors, baseline, runs))
    elif not drawn:
        measured = sum(1 for m in run.measurements if m.status == "ok")
        raise SslperfError(
            f"Nothing to draw for run {run.id}: it holds {measured} measured result"
            f"{'' if measured == 1 else 's'}, and the {'/'.join(sorted(wanted)).upper()} figures need sizes, "
            "signatures, key exchanges or handshakes measured on at least one library.",
            hint="Add --format html for the page with every result, or report a run with those cases.")


def chosen(run: Run, case_patterns: tuple[str, ...], lib_names: tuple[str, ...], strict: bool = True) -> Run:
    """`run` with only the cases matching `case_patterns` (ids, globs or substrings) and the libraries of
    `lib_names` (a name of the run, or its start up to a version's dot: `openssl-3.6` is `openssl-3.6.3`); all
    of either when none is given. With `strict`, a name or pattern that chooses nothing is a one-paragraph error
    (one of several runs merged may lack what another has)."""
    if not case_patterns and not lib_names:
        return run
    names = [lib.name for lib in run.libs]
    keep_libs = set(names)
    if lib_names:
        keep_libs = set()
        for wanted in lib_names:
            found = [n for n in names if n == wanted] or [n for n in names if n.startswith(wanted + ".")]
            if not found and strict:
                raise SslperfError(f"--lib {wanted} is not a library of run {run.id} ({', '.join(names)}).",
                                   hint="Give libraries as the run names them (`sslperf runs show RUN`).")
            keep_libs.update(found)
    cases = list(dict.fromkeys(m.case for m in run.measurements))
    try:
        keep_cases = set(select_ids(cases, case_patterns)) if case_patterns else set(cases)
    except SslperfError:
        if not strict:
            keep_cases = set()
        else:
            raise SslperfError(f"No case of run {run.id} matches {' or '.join(case_patterns)}.",
                               hint="`sslperf runs show RUN` lists its cases; patterns are ids, globs or "
                                    "substrings, e.g. --case 'sig/ecdsa-*'.") from None
    return dataclasses.replace(run, libs=[lib for lib in run.libs if lib.name in keep_libs],
                               measurements=[m for m in run.measurements
                                             if m.case in keep_cases and m.lib in keep_libs])


def add_history(store, patterns: tuple[str, ...], host_names: tuple[str, ...], files: userfiles.Batch) -> None:
    """history.html: the cases matching `patterns` across every stored run (of `host_names`, default all)."""
    stored = store.stored_cases()
    if not stored:
        raise SslperfError("The store holds no measured results yet, so there is no history to draw.",
                           hint="Measure first (e.g. `sslperf speed --quick`), or give --db for another store.")
    results = store.results(select_ids(stored, patterns), list(host_names) or None)
    if not results:
        raise SslperfError(f"No stored run of host {', '.join(host_names)} measured {' or '.join(patterns)}.",
                           hint="`sslperf runs list` shows the runs and their hosts; leave out --host for all.")
    found_hosts = sorted({r.host for r in results})
    floors, _ = floor_for(store, found_hosts)
    charts = history_page.history_charts(results, floors)
    files.add("history.html", history_page.render(charts, patterns, found_hosts, len({r.run_id for r in results})))


def add_hosts(store, case_patterns: tuple[str, ...], host_names: tuple[str, ...], lib_names: tuple[str, ...],
               files: userfiles.Batch) -> None:
    """hosts.html: each library measured on several hosts, host by host."""
    stored = store.stored_cases()
    results = store.results(select_ids(stored, case_patterns) if stored else [], list(host_names) or None)
    charts = hosts_page.hosts_charts(results, lib_names)
    if not charts:
        found = sorted({r.host for r in results})
        raise SslperfError(
            f"No library{' of ' + ', '.join(lib_names) if lib_names else ''} was measured on two hosts or more in "
            f"this store (hosts in it: {', '.join(found) or 'none'}).",
            hint="Gather runs from several machines in one store with --db postgresql://… (or SSLPERF_DB); a "
                 "machine's name in the store is its hostname, or SSLPERF_HOST when set.")
    files.add("hosts.html", hosts_page.render(charts, results))


def file_size(size: int) -> str:
    """Bytes as a person reads them: 930 B, 312 kB, 4.8 MB (powers of 1000)."""
    if size < 1000:
        return f"{size} B"
    if size < 1_000_000:
        return f"{size / 1000:.0f} kB"
    return f"{size / 1_000_000:.1f} MB"


def size_summary(written: list[Path]) -> str:
    """One line on what the report weighs: each page, Plotly's one copy, and the directory's files in all."""
    sizes = {path.name: path.stat().st_size for path in written if path.is_file()}
    pages = [f"{name} {file_size(size)}" for name, size in sizes.items() if name.endswith(".html")]
    plotly = page_frame.plotly_file()
    shared = (f"; {plotly} {file_size(sizes[plotly])}, one copy loaded by "
              f"{'every page' if len(pages) > 1 else 'the page'}") if plotly in sizes else ""
    figures = [size for name, size in sizes.items() if name.endswith((".png", ".svg"))]
    drawn = f"; {len(figures)} figure files (PNG, SVG) {file_size(sum(figures))}" if figures else ""
    return (f"{', '.join(pages) or 'no page'}{shared}{drawn} — {len(sizes)} files, "
            f"{file_size(sum(sizes.values()))} in all")
