"""Text in a run cannot break the report page that shows it: a library named to close the page's data
block (`</script>`) or to comment it out (`<!--<script>`, after which the browser runs no script at all)
is drawn like any other, its name shown as text."""

import json
import re
from html import escape

import pytest
from browser import open_page
from conftest import DATA, run_cli

from sslperf import importers
from sslperf.report.page_frame import script_json
from sslperf.store import Store

HOSTILE = ("evil<!--<script>", "x</script><script>alert(1)</script>\u2028y\u2029z & <b>")


def test_script_json_escapes_what_could_end_or_comment_out_the_block():
    data = {"names": [*HOSTILE, "a<!--b-->c", "</SCRIPT >", "&amp;"], "n": 1.5, "none": None,
            "<key>": ["\u2028", "\u2029"]}
    text = script_json(data)
    assert json.loads(text) == data                       # what the page's JSON.parse reads: the original
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}, text
    assert "\\u003c!--\\u003cscript\\u003e" in text and "\\u0026" in text


def test_script_json_refuses_nan_as_the_page_would():
    with pytest.raises(ValueError):
        script_json({"y": float("nan")})


def _store_two_runs(url: str, names: tuple[str, str]) -> list[str]:
    """Two imports of one real `openssl speed` output, the library of each renamed to one of `names`
    (straight into the store: the importer would refuse U+2028 in a name)."""
    store = Store(url)
    ids = []
    for name in names:
        run = importers.parse((DATA / "speed" / "openssl-3.0.8-text.txt").read_text(), None, "plain",
                              "openssl-3.0.8-text.txt")
        run.libs[0].name = name
        for m in run.measurements:
            m.lib, m.note = name, f"note of {name}"
        store.save(run, "openssl speed")
        ids.append(run.id)
    store.engine.dispose()
    return ids


def _charts(page) -> int:
    text = page.read_text()
    start = text.index('id="sslperf-data">') + len('id="sslperf-data">')
    return len(json.loads(text[start:text.index("</script>", start)])["charts"])


def test_a_library_named_to_break_the_page_is_drawn_and_shown_as_text(sslperf_dirs, tmp_path):
    _, data = sslperf_dirs
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    plain = _store_two_runs(url, ("plain-a", "plain-b"))
    hostile = _store_two_runs(url, HOSTILE)
    for ids, out in ((plain, tmp_path / "plain"), (hostile, tmp_path / "hostile")):
        result = run_cli("--db", url, "report", *ids, "--format", "html", "--out", out)
        assert result.returncode == 0, result.stderr
    expected = _charts(tmp_path / "plain" / "report.html")
    assert expected >= 4 and _charts(tmp_path / "hostile" / "report.html") == expected

    opened = open_page((tmp_path / "hostile" / "report.html").as_uri(), tmp_path / "profile")
    drawn = re.findall(r'data-drawn="([^"]*)"', opened.dom)
    assert len(drawn) == expected, drawn                  # every chart drawn: the page's script ran
    assert opened.dom.count('class="main-svg"') >= expected
    assert opened.console_errors() == [] and opened.page_requests() == []
    assert "<script>alert(1)</script>" not in opened.dom  # no element made of the name
    for name in HOSTILE:                                  # the names as text, in the toolbar and the tables
        assert escape(name, quote=False) in opened.dom, name
