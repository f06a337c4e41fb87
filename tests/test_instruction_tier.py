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
from sslperf.results import Run

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
    return {m["case"]: [n / ops for n, ops in zip(m["figures"]["instructions"], m["ops"])]
            for m in run["measurements"]}


def hardware_counters() -> str:
    with Worker(find_system()) as worker:
        return worker.request("info", timeout=60).data["hw_counters"]


def test_auto_counts_with_the_cpus_counter_where_there_is_one_and_callgrind_where_not(runs):
    """This VM has no PMU: the harness says why, and the counts come from callgrind."""
    state = hardware_counters()
    counters = {m["counter"] for m in runs["once"]["measurements"]}
    if state.startswith("none: "):
        assert "perf_event_open(instructions) failed" in state
        assert counters == {"callgrind"} and runs["once"]["environment"]["instruction_counters"] == {"system": "callgrind"}
    else:
        assert state == "instructions,cycles" and counters == {"perf"}


def test_the_cpus_own_counter_counts_the_loop(sslperf_dirs):
    state = hardware_counters()
    if state.startswith("none: "):
        pytest.skip(f"no hardware instruction counter here: {state.removeprefix('none: ')}")
    result = run_cli("speed", "--metric", "instructions", "--case", "cipher/aes-128-gcm/encrypt/16", "--case",
                     "cipher/aes-128-gcm/encrypt/16384", "--json", "--no-store",
                     env={"SSLPERF_INSTRUCTION_COUNTER": "perf"})
    assert result.returncode == 0, result.stderr
    per_op = {m["size"]: [n / ops for n, ops in zip(m["figures"]["instructions"], m["ops"])]
              for m in json.loads(result.stdout)["measurements"]}
    assert all(m > 100 for m in per_op[16]) and min(per_op[16384]) > 5 * max(per_op[16])
    assert all(m["counter"] == "perf" and m["figures"]["cycles"]
               for m in json.loads(result.stdout)["measurements"])
    # cycles per byte beside bytes/s, as wolfCrypt and the openssl speed of old printed them: fewer per byte on
    # 16 KiB than on 16 bytes (the per-call cost spread over more bytes)
    per_byte = {m.size: m.cycles_per_byte() for m in Run.from_dict(json.loads(result.stdout)).measurements}
    assert 0 < per_byte[16384] < per_byte[16] < 1000, per_byte


def test_asking_for_the_cpus_counter_where_there_is_none_is_one_paragraph(sslperf_dirs):
    state = hardware_counters()
    if not state.startswith("none: "):
        pytest.skip("this machine has a hardware instruction counter")
    result = run_cli("speed", "--metric", "instructions", "--case", "digest/sha256/64", "--no-store",
                     env={"SSLPERF_INSTRUCTION_COUNTER": "perf"})
    assert result.returncode == 2 and result.stderr.startswith("error: "), result.stderr
    assert "cannot open it here" in result.stderr and "callgrind" in result.stderr and "Traceback" not in result.stderr


def test_counts_of_two_different_counters_are_never_paired():
    from sslperf.compare import change
    from sslperf.results import Measurement

    def counted(counter: str, count: int) -> Measurement:
        return Measurement("digest/sha256/64", "digest", "digest", "sha256", "", 64, "record", counter, "ok", None,
                           "ops", 0, [1000] * 3, [10**6] * 3, [10**6] * 3,
                           figures={"instructions": [count] * 3, "process": [0, 1, 2]}, counter=counter,
                           deterministic=counter == "callgrind")

    found = change(counted("callgrind", 5_000_000), counted("perf", 4_000_000), "instructions", 0.01, 0.05)
    assert found.verdict == "?" and found.method == "different counters"
    same = change(counted("callgrind", 5_000_000), counted("callgrind", 4_000_000), "instructions", 0.01, 0.05)
    assert same.verdict == "faster" and same.method == "exact"


def test_the_harness_says_when_its_inputs_are_deterministic(sslperf_dirs):
    with Worker(find_system()) as worker:
        assert worker.request("info", timeout=60).data["deterministic_rand"] == "off"
    with Worker(find_system(), {"SSLPERF_DETERMINISTIC": "1"}) as worker:
        assert worker.request("info", timeout=60).data["deterministic_rand"] == "on"


def test_ed25519_verify_repeats_exactly_in_every_process_and_run(runs):
    """Ed25519 verify of a random key was 0.7-0.9% apart between processes:
    with the fixed stream, three processes and two runs count the same."""
    for m in runs["three"]["measurements"]:
        assert m["status"] == "ok" and m["deterministic"] is True, m
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


def test_a_count_covers_enough_operations_that_its_first_ones_cannot_decide_the_sign():
    from sslperf.measure import instructions

    assert [instructions.batch(n) for n in (1, 2, 15, 16, 100, 1000)] == [16, 16, 16, 16, 64, 512]
