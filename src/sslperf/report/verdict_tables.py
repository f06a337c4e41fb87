"""A comparison's verdicts as terminal tables and Markdown, benchstat style (`sslperf compare`)."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from sslperf import families
from sslperf.compare import Change, Comparison
from sslperf.report.terminal import rate, throughput
from sslperf.stats import Summary


def _value(summary: Summary | None, unit: str) -> str:
    if summary is None:
        return "n/a"
    value = throughput(summary.median) if unit == "bytes" else rate(summary.median)
    return f"{value} ±{summary.ci_half_width * 100:.0f}% n={summary.n}"


def change_text(change: Change | None) -> tuple[str, str]:
    """(text, style) for a change cell."""
    if change is None:
        return "", ""
    ci = (f" [{(change.low - 1) * 100:+.1f}, {(change.high - 1) * 100:+.1f}]"
          if change.low is not None and change.high is not None else "")
    if change.verdict == "~":
        return f"~ {change.percent:+.1f}%{ci} (p={change.p:.3f})", "dim"
    if change.verdict == "?":
        return f"{change.percent:+.1f}% ? (n too small)", "yellow"
    style = "green" if change.verdict == "faster" else "bold red"
    return f"{change.percent:+.1f}%{ci} (p={change.p:.3f})", style


def _ordered_groups(comparison: Comparison):
    groups = comparison.groups()
    return [(group, groups[group]) for group in families.ordered(groups)]


def tables(comparison: Comparison) -> list[Table]:
    out = []
    for group, rows in _ordered_groups(comparison):
        table = Table(title=f"{group} ({comparison.metric} time; change vs {comparison.columns[0].label})",
                      title_justify="left")
        table.add_column("case")
        for index, column in enumerate(comparison.columns):
            table.add_column(escape(column.label), justify="right")
            if index:
                table.add_column("vs base", justify="right")
        for row in rows:
            cells: list = [escape(row.label)]
            for index, summary in enumerate(row.summaries):
                cells.append(_value(summary, row.unit) if row.cells[index] else "")
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


def to_markdown(comparison: Comparison) -> str:
    lines = [f"Change vs {comparison.columns[0].label}; {comparison.metric} time; verdict when p < "
             f"{comparison.alpha} and |change| > {comparison.threshold:.0%}, else `~`.", ""]
    for group, rows in _ordered_groups(comparison):
        header = ["case"]
        for index, column in enumerate(comparison.columns):
            header += [column.label] + (["vs base"] if index else [])
        lines += [f"## {group}", "", "| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
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
    return "\n".join(lines)
