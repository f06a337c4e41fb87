"""`sslperf import` through the real command: real `openssl speed` output of
the system library lands in the store, and compares with a measured run."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

DATA = Path(__file__).parent / "data" / "speed"


@pytest.mark.timing        # two measurements of one library, made apart, must agree within 3×
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


def _import_stdin(data: bytes, *args):
    """`sslperf import -` with `data` on standard input, as a shell pipe gives it."""
    env = {**os.environ, "LC_ALL": "C.UTF-8"}          # stdin then decodes with surrogateescape
    return subprocess.run([sys.executable, "-m", "sslperf", "import", "-", *args], input=data,
                          capture_output=True, timeout=300, env=env)


def test_standard_input_that_is_not_utf8_is_stored_and_exported(sslperf_dirs):
    data = (DATA / "openssl-3.0.8-text.txt").read_bytes().replace(b"built on:", b"built on: \xff\xfe", 1)
    imported = _import_stdin(data)
    assert imported.returncode == 0, imported.stderr.decode(errors="replace")
    for fmt in ("csv", "json"):
        exported = run_cli("runs", "export", "latest", "--format", fmt)
        assert exported.returncode == 0 and "Traceback" not in exported.stderr, exported.stderr
        assert "Infinity" not in exported.stdout and "NaN" not in exported.stdout
    run = json.loads(run_cli("runs", "export", "latest", "--format", "json").stdout)
    assert "\ufffd" in run["environment"]["built_on"]
    assert any("not UTF-8" in w for w in run["warnings"])


@pytest.mark.parametrize("find,replace", [
    (b"type             16 bytes", b"type              0 bytes"),       # block size 0: CSV export divided by it
    (b"4011.0  61918.0", b"9" * 200 + b".0  61918.0"),                 # ops ** 2 overflowed
    (b"16 bytes", b"9" * 5000 + b" bytes"),                             # int() of 5000 digits
])
def test_absurd_figures_are_one_paragraph_errors(sslperf_dirs, find, replace):
    data = (DATA / "openssl-3.0.8-text.txt").read_bytes()
    assert find in data
    refused = _import_stdin(data.replace(find, replace, 1))
    stderr = refused.stderr.decode(errors="replace")
    assert refused.returncode == 2 and "Traceback" not in stderr, stderr
    assert "standard input, line" in stderr and "Nothing was imported" in stderr
    assert json.loads(run_cli("runs", "list", "--json").stdout) == []


def test_importing_on_a_cold_cache_compiles_nothing(cold_dirs):
    # The importers need no harness: nothing of it is compiled, the catalog is not read.
    cache, _ = cold_dirs
    for name in ("openssl-3.6.3-text-kem-sig.txt", "bssl-aws-lc-2283-aead.txt", "openssl-1.1.1w-mr.txt"):
        done = run_cli("import", DATA / name, "--show")
        assert done.returncode == 0, done.stderr
    assert not (cache / "harness").exists(), sorted(p.name for p in (cache / "harness").iterdir())
