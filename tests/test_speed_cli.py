"""`sslperf speed` through the real command, on the system OpenSSL."""

import json

from conftest import run_cli


def test_speed_json_on_the_system_lib(sslperf_dirs):
    result = run_cli("speed", "--case", "cipher/chacha20-poly1305/encrypt/1350", "--case", "kex/x25519/derive",
                     "--time", "2", "--samples", "3", "--json")
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    assert run["complete"] and run["libs"][0]["name"] == "system"
    assert {m["case"] for m in run["measurements"]} == {"cipher/chacha20-poly1305/encrypt/1350", "kex/x25519/derive"}
    for m in run["measurements"]:
        assert m["status"] == "ok" and len(m["wall_ns"]) == 3
        assert m["summary"]["wall"]["n"] == 3 and m["summary"]["wall"]["median"] > 0
    assert run["environment"]["cpu_model"] and "loadavg" in run["environment"]


def test_speed_table(sslperf_dirs):
    result = run_cli("speed", "--case", "digest/sha256/1024", "--time", "2", "--samples", "3")
    assert result.returncode == 0, result.stderr
    assert "digests" in result.stdout and "sha256 1024 B" in result.stdout and "B/s ±" in result.stdout


def test_list_shows_the_quick_suite(sslperf_dirs):
    result = run_cli("speed", "--quick", "--list", "--sizes", "4096")
    cases = result.stdout.split()
    assert "cipher/aes-128-gcm/encrypt/4096" in cases and "kem/ml-kem-768/decaps" in cases
    assert 25 < len(cases) < 60


def test_bad_input_is_one_paragraph(sslperf_dirs):
    for args, needle in [(["--sizes", "16,abc"], "`abc` in --sizes"),
                         (["--case", "cipher/aes-128-gcm/encrypt/-1"], "is not a case sslperf knows"),
                         (["--lib", "openssl-9.9"], "No built or registered library"),
                         (["--filter", "nothing-matches-this"], "No case matches")]:
        result = run_cli("speed", *args)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert result.stderr.startswith("error: ") and needle in result.stderr, result.stderr


def test_ctrl_c_keeps_what_was_measured(sslperf_dirs):
    """An interrupted run keeps every finished case in the store, marked incomplete."""
    import os
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "sslperf", "speed", "--quick"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:          # wait until some cases are in the store
        rows = json.loads(run_cli("runs", "list", "--json").stdout or "[]")
        if rows and rows[0]["measurements"] >= 3:
            break
        time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err
    [row] = json.loads(run_cli("runs", "list", "--json").stdout)
    # Every case has a first figure after the first pass; later passes add processes to each.
    cases = len(run_cli("speed", "--quick", "--list").stdout.split())
    assert row["complete"] is False and row["state"] == "interrupted" and 3 <= row["measurements"] <= cases
