"""The TLS suite for real: in-memory handshakes between the library's own
client and server, checked for version, group, cipher and resumption."""

import json
import os
import re
import statistics

import pytest
from conftest import run_cli

from sslperf.errors import SslperfError
from sslperf.measure import suites


def tls_run(*extra):
    # one worker process per library (one pass): the samples, not the processes, are what is asserted on
    result = run_cli("tls", "--time", "5", "--samples", "3", "--processes", "1", "--json", *extra)
    assert result.returncode == 0, result.stderr
    return {m["case"]: m for m in json.loads(result.stdout)["measurements"]}


def test_handshakes_and_resumption_on_the_system_lib(sslperf_dirs):
    cases = ["tls/handshake/tls1.3/x25519/ecdsa-p256/shared", "tls/handshake/tls1.3/x25519/ecdsa-p256/new",
             "tls/handshake/tls1.2/p-256/rsa-2048/shared", "tls/handshake/tls1.2/x25519/ecdsa-p384/shared",
             "tls/handshake/tls1.3/p-384/ed25519/shared", "tls/resume/tls1.3/ticket/x25519/ecdsa-p256",
             "tls/resume/tls1.2/session-id/x25519/rsa-2048", "tls/resume/tls1.3/session-id/x25519/rsa-2048"]
    got = tls_run(*[a for c in cases for a in ("--case", c)])
    for case in cases[:-1]:
        m = got[case]
        assert m["status"] == "ok", (case, m["reason"])
        assert len(m["figures"]["client_cpu_ns"]) == 3 and all(v > 0 for v in m["figures"]["server_cpu_ns"])
    assert got[cases[-1]]["status"] == "n/a" and "tickets" in got[cases[-1]]["reason"]

    def us(case):
        return 1e6 / got[case]["summary"]["wall"]["median"]

    # A resumed handshake skips the certificate and key exchange work of a full one;
    # a new client SSL_CTX per connection (with a 151-certificate CA file) costs far more.
    assert us("tls/resume/tls1.3/ticket/x25519/ecdsa-p256") < us("tls/handshake/tls1.3/x25519/ecdsa-p256/shared")
    assert us("tls/handshake/tls1.3/x25519/ecdsa-p256/new") > 2 * us("tls/handshake/tls1.3/x25519/ecdsa-p256/shared")


def test_a_group_the_library_lacks_is_na(sslperf_dirs):
    got = tls_run("--case", "tls/handshake/tls1.3/x25519mlkem768/ecdsa-p256/shared",
                  "--case", "tls/handshake/tls1.2/x25519mlkem768/ecdsa-p256/shared")
    assert got["tls/handshake/tls1.2/x25519mlkem768/ecdsa-p256/shared"]["status"] == "n/a"
    hybrid = got["tls/handshake/tls1.3/x25519mlkem768/ecdsa-p256/shared"]
    assert hybrid["status"] in ("ok", "n/a")          # ok only on libraries with ML-KEM (3.5+)
    if hybrid["status"] == "n/a":
        assert "x25519mlkem768" in hybrid["reason"].lower()     # "… the X25519MLKEM768 group arrived in …"


def test_tls_suites_and_names():
    quick = suites.tls_suite("quick")
    assert len(quick) == 9 and quick[0].id == "tls/handshake/tls1.3/default/ecdsa-p256/shared"   # as deployed first
    full = suites.tls_suite("full")
    assert len({c.id for c in full}) == len(full) > 60
    for case in suites.tls_suite("default"):
        assert suites.parse_case(case.id) == case
    with pytest.raises(SslperfError):
        suites.parse_case("tls/handshake/tls1.4/x25519/ecdsa-p256/shared")


@pytest.mark.slow
def test_new_ssl_ctx_per_connection_across_versions(built_openssl, e2e_env):
    """Seed 001's pattern on a built 1.1.1w and the system 3.0: both run it."""
    result = run_cli("tls", "--lib", "system", "--lib", built_openssl, "--time", "5", "--samples", "3",
                     "--processes", "1", "--json",
                     "--case", "tls/handshake/tls1.2/x25519/rsa-2048/new",
                     "--case", "tls/handshake/tls1.2/x25519/rsa-2048/shared", env=e2e_env)
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    assert {m["lib"] for m in run["measurements"]} == {"system", built_openssl}
    assert all(m["status"] == "ok" for m in run["measurements"])


def test_loopback_requests_with_curls_pattern(sslperf_dirs, tmp_path):
    # one run: its tables (with --details) on standard output, the run as JSON in --out
    result = run_cli("tls", "loopback", "--requests", "3", "--rounds", "1", "--details", "--out",
                     tmp_path / "run.json")
    assert result.returncode == 0, result.stderr
    run = json.loads((tmp_path / "run.json").read_text())
    assert set(run["environment"]["placement"]) == {"server_cpu", "client_cpu"}      # explicit and recorded
    got = {m["case"]: m for m in run["measurements"]}
    new, shared = got["tls/loopback/tls1.3/x25519/ecdsa-p256/new"], got["tls/loopback/tls1.3/x25519/ecdsa-p256/shared"]
    for m in (new, shared, got["tls/loopback/tls1.2/x25519/rsa-2048/new"]):
        assert m["status"] == "ok", m["reason"]
        extra = m["figures"]
        assert len(extra["total_ns"]) == 3
        assert all(c < p <= t for c, p, t in zip(extra["connect_ns"], extra["pretransfer_ns"], extra["total_ns"]))
        # The round's run-queue wait (client threads and server), spread over its GETs by their wall time: what
        # the verdict rule needs to leave out, or answer `?` for, a round that waited for a shared CPU.
        assert len(extra["wait_ns"]) == 3 and all(0 <= w <= t for w, t in zip(extra["wait_ns"], extra["total_ns"]))
    assert "pretransfer: n=3 min=" in result.stdout and "______total: n=3" in result.stdout


@pytest.mark.timing
def test_a_new_ssl_ctx_per_request_costs_more_than_a_shared_one_over_loopback(sslperf_dirs):
    """A new SSL_CTX that loads a 151-certificate CA file per request costs more than reusing one (measured
    times: with the timing tests, alone)."""
    result = run_cli("tls", "loopback", "--requests", "10", "--case", "tls/handshake/tls1.3/x25519/ecdsa-p256/shared",
                     "--json", "--no-store")
    assert result.returncode == 0, result.stderr
    got = {m["case"]: m for m in json.loads(result.stdout)["measurements"]}
    median = lambda xs: sorted(xs)[len(xs) // 2]      # noqa: E731
    new, shared = (got[f"tls/loopback/tls1.3/x25519/ecdsa-p256/{kind}"] for kind in ("new", "shared"))
    assert median(new["figures"]["pretransfer_ns"]) > median(shared["figures"]["pretransfer_ns"])


def test_thread_scaling(sslperf_dirs):
    result = run_cli("tls", "--threads", "1,2", "--thread-seconds", "0.1", "--samples", "3", "--json")
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    counts = {m["operation"]: m for m in run["measurements"]}
    assert set(counts) == {"1 thread", "2 threads"}
    assert run["environment"]["placement"]["thread_cpus"]
    # three rounds of each count; 1 thread twice as many (its rate divides every efficiency)
    assert all(m["status"] == "ok" and len(m["ops"]) == 3 * (2 if m["size"] == 1 else 1) and min(m["ops"]) > 0
               for m in counts.values())
    assert len(counts["2 threads"]["figures"]["per_thread"]) == 6          # 2 threads × 3 rounds
    bad = run_cli("tls", "--threads", "0,x")
    assert bad.returncode == 2 and "is not a list of counts" in bad.stderr


def test_report_draws_handshakes_and_latency_distributions(sslperf_dirs, tmp_path):
    memory = json.loads(run_cli("tls", "--case", "tls/handshake/tls1.3/x25519/ecdsa-p256/shared", "--time", "5",
                                "--samples", "3", "--processes", "1", "--json").stdout)
    loop = json.loads(run_cli("tls", "--loopback", "--requests", "5", "--json").stdout)
    out = tmp_path / "report"
    result = run_cli("report", memory["id"], loop["id"], "--out", out, "--format", "png", "--format", "html")
    assert result.returncode == 0, result.stderr
    assert (out / "tls-handshakes.png").stat().st_size > 10_000
    assert (out / "tls-loopback.png").stat().st_size > 10_000
    html = (out / "report.html").read_text()
    assert "system@" not in html          # different cases in the two runs: one "system" column


def test_any_case_across_threads_each_with_its_own_state(sslperf_dirs, tmp_path):
    # one run: its tables on standard output, the run as JSON in --out
    table = run_cli("speed", "--case", "sig/ecdsa-p256/sign", "--case", "cipher/aes-128-gcm/encrypt/16384",
                    "--threads", "1,2", "--thread-seconds", "0.1", "--out", tmp_path / "run.json", "--no-store",
                    env={"COLUMNS": "200"})
    assert table.returncode == 0, table.stderr
    run = json.loads((tmp_path / "run.json").read_text())
    got = {m["case"]: m for m in run["measurements"]}
    assert set(got) == {f"threads/own/{n:03d}/{c}" for n in (1, 2)
                        for c in ("sig/ecdsa-p256/sign", "cipher/aes-128-gcm/encrypt/16384")}
    for m in got.values():
        rounds = 3 * (2 if m["size"] == 1 else 1)                      # 1 thread twice as many rounds
        assert m["status"] == "ok" and len(m["ops"]) == rounds and min(m["ops"]) > 0, m
        assert len(m["figures"]["per_thread"]) == rounds * m["size"]     # every thread did work, every round
        assert all(ops > 0 for ops in m["figures"]["per_thread"])
    assert got["threads/own/001/cipher/aes-128-gcm/encrypt/16384"]["unit"] == "bytes"
    assert run["environment"]["placement"]["thread_cpus"]
    assert not any("cannot show here" in w for w in run["warnings"])      # no warning about counts not asked
    assert re.search(r"sig/ecdsa-p256/sign \[own\]: 2 threads .* \d+% efficiency", table.stdout), table.stdout


def test_a_library_context_per_thread_needs_openssl_3(sslperf_dirs):
    result = run_cli("api", "--filter", "api/fetch/sha256", "--threads", "1,2", "--thread-mode", "libctx",
                     "--thread-seconds", "0.1", "--json", "--no-store")
    assert result.returncode == 0, result.stderr
    got = [m for m in json.loads(result.stdout)["measurements"]]
    assert {m["case"] for m in got} == {"threads/libctx/001/api/fetch/sha256", "threads/libctx/002/api/fetch/sha256"}
    assert all(m["status"] == "ok" for m in got)          # the system library is 3.x


def test_too_many_cases_across_threads_is_refused_before_measuring(sslperf_dirs):
    result = run_cli("speed", "--threads", "1,2,4", "--no-store")
    assert result.returncode == 2 and "Choose a few cases with --case or --filter" in result.stderr



def handshake_latencies(threads: bool, processes: int = 2) -> dict:
    """One in-memory handshake case on the system library, in worker processes or across two threads, as JSON."""
    case = "tls/handshake/tls1.3/x25519/ecdsa-p256/shared"
    args = (["threads", "--threads", "2", "--thread-seconds", "0.5", "--thread-mode", "own"] if threads else
            ["handshake", "--time", "20", "--samples", "3", "--processes", str(processes)])
    result = run_cli("tls", *args, "--lib", "system", "--case", case, "--json", "--no-store")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["measurements"][0]


def test_each_handshake_is_timed_for_the_latency_percentiles_in_memory_and_across_threads(sslperf_dirs):
    m = handshake_latencies(threads=False, processes=1)        # the samples are counted, not the processes
    # Every sample's handshakes, up to 256 of each (a uniform choice beyond that).
    assert len(m["figures"]["op_wall_ns"]) == sum(min(n, 256) for n in m["ops"]), m["ops"]
    two = handshake_latencies(threads=True)
    kept, per_thread = two["figures"]["op_wall_ns"], two["figures"]["per_thread"]
    # Each thread's handshakes of each round, up to 256 of them (a uniform choice over the whole round).
    assert len(kept) == sum(min(n, 256) for n in per_thread), (len(kept), per_thread)


@pytest.mark.timing
def test_each_kept_time_is_one_handshakes_not_a_samples(sslperf_dirs):
    """The values are single handshakes' times: about a sample's time per handshake, in memory and across
    threads (measured times: with the timing tests, alone)."""
    m = handshake_latencies(threads=False)
    times = m["figures"]["op_wall_ns"]
    per_handshake = statistics.median(w / n for w, n in zip(m["wall_ns"], m["ops"]))
    assert 0.5 < statistics.median(times) / per_handshake < 1.5 and max(times) < min(m["wall_ns"])
    two = handshake_latencies(threads=True)
    at_once = min(2, len(os.sched_getaffinity(0)))        # the threads run on the CPUs this process may use
    per_handshake = at_once * sum(two["wall_ns"]) / sum(two["ops"])
    assert 0.5 < statistics.median(two["figures"]["op_wall_ns"]) / per_handshake < 2