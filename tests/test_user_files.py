"""Nothing overwritten (issue 21): sslperf replaces a file only when it wrote
it itself, or when told --force; it never writes through a symbolic link,
refuses an empty path, and reads at most a cap of whatever path it is given
(/dev/zero, an endless standard input). Every writing verb is tried on a
decoy through the real command."""

import contextlib
import io
import os
import re
import subprocess
import sys
import time

import pytest
from conftest import DATA, run_cli

from sslperf import userfiles

DECOY = "my own notes, not sslperf's\n"
SPEED_OUTPUT = DATA / "speed" / "openssl-3.0.8-text.txt"
RECORDING = DATA / "offload" / "afalg-seed004-run.json"


def here(*args) -> str:
    """`sslperf ARGS` run inside this process (no new interpreter), for what only lays out or reads the test's store
    around the command under test (which runs as its own process): its standard output."""
    from sslperf.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        main([str(a) for a in args])
    assert done.value.code in (0, None), out.getvalue()
    return out.getvalue()


def imported() -> str:
    return re.search(r"as run (\S+)", here("import", SPEED_OUTPUT)).group(1)


def refused_one_paragraph(result, *needles):
    text = result.stdout + result.stderr
    assert "Traceback" not in text, text
    assert result.returncode == 2, (result.returncode, text)
    assert result.stderr.startswith("error: ") and result.stderr.strip().count("\n") == 0, result.stderr
    for needle in needles:
        assert needle in result.stderr, (needle, result.stderr)


# ---- the rule, on the module ---------------------------------------------------------------

def test_a_file_sslperf_wrote_is_replaced_a_changed_or_foreign_one_is_not(sslperf_dirs, tmp_path):
    ours, theirs = tmp_path / "ours.json", tmp_path / "theirs.json"
    theirs.write_text(DECOY)
    userfiles.write(ours, "{}\n")
    userfiles.write(ours, "{\"again\": 1}\n")                 # its own output: replaced without --force
    assert ours.read_text() == "{\"again\": 1}\n"
    with pytest.raises(userfiles.Refused, match="did not write it"):
        userfiles.write(theirs, "{}\n")
    assert theirs.read_text() == DECOY
    ours.write_text(ours.read_text() + "edited by the user\n")
    with pytest.raises(userfiles.Refused, match="changed since"):
        userfiles.write(ours, "{}\n")
    userfiles.write(theirs, "{}\n", force=True)
    assert theirs.read_text() == "{}\n"


def test_a_symbolic_link_is_not_written_through_but_a_stream_is_written_to(sslperf_dirs, tmp_path):
    target = tmp_path / "target.txt"
    target.write_text(DECOY)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    for force in (False, True):
        with pytest.raises(userfiles.Refused, match="symbolic link"):
            userfiles.write(link, "{}\n", force=force)
    assert target.read_text() == DECOY and link.is_symlink()
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "nowhere" / "x")
    with pytest.raises(userfiles.Refused, match="symbolic link"):
        userfiles.write(dangling, "{}\n")
    userfiles.write(os.devnull, "{}\n")                         # a device: written to, never replaced
    assert os.path.exists(os.devnull) and not os.path.isfile(os.devnull)


def test_a_batch_writes_nothing_when_one_of_its_files_is_refused(sslperf_dirs, tmp_path):
    (tmp_path / "b.png").write_text(DECOY)
    batch = userfiles.Batch(tmp_path)
    batch.add("a.html", "<html></html>")
    batch.add("b.png", b"\x89PNG")
    with pytest.raises(userfiles.Refused, match="b.png"):
        batch.commit()
    assert not (tmp_path / "a.html").exists() and (tmp_path / "b.png").read_text() == DECOY


def test_the_ledger_keeps_the_newest_entries_only(sslperf_dirs, tmp_path, monkeypatch):
    monkeypatch.setattr(userfiles, "LEDGER_ENTRIES", 3)
    for i in range(5):
        userfiles.write(tmp_path / f"{i}.json", "{}\n")
    assert [userfiles.wrote(tmp_path / f"{i}.json") for i in range(5)] == [False, False, True, True, True]


def test_reading_stops_at_the_cap_whatever_the_path_is(tmp_path):
    with pytest.raises(userfiles.SslperfError, match="more than 1,000 bytes"):
        userfiles.read("/dev/zero", 1000, "speed output")
    small = tmp_path / "small.txt"
    small.write_bytes(b"x" * 1000)
    assert userfiles.read(small, 1000, "speed output") == b"x" * 1000


# ---- every writing verb, through the real command ----------------------------------------------

def _decoy_file(tmp_path):
    path = tmp_path / "decoy.txt"
    path.write_text(DECOY)
    return path, path


def _decoy_report_page(tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    (out / "report.html").write_text(DECOY)
    return out, out / "report.html"


def _decoy_profile(tmp_path):
    out = tmp_path / "profile"
    out.mkdir()
    (out / "profile.json").write_text(DECOY)
    return out, out / "profile.json"


WRITERS = [  # (verb, arguments with {out}, how to lay the decoy)
    ("speed --out", ["speed", "--case", "kex/x25519/derive", "--out", "{out}"], _decoy_file),
    ("runs export --out", ["runs", "export", "latest", "--out", "{out}"], _decoy_file),
    ("recommend --out", ["recommend", "--format", "nginx", "--out", "{out}"], _decoy_file),
    ("offload bench --config-out", ["offload", "bench", "--from", RECORDING, "--config-out", "{out}"], _decoy_file),
    ("report --out", ["report", "latest", "--out", "{out}"], _decoy_report_page),
    ("profile --out", ["profile", "kex/x25519/derive", "--lib", "system", "--tool", "callgrind", "--iterations",
                       "10", "--out", "{out}"], _decoy_profile),
]


@pytest.mark.parametrize("verb, args, lay", WRITERS, ids=[w[0] for w in WRITERS])
def test_a_decoy_survives_every_writing_verb(sslperf_dirs, tmp_path, verb, args, lay):
    imported()                                      # runs export and report have a run to write
    out, decoy = lay(tmp_path)
    runs_before = here("runs", "list", "--json")
    result = run_cli(*[str(out) if a == "{out}" else a for a in args])
    refused_one_paragraph(result, "sslperf did not write", "--force")
    assert decoy.read_text() == DECOY
    assert here("runs", "list", "--json") == runs_before                # refused before anything was measured


@pytest.mark.parametrize("kind", ["file", "report page"])
def test_a_symlink_target_survives(sslperf_dirs, tmp_path, kind):
    imported()
    target = tmp_path / "precious.txt"
    target.write_text(DECOY)
    if kind == "file":
        link = tmp_path / "run.json"
        link.symlink_to(target)
        result = run_cli("runs", "export", "latest", "--out", link, "--force")
    else:
        (tmp_path / "report").mkdir()
        (tmp_path / "report" / "report.html").symlink_to(target)
        result = run_cli("report", "latest", "--out", tmp_path / "report", "--force")
    refused_one_paragraph(result, "symbolic link")
    assert target.read_text() == DECOY


def test_own_outputs_are_replaced_and_force_replaces_a_decoy(sslperf_dirs, tmp_path):
    imported()
    out = tmp_path / "run.json"
    for _ in range(2):                                  # the second time, the file is sslperf's own
        assert run_cli("runs", "export", "latest", "--out", out).returncode == 0
    report = tmp_path / "report"
    for _ in range(2):
        result = run_cli("report", "latest", "--out", report, "--format", "html")
        assert result.returncode == 0, result.stderr
    out.write_text(DECOY)
    refused_one_paragraph(run_cli("runs", "export", "latest", "--out", out), "did not write")
    assert run_cli("runs", "export", "latest", "--out", out, "--force").returncode == 0
    assert out.read_text().startswith("{")


def test_a_report_leaves_a_page_it_did_not_write_alone_and_unlinked(sslperf_dirs, tmp_path):
    imported()
    out = tmp_path / "report"
    out.mkdir()
    (out / "history.html").write_text(DECOY)
    result = run_cli("report", "latest", "--out", out, "--format", "html")
    assert result.returncode == 0, result.stderr
    assert (out / "history.html").read_text() == DECOY
    assert "history.html" not in (out / "report.html").read_text()


def test_an_empty_output_path_is_refused(sslperf_dirs, tmp_path):
    imported()
    for args in (["report", "latest", "--out", ""], ["runs", "export", "latest", "--out", ""]):
        result = run_cli(*args, env={"HOME": str(tmp_path)})
        assert result.returncode == 2 and "empty path" in result.stderr, result.stderr
    assert not (tmp_path / "report.html").exists()


# ---- reading: bounded, from files, devices and standard input alike -------------------------------

def test_import_of_dev_zero_is_refused_at_the_cap(sslperf_dirs):
    refused_one_paragraph(run_cli("import", "/dev/zero", timeout=120), "more than", "bytes")


def test_import_of_an_endless_standard_input_is_refused_at_the_cap(sslperf_dirs):
    endless = subprocess.Popen(["yes", "Did 1 AES-128-GCM (16 bytes) seal operations in 1us (1000000.0 ops/sec)"],
                               stdout=subprocess.PIPE)
    try:
        result = subprocess.run([sys.executable, "-m", "sslperf", "import", "-"], stdin=endless.stdout,
                                capture_output=True, text=True, timeout=120)
    finally:
        endless.kill()
        endless.wait()
    refused_one_paragraph(result, "standard input holds more than")


@pytest.mark.parametrize("unit", [" ", "\t", "\u00a0"], ids=["spaces", "tabs", "no-break spaces"])
def test_a_long_whitespace_run_in_a_description_is_read_in_linear_time(unit):
    from sslperf import importers

    # Many lines of the longest length read, each with a run inside its description: quadratic patterns
    # took tens of seconds for 80 KB of this; linear ones take milliseconds.
    line = "Did 100 AES-128-GCM" + unit * 3900 + "(16 bytes) seal operations in 1000us (100000.0 ops/sec)"
    text = "\n".join([line] * 26)                        # about 100 KB
    began = time.process_time()
    run = importers.parse(text, "bssl-text")
    took = time.process_time() - began
    assert run.measurements[0].size == 16
    assert took < 0.5, f"{took:.2f} s of CPU for {len(text):,} characters"


@pytest.mark.parametrize("unit", [" ", "\t", "\u00a0"], ids=["spaces", "tabs", "no-break spaces"])
def test_a_long_whitespace_run_in_a_wolfcrypt_row_is_read_in_linear_time(unit):
    from sslperf import importers

    # wolfCrypt pads its columns with spaces; an asymmetric row is first tried as a symmetric one, whose
    # pattern, tried at every position of a 3,900-character run, took 0.2 s a line (5 s for these 100 KB)
    header = "wolfCrypt Benchmark (block bytes 1048576, min 1.0 sec each)"
    line = ("RSA" + unit * 3900 + "2048   public     88000 ops took 1.000 sec, avg 0.011 ms, 87992.448 ops/sec, "
            "2596347650 cycles    29504.0 Cycles/op")
    text = "\n".join([header] + [line] * 26)
    began = time.process_time()
    run = importers.parse(text, "wolfcrypt-text")
    took = time.process_time() - began
    assert run.measurements[0].case == "pke/rsa-2048/encrypt" and len(run.measurements[0].reported_rates) == 26
    assert took < 0.5, f"{took:.2f} s of CPU for {len(text):,} characters"
