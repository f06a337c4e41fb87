"""The frame every page of a report directory shares: style, the links between the pages
of one report directory, the summary before the charts, the toolbar, and the charts' data with the
drawing script embedded. Plotly (4.8 MB, nearly all of a page's size) is written once per directory,
beside the pages that load it (share_plotly), not embedded in each: a page opens offline and asks the
network for nothing, and says so where Plotly is missing (a page copied without its directory)."""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from html import escape
from importlib import resources

from sslperf.plotting import palette
from sslperf.userfiles import Batch

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 1280px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
nav a { margin-right: 1.2em; } nav a.here { font-weight: 600; color: #222; text-decoration: none; }
table { border-collapse: collapse; margin: 0.8em 0; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; vertical-align: top; }
th:first-child, td:first-child { text-align: left; }
table.facts td { text-align: left; } th { background: #f4f4f4; }
.best { font-weight: 600; }
.ci { color: #888; font-size: 0.85em; } .noisy { color: #8a4a00; }
.slower { font-weight: 600; } .same { color: #777; }
#summary-verdicts td, #summary-largest td { white-space: nowrap; }
.size-note { color: #666; font-size: 0.9em; }
.warn { background: #fff8e1; border-left: 4px solid #f0b400; padding: 0.4em 0.8em; margin: 0.4em 0; }
.na { color: #999; }
#toolbar { position: sticky; top: 0; background: #fafafa; border: 1px solid #ddd; padding: 0.5em 0.8em; z-index: 10; }
#toolbar label { margin-right: 1em; white-space: nowrap; }
.chart { border: 1px solid #eee; margin: 0.8em 0; min-height: 200px; }
.chart-title { font-weight: 600; margin-top: 1.2em; } .chart-note { color: #666; font-size: 0.9em; }
figure { display: inline-block; margin: 1em 1em 1em 0; vertical-align: top; }
figure img { max-width: 100%; border: 1px solid #eee; }
"""

# The verdict colours from the one palette (report/palette.py); ▲ ▼ ~ say the same without colour.
CSS += (f".faster {{ color: {palette.FASTER}; }} .slower {{ color: {palette.SLOWER}; }} "
        f".best {{ color: {palette.FASTER}; }}\n")

PAGES = (("report.html", "this run"), ("history.html", "history"), ("hosts.html", "hosts"))


def _script(text: str) -> str:
    """Our own script (dashboard.js) safe inside <script>: no `</script` can end the element early (in
    JavaScript strings `<\\/` reads as `</`). Data never goes through here: see script_json."""
    return re.sub(r"</(script)", r"<\\/\1", text, flags=re.IGNORECASE)


# What the page's HTML parser could read inside a <script> element (`</script` ends it, `<!--` followed by
# `<script` keeps it open past its end, so nothing after it runs), and the two line separators older
# JavaScript parsers end a string at (json.dumps escapes those already, while its ensure_ascii holds): each
# as its JSON escape, which JSON.parse reads back as the character.
_SCRIPT_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_SCRIPT_UNSAFE_RE = re.compile("[<>&\u2028\u2029]")


def script_json(data) -> str:
    """`data` as JSON to embed in a page's <script> block: the one way every page embeds data. Whatever text
    it holds (a library's name, a note, a label) reads back exactly with JSON.parse, and none of it can close
    or comment out the element."""
    text = json.dumps(data, allow_nan=False, default=str)
    return _SCRIPT_UNSAFE_RE.sub(lambda found: _SCRIPT_UNSAFE[found.group()], text)


@functools.cache
def plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def plotly_file() -> str:
    """The name of the one copy of Plotly a report directory's pages load: versioned, so a page written by an
    older sslperf keeps the copy it was drawn with."""
    found = re.search(r"plotly\.js v([0-9][0-9A-Za-z.\-]*)", plotly_js()[:400])
    return f"plotly-{found.group(1) if found else 'unknown'}.min.js"


def share_plotly(files: Batch) -> None:
    """One copy of Plotly for the directory, when this batch writes a page that loads it."""
    if any(name.endswith(".html") for name in files.files):
        files.add(plotly_file(), plotly_js())


def nav(pages: list[str], here: str) -> str:
    """Links to the other pages of one report directory (the report, history and hosts pages)."""
    links = [f"<a class='here' href='{name}'>{title}</a>" if name == here else f"<a href='{name}'>{title}</a>"
             for name, title in PAGES if name in pages]
    return "<nav>" + "".join(links) + "</nav>" if len(links) > 1 else "<nav></nav>"


def link_pages(files: Batch) -> None:
    """Give every page of the directory links to all the others: the pages
    of this batch, and those an earlier report wrote there (rewritten with
    the new links); a page sslperf did not write is neither linked nor touched."""
    pages = [name for name, _ in PAGES if files.mine(name)]
    for name in pages:
        data = files.files.get(name)
        text = data.decode() if data is not None else (files.directory / name).read_text()
        start, end = text.find("<nav>"), text.find("</nav>")
        if 0 <= start < end:
            files.add(name, text[:start] + nav(pages, name) + text[end + len("</nav>"):])


def chart_divs(charts: list[dict]) -> str:
    """A titled placeholder per chart, filled by the script."""
    parts = []
    for chart in charts:
        note = f"<div class='chart-note'>{escape(chart['note'])}</div>" if chart.get("note") else ""
        parts.append(f"<div class='chart-title'>{escape(chart['title'])}</div>{note}"
                     f"<div class='chart' id='{escape(chart['id'])}'></div>")
    return "\n".join(parts)


def render(title: str, intro: str, body: str, data: dict, summary: str = "") -> str:
    """A whole page: `summary` (the answer, plain HTML that needs no script) before the toolbar and the
    charts. `data` holds `charts` (see report.charts) and the toolbar's defaults; its links to the other
    pages are made by link_pages once the directory's pages are known."""
    generated = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    app = resources.files("sslperf.report").joinpath("dashboard.js").read_text()
    plotly = plotly_file()
    data = {**data, "palette": palette.for_page(), "plotly_file": plotly}
    payload = script_json(data)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<meta name="generator" content="sslperf">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{CSS}</style>
<script src="{escape(plotly)}"></script></head>
<body>
<nav></nav>
<h1>{escape(title)}</h1>
{intro}
{summary}
<p class='chart-note'>Generated {generated} by sslperf. Hover a point for its figures, CI and n; click a legend
entry to hide a series; the toolbar switches views. Everything is in this directory: its pages share one copy of
Plotly ({escape(plotly)}) and load nothing from the network.</p>
<div id="toolbar"></div>
{body}
<script type="application/json" id="sslperf-data">{payload}</script>
<script>{_script(app)}</script>
</body></html>
"""
