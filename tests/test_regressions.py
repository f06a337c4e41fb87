"""Change points (`sslperf regressions`): Apache Otava's E-Divisive on the
real instruction counts of the OpenSSL 3.0.x releases, whose steps sslperf's
brute force and bisect found, and on synthetic series with known steps,
noise and outliers."""

import json
import random

import pytest
from conftest import DATA, run_cli

from sslperf.regressions import DetectionSettings, Point, Series, find_change_points
from sslperf.results import LibInfo, Measurement, Run
from sslperf.store import Store

HISTORY = json.loads((DATA / "history" / "openssl-3.0.x-instructions.json").read_text())


def stored_history(db: str) -> None:
    """The 3.0.x table as one stored run of eight libraries (three equal counts each)."""
    run = Run.new({"suite": "api"}, {"host": "lab-a"})
    run.libs = [LibInfo(f"openssl-{v}", "openssl", v, f"OpenSSL {v}", "default", "built")
                for v in HISTORY["releases"]]
    for case, counts in HISTORY["cases"].items():
        family, name = case.split("/")[:2]
        for version, count in zip(HISTORY["releases"], counts):
            ops = 1000
            run.measurements.append(Measurement(case, family, family, name, "", None, "record", f"openssl-{version}",
                                                "ok", None, "ops", 0, [ops] * 3, [10**6] * 3, [10**6] * 3,
                                                figures={"instructions": [count * ops] * 3, "process": [0, 1, 2]}))
    run.complete = True
    Store(db).save(run, "sslperf api")


def test_the_3_0_x_steps_are_found_at_their_releases(tmp_path):
    db = f"sqlite:///{tmp_path / 'history.db'}"
    stored_history(db)
    result = run_cli("--db", db, "regressions", "--metric", "instructions", "--all", "--json")
    assert result.returncode == 0, result.stderr
    found = {(c["case"], c["to"]["label"]): c for c in json.loads(result.stdout)["change_points"]}
    handshake, pem, fetch = ("tls/handshake/tls1.3/x25519/ecdsa-p256/new", "api/pem/private-key", "api/fetch/sha256")
    assert {label for case, label in found if case == handshake} == {"openssl 3.0.2", "openssl 3.0.3", "openssl 3.0.4"}
    assert {label for case, label in found if case == pem} == {"openssl 3.0.3", "openssl 3.0.4"}
    # The fetch: -33.1% of the instructions at 3.0.2, then -1.3% and +3.1%: exact counts, so real moves.
    assert {label for case, label in found if case == fetch} == {"openssl 3.0.2", "openssl 3.0.3", "openssl 3.0.4"}
    assert not [case for case, _ in found if case in ("sig/ecdsa-p256/sign", "digest/sha256/64")]
    # The sizes are of the rate (per 10^9 instructions): 3.0.4's handshake needs 42.8% fewer, so +74.8%.
    step = found[(handshake, "openssl 3.0.4")]
    assert step["verdict"] == "faster" and 74 < step["percent"] < 76 and step["from"]["label"] == "openssl 3.0.3"
    assert found[(handshake, "openssl 3.0.2")]["verdict"] == "slower"
    # Releases are adjacent: the next step is a bisect over the commits between their tags.
    assert found[(handshake, "openssl 3.0.2")]["bisect"] == [
        "sslperf", "bisect", handshake, "--git", "CLONE", "--good", "openssl-3.0.1", "--bad", "openssl-3.0.2",
        "--metric", "instructions"]
    assert found[(handshake, "openssl 3.0.4")]["bisect"][5:9] == ["--good", "openssl-3.0.4", "--bad", "openssl-3.0.3"]
    # Without --all only the slow-down is listed, in the terminal table too.
    table = run_cli("--db", db, "regressions", "--metric", "instructions")
    assert table.returncode == 0 and "openssl 3.0.1 → openssl 3.0.2" in table.stdout
    assert "% faster" not in table.stdout and "% slower" in table.stdout and "E-Divisive" in table.stdout
    assert "sslperf bisect" in table.stdout and "--git CLONE" in table.stdout


def synthetic(rng: random.Random, levels: list[tuple[int, float]], noise: float, outliers: int) -> Series:
    """A series of (length, level) segments with Gaussian noise (relative) and a few 3x outliers
    (not among the 3 points at either end, where an outlier and a new level look alike)."""
    values = [level * (1 + rng.gauss(0, noise)) for length, level in levels for _ in range(length)]
    for index in rng.sample(range(3, len(values) - 3), outliers):
        values[index] *= 3 if rng.random() < 0.5 else 1 / 3
    points = [Point(f"c{i}", "lib", f"run{i}", f"2026-01-{1 + i // 24:02d}T{i % 24:02d}:00:00", v)
              for i, v in enumerate(values)]
    return Series("kex/x25519/derive", "x25519 derive", "openssl", "lab-a", "wall", points)


@pytest.mark.parametrize("seed", range(5))
def test_a_known_step_in_noise_and_outliers_is_found_where_it_is(seed):
    rng = random.Random(seed)
    series = synthetic(rng, [(40, 1000.0), (40, 900.0)], noise=0.01, outliers=2)
    found = find_change_points(series, DetectionSettings())
    steps = [c for c in found if abs(c.percent) > 5]
    assert [c.index for c in steps] == [40], [(c.index, round(c.percent, 1)) for c in found]
    assert steps[0].verdict == "slower" and -11 < steps[0].percent < -9
    assert steps[0].low is not None and steps[0].low < steps[0].ratio < steps[0].high


@pytest.mark.parametrize("seed", range(5))
def test_a_flat_noisy_series_has_no_change_point(seed):
    series = synthetic(random.Random(100 + seed), [(80, 1000.0)], noise=0.01, outliers=0)
    assert find_change_points(series, DetectionSettings()) == []


def test_a_series_too_short_to_split_has_none():
    series = synthetic(random.Random(1), [(2, 1000.0), (1, 500.0)], noise=0.0, outliers=0)
    assert find_change_points(series) == []


def test_an_empty_store_is_a_clear_error(tmp_path):
    result = run_cli("--db", f"sqlite:///{tmp_path / 'empty.db'}", "regressions")
    assert result.returncode == 2 and result.stderr.startswith("error: ") and "holds no measurements" in result.stderr


def test_the_history_page_marks_the_change_points_in_chromium(tmp_path):
    from browser import open_page
    from test_report import page_data

    db = f"sqlite:///{tmp_path / 'history.db'}"
    stored_history(db)
    case = "tls/handshake/tls1.3/x25519/ecdsa-p256/new"
    drawn = run_cli("--db", db, "report", "--history", case, "--out", tmp_path / "out")
    assert drawn.returncode == 0, drawn.stderr
    [chart] = page_data(tmp_path / "out" / "history.html")["charts"]
    marks = {(m["from"], m["version_label"]): round(m["percent"], 1) for m in chart["change_points"]}
    assert set(marks) == {("openssl 3.0.1", "openssl 3.0.2"), ("openssl 3.0.2", "openssl 3.0.3"),
                          ("openssl 3.0.3", "openssl 3.0.4")}
    opened = open_page((tmp_path / "out" / "history.html").as_uri() + "#metric=instructions", tmp_path / "profile")
    assert opened.console_errors() == [] and opened.page_requests() == []
    for percent in marks.values():                    # each change point is labelled on the drawn chart
        assert f">{percent:+.1f}%<" in opened.dom, percent
