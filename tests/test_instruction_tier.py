"""The instruction tier on the real harness and the system OpenSSL: inputs
drawn from one fixed random stream, so counts repeat exactly, one process per
library is enough, and `compare` decides without a test; its Markdown gate
for pull requests."""

import json
import re

import pytest
from conftest import private_cache, run_cli

from sslperf.libs.system import find_system
from sslperf.measure.harness_client import Worker

CASES = ["--case", "sig/ed25519/verify", "--case", "cipher/aes-128-gcm/encrypt/1024"]
# One worker takes the module, so its counted runs are made once.
pytestmark = pytest.mark.xdist_group("instruction-tier")


def counted(env: dict, *extra: str) -> dict:
    result = run_cli("speed", "--metric", "instructions", *CASES, "--json", *extra, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three counted runs of the system library in one store: in three
    processes, in the default (one per deterministic library), and with
    AES-NI hidden."""
    root = tmp_path_factory.mktemp("instruction-tier")
    env = {"SSLPERF_CACHE_DIR": str(private_cache(root / "cache")), "SSLPERF_DATA_DIR": str(root / "data")}
    return {"env": env, "three": counted(env, "--processes", "3"), "once": counted(env),
            "no_aesni": counted(env, "--cpu-mask", "no-aesni")}


def per_op(run: dict) -> dict[str, list[float]]:
    return {m["case"]: [n / ops for n, ops in zip(m["extra"]["instructions"], m["ops"])]
            for m in run["measurements"]}


def test_the_harness_says_when_its_inputs_are_deterministic(sslperf_dirs):
    with Worker(find_system()) as worker:
        assert worker.request("info", timeout=60).data["deterministic_rand"] == "off"
    with Worker(find_system(), {"SSLPERF_DETERMINISTIC": "1"}) as worker:
        assert worker.request("info", timeout=60).data["deterministic_rand"] == "on"


def test_ed25519_verify_repeats_exactly_in_every_process_and_run(runs):
    """Ed25519 verify of a random key was 0.7-0.9% apart between processes:
    with the fixed stream, three processes and two runs count the same."""
    for m in runs["three"]["measurements"]:
        assert m["status"] == "ok" and m["extra"]["deterministic_inputs"] is True, m
    three, once = per_op(runs["three"]), per_op(runs["once"])
    for case, counts in three.items():
        assert len(counts) == 3 and len(set(counts)) == 1, (case, counts)      # every process the same
        assert once[case] == counts[:1], (case, once[case], counts)             # default: counted once


def test_the_gate_fails_on_a_real_slow_down_and_passes_an_a_a_comparison(runs):
    ids = {name: runs[name]["id"] for name in ("three", "once", "no_aesni")}
    same = run_cli("compare", ids["three"], ids["once"], "--metric", "instructions", "--format", "github",
                   "--fail-above", "1", env=runs["env"])
    assert same.returncode == 0, same.stdout + same.stderr
    assert same.stdout.startswith("**sslperf: PASS**") and "<details>" in same.stdout
    assert same.stdout.count("~ +0.0% [+0.0, +0.0] (exact)") == 2            # identical counts, no test
    gate = run_cli("compare", ids["once"], ids["no_aesni"], "--metric", "instructions", "--format", "markdown",
                   "--fail-above", "5", env=runs["env"])
    assert gate.returncode == 4, gate.stdout + gate.stderr
    lines = gate.stdout.splitlines()
    assert re.match(r"\*\*sslperf: FAIL\*\* — 1 of 2 cases slower than the baseline by more than 5%", lines[0])
    worst = next(line for line in lines if "aes-128-gcm" in line)               # the first table row: worst first
    assert "(over the gate)" in worst and worst.rstrip().endswith("| exact |")
    assert "Method: deterministic instruction counts" in gate.stdout
    assert "regression:" in gate.stderr and "regression:" not in gate.stdout   # stdout is the comment alone
