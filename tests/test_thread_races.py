"""The thread runner (`harness threads`, harness/core/threads.c) with every thread preparing its own case: no thread
sees another's half-done set-up (rustls and wolfSSL once read the roots file while another thread was still writing
it, sp_roots_file), and what goes wrong inside a thread is an error with its reason, never an n/a: an n/a comes only
from the check made before any thread starts."""

import json

import pytest
from conftest import run_cli

from sslperf.libs import installed
from sslperf.measure import certificates
from sslperf.measure.harness_client import call

HANDSHAKE = "tls/handshake/tls1.3/x25519/ecdsa-p256/shared"
THREADS = 32
RUNS = 20                 # per library; each process makes its roots file afresh, the race's window
RUN_MS = 50               # how long the threads run once all are ready (the race is in their preparing, before)
FORCE_NA = "SSLPERF_THREADS_TEST_NA_IN_THREAD"


@pytest.fixture(scope="module")
def rustls_and_wolfssl(built_rustls, built_wolfssl, e2e_env):
    with pytest.MonkeyPatch.context() as patch:
        for key, value in e2e_env.items():
            patch.setenv(key, value)
        yield [installed.find(built_rustls), installed.find(built_wolfssl)]


def threads(lib, cert_dir, case, mode="own", extra_env=None):
    env = {**certificates.env(cert_dir), **(extra_env or {})}
    return call(lib, "threads", case, str(THREADS), str(RUN_MS), mode, timeout=300, env=env, ok_codes=None)


@pytest.mark.slow
def test_32_threads_each_preparing_its_own_handshakes_all_succeed_in_every_run(rustls_and_wolfssl):
    failed = []
    with certificates.made_by(installed.find("system"), *rustls_and_wolfssl) as cert_dir:
        for lib in rustls_and_wolfssl:
            for _ in range(RUNS):
                done = threads(lib, cert_dir, HANDSHAKE)
                reply = done.last
                # a threads reply only when every thread prepared, calibrated and ran without a failure (how many
                # handshakes each did in RUN_MS on a loaded machine is the scheduler's affair, not asserted)
                if done.returncode != 0 or reply.get("type") != "threads" or len(reply["ops"]) != THREADS:
                    failed.append((lib.name, reply))
    assert failed == [], f"{len(failed)} of {2 * RUNS} runs failed: {failed[:4]}"


@pytest.mark.slow
def test_threads_on_rustls_and_wolfssl_are_na_only_before_they_start_and_errors_after(rustls_and_wolfssl):
    rustls, wolfssl = rustls_and_wolfssl
    with certificates.made_by(installed.find("system"), rustls, wolfssl) as cert_dir:
        # a group rustls-ffi cannot be told to use: n/a from the check before the threads, with its reason
        na = threads(rustls, cert_dir, "tls/handshake/tls1.3/p-256/ecdsa-p256/shared").last
        assert na["type"] == "na" and "cannot be told which key-exchange group" in na["reason"], na
        for lib in rustls_and_wolfssl:
            reply = threads(lib, cert_dir, HANDSHAKE, extra_env={FORCE_NA: "7"}).last
            assert reply["type"] == "error", reply
            assert reply["reason"].startswith(f"thread 7 of {THREADS} failed (1 in all)"), reply
            assert f"n/a forced in thread 7 by {FORCE_NA}" in reply["reason"], reply


def test_an_na_inside_a_thread_is_a_measured_error_with_its_reason(sslperf_dirs):
    """After the check before the threads prepared the case, a thread's n/a (as a race once gave) is an error."""
    case = "digest/sha256/64"
    result = run_cli("speed", "--lib", "system", "--case", case, "--threads", "1,4", "--thread-seconds", "0.1",
                     "--json", "--no-store", env={FORCE_NA: "3"})
    assert result.returncode == 0, result.stderr
    got = {m["size"]: m for m in json.loads(result.stdout)["measurements"]}
    assert got[1]["status"] == "ok", got[1]                   # one thread: thread 3 does not exist
    assert got[4]["status"] == "error", got[4]
    assert got[4]["reason"] == ("thread 3 of 4 failed (1 in all), though the case prepared before the threads "
                                f"started: (n/a) n/a forced in thread 3 by {FORCE_NA}")
