"""Change points as a terminal table and as JSON, newest first."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from sslperf.regressions.detect import ChangePoint, DetectionSettings

METRIC_WORDS = {"wall": "wall time", "cpu": "CPU time", "instructions": "instructions"}


def newest_first(found: list[ChangePoint]) -> list[ChangePoint]:
    """By the date of the first run at the new level, newest first; then the largest change."""
    return sorted(found, key=lambda c: (c.point.started, -abs(c.percent)), reverse=True)


def interval_text(c: ChangePoint) -> str:
    if c.low is None or c.high is None:
        return "—"
    return f"[{(c.low - 1) * 100:+.1f}, {(c.high - 1) * 100:+.1f}]"


def table(found: list[ChangePoint]) -> Table:
    out = Table(title="Change points, newest first (change of the rate: + is faster)", title_justify="left")
    for column in ("case", "series", "metric", "from → to", "change", "95% CI", "p", "run"):
        out.add_column(column, justify="right" if column in ("change", "p") else "left")
    for c in found:
        style = "bold red" if c.verdict == "slower" else "green"
        out.add_row(escape(c.series.title), escape(f"{c.series.line} on {c.series.host or '?'}"),
                    METRIC_WORDS.get(c.series.metric, c.series.metric),
                    escape(f"{c.previous.label} → {c.point.label}"), Text(f"{c.percent:+.1f}% {c.verdict}", style=style),
                    interval_text(c), f"{c.p:.1g}" if c.p else "<1e-300", c.point.run_id)
    return out


def method_line(settings: DetectionSettings, series_count: int, points: int) -> str:
    return (f"{series_count} series, {points} points; Apache Otava's E-Divisive means (window {settings.window}), "
            f"a change point needs p < {settings.max_pvalue:g} (t test of the segments either side) and a change of "
            f"at least {settings.min_change:.1%}; a series needs 4 points.")


def to_dict(c: ChangePoint) -> dict:
    return {"case": c.series.case, "series": c.series.line, "host": c.series.host, "metric": c.series.metric,
            "from": vars(c.previous), "to": vars(c.point), "index": c.index, "before": c.before, "after": c.after,
            "percent": c.percent, "low": c.low, "high": c.high, "p": c.p, "confidence": c.confidence,
            "verdict": c.verdict}
