"""`sslperf import` through the real command: real `openssl speed` output of
the system library lands in the store, and compares with a measured run."""

import json
import shutil
import subprocess

import pytest

from conftest import run_cli


@pytest.mark.skipif(not shutil.which("openssl"), reason="no openssl command")
def test_import_openssl_speed_then_compare(sslperf_dirs, tmp_path):
    output = tmp_path / "speed.txt"
    # As a terminal shows it: progress lines (stderr) and the table (stdout) in the order printed.
    done = subprocess.run(["openssl", "speed", "-seconds", "1", "ecdhx25519"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120)
    output.write_text(done.stdout)
    imported = run_cli("import", output, "--lib-name", "distro-openssl")
    assert imported.returncode == 0, imported.stderr
    assert "imported" in imported.stdout and "distro-openssl" in imported.stdout
    [row] = json.loads(run_cli("runs", "list", "--json").stdout)
    assert row["source"] == "openssl speed" and row["libs"] == ["distro-openssl"]

    measured = run_cli("speed", "--case", "kex/x25519/derive", "--time", "3", "--samples", "5")
    assert measured.returncode == 0, measured.stderr
    compared = run_cli("compare", "system", "distro-openssl", "--format", "json")
    assert compared.returncode == 0, compared.stderr
    [case] = json.loads(compared.stdout)["rows"]
    assert case["case"] == "kex/x25519/derive"
    change = case["changes"][1]
    assert change["verdict"] == "?"                 # one reported figure: no test, no verdict
    assert 0.3 < change["ratio"] < 3                # the same library measured two ways


def test_a_damaged_file_imports_nothing(sslperf_dirs, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("this is not speed output\n")
    result = run_cli("import", bad)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "bad.txt" in result.stderr
    assert json.loads(run_cli("runs", "list", "--json").stdout) == []
