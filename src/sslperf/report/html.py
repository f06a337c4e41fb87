"""One self-contained HTML page for a run: environment, libraries, warnings,
the tables, the verdicts against the first library, and the figures
(embedded, so the page works offline and loads nothing from anywhere)."""

from __future__ import annotations

import base64
import datetime as dt
from html import escape
from pathlib import Path

from sslperf import families
from sslperf.compare import Column, compare
from sslperf.report.plots import Figure
from sslperf.report.terminal import micros, rate, throughput
from sslperf.results import Run
from sslperf.stats import NOISY_CI

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.8em 0; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f4f4f4; }
.best { color: #1a7f37; font-weight: 600; }
.ci { color: #888; font-size: 0.85em; } .noisy { color: #b35900; }
.faster { color: #1a7f37; } .slower { color: #cf222e; font-weight: 600; } .same { color: #888; }
.warn { background: #fff8e1; border-left: 4px solid #f0b400; padding: 0.4em 0.8em; margin: 0.4em 0; }
.na { color: #999; }
figure { display: inline-block; margin: 1em 1em 1em 0; vertical-align: top; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
"""


def _value(m, metric: str) -> str:
    s = m.summary(metric)
    value = throughput(s.median) if m.unit == "bytes" else rate(s.median)
    noisy = " noisy" if s.ci_half_width > NOISY_CI else ""
    extra = f" ({micros(m.micros_per_op(metric))})" if m.unit == "ops" else ""
    return f"{escape(value)} <span class='ci{noisy}'>±{s.ci_half_width * 100:.1f}%{escape(extra)}</span>"


def _results_tables(run: Run, metric: str) -> str:
    libs = [lib.name for lib in run.libs]
    groups: dict[str, dict[str, dict]] = {}
    for m in run.measurements:
        groups.setdefault(m.group, {}).setdefault(m.case, {})[m.lib] = m
    parts = []
    for group in families.ordered(groups):
        rows = ["<tr><th>case</th>" + "".join(f"<th>{escape(l)}</th>" for l in libs) + "</tr>"]
        for per_lib in groups[group].values():
            ok = {l: m for l, m in per_lib.items() if m.status == "ok" and m.summary(metric)}
            best = max(ok, key=lambda l: ok[l].summary(metric).median) if len(ok) > 1 else None
            label = next(iter(per_lib.values())).label
            cells = []
            for lib in libs:
                m = per_lib.get(lib)
                if m is None:
                    cells.append("<td></td>")
                elif lib in ok:
                    cells.append(f"<td class='{'best' if lib == best else ''}'>{_value(m, metric)}"
                                 f"{' ★' if lib == best else ''}</td>")
                else:
                    cells.append(f"<td class='na' title='{escape(m.reason or '')}'>{escape(m.status)}</td>")
            rows.append(f"<tr><td>{escape(label)}</td>{''.join(cells)}</tr>")
        parts.append(f"<h3>{escape(group)}</h3><table>{''.join(rows)}</table>")
    return "\n".join(parts)


def _verdicts(run: Run, metric: str) -> str:
    if len(run.libs) < 2:
        return "<p>One library only: nothing to compare.</p>"
    columns = [Column(lib.name, run.id, lib.name) for lib in run.libs]
    result = compare(columns, {run.id: run}, metric)
    head = "<tr><th>case</th>" + "".join(f"<th>{escape(c.label)} vs {escape(columns[0].label)}</th>"
                                         for c in columns[1:]) + "</tr>"
    rows = [head]
    for row in result.rows:
        cells = []
        for change in row.changes[1:]:
            if change is None:
                cells.append("<td class='na'>n/a</td>")
            elif change.verdict in ("faster", "slower"):
                cells.append(f"<td class='{change.verdict}'>{change.percent:+.1f}% (p={change.p:.3f})</td>")
            elif change.verdict == "~":
                cells.append(f"<td class='same'>~ (p={change.p:.2f})</td>")
            else:
                cells.append(f"<td class='same'>{change.percent:+.1f}% ?</td>")
        rows.append(f"<tr><td>{escape(row.label)}</td>{''.join(cells)}</tr>")
    return (f"<p>Change of each library against {escape(columns[0].label)}; a verdict only where Mann-Whitney "
            f"p &lt; {result.alpha} and the change exceeds {result.threshold:.0%}, else ~.</p>"
            f"<table>{''.join(rows)}</table>")


def _figures(figures: list[Figure]) -> str:
    parts = []
    for figure in figures:
        svg = next((f for f in figure.files if f.suffix == ".svg"), None)
        png = next((f for f in figure.files if f.suffix == ".png"), None)
        source = svg or png
        if source is None:
            continue
        mime = "image/svg+xml" if source.suffix == ".svg" else "image/png"
        data = base64.b64encode(source.read_bytes()).decode()
        parts.append(f"<figure><img alt='{escape(figure.title)}' src='data:{mime};base64,{data}'>"
                     f"<figcaption>{escape(figure.title)}</figcaption></figure>")
    return "\n".join(parts) or "<p>No figures: the run has too few sizes or libraries to draw.</p>"


def render(run: Run, figures: list[Figure], metric: str = "wall") -> str:
    env = run.environment
    env_rows = "".join(f"<tr><td>{escape(k)}</td><td>{escape(str(v))}</td></tr>" for k, v in env.items()
                       if v not in (None, "", []))
    lib_rows = "".join(
        f"<tr><td>{escape(l.name)}</td><td>{escape(l.version_string)}</td><td>{escape(l.variant)}</td>"
        f"<td>{escape(l.kind)}</td><td>{escape(l.ia32cap or '')}</td></tr>" for l in run.libs)
    warnings = "".join(f"<div class='warn'>{escape(w)}</div>" for w in run.warnings) or "<p>None.</p>"
    state = "complete" if run.complete else "incomplete (interrupted)"
    generated = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>sslperf report {escape(run.id)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{CSS}</style></head>
<body>
<h1>sslperf report</h1>
<p>Run <b>{escape(run.id)}</b>, started {escape(run.started)}, {state}; figures are medians with their 95%
confidence interval, {escape(metric)} time. Generated {generated}.</p>
<h2>Libraries</h2>
<table><tr><th>name</th><th>reports itself as</th><th>variant</th><th>kind</th><th>capability vector</th></tr>
{lib_rows}</table>
<h2>Machine</h2><table>{env_rows}</table>
<h2>Warnings</h2>{warnings}
<h2>Results</h2>{_results_tables(run, metric)}
<h2>Verdicts</h2>{_verdicts(run, metric)}
<h2>Figures</h2>{_figures(figures)}
</body></html>
"""


def write(run: Run, figures: list[Figure], out: Path, metric: str = "wall") -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / "report.html"
    path.write_text(render(run, figures, metric))
    return path
