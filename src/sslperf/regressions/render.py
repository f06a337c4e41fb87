"""Change points as a terminal table and as JSON, newest first."""

from __future__ import annotations

import re

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
                    interval_text(c), f"{c.p:.1g}" if c.p else "<1e-300", escape(c.point.run_id))
    return out


def method_line(settings: DetectionSettings, series_count: int, points: int) -> str:
    return (f"{series_count} series, {points} points; Apache Otava's E-Divisive means (window {settings.window}), "
            f"a change point needs p < {settings.max_pvalue:g} (t test of the segments either side) and a change of "
            f"at least {settings.min_change:.1%}; a series needs 4 points.")


def revision(lib: str) -> str:
    """The git revision a stored library was built from: the commit of a
    bisect or track build (NAME-VERSION-gSHA), else OpenSSL's release tag."""
    commit = re.search(r"-g([0-9a-f]{7,40})$", lib)
    if commit:
        return commit.group(1)
    release = re.fullmatch(r"openssl-(\d+)\.(\d+)\.(\d+[a-z]?)(?:\+.*)?", lib)
    if release and int(release.group(1)) < 3:                       # OpenSSL_1_1_1w
        return f"OpenSSL_{release.group(1)}_{release.group(2)}_{release.group(3)}"
    return lib.split("+")[0]                                        # openssl-3.0.2


def bisect_command(c: ChangePoint) -> list[str]:
    """The `sslperf bisect` that names the commit of a change between two
    stored points (a series skips the commits between releases or nightly builds)."""
    good, bad = (c.previous, c.point) if c.verdict == "slower" else (c.point, c.previous)
    return ["sslperf", "bisect", c.series.case, "--git", "CLONE", "--good", revision(good.lib),
            "--bad", revision(bad.lib), "--metric", c.series.metric]


def to_dict(c: ChangePoint) -> dict:
    return {"case": c.series.case, "series": c.series.line, "host": c.series.host, "metric": c.series.metric,
            "from": vars(c.previous), "to": vars(c.point), "index": c.index, "before": c.before, "after": c.after,
            "percent": c.percent, "low": c.low, "high": c.high, "p": c.p, "confidence": c.confidence,
            "verdict": c.verdict, "bisect": bisect_command(c)}
