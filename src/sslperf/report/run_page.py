"""report.html: the page of one run (or several merged). It opens with the answer (summary.py: the
libraries, the warnings, the largest significant changes and every verdict), then the interactive charts
(relative to a chosen baseline by default), the libraries and the machine as readable tables, rankings and
the results. The matplotlib PNG/SVG figures are written beside it for export."""

from __future__ import annotations

from html import escape
from pathlib import Path

from sslperf import families
from sslperf.report import charts as charts_data
from sslperf.report import page_frame, summary
from sslperf.report.figures import Figure
from sslperf.report.ranking import rank_run
from sslperf.units import micros, rate, throughput
from sslperf.results import Run
from sslperf.stats import NOISY_CI

# The machine facts a run records, in reading order, with their names.
FACTS = (("host", "host"), ("cpu_model", "CPU"), ("cpus", "CPUs"), ("machine", "architecture"),
         ("cpu_flags", "crypto CPU flags"), ("virtualized", "virtual machine"), ("kernel", "kernel"),
         ("governor", "CPU governor"), ("cpu_mhz", "CPU clock"), ("loadavg", "load average (1, 5, 15 min)"),
         ("pinned_cpu", "workers pinned to CPU"), ("mask", "CPU capability mask"), ("mask_env", "OPENSSL_ia32cap"),
         ("time", "measured at"))


def lib_runs(run: Run) -> dict[str, str]:
    """Which stored run each library's results came from (merged runs keep the map)."""
    return run.settings.get("lib_runs") or {lib.name: run.id for lib in run.libs}


def fact(key: str, value) -> str:
    """One machine fact as a person reads it."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key == "cpu_mhz" and isinstance(value, list) and value:
        low, high = min(value), max(value)
        return f"{low:.0f} MHz" if high - low < 1 else f"{low:.0f}–{high:.0f} MHz"
    if key == "loadavg" and isinstance(value, list):
        return ", ".join(f"{v:.2f}" for v in value)
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) if value else "none"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items())
    return str(value)


def facts_table(environment: dict) -> str:
    known = dict(FACTS)
    keys = [k for k, _ in FACTS if k in environment] + sorted(k for k in environment if k not in known)
    rows = [f"<tr><th>{escape(known.get(k, k.replace('_', ' ')))}</th><td>{escape(fact(k, environment[k]))}</td></tr>"
            for k in keys if environment[k] not in (None, "")]
    return f"<table class='facts'>{''.join(rows)}</table>" if rows else "<p>No machine facts were recorded.</p>"


def libs_table(run: Run) -> str:
    runs = lib_runs(run)
    rows = []
    for lib in run.libs:
        cap = escape(lib.ia32cap) if lib.ia32cap else f"<span class='na'>{escape(_no_capability(lib))}</span>"
        rows.append(f"<tr><td>{escape(lib.name)}</td><td>{escape(lib.version_string or lib.version or '')}</td>"
                    f"<td>{escape(lib.variant or 'default')}</td><td>{escape(lib.kind or '')}</td><td>{cap}</td>"
                    f"<td>{escape(runs.get(lib.name, run.id))}</td></tr>")
    return ("<table><tr><th>name</th><th>reports itself as</th><th>variant</th><th>kind</th>"
            f"<th>capability vector</th><th>run</th></tr>{''.join(rows)}</table>")


def _no_capability(lib) -> str:
    """Why a library's capability vector column is empty."""
    if lib.kind == "imported":
        return "not known: the imported output did not print one"
    if lib.kind == "system":
        return "not known: a shared libcrypto does not export OPENSSL_ia32cap_P"
    return "not known: the library exports no OPENSSL_ia32cap_P (or the CPU is not x86)"


def _value(m, metric: str) -> str:
    s = m.summary(metric)
    value = throughput(s.median) if m.unit == "bytes" else rate(s.median)
    if s.n == 1:
        return f"{escape(value)} <span class='ci'>(one reported figure, no CI)</span>"
    noisy = " noisy" if s.ci_half_width > NOISY_CI else ""
    extra = f" ({micros(m.micros_per_op(metric))})" if m.unit == "ops" and m.micros_per_op(metric) else ""
    return f"{escape(value)} <span class='ci{noisy}'>±{s.ci_half_width * 100:.1f}% n={s.n}{escape(extra)}</span>"


def _results_tables(run: Run, metric: str, winners: dict[str, str]) -> str:
    libs = [lib.name for lib in run.libs]
    groups: dict[str, dict[str, dict]] = {}
    for m in run.measurements:
        groups.setdefault(m.group, {}).setdefault(m.case, {})[m.lib] = m
    parts = []
    for group in families.ordered(groups):
        rows = ["<tr><th>case</th>" + "".join(f"<th>{escape(l)}</th>" for l in libs) + "</tr>"]
        for case, per_lib in groups[group].items():
            label = next(iter(per_lib.values())).label
            cells = []
            for lib in libs:
                m = per_lib.get(lib)
                if m is None:
                    cells.append("<td></td>")
                elif m.status == "ok" and m.summary(metric):
                    best = winners.get(case) == lib
                    cells.append(f"<td class='{'best' if best else ''}'>{_value(m, metric)}{' ★' if best else ''}</td>")
                else:
                    cells.append(f"<td class='na'>{escape(m.status)}"
                                 f"{'<br><small>' + escape(m.reason) + '</small>' if m.reason else ''}</td>")
            rows.append(f"<tr><td>{escape(label)}</td>{''.join(cells)}</tr>")
        parts.append(f"<h3>{escape(group)}</h3><table>{''.join(rows)}</table>")
    return ("<p>Median ± the 95% CI half-width and n. ★ marks a library alone in first place of the ranking: "
            "significantly faster than the next best (no ★: the fastest are within noise of each other).</p>"
            + "\n".join(parts))


def _rankings(rankings) -> str:
    if not rankings:
        return "<p>One library only: nothing to rank.</p>"
    parts = ["<p>Per case, the libraries in order; libraries in one place (A = B) are not significantly "
             "different: a tie by the same rule as the verdicts. A first place is counted only where it is clear "
             "(one library significantly ahead of every other); a first place shared by a tie is counted apart, "
             "never as a first for each.</p>"]
    for group in rankings:
        clear = ", ".join(f"{escape(lib)} {count}×" for lib, count in group.firsts().items()) or "none"
        shared = group.shared_firsts()
        firsts = clear + (f"; shared (a tie at the top) in {shared} case{'s' if shared != 1 else ''}" if shared
                          else "")
        rows = ["<tr><th>case</th><th>first</th><th>second</th><th>third</th></tr>"]
        for case in group.cases:
            cells = [" = ".join(escape(lib) for lib in place) for place in case.places[:3]]
            cells += [""] * (3 - len(cells))
            rows.append(f"<tr><td>{escape(case.label)}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        parts.append(f"<h3>{escape(group.group)}</h3><p>Clear first places: {firsts}.</p>"
                     f"<table>{''.join(rows)}</table>")
    return "\n".join(parts)


def _exports(figures: list[Figure], out: Path) -> str:
    files = [path for figure in figures for path in figure.files]
    if not files:
        return "<p>No PNG/SVG figures were written (see --format).</p>"
    links = ", ".join(f"<a href='{escape(p.relative_to(out).as_posix())}'>{escape(p.name)}</a>"
                      for p in files if p.is_relative_to(out))
    return f"<p>For slides and documents, the same figures as files: {links}.</p>"


def render(run: Run, figures: list[Figure], out: Path, metric: str = "wall", floors=None,
           baseline: str | None = None, originals: list[Run] | None = None) -> str:
    """The page; `originals`: the runs `run` merges (their recorded noise weighs in the verdicts)."""
    runs = lib_runs(run)
    noise = {r.id: r.noise() for r in originals or [run]}       # what each run recorded: one rule for every output
    chart_list = charts_data.run_charts(run, floors, lambda lib: runs.get(lib, run.id), noise)
    rankings = rank_run(run, metric, lambda lib: runs.get(lib, run.id), floors, noise)
    winners = {case.case: case.places[0][0] for group in rankings for case in group.cases
               if len(case.places[0]) == 1}
    state = {"complete": "complete", "interrupted": "interrupted (the cases measured are kept)",
             "crashed": "ended by an error", "running": "not finished"}.get(run.state or "",
                                                                           "complete" if run.complete else "incomplete")
    names = [lib.name for lib in run.libs]
    data = {"charts": chart_list, "default_view": "relative" if len(names) > 1 else "absolute",
            "baseline": baseline if baseline in names else (names[0] if names else None)}
    merged = run.settings.get("merged_from")
    intro = (f"<p>Run{'s' if merged else ''} <b>{escape(', '.join(merged or [run.id]))}</b>, started "
             f"{escape(run.started)}, {state}. Figures are medians with their 95% confidence interval; tables use "
             f"{escape(metric)} time.</p>")
    verdicts = (summary.comparison(run, originals or [run], summary.columns(run, runs, baseline), metric, floors)
                if len(names) > 1 else None)
    body = f"""<h2>Charts</h2>{page_frame.chart_divs(chart_list) or '<p>Nothing to draw.</p>'}
<h2>Libraries</h2>{libs_table(run)}
<h2>Machine</h2>{facts_table(run.environment)}
<h2>Rankings</h2>{_rankings(rankings)}
<h2>Results</h2>{_results_tables(run, metric, winners)}
<h2>Figures as files</h2>{_exports(figures, out)}"""
    return page_frame.render("sslperf report", intro, body, data, summary.render(run, verdicts, metric))



