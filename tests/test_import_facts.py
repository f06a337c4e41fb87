"""What an import keeps, checked once for every importer (importers._common.check_kept): no control
character in any fact (a wolfCrypt CPU: line, an openssl compiler: line, Google Benchmark's context), none sent
raw through a warning, and no note past 4,096 characters once the rows of one case are joined. Real captures of
tests/data/speed, with the bad text put into a copy; through the real `sslperf import` where it is what a user
runs."""

import json
from pathlib import Path

import pytest
from conftest import run_cli

from sslperf import importers
from sslperf.importers import ImportFailed

DATA = Path(__file__).parent / "data" / "speed"
TITLE = "\x1b]0;pwned\x07"          # a terminal title change


def edited(tmp_path: Path, name: str, old: str, new: str) -> Path:
    text = (DATA / name).read_text()
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize("name, old, new, fact", [
    ("wolfcrypt-5.9.4-text.txt", "CPU: Intel x86_64 - avx1", f"CPU: Intel x86_64 {TITLE} - avx1", "cpu_features"),
    ("wolfcrypt-5.9.4-text.txt", "CPU: Intel x86_64 - avx1", "CPU: Intel x86_64 \x7f - avx1", "cpu_features"),
    ("wolfcrypt-5.9.4-csv-16384.csv", "CPU: ", f"CPU: {TITLE}", "cpu_features"),
    ("openssl-3.6.3-text-kem-sig.txt", "compiler: ", f"compiler: {TITLE}", "compiler"),
])
def test_a_fact_with_control_characters_is_refused_and_nothing_is_stored(sslperf_dirs, tmp_path, name, old, new,
                                                                         fact):
    result = run_cli("import", edited(tmp_path, name, old, new))
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"the environment's {fact} `" in result.stderr and "holds control characters" in result.stderr
    assert "\x1b" not in result.stderr and "\x7f" not in result.stderr          # quoted as \x1b, \x7f
    assert ("\\x1b]0;pwned\\x07" in result.stderr) != ("\\x7f" in result.stderr)
    assert "Traceback" not in result.stderr
    assert json.loads(run_cli("runs", "list", "--json").stdout) == []


def test_google_benchmark_context_with_control_characters_is_refused():
    data = json.loads((DATA / "gbench-sample-memcpy.json").read_text())
    data["context"]["host_name"] = f"vm{TITLE}"
    with pytest.raises(ImportFailed, match=r"the environment's tool_host `vm\\x1b\]0;pwned\\x07` holds control"):
        importers.parse(json.dumps(data), source_name="bench.json")


def test_a_warning_quotes_control_characters_visibly(sslperf_dirs, tmp_path):
    # a row whose rate is zero is a warning that quotes it; its name carries a colour sequence
    path = edited(tmp_path, "wolfcrypt-5.9.4-text.txt",
                  "SHA-256                   2095 MiB took 1.001 seconds, 2092.179 MiB/s",
                  "SHA\x1b[31m-256              0 MiB took 1.001 seconds, 0.000 MiB/s")
    assert run_cli("import", path).returncode == 0
    exported = run_cli("runs", "export", "latest", "--format", "json").stdout
    [warning] = [w for w in json.loads(exported)["warnings"] if "no usable rate" in w]
    assert "line 21: SHA\\x1b[31m-256 reported no usable rate" in warning and "\x1b" not in warning
    shown = run_cli("runs", "show", "latest")
    assert "SHA\\x1b[31m-256" in shown.stdout and "\x1b" not in shown.stdout


def test_the_html_report_escapes_names(sslperf_dirs, tmp_path):
    name = "</script><b>x&y"
    assert run_cli("import", DATA / "openssl-3.6.3-text-rsa.txt", "--lib-name", name).returncode == 0
    out = tmp_path / "report"
    assert run_cli("report", "latest", "--format", "html", "--out", out).returncode == 0
    page = (out / "report.html").read_text()
    assert "&lt;/script&gt;&lt;b&gt;x&amp;y" in page
    assert name not in page                      # the charts' JSON holds it as <\/script><b>x&y
    start = page.index('<script type="application/json" id="sslperf-data">')
    outside_data = page[:start] + page[page.index("</script>", start):]
    assert "<b>x" not in outside_data


def gbench_rows(names: list[str]) -> str:
    """Google Benchmark's JSON of a real capture (gbench-sample-memcpy.json), its first row once per name."""
    data = json.loads((DATA / "gbench-sample-memcpy.json").read_text())
    first = data["benchmarks"][0]
    data["benchmarks"] = [{**first, "name": n, "run_name": n, "real_time": first["real_time"] * (1 + i / 10)}
                          for i, n in enumerate(names)]
    return json.dumps(data)


def test_rows_joined_into_one_case_keep_a_note_within_the_limit():
    # names that differ past the 80 characters of a case id's name give one case: its samples, each row named
    stem = "BM_memcpy_" + "x" * 100
    run = importers.parse(gbench_rows([f"{stem}/a", f"{stem}/b", f"{stem}/c"]), source_name="bench.json")
    [m] = run.measurements
    assert len(m.reported_rates) == 3
    assert m.note == f"also reported as `{stem}/b`; also reported as `{stem}/c`"


def test_a_note_joined_past_the_limit_is_refused_saying_the_rows_were_joined(sslperf_dirs, tmp_path):
    # three rows of 2,700-character names: each name fits the 4,096 characters of a note, the joined note does not
    stem = "BM_memcpy_" + "x" * 2690
    path = tmp_path / "bench.json"
    path.write_text(gbench_rows([f"{stem}/a", f"{stem}/b", f"{stem}/c"]))
    result = run_cli("import", path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "this row and 2 before it, each of another name, give the case other/memcpy-x" in result.stderr
    assert "joined note would be 5,444 characters long (sslperf keeps 4,096)" in result.stderr
    assert json.loads(run_cli("runs", "list", "--json").stdout) == []
    with pytest.raises(ImportFailed, match="joined note would be"):      # any number of rows: the same refusal
        importers.parse(gbench_rows([f"BM_memcpy_{'x' * 100}/{i:04}" + "y" * 60 for i in range(1000)]))
