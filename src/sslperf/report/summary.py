"""The answer a report opens with, before any chart: the libraries, what the runs warned, the largest
significant changes (each with its 95% CI and p) and every case's verdict against the baseline, ties shown
as ties (`~`). Every verdict is `compare`'s (sslperf.compare, which asks the one rule in sslperf.verdict),
for the same columns and the same runs' recorded noise, so the page and `sslperf compare` never differ.
Plain HTML: the answer reads without the charts' script."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from html import escape

from sslperf.compare import Column, Comparison, compare, split_lines
from sslperf.results import Run
from sslperf.verdict import SIGNIFICANT, Change

LARGEST = 8          # the largest significant changes listed first


def columns(run: Run, lib_runs: dict[str, str], baseline: str | None) -> list[Column]:
    """One column per library under the run it came from (only libraries of one run are paired), the
    baseline first."""
    names = [lib.name for lib in run.libs]
    first = baseline if baseline in names else names[0]
    return [Column(name, lib_runs.get(name, run.id), name) for name in [first] + [n for n in names if n != first]]


def comparison(run: Run, originals: list[Run], cols: list[Column], metric: str, floors=None) -> Comparison:
    """`compare` of `cols` over the (merged) run: each column's run id stands for the merged run with its own
    run's environment, so each run's recorded noise counts as it does for `sslperf compare RUN RUN`."""
    environments = {r.id: r.environment for r in originals}
    runs = {c.run_id: dataclasses.replace(run, id=c.run_id, environment=environments.get(c.run_id, run.environment))
            for c in cols}
    return compare(cols, runs, metric, floors=floors)


def ci_text(change: Change) -> str:
    if change.low is None or change.high is None:
        return "no CI (" + ("exact counts" if change.method == "exact" else "no per-process test") + ")"
    return f"[{(change.low - 1) * 100:+.1f}%, {(change.high - 1) * 100:+.1f}%]"


def cell_text(change: Change | None) -> str:
    """A verdict as the table shows it: ▲/▼ and the change with its CI and p, `~` with its p, `?` with why."""
    if change is None:
        return "n/a"
    if change.verdict == "?":
        return "? counted by different counters" if change.method == "different counters" else \
            f"? {change.percent:+.1f}% ({change.why or 'too few samples or worker processes to test'})"
    text = f"{change.symbol} {change.percent:+.1f}% {ci_text(change)} {change.evidence()}"
    text += " (CPU time: samples waited for the CPU)" if change.basis == "cpu" else ""
    text += " (the runs recorded noise)" if change.noisy else ""
    return text + (f" — as deployed: {change.parameters}" if change.parameters else "")


def _cell(row, column: Column, change: Change | None) -> str:
    verdict = "n/a" if change is None else change.verdict
    css = {"faster": "faster", "slower": "slower"}.get(verdict, "same")
    return (f"<td class='{css}' data-case='{escape(row.case)}' data-lib='{escape(column.lib)}' "
            f"data-verdict='{escape(verdict)}'>{escape(cell_text(change))}</td>")


def largest(result: Comparison, count: int = LARGEST) -> list[tuple]:
    """The significant changes, largest first (by the size of the ratio either way)."""
    found = [(row, column, change) for row in result.rows for column, change in zip(result.columns, row.changes)
             if change is not None and change.verdict in SIGNIFICANT and change.ratio > 0]
    return sorted(found, key=lambda f: -abs(math.log(f[2].ratio)))[:count]


def counts(result: Comparison, index: int) -> dict[str, int]:
    tally = {"faster": 0, "slower": 0, "~": 0, "?": 0, "n/a": 0}
    for row in result.rows:
        change = row.changes[index]
        tally["n/a" if change is None else change.verdict] += 1     # n/a: not measured (ok) by both
    return tally


def render(run: Run, result: Comparison | None, metric: str) -> str:
    """The summary section: libraries; per library its verdicts counted against the baseline; the largest
    significant changes; the warnings; then every verdict. The first screen holds the answer."""
    libs = ", ".join(f"<b>{escape(lib.name)}</b> ({escape(lib.version_string or lib.version or '')})"
                     for lib in run.libs)
    warned = (f"<p class='noisy'>The run{'s' if run.settings.get('merged_from') else ''} warned {len(run.warnings)} "
              "time" + ("s" if len(run.warnings) != 1 else "") + " (below): weigh a small change with that in "
              "mind.</p>" if run.warnings else "")
    said = Counter(run.warnings)                # merged runs often warn alike: each warning once, counted
    warnings = ("".join(f"<div class='warn'>{escape(w)}{f' (×{n}: in {n} runs)' if n > 1 else ''}</div>"
                        for w, n in said.items()) if run.warnings else "<p>The run recorded no warning.</p>")
    parts = [f"<section id='summary'><h2 id='summary-heading'>Summary</h2><p>Libraries: {libs}.</p>"]
    if result is None or not result.rows:
        parts.append(f"<p>Nothing to compare: {'one library only' if len(run.libs) < 2 else 'no case in common'}; "
                     f"the figures are under Results.</p><h3 id='warnings'>Warnings</h3>{warnings}</section>")
        return "".join(parts)
    base = result.columns[0].label
    lines = []
    for index, column in enumerate(result.columns[1:], start=1):
        t = counts(result, index)
        lines.append(f"<li><b>{escape(column.label)}</b> vs {escape(base)}: {t['faster']} ▲ faster, "
                     f"{t['slower']} ▼ slower, {t['~']} ~ ties" + (f", {t['?']} ? untested" if t["?"] else "")
                     + (f", {t['n/a']} not measured by both (n/a)" if t["n/a"] else "")
                     + f" of {len(result.rows)} cases.</li>")
    compared = {row.case for row in result.rows}
    apart = sorted({m.case for m in run.measurements if m.case not in compared})
    if apart:      # no verdict without the baseline's figure: said, not silently dropped
        lines.append(f"<li>{len(apart)} case{'s' if len(apart) != 1 else ''} not compared: measured by one "
                     f"library only or without {escape(base)} (e.g. {escape(apart[0])}); see Results.</li>")
    parts.append(f"<p>Against the baseline <b>{escape(base)}</b> ({escape(metric)} time):</p>"
                 f"<ul id='summary-counts'>{''.join(lines)}</ul>{warned}")
    top = largest(result)
    if top:
        rows = "".join(f"<tr><td>{escape(row.label)}</td><td>{escape(column.label)}</td>"
                       f"<td class='{change.verdict}'>{change.symbol} {change.percent:+.1f}%</td>"
                       f"<td>{escape(ci_text(change))}</td><td>{escape(change.evidence())}</td></tr>"
                       for row, column, change in top)
        parts.append(f"<h3>The largest significant changes</h3><table id='summary-largest'><tr><th>case</th>"
                     f"<th>library</th><th>change vs {escape(base)}</th><th>95% CI</th><th>p</th></tr>{rows}</table>")
    else:
        parts.append("<h3>The largest significant changes</h3><p id='summary-largest'>None: every case is a tie (~) "
                     "or untested.</p>")
    rule = (f"A change is called (▲ faster, ▼ slower) only where p &lt; {result.alpha} and it exceeds "
            f"{result.threshold:.0%} (or the measured noise floor, or the noise the runs recorded); otherwise it "
            "is a tie, <b>~</b>; <b>?</b>: too few worker processes to test. The same rule and figures as "
            "<code>sslperf compare</code>; 95% confidence intervals of the ratio.")
    head = "<tr><th>case</th>" + "".join(f"<th>{escape(c.label)} vs {escape(base)}</th>"
                                         for c in result.columns[1:]) + "</tr>"
    body = "".join(f"<tr><td>{escape(row.label)}</td>"
                   + "".join(_cell(row, column, change) for column, change in zip(result.columns[1:], row.changes[1:]))
                   + "</tr>" for row in result.rows)
    differ = result.parameters()
    if differ:
        parts.append("<h3 id='summary-negotiated'>Negotiated differently</h3><p>Each verdict below is the deployed "
                     "difference, not the library's alone:</p><ul>" + "".join(f"<li>{escape(d)}</li>" for d in differ)
                     + "</ul>")
    splits = split_lines(result, {c.run_id: run for c in result.columns})
    if splits:
        parts.append("<pre id='summary-split'>" + escape("\n".join(splits)) + "</pre>")
    parts.append(f"<h3 id='warnings'>Warnings</h3>{warnings}<h3>Every verdict</h3><p>{rule}</p>"
                 f"<table id='summary-verdicts'>{head}{body}</table></section>")
    return "".join(parts)
