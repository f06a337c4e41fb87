"""`sslperf report` on real runs: figures as files, and the report, history
and hosts pages opened in a real headless Chromium, which must draw every
chart in the view asked for, log no errors and ask the network for nothing
(every request it makes goes to a recording proxy; see browser.py)."""

import json
import re

import pytest
from browser import open_page
from conftest import DATA, private_cache, run_cli

from sslperf.report import page_frame

from sslperf.plotting import palette

CASES = ["cipher/aes-128-gcm/encrypt/64", "cipher/aes-128-gcm/encrypt/1024", "cipher/aes-128-gcm/encrypt/16384",
         "digest/sha256/64", "digest/sha256/16384", "sig/rsa-2048/sign", "sig/rsa-3072/sign",
         "sig/ecdsa-p256/sign", "sig/ecdsa-p384/sign", "kex/x25519/derive"]
TIMED_CASES = [c for c in CASES if c.startswith("cipher/aes-128-gcm/")]
IMPORTS = ["openssl-1.1.1w-text.txt", "openssl-3.0.8-text.txt", "openssl-3.6.3-text-kem-sig.txt"]


def page_data(path) -> dict:
    """The charts' data a page embeds (what its script draws)."""
    text = path.read_text()
    start = text.index('<script type="application/json" id="sslperf-data">') + len(
        '<script type="application/json" id="sslperf-data">')
    return json.loads(text[start:text.index("</script>", start)])


# One worker takes the whole module, so its module fixtures (real measurements) are made once.
pytestmark = pytest.mark.xdist_group("report")


def measured_store(root, cases: list[str], imports: list[str]) -> dict:
    """A store of `imports` (real `openssl speed` outputs) as host lab-a and two real runs of `cases` on the
    system library on lab-a: plain, and with AES-NI hidden."""
    env = {"SSLPERF_CACHE_DIR": str(private_cache(root / "cache")), "SSLPERF_DATA_DIR": str(root / "data"),
           "SSLPERF_HOST": "lab-a"}
    for name in imports:
        imported = run_cli("import", DATA / "speed" / name, "--host", "lab-a", env=env)
        assert imported.returncode == 0, imported.stderr
    args = ["speed", "--time", "3", "--samples", "5", "--json"] + [a for c in cases for a in ("--case", c)]
    plain = json.loads(run_cli(*args, env=env).stdout)
    masked = json.loads(run_cli(*args, "--cpu-mask", "no-aesni", env=env).stdout)
    return {"root": root, "env": env, "plain": plain["id"], "masked": masked["id"]}


def report_of(store: dict):
    out = store["root"] / "out"
    result = run_cli("report", store["plain"], store["masked"], "--out", out, env=store["env"])
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """The imports of 1.1.1w, 3.0.8 and 3.6.3, and runs of every case of CASES. The lab-b run and the history
    and hosts pages are made only for the tests that read them (`all_pages`)."""
    return measured_store(tmp_path_factory.mktemp("report"), CASES, IMPORTS)


@pytest.fixture(scope="module")
def report_dir(store):
    return report_of(store)


@pytest.fixture(scope="module")
def timed_store(tmp_path_factory):
    """What the timing tests read, measured while nothing else runs: AES-GCM with and without AES-NI only (the
    RSA cases' key generation alone would take longer than all of it)."""
    return measured_store(tmp_path_factory.mktemp("report-timed"), TIMED_CASES, [])


@pytest.fixture(scope="module")
def timed_report_dir(timed_store):
    return report_of(timed_store)


@pytest.fixture(scope="module")
def all_pages(store, report_dir):
    """report_dir with the history page and, after a run on lab-b (the cases without RSA, in 3 processes: the
    fewest the verdict rule tests; only the hosts page reads it), the hosts page."""
    lab_b = ["speed", "--time", "3", "--samples", "3", "--processes", "3", "--json"] + [
        a for c in CASES if not c.startswith("sig/rsa-") for a in ("--case", c)]
    other = run_cli(*lab_b, env={**store["env"], "SSLPERF_HOST": "lab-b"})
    assert other.returncode == 0, other.stderr
    history = run_cli("report", "--history", "sig/ecdsa-p256/sign", "--history", "kex/x25519/derive",
                      "--host", "lab-a", "--out", report_dir, env=store["env"])
    assert history.returncode == 0, history.stderr
    hosts = run_cli("report", "--hosts", "--out", report_dir, env=store["env"])
    assert hosts.returncode == 0, hosts.stderr
    return report_dir


def test_figures_are_written_as_png_and_svg(all_pages):
    report_dir = all_pages
    names = {p.name for p in report_dir.iterdir()}
    for stem in ("throughput-aead-ciphers-encrypt-record", "throughput-digests-hash-record", "ops-signatures",
                 "scaling-rsa", "scaling-ecdsa-nist-curves"):
        assert f"{stem}.png" in names and f"{stem}.svg" in names, (stem, sorted(names))
    # One library with and without AES-NI is one version: no version-over-version figure.
    assert "versions.png" not in names
    # One copy of Plotly for the directory's three pages, none embedded in a page.
    assert [p.name for p in report_dir.glob("plotly-*.min.js")] == [page_frame.plotly_file()]
    for page in ("report.html", "history.html", "hosts.html"):
        text = (report_dir / page).read_text()
        assert f'<script src="{page_frame.plotly_file()}"></script>' in text and len(text) < 1_000_000
    assert (report_dir / "ops-signatures.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in (report_dir / "scaling-rsa.svg").read_text()


@pytest.mark.timing      # asserts a measured verdict (AES-NI hidden is slower): run alone, after the builds
def test_relative_figures_carry_the_ratio_ci_p_and_verdict(timed_report_dir):
    charts = page_data(timed_report_dir / "report.html")["charts"]
    gcm = next(c for c in charts if c["title"] == "aes-128-gcm encrypt")
    assert gcm["kind"] == "size" and gcm["x"] == [64, 1024, 16384]
    base, masked = (s["key"] for s in gcm["series"])
    relative = gcm["relative"]["wall"][base][masked][2]           # 16 KiB without AES-NI, against with it
    assert relative["verdict"] == "slower" and relative["y"] < 50
    assert relative["lo"] <= relative["y"] <= relative["hi"] and relative["p"] < 0.05
    assert relative["method"] == "processes"                      # two runs: never paired
    absolute = gcm["absolute"]["wall"][base][2]
    assert absolute["n"] == 5 and absolute["lo"] <= absolute["y"] <= absolute["hi"]


def test_report_page_draws_every_chart_relative_and_asks_the_network_for_nothing(report_dir):
    shot = report_dir / "report-relative.png"
    opened = open_page((report_dir / "report.html").as_uri(), report_dir / "profile", shot)
    charts = page_data(report_dir / "report.html")["charts"]
    drawn = re.findall(r'data-drawn="([^"]*)"', opened.dom)
    assert len(drawn) == len(charts) >= 4
    assert all(view.startswith("relative/wall/") for view in drawn), drawn
    assert opened.dom.count('class="main-svg"') >= len(charts)        # Plotly drew an SVG for each
    assert "% of " in opened.dom                                       # the relative axis title
    assert opened.page_requests() == [] and opened.console_errors() == []
    assert shot.stat().st_size > 50_000


def test_the_address_switches_the_view_to_absolute_cpu_time(report_dir):
    url = (report_dir / "report.html").as_uri() + "#view=absolute&metric=cpu"
    opened = open_page(url, report_dir / "profile")         # the DOM is what is checked: no screenshot
    drawn = re.findall(r'data-drawn="([^"]*)"', opened.dom)
    assert drawn and all(view.startswith("absolute/cpu/") for view in drawn), drawn
    assert "GB/s (CPU time)" in opened.dom and "each panel from zero" in opened.dom
    assert opened.page_requests() == []


def test_a_page_asking_the_network_is_caught(report_dir, tmp_path):
    """The network check can fail: the same page with one CDN script makes a request."""
    page = tmp_path / "report.html"
    page.write_text((report_dir / "report.html").read_text().replace(
        "<head>", "<head><script src='https://cdn.example.com/plotly.min.js'></script>", 1))
    opened = open_page(page.as_uri(), tmp_path / "profile")
    assert any("cdn.example.com" in r for r in opened.page_requests()), opened.requests


@pytest.mark.timing      # asserts a measured verdict (AES-NI hidden is slower): run alone, after the builds
def test_machine_facts_and_rankings_read_as_tables(timed_report_dir):
    html = (timed_report_dir / "report.html").read_text()
    machine = html[html.index("<h2>Machine</h2>"):html.index("<h2>Rankings</h2>")]
    assert "crypto CPU flags" in machine and "virtual machine" in machine
    assert "['" not in machine and "True" not in machine and "False" not in machine
    libraries = html[html.index("<h2>Libraries</h2>"):html.index("<h2>Machine</h2>")]
    assert "not known: a shared libcrypto does not export OPENSSL_ia32cap_P" in libraries
    rankings = html[html.index("<h2>Rankings</h2>"):html.index("<h2>Results</h2>")]
    row = re.search(r"<td>aes-128-gcm encrypt 16384 B</td><td>([^<]*)</td><td>([^<]*)</td>", rankings)
    assert row and " = " not in row.group(1) and "no-aesni" in row.group(2)   # a clear first, the masked second


def test_history_orders_versions_and_draws_in_chromium(all_pages):
    report_dir = all_pages
    data = page_data(report_dir / "history.html")
    ecdsa = next(c for c in data["charts"] if c["title"] == "ecdsa-p256 sign")
    # The imports' versions and the system library's (3.0.x) in version order, not in the order measured.
    order = ecdsa["version_order"]
    assert order[:2] == ["openssl 1.1.1w", "openssl 3.0.8"] and order[-1] == "openssl 3.6.3"
    assert re.fullmatch(r"openssl 3\.0\.\d+", order[2]) and order[2] != "openssl 3.0.8"
    masked = [p for p in ecdsa["points"] if "@no-aesni" in p["series"]]
    assert masked and all(p["series"] == "openssl@no-aesni" for p in masked)   # a masked run is a series of its own
    opened = open_page((report_dir / "history.html").as_uri(), report_dir / "profile",
                       report_dir / "history.png")
    assert opened.page_requests() == [] and opened.console_errors() == []
    ticks = [t for t in re.findall(r">(openssl [0-9.a-z]+)<", opened.dom)]
    assert ticks[:len(order)] == order, ticks
    assert (report_dir / "history.png").stat().st_size > 40_000
    by_date = open_page((report_dir / "history.html").as_uri() + "#order=date", report_dir / "profile")
    assert all(v.endswith("/date") for v in re.findall(r'data-drawn="([^"]*)"', by_date.dom))
    assert "date of the run" in by_date.dom


@pytest.mark.timing      # asserts a measured verdict (AES-NI hidden is slower): run alone, after the builds
def test_history_marks_a_real_change_between_two_points(timed_store):
    """The verdict of a point against the one before it comes from the real
    test: the very same library without AES-NI is far slower at AES-GCM."""
    from sslperf.report import history_page
    from sslperf.results import RecordedMeasurement
    from sslperf.store import Store

    db = Store(f"sqlite:///{timed_store['root'] / 'data' / 'sslperf.db'}")
    results = db.results(["cipher/aes-128-gcm/encrypt/16384"], ["lab-a"])
    plain = next(r for r in results if r.run_id == timed_store["plain"])
    masked = next(r for r in results if r.run_id == timed_store["masked"])
    as_versions = [RecordedMeasurement(**{**vars(plain), "version": "1.0", "environment": {}}),
                   RecordedMeasurement(**{**vars(masked), "version": "2.0", "environment": {}})]
    chart = history_page.case_chart("c", as_versions, several_hosts=False)
    later = next(p for p in chart["points"] if p["version"] == "2.0")
    assert later["verdicts"]["version"]["wall"]["verdict"] == "slower"
    assert later["verdicts"]["version"]["wall"]["p"] < 0.05
    first = next(p for p in chart["points"] if p["version"] == "1.0")
    assert first["verdicts"]["version"] == {}                          # nothing before the first


def test_hosts_page_sets_hosts_side_by_side(all_pages):
    report_dir = all_pages
    data = page_data(report_dir / "hosts.html")
    assert data["charts"] and all(c["title"].startswith("openssl-3.0.") for c in data["charts"])
    legends = {s["legend"] for c in data["charts"] for s in c["series"]}
    assert len(legends) == 2 and all(re.match(r"lab-[ab]: .+ \(same crypto flags\)", l) for l in legends)
    opened = open_page((report_dir / "hosts.html").as_uri(), report_dir / "profile", report_dir / "hosts.png")
    drawn = re.findall(r'data-drawn="([^"]*)"', opened.dom)
    assert drawn and all(v.startswith("relative/wall/lab-a") for v in drawn)
    assert "% of lab-a" in opened.dom and "lab-b: " in opened.dom
    assert opened.page_requests() == [] and opened.console_errors() == []
    assert '<a href="report.html">' in opened.dom and '<a href="history.html">' in opened.dom
    assert (report_dir / "hosts.png").stat().st_size > 40_000


def test_hosts_without_a_second_host_is_a_clear_error(store, tmp_path):
    result = run_cli("report", "--hosts", "--host", "lab-a", "--out", tmp_path, env=store["env"])
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "measured on two hosts or more" in result.stderr and "SSLPERF_HOST" in result.stderr


def test_nothing_to_draw_is_said(store, tmp_path):
    env = {**store["env"], "SSLPERF_DATA_DIR": str(tmp_path / "data")}
    run = json.loads(run_cli("speed", "--case", "digest/sha256/64", "--time", "1", "--samples", "3", "--processes",
                             "1", "--json", env=env).stdout)
    result = run_cli("report", run["id"], "--format", "png", "--out", tmp_path / "out", env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "Nothing to draw" in result.stderr and "--format html" in result.stderr
    assert not any((tmp_path / "out").glob("*.png"))


def test_bad_baseline_is_a_clear_error(store, tmp_path):
    result = run_cli("report", store["plain"], "--baseline", "nosuchlib", "--out", tmp_path, env=store["env"])
    assert result.returncode == 2 and "--baseline nosuchlib is not a library of the report" in result.stderr


def test_hiding_a_series_from_the_address_leaves_it_in_the_legend_only(report_dir):
    data = page_data(report_dir / "report.html")
    masked = next(s["key"] for c in data["charts"] for s in c["series"] if "no-aesni" in s["key"])
    url = (report_dir / "report.html").as_uri() + f"#view=absolute&hide={masked}"
    opened = open_page(url, report_dir / "profile")
    checkbox = re.search(rf'<input type="checkbox" data-series="{re.escape(masked)}"[^>]*>', opened.dom)
    assert checkbox and "checked" not in checkbox.group(0)
    shown = open_page((report_dir / "report.html").as_uri() + "#view=absolute", report_dir / "profile")
    # Plotly draws a trace group per visible series only; the hidden one stays in the legends.
    assert opened.dom.count("trace scatter") < shown.dom.count("trace scatter")
    assert opened.dom.count("legendtoggle") == shown.dom.count("legendtoggle")


def _png_size(path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


LAYOUT = ('<script>for (const el of document.querySelectorAll("#summary-heading, #summary-largest, #summary-verdicts, '
          '.chart")) el.dataset.top = Math.round(el.getBoundingClientRect().top + scrollY);</script></body>')


def test_the_page_opens_with_the_summary_and_compares_verdicts(report_dir, store, tmp_path):
    """The first screen (1280×800) holds the answer: the summary, with the largest changes, comes before
    any chart, and its verdicts are `sslperf compare`'s for the same runs."""
    shot = tmp_path / "first-screen.png"
    opened = open_page((report_dir / "report.html").as_uri(), tmp_path / "profile", shot, size="1280,800")
    assert _png_size(shot) == (1280, 800) and opened.console_errors() == []
    dom = opened.dom
    assert re.findall(r"<h2[^>]*>([^<]*)</h2>", dom)[0] == "Summary"
    first_table = dom.index("<table")
    assert dom.index('id="summary"') < first_table < dom.index('class="chart')
    # Laid out by the browser: the summary and its largest changes on the first screen, every chart below
    # the whole verdict table.
    laid = tmp_path / "report.html"
    laid.write_text((report_dir / "report.html").read_text().replace("</body>", LAYOUT, 1))
    (tmp_path / page_frame.plotly_file()).symlink_to(report_dir / page_frame.plotly_file())
    tops = dict(re.findall(r'id="([^"]+)"[^>]*data-top="(\d+)"', open_page(laid.as_uri(), tmp_path / "profile",
                                                                          size="1280,800").dom))
    assert int(tops["summary-heading"]) < 400 and int(tops["summary-largest"]) < 800, tops
    charts = [int(v) for k, v in tops.items() if k.startswith(("size-", "group-"))]
    assert charts and min(charts) > int(tops["summary-verdicts"]), tops
    # The same verdicts as compare's.
    compared = json.loads(run_cli("compare", store["plain"], store["masked"], "--format", "json",
                                  env=store["env"]).stdout)
    theirs = {row["case"]: row["changes"][1]["verdict"] for row in compared["rows"] if row["changes"][1]}
    ours = {case: verdict for case, verdict in re.findall(r'data-case="([^"]+)" data-lib="[^"]+" '
                                                          r'data-verdict="([^"]+)"', dom) if verdict != "n/a"}
    assert ours == theirs and len(ours) == len(CASES)
    # Ties read as ties: a `~` cell says ~ first; a called change says ▲ or ▼ with its CI.
    for verdict, text in re.findall(r'data-verdict="([^"]+)">([^<]*)</td>', dom):
        assert text.startswith({"~": "~ ", "faster": "▲ ", "slower": "▼ ", "n/a": "n/a"}.get(verdict, "? ")), text
        assert verdict not in ("faster", "slower") or re.search(r"\[[+-][0-9.]+%, [+-][0-9.]+%\] p=0\.\d{3}", text)
    # The charts drawn in the palette's colours (relative to the first library, the second is drawn: in the
    # palette's second colour), never matplotlib's old red and green.
    second = "rgb({}, {}, {})".format(*(int(palette.SERIES[1][i:i + 2], 16) for i in (1, 3, 5)))
    assert second in dom and "rgb(214, 39, 40)" not in dom and "rgb(44, 160, 44)" not in dom


def _import_ids(store) -> list[str]:
    listed = json.loads(run_cli("runs", "list", "--json", env=store["env"]).stdout)
    by_lib = {lib: row["id"] for row in listed for lib in row["libs"]}
    return [next(run for lib, run in by_lib.items() if lib.startswith(f"openssl-{v}")) for v in
            ("1.1.1w", "3.0.8", "3.6.3")]


def test_imported_versions_say_why_nothing_is_tested_and_the_kem_chart_why_it_is_absolute(store, tmp_path):
    """`openssl speed` outputs of three versions: one figure per case, so no step can be tested (the
    figure draws no bar and says so), and only 3.6.3 measured KEMs (its chart is absolute, and says why)."""
    from sslperf.report import versions_figure
    from sslperf.results import merge
    from sslperf.store import Store

    ids = _import_ids(store)
    db = Store(f"sqlite:///{store['root'] / 'data' / 'sslperf.db'}")
    originals = [db.load(i) for i in ids]
    found = versions_figure.version_changes(merge(originals), originals=originals)
    assert len(found.steps) == 2 and found.cases == [] and found.bars == []
    assert set(found.untested.values()) == {"no test: fewer than 3 samples or worker processes"}
    out = tmp_path / "out"
    result = run_cli("report", *ids, "--out", out, env=store["env"])
    assert result.returncode == 0, result.stderr
    assert (out / "versions.png").exists()
    said = (r"report: report\.html \d+ kB; plotly-[0-9.]+\.min\.js 4\.\d MB, one copy loaded by the page; "
            r"\d+ figure files \(PNG, SVG\) [0-9.]+ [kM]B — \d+ files, [0-9.]+ MB in all")
    assert re.search(said, result.stdout), result.stdout
    kem = next(c for c in page_data(out / "report.html")["charts"] if c["title"] == "KEMs")
    opened = open_page((out / "report.html").as_uri(), tmp_path / "profile")
    div = re.search(rf'<div class="chart[^"]*" id="{kem["id"]}"[^>]*>', opened.dom).group(0)
    assert 'data-drawn="absolute/' in div
    assert 'data-departure="absolute, not relative: only openssl-3.6.3' in div
    drawn = opened.dom.split(div, 1)[1].split("class=\"chart-title\"", 1)[0]          # up to the next chart
    assert "absolute, not relative: only openssl-3.6.3 has figures here" in drawn and 'class="gtitle"' in drawn
    assert opened.page_requests() == [] and opened.console_errors() == []


def test_a_report_of_chosen_cases_and_libraries_only(store, tmp_path):
    out = tmp_path / "slide"
    result = run_cli("report", store["plain"], "--case", "sig/ecdsa-*", "--filter", "kex/*", "--out", out,
                     env=store["env"])
    assert result.returncode == 0, result.stderr
    cases = json.dumps(page_data(out / "report.html"))
    assert "sig/ecdsa-p256/sign" in cases and "kex/x25519/derive" in cases
    assert "sig/rsa-2048/sign" not in cases and "cipher/aes-128-gcm" not in cases
    assert not list(out.glob("throughput-*.png")) and list(out.glob("ops-signatures.png"))
    # A library the run lacks, or a pattern no case matches: one paragraph, nothing written.
    for args, said in ((("--lib", "openssl-9.9"), "--lib openssl-9.9 is not a library of run"),
                       (("--case", "nosuchcase"), "No case of run")):
        refused = run_cli("report", store["plain"], *args, "--out", tmp_path / "no", env=store["env"])
        assert refused.returncode == 2 and said in refused.stderr and "Traceback" not in refused.stderr
        assert not (tmp_path / "no").exists() or not any((tmp_path / "no").iterdir())
