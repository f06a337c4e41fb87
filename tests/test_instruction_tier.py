"""The instruction tier on the real harness and the system OpenSSL: inputs
drawn from one fixed random stream, so counts repeat exactly, one process per
library is enough, and `compare` decides without a test; its Markdown gate
for pull requests."""

import json
import re

from conftest import run_cli

from sslperf.libs.system import find_system
from sslperf.measure.harness_client import Worker

CASES = ["--case", "sig/ed25519/verify", "--case", "cipher/aes-128-gcm/encrypt/1024", "--case", "digest/sha256/64"]


def counted(*extra: str) -> dict:
    result = run_cli("speed", "--metric", "instructions", *CASES, "--json", *extra)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def per_op(run: dict) -> dict[str, list[float]]:
    return {m["case"]: [n / ops for n, ops in zip(m["extra"]["instructions"], m["ops"])]
            for m in run["measurements"]}


def test_the_harness_says_when_its_inputs_are_deterministic(sslperf_dirs):
    with Worker(find_system()) as worker:
        assert worker.request("info", timeout=60).data["deterministic_rand"] == "off"
    with Worker(find_system(), {"SSLPERF_DETERMINISTIC": "1"}) as worker:
        assert worker.request("info", timeout=60).data["deterministic_rand"] == "on"


def test_ed25519_verify_repeats_exactly_in_every_process_and_run(sslperf_dirs):
    """Ed25519 verify of a random key was 0.7-0.9% apart between processes:
    with the fixed stream, three processes and two runs count the same."""
    first, second = counted("--processes", "3"), counted()
    for m in first["measurements"]:
        assert m["status"] == "ok" and m["extra"]["deterministic_inputs"] is True, m
    three, once = per_op(first), per_op(second)
    for case, counts in three.items():
        assert len(counts) == 3 and len(set(counts)) == 1, (case, counts)      # every process the same
        assert once[case] == counts[:1], (case, once[case], counts)             # default: counted once


def test_the_gate_fails_on_a_real_slow_down_and_passes_an_a_a_comparison(sslperf_dirs):
    base, again, no_aesni = counted(), counted(), counted("--cpu-mask", "no-aesni")
    same = run_cli("compare", base["id"], again["id"], "--metric", "instructions", "--format", "github",
                   "--fail-above", "1")
    assert same.returncode == 0, same.stdout + same.stderr
    assert same.stdout.startswith("**sslperf: PASS**") and "<details>" in same.stdout
    assert same.stdout.count("~ +0.0% [+0.0, +0.0] (exact)") == 3            # identical counts, no test
    gate = run_cli("compare", base["id"], no_aesni["id"], "--metric", "instructions", "--format", "markdown",
                   "--fail-above", "5")
    assert gate.returncode == 4, gate.stdout + gate.stderr
    lines = gate.stdout.splitlines()
    assert re.match(r"\*\*sslperf: FAIL\*\* — 1 of 3 cases slower than the baseline by more than 5%", lines[0])
    worst = next(line for line in lines if line.startswith("| aes-128-gcm") or "aes-128-gcm" in line)
    assert "(over the gate)" in worst and worst.rstrip().endswith("| exact |")
    assert "Method: deterministic instruction counts" in gate.stdout
    assert "regression:" in gate.stderr and "regression:" not in gate.stdout   # stdout is the comment alone
