"""Input refused before anything runs (exit 2, one paragraph, no run stored):
a case whose size is beyond the 64 MiB every size option is bounded by
(`--sizes` has the same bound, case_ids.MAX_SIZE), and `--quick` with `--full`
(the shared depth option of speed and tls), which click would otherwise
settle by keeping the last one."""

import json

import pytest
from conftest import run_cli

from sslperf.errors import SslperfError
from sslperf.cases import ids as case_ids
from sslperf.measure import suites


def stored_runs() -> list:
    return json.loads(run_cli("runs", "list", "--json").stdout)


@pytest.mark.parametrize("case", ["cipher/aes-128-gcm/encrypt/99999999999999/record",
                                  "cipher/aes-128-gcm/encrypt/67108865", "digest/sha256/" + "9" * 5000,
                                  "tls/transfer/tls1.3/aes-128-gcm/99999999999"],
                         ids=["issue-36", "one-past", "5000-digits", "tls-transfer"])
def test_a_case_size_beyond_64_mib_is_refused_when_the_case_is_read(sslperf_dirs, case):
    verb = "tls" if case.startswith("tls/") else "speed"
    result = run_cli(verb, "--case", case, "--time", "5", "--samples", "3")
    assert result.returncode == 2 and result.stderr.startswith("error: "), result.stderr
    assert "a case's size is 1 to 67108864 bytes" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert stored_runs() == []


def test_the_size_bound_is_one_constant_for_case_ids_and_sizes():
    assert case_ids.MAX_SIZE == 64 * 1024 * 1024
    assert suites.parse_case(f"cipher/aes-128-gcm/encrypt/{case_ids.MAX_SIZE}").size == case_ids.MAX_SIZE
    assert case_ids.parse(f"cipher/aes-128-gcm/encrypt/{case_ids.MAX_SIZE + 1}") is None
    assert suites.parse_sizes(f"16,{case_ids.MAX_SIZE}") == (16, case_ids.MAX_SIZE)
    with pytest.raises(SslperfError, match=f"between 1 and {case_ids.MAX_SIZE}"):
        suites.parse_sizes(str(case_ids.MAX_SIZE + 1))


@pytest.mark.parametrize("verb", ["speed", "tls"])
def test_quick_and_full_together_are_refused(sslperf_dirs, verb):
    for pair in (["--quick", "--full"], ["--full", "--quick"]):
        result = run_cli(verb, *pair, "--list")
        assert result.returncode == 2 and "--quick and --full choose the suite's depth" in result.stderr, result.stderr
        assert result.stdout == "" and "Traceback" not in result.stderr
    listed = {depth: run_cli(verb, *flags, "--list").stdout.split()
              for depth, flags in (("quick", ["--quick"]), ("full", ["--full"]), ("default", []),
                                   ("twice", ["--quick", "--quick"]))}
    assert listed["twice"] == listed["quick"] and len(listed["quick"]) < len(listed["default"]) < len(listed["full"])
