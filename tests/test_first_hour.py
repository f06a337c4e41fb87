"""The first hour of a new user (issue 13): every surprise of the trial, each
through the real `sslperf` command. Bad input is one paragraph with advice,
never a traceback; nothing measured is lost; `latest` is the user's own
complete run; tables are not cut in pipes; ★ only marks a significant
winner; n/a says when an algorithm arrived; Ctrl-C says what it kept."""

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import DATA, TEST_CACHE, run_cli

OPENSSL_308 = DATA / "speed" / "openssl-3.0.8-text.txt"
OPENSSL_111 = DATA / "speed" / "openssl-1.1.1w-text.txt"
QUICK = ("--time", "5", "--samples", "6", "--processes", "3")


def imported(path: Path = OPENSSL_308) -> str:
    """Import `path` as a run (cheap: nothing is measured); its id."""
    result = run_cli("import", path)
    assert result.returncode == 0, result.stderr
    return re.search(r"as run (\S+)", result.stdout).group(1)


def assert_clear_error(result, *needles, code=2):
    text = result.stdout + result.stderr
    assert "Traceback" not in text, text
    assert result.returncode == code, (result.returncode, text)
    assert result.stderr.startswith("error: "), result.stderr
    assert result.stderr.strip().count("\n") == 0, f"not one paragraph: {result.stderr!r}"
    for needle in needles:
        assert needle in result.stderr, (needle, result.stderr)


def stored_runs() -> list[dict]:
    return json.loads(run_cli("runs", "list", "--json").stdout or "[]")


# ---- 1. output paths that cannot be written ----------------------------------------------------

@pytest.mark.parametrize("out", ["/proc/x", "/etc/passwd/x", "/proc/self"],
                         ids=["under-proc", "under-a-file", "existing-unwritable-dir"])
def test_report_out_that_cannot_be_written_is_a_clear_error(sslperf_dirs, out):
    imported()
    assert_clear_error(run_cli("report", "latest", "--out", out), f"--out {out}")


def test_speed_out_that_cannot_be_written_is_refused_before_measuring(sslperf_dirs):
    # /proc/self is a directory this user may "access", yet no file can be made in it.
    result = run_cli("speed", "--case", "kex/x25519/derive", *QUICK, "--out", "/proc/self/run.json")
    assert_clear_error(result, "/proc/self/run.json", "nothing was done")
    assert stored_runs() == []


def test_runs_export_out_that_cannot_be_written_is_a_clear_error(sslperf_dirs):
    imported()
    assert_clear_error(run_cli("runs", "export", "latest", "--out", "/proc/x/run.json"), "/proc/x")


def test_unwritable_cache_dir_names_its_variable(sslperf_dirs):
    result = run_cli("libs", "list", env={"SSLPERF_CACHE_DIR": "/etc/passwd/cache"})
    assert_clear_error(result, "/etc/passwd/cache", "SSLPERF_CACHE_DIR")


# ---- 2. a tarball that is not one ------------------------------------------------------------

def test_tarball_that_is_a_text_file_is_a_usage_error_with_exit_2(sslperf_dirs, tmp_path):
    text = tmp_path / "openssl-3.4.1.tar.gz"
    text.write_text("this is not a tarball\n")
    digest = hashlib.sha256(text.read_bytes()).hexdigest()
    result = run_cli("libs", "build", "--tarball", text, "--sha256", digest)
    assert_clear_error(result, "is not a tarball", "holds text")


# ---- 3. what `latest` means --------------------------------------------------------------------

def _copy_run(run_id: str, new_id: str, minutes_later: int, state: str, source: str) -> None:
    """A copy of a stored run, newer, with another state and source (what an interrupted
    `speed` or `recommend`'s own measuring leaves in the store)."""
    from sslperf.store import Store

    store = Store()
    run = store.load(run_id)
    run.id = new_id
    run.started = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=minutes_later)).isoformat(
        timespec="seconds")
    run.state, run.complete = state, state == "complete"
    store.save(run, source)


def test_latest_is_the_users_newest_complete_run(sslperf_dirs):
    mine = imported()
    _copy_run(mine, "29990101-000000-interrupted", 1, "interrupted", "sslperf speed")
    _copy_run(mine, "29990101-000001-recommend", 2, "complete", "sslperf recommend")
    _copy_run(mine, "29990101-000002-noise", 3, "complete", "sslperf noise")
    shown = run_cli("runs", "show", "latest")
    assert shown.returncode == 0, shown.stderr
    assert f"run {mine}" in shown.stdout, shown.stdout
    exported = run_cli("runs", "export", "latest")
    assert json.loads(exported.stdout)["id"] == mine
    # an explicit id always works
    assert "29990101-000000-interrupted" in run_cli("runs", "show", "29990101-000000-interrupted").stdout


def test_latest_with_no_qualifying_run_says_why(sslperf_dirs):
    mine = imported()
    _copy_run(mine, "29990101-000001-recommend", 2, "complete", "sslperf recommend")
    run_cli("runs", "rm", mine)
    assert_clear_error(run_cli("runs", "show", "latest"), "29990101-000001-recommend", "sslperf recommend")


def test_compare_picks_each_librarys_complete_user_run_and_says_which(sslperf_dirs):
    old, new = imported(OPENSSL_111), imported(OPENSSL_308)
    _copy_run(new, "29990101-000000-interrupted", 1, "interrupted", "sslperf speed")
    _copy_run(new, "29990101-000001-recommend", 2, "complete", "sslperf recommend")
    result = run_cli("compare", "openssl-1.1.1w", "openssl-3.0.8", env={"COLUMNS": "300"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith(f"openssl-1.1.1w: run {old} (openssl speed, ") for line in lines), result.stdout
    assert any(line.startswith(f"openssl-3.0.8: run {new} (openssl speed, ") for line in lines), result.stdout
    assert "29990101" not in result.stdout


# ---- 4. tables in pipes --------------------------------------------------------------------------

def test_runs_list_in_a_pipe_is_not_cut_to_80_columns(sslperf_dirs):
    run_id = imported()
    piped = run_cli("runs", "list", env={"COLUMNS": ""})
    assert piped.returncode == 0, piped.stderr
    assert run_id in piped.stdout and "openssl-3.0.8" in piped.stdout and "openssl speed" in piped.stdout
    assert "…" not in piped.stdout, piped.stdout
    assert max(len(line) for line in piped.stdout.splitlines()) > 80
    narrow = run_cli("runs", "list", env={"COLUMNS": "60"})         # COLUMNS still decides
    table = [line for line in narrow.stdout.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and "openssl speed" not in narrow.stdout, narrow.stdout
    assert max(map(len, table)) < max(len(line) for line in piped.stdout.splitlines() if line[:1] in "┏┃┡│└")


# ---- 5. ★ only for a significant winner -------------------------------------------------------

CASE = "cipher/aes-128-gcm/encrypt/16384"


def _star_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if "aes-128-gcm encrypt 16384 B" in line]


@pytest.mark.timing
def add_twin(tmp_path) -> None:
    """The system OpenSSL registered a second time, as `twin`: two libraries without a build. Its prefix (links
    to the system's headers and libraries) is one fixed directory in the test cache, made once: the harness
    compiled against it (keyed by the prefix and the library files) is then the shared one of earlier tests and
    runs, not compiled anew for each test."""
    twin = TEST_CACHE / "twin-of-system"
    if not twin.exists():
        TEST_CACHE.mkdir(parents=True, exist_ok=True)
        made = Path(tempfile.mkdtemp(prefix="twin-", dir=TEST_CACHE))
        (made / "include").mkdir()
        (made / "lib").mkdir()
        system = next(Path(p) for p in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                                        "/usr/lib") if (Path(p) / "libcrypto.so").exists())
        (made / "include" / "openssl").symlink_to("/usr/include/openssl")
        for name in ("libssl.so", "libcrypto.so"):
            (made / "lib" / name).symlink_to(system / name)
        try:
            made.rename(twin)          # whole or not at all: another worker may have made it meanwhile
        except OSError:
            shutil.rmtree(made)
    added = run_cli("libs", "add", "twin", "--prefix", twin)
    assert added.returncode == 0, added.stderr


def test_star_marks_no_winner_in_a_tie(sslperf_dirs, tmp_path):
    # The system OpenSSL registered a second time: the same code in two columns of one
    # interleaved run, so any gap between them is noise — the old tables starred one anyway.
    add_twin(tmp_path)
    result = run_cli("speed", "--case", CASE, "--lib", "system", "--lib", "twin", *QUICK, "--no-store",
                     env={"COLUMNS": "250"})
    assert result.returncode == 0, result.stderr
    [row] = _star_rows(result.stdout)
    assert "★" not in row, result.stdout
    assert "no ★: a tie" in result.stdout


def test_a_two_library_tls_table_in_a_pipe_fits_120_columns_a_row_a_line(sslperf_dirs, tmp_path):
    add_twin(tmp_path)
    # 3 processes: the fewest that still give the change column verdicts with their CIs (its widest cells)
    result = run_cli("tls", "handshake", "--lib", "system", "--lib", "twin", "--filter", "x25519/ecdsa-p256",
                     "--samples", "3", "--time", "2", "--processes", "3", "--no-store")
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line[:1] in "│┃"]
    assert lines and "change" in lines[0], result.stdout
    assert max(map(len, lines)) <= 120, result.stdout
    rows = [line for line in lines if line.startswith("│")]
    assert len(rows) >= 2 and all(row.split("│")[1].strip() for row in rows), result.stdout    # no wrapped lines


@pytest.mark.timing
def test_star_marks_a_real_winner(sslperf_dirs):
    from rich.console import Console

    from sslperf.report.terminal import tables
    from sslperf.results import merge
    from sslperf.store import Store

    ids = []
    for extra in ((), ("--cpu-mask", "no-aesni")):     # AES-NI against none: several times apart
        result = run_cli("speed", "--case", CASE, *QUICK, *extra, "--json")
        assert result.returncode == 0, result.stderr
        ids.append(json.loads(result.stdout)["id"])
    store = Store()
    run = merge([store.load(run_id) for run_id in ids])
    console = Console(record=True, width=250, file=open(os.devnull, "w"))
    for renderable in tables(run):
        console.print(renderable)
    [row] = _star_rows(console.export_text())
    with_aesni, without = row.split("│")[2:4]
    assert "★" in with_aesni and "★" not in without, row


# ---- 6. n/a because the version predates the algorithm --------------------------------------------

def test_na_for_an_algorithm_newer_than_the_version_says_when_it_arrived(sslperf_dirs):
    result = run_cli("speed", "--case", "kem/ml-kem-768/encaps", "--lib", "system", "--no-store",
                     env={"COLUMNS": "250"})
    assert result.returncode == 0, result.stderr
    version = re.search(r"system: OpenSSL (\d+)\.(\d+)", result.stdout)
    if version and (int(version.group(1)), int(version.group(2))) >= (3, 5):
        pytest.skip("the system OpenSSL has ML-KEM")
    assert "not in this version (ML-KEM arrived in OpenSSL 3.5)" in result.stdout, result.stdout
    assert "cannot make" not in result.stdout


def test_arrival_table_names_the_newest_missing_algorithm():
    from sslperf.libs.arrivals import reason

    assert reason("openssl", "1.1.0l", "tls/handshake/tls1.2/x25519/ed25519/new", "cannot make keys") == \
        "not in this version (Ed25519 arrived in OpenSSL 1.1.1)"
    assert reason("openssl", "1.1.0l", "tls/handshake/tls1.3/x25519mlkem768/ecdsa-p256/new", None) == \
        "not in this version (the X25519MLKEM768 group arrived in OpenSSL 3.5)"
    assert reason("openssl", "1.1.1w", "digest/sha3-256/64", "cannot") == "cannot"
    assert reason("openssl", "3.5.0", "kem/ml-kem-768/encaps", "cannot") == "cannot"
    assert reason("boringssl", "0.1.0", "kem/ml-kem-768/encaps", "cannot") == "cannot"   # not OpenSSL's history
    # a reason that holds on every version is kept
    assert reason("openssl", "3.0.19", "tls/handshake/tls1.2/x25519mlkem768/ecdsa-p256/shared",
                  "X25519MLKEM768 is a TLS 1.3 group") == "X25519MLKEM768 is a TLS 1.3 group"


# ---- 7. Ctrl-C ---------------------------------------------------------------------------------

def test_ctrl_c_names_the_run_and_what_it_kept(sslperf_dirs):
    _, data = sslperf_dirs
    cases = ["kex/x25519/derive", "sig/ecdsa-p256/sign", "digest/sha256/1024", "kex/ecdh-p256/derive"]
    argv = [sys.executable, "-m", "sslperf", "speed", *[a for c in cases for a in ("--case", c)],
            "--time", "200", "--samples", "10"]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True,        # its own process group, as a terminal's Ctrl-C
                             # and Ctrl-C not ignored, as in a terminal (a test worker may ignore SIGINT, and a
                             # child inherits that)
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline, stored = time.monotonic() + 120, 0
        while time.monotonic() < deadline and not stored and child.poll() is None:
            time.sleep(0.2)
            try:
                with sqlite3.connect(f"file:{data / 'sslperf.db'}?mode=ro", uri=True, timeout=5) as db:
                    stored = db.execute("SELECT count(*) FROM measurements").fetchone()[0]
            except sqlite3.Error:
                pass
        assert stored, "no case was stored in time"
        os.killpg(child.pid, signal.SIGINT)
        _, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate(timeout=30)
    assert child.returncode == 130, err
    assert "Traceback" not in err, err
    found = re.search(r"run (\S+) is kept in the store with (\d+) cases? measured", err)
    assert found, err
    run_id, kept = found.group(1), int(found.group(2))
    assert 1 <= kept < len(cases)
    assert f"sslperf runs show {run_id}" in err
    shown = run_cli("runs", "show", run_id, env={"COLUMNS": "250"})
    assert shown.returncode == 0, shown.stderr
    assert "it was interrupted" in shown.stdout
    assert f"warning: this run was interrupted (Ctrl-C) with {kept} of {len(cases)} cases measured" in shown.stdout
    # and it is not `latest`: the store holds no complete run of the user's
    assert_clear_error(run_cli("runs", "show", "latest"), run_id, "interrupted")


# ---- 8. the load of sslperf's own build ----------------------------------------------------------

def _busy_env(started: dt.datetime) -> dict:
    return {"cpus": 2, "loadavg": [1.8, 1.2, 0.6], "governor": None, "time": started.isoformat(timespec="seconds")}


def test_load_right_after_sslperfs_own_build_is_named_as_such():
    from sslperf.measure.environment import noise_warnings

    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)      # as runs record their start
    [warning] = noise_warnings(_busy_env(now), None, {"what": "openssl-3.6.3", "ended": now.timestamp() - 40})
    assert "sslperf's own build of openssl-3.6.3" in warning and "40 s before" in warning, warning
    assert "other work competes" not in warning


def test_load_long_after_a_build_is_still_the_machines():
    from sslperf.measure.environment import noise_warnings

    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)      # as runs record their start
    for build in (None, {"what": "openssl-3.6.3", "ended": now.timestamp() - 3600}):
        [warning] = noise_warnings(_busy_env(now), None, build)
        assert warning.startswith("the machine was busy (load average 1.8 on 2 CPUs)"), warning


def test_a_build_is_recorded_for_other_processes(sslperf_dirs, monkeypatch):
    from sslperf.libs import build

    build.record_build("openssl-1.1.1w", ended=1234.5)
    monkeypatch.setattr(build, "_last_build", None)        # as a later `sslperf speed` process sees it
    assert build.last_build() == {"what": "openssl-1.1.1w", "ended": 1234.5}


# ---- 9. wording --------------------------------------------------------------------------------

def test_bare_sslperf_prints_the_help_and_exits_0(sslperf_dirs):
    result = run_cli()
    assert result.returncode == 0, result.stderr
    assert "Usage: sslperf" in result.stdout and "Commands:" in result.stdout


def test_help_does_not_promise_verbs_to_come_and_says_what_latest_is(sslperf_dirs):
    result = run_cli("--help")
    assert "as the verbs land" not in result.stdout
    assert "newest complete run you made yourself" in " ".join(result.stdout.split())
    for verb in (("runs", "show"), ("compare",)):
        assert "newest complete run you made yourself" in " ".join(run_cli(*verb, "--help").stdout.split())


def test_unknown_library_lists_the_libraries_in_hand_in_plain_words(sslperf_dirs):
    result = run_cli("speed", "--lib", "nosuch-1.0")
    assert_clear_error(result, "nosuch-1.0")
    assert "none yet" not in result.stderr
    assert "the only library in hand is system" in result.stderr or "no library is in hand yet" in result.stderr


def test_summary_line_counts_in_the_singular(sslperf_dirs):
    result = run_cli("speed", "--case", "kex/x25519/derive", "--time", "2", "--samples", "3", "--processes", "1",
                     "--no-store")
    assert result.returncode == 0, result.stderr
    assert "1 case × 1 library in" in result.stdout, result.stdout


def test_imported_tables_say_their_figure_is_a_reported_rate(sslperf_dirs):
    result = run_cli("import", OPENSSL_308, "--show", env={"COLUMNS": "250"})
    assert result.returncode == 0, result.stderr
    titles = [line for line in result.stdout.splitlines() if line.startswith(("AEAD", "MACs", "signatures"))]
    assert titles and all("one figure, no CI" in t and "median ±95% CI" not in t for t in titles), titles
