"""A comparison's verdicts as terminal tables and Markdown, benchstat style (`sslperf compare`)."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from sslperf import families
from sslperf.compare import Comparison
from sslperf.verdict.text import change_text
from sslperf.units import rate, throughput
from sslperf.stats import Summary


def _value(summary: Summary | None, unit: str) -> str:
    if summary is None:
        return "n/a"
    value = throughput(summary.median) if unit == "bytes" else rate(summary.median)
    return f"{value} ±{summary.ci_half_width * 100:.0f}% n={summary.n}"


def _ordered_groups(comparison: Comparison):
    groups = comparison.groups()
    return [(group, groups[group]) for group in families.ordered(groups)]


def tables(comparison: Comparison) -> list[Table]:
    out = []
    for group, rows in _ordered_groups(comparison):
        table = Table(title=f"{group} ({comparison.metric} time; change vs {escape(comparison.columns[0].label)})",
                      title_justify="left", caption=_basis_note(rows), caption_justify="left")
        table.add_column("case")
        for index, column in enumerate(comparison.columns):
            table.add_column(escape(column.label), justify="right")
            if index:
                table.add_column("vs base", justify="right")
        for row in rows:
            cells: list = [escape(row.label)]
            for index, summary in enumerate(row.summaries):
                cells.append(Text(_value(summary, row.unit) if row.cells[index] else ""))
                if index:
                    text, style = change_text(row.changes[index])
                    cells.append(Text(text, style=style))
            table.add_row(*cells)
        geo = comparison.geomeans(rows)
        if any(g is not None for g in geo[1:]):
            cells = [Text("geomean", style="bold"), ""]
            for g in geo[1:]:
                cells += ["", Text(f"{(g - 1) * 100:+.1f}%" if g else "", style="bold")]
            table.add_row(*cells)
        out.append(table)
    return out


def _basis_note(rows) -> str | None:
    """What a table's changes rest on, where a reader could not tell from the figures: paired rounds (not the ratio
    of the medians shown) and rows on CPU time."""
    changes = [c for row in rows for c in row.changes if c is not None]
    said = []
    if any(c.method == "paired" for c in changes):
        said.append("changes within one run are paired: each worker process's median round-by-round ratio, "
                    "combined, not the ratio of the medians shown")
    if any(row.metric == "cpu" for row in rows):
        said.append("cpu: samples waited for the CPU, so the row's figures and changes are CPU time")
    return "; ".join(said) or None


METHODS = {"exact": "deterministic instruction counts, no test needed",
           "paired": "t test on per-process ratios of one interleaved run",
           "processes": "Welch's t test across worker processes",
           "samples": "Mann-Whitney U on samples",
           "different counters": "counts of two different counters (the CPU's own, callgrind) are not compared"}


def to_markdown(comparison: Comparison, floor_note: str = "", fail_above: float | None = None,
                github: bool = False) -> str:
    """The comparison as Markdown: a headline verdict, the slow-downs worst
    first, how it was decided (method, threshold, noise floor), then every
    case. `github`: the full tables folded in a <details> block, for a
    pull-request comment."""
    what = "instructions per operation" if comparison.metric == "instructions" else f"{comparison.metric} time"
    slower = sorted(comparison.regressions(0.0), key=lambda found: found[2].percent)
    failing = [found for found in slower if fail_above is not None and -found[2].percent > fail_above]
    faster = sum(1 for row in comparison.rows for c in row.changes if c and c.verdict == "faster")
    cases = len(comparison.rows)
    if fail_above is not None:
        headline = (f"**sslperf: FAIL** — {len(failing)} of {cases} cases slower than the baseline by more than "
                    f"{fail_above:g}%" if failing else
                    f"**sslperf: PASS** — no case slower than the baseline by more than {fail_above:g}%")
    else:
        headline = f"**sslperf:** {len(slower)} slower, {faster} faster, {cases - len(slower) - faster} unchanged (`~`)"
    methods = sorted({c.method for row in comparison.rows for c in row.changes if c})
    lines = [headline + f" ({what}; baseline {comparison.columns[0].label}).", ""]
    if slower:
        lines += ["| slower, worst first | column | change | 95% CI | evidence |", "|---|---|---:|---:|---|"]
        for row, column, change in slower:
            ci = (f"[{(change.low - 1) * 100:+.1f}, {(change.high - 1) * 100:+.1f}]"
                  if change.low is not None and change.high is not None else "")
            mark = " **(over the gate)**" if (row, column, change) in failing else ""
            lines.append(f"| {row.label}{mark} | {column.label} | {change.percent:+.1f}% | {ci} | "
                         f"{change.evidence()} |")
        lines.append("")
    differ = comparison.parameters()
    if differ:
        lines += ["As deployed, the compared connections negotiate different parameters (each verdict is the "
                  "deployed difference, not the library's alone):", "", *[f"- {d}" for d in differ], ""]
    lines += [f"Method: {'; '.join(METHODS.get(m, m) for m in methods) or 'none'}. A verdict needs "
              + ("a change larger than " if methods == ["exact"] else f"p < {comparison.alpha} and a change larger than ")
              + f"{comparison.threshold:.0%} (or the noise floor, where larger); otherwise `~`."
              + (f" {floor_note}" if floor_note else ""), ""]
    if github:
        lines += [f"<details><summary>All {cases} cases</summary>", ""]
    for group, rows in _ordered_groups(comparison):
        header = ["case"]
        for index, column in enumerate(comparison.columns):
            header += [column.label] + (["vs base"] if index else [])
        lines += [f"#### {group}", "", "| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
        for row in rows:
            cells = [row.label]
            for index, summary in enumerate(row.summaries):
                cells.append(_value(summary, row.unit))
                if index:
                    cells.append(change_text(row.changes[index])[0])
            lines.append("| " + " | ".join(cells) + " |")
        geo = comparison.geomeans(rows)
        cells = ["**geomean**", ""]
        for g in geo[1:]:
            cells += ["", f"**{(g - 1) * 100:+.1f}%**" if g else ""]
        lines += ["| " + " | ".join(cells) + " |", ""]
    if github:
        lines += ["</details>", ""]
    return "\n".join(lines)
