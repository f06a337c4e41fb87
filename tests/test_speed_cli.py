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
