"""Bulk transfer after one handshake, for real: the library's own client
writes and its own server reads over a BIO pair, checked byte for byte."""

import json
import re

import pytest
from conftest import private_cache, run_cli

from sslperf.errors import SslperfError
from sslperf.libs import installed
from sslperf.cases import catalog
from sslperf.measure import suites
from sslperf.measure.certificates import made_by
from sslperf.measure.harness_client import Worker


def transfer_run(*cases, env=None, exit_code=0):
    result = run_cli("tls", "--time", "5", "--samples", "3", "--processes", "1", "--json", "--no-store",
                     *[a for c in cases for a in ("--case", c)], env=env)
    assert result.returncode == exit_code, result.stderr
    return {m["case"]: m for m in json.loads(result.stdout)["measurements"]}


@pytest.mark.timing          # the send/receive split is a proportion of CPU times
def test_every_suite_and_protocol_moves_the_bytes_written_on_the_system_lib(sslperf_dirs):
    cases = [f"tls/transfer/{p}/{s}/16384" for p in ("tls1.3", "tls1.2")
             for s in ("aes-128-gcm", "aes-256-gcm", "chacha20-poly1305")]
    cases += ["tls/transfer/tls1.3/aes-128-gcm/16", "tls/transfer/tls1.3/aes-128-gcm/1048576"]
    got = transfer_run(*cases)
    for case in cases:
        m = got[case]
        assert m["status"] == "ok", (case, m["reason"])
        size = int(case.rsplit("/", 1)[1])
        assert m["unit"] == "bytes" and m["bytes_per_op"] == size
        # the writer's and the reader's time are both there (their proportion from every 16th write, applied to
        # each sample's CPU time, not its wall time, which a preemption once made 23% longer), and add up to it
        send, receive = m["figures"]["client_cpu_ns"], m["figures"]["server_cpu_ns"]
        assert all(s > 0 for s in send) and all(r > 0 for r in receive)
        assert [s + r for s, r in zip(send, receive)] == m["cpu_ns"]
    # a 16-byte write carries a whole record's overhead: far fewer bytes per second than 16 KiB writes
    small = got["tls/transfer/tls1.3/aes-128-gcm/16"]["summary"]["wall"]["median"]
    assert small < got["tls/transfer/tls1.3/aes-128-gcm/16384"]["summary"]["wall"]["median"] / 5


def test_the_first_write_is_checked_for_version_suite_and_bytes(sslperf_dirs):
    lib = installed.find("system")
    with made_by(lib) as cert_dir, Worker(lib, {"SSLPERF_CERT_DIR": str(cert_dir)}) as worker:
        for case, expected in (("tls/transfer/tls1.3/chacha20-poly1305/1024", "TLSv1.3 TLS_CHACHA20_POLY1305_SHA256"),
                               ("tls/transfer/tls1.2/aes-256-gcm/65536", "TLSv1.2 ECDHE-ECDSA-AES256-GCM-SHA384")):
            reply = worker.request(f"prepare {case}", timeout=120).data
            size = case.rsplit("/", 1)[1]
            assert reply["checked"] == f"{expected}, {size} bytes received as written", reply
            worker.request(f"release {case}", timeout=60)


def test_a_changed_byte_fails_the_check(sslperf_dirs):
    # every case failed: the run is printed, then that said last with exit 1
    got = transfer_run("tls/transfer/tls1.3/aes-128-gcm/1024", env={"SSLPERF_TRANSFER_FLIP_A_BYTE": "1"},
                       exit_code=1)
    m = got["tls/transfer/tls1.3/aes-128-gcm/1024"]
    assert m["status"] == "error" and "other bytes than the writer wrote" in m["reason"]


def test_transfer_names_and_suites():
    assert set(catalog.tls()["suites"]) == {"default", "aes-128-gcm", "aes-256-gcm", "chacha20-poly1305"}
    default = suites.transfer_suite("default")
    assert {c.size for c in default} == {1024, 16384, 1048576}
    assert len(suites.transfer_suite("full")) == 2 * 4 * 3          # TLS 1.3 and 1.2 (DTLS has no transfer)
    for case in default:
        assert suites.parse_case(case.id) == case
        assert case.group == "TLS bulk transfer (in memory)"
    for bad in ("tls/transfer/tls1.3/rc4/1024", "tls/transfer/tls1.3/aes-128-gcm/0", "tls/transfer/ssl3/aes-128-gcm/16"):
        with pytest.raises(SslperfError):
            suites.parse_case(bad)


def test_the_transfer_table_shows_throughput_and_the_send_receive_split(sslperf_dirs):
    result = run_cli("tls", "transfer", "--quick", "--time", "5", "--samples", "3", "--processes", "1", "--details",
                     "--no-store", env={"COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    assert "TLS bulk transfer (in memory)" in result.stdout
    assert re.search(r"per write: send [\d.]+ µs / receive [\d.]+ µs CPU", result.stdout), result.stdout
    assert "tls1.3 chacha20-poly1305 16,384 B" in result.stdout
    assert "B/s" in result.stdout


@pytest.fixture(scope="module")
def tcp_run(tmp_path_factory):
    """One loopback transfer run (the TCP case with kernel TLS off and on), in private dirs as sslperf_dirs makes
    them; the two tests below read it (the same command each ran before)."""
    root = tmp_path_factory.mktemp("transfer-tcp")
    env = {"SSLPERF_CACHE_DIR": str(private_cache(root / "cache")), "SSLPERF_DATA_DIR": str(root / "data")}
    result = run_cli("tls", "--transfer", "--loopback", "--case", "tls/transfer/tls1.3/aes-128-gcm/16384", "--time",
                     "100", "--samples", "6", "--json", "--no-store", env=env)
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    return run, {m["case"]: m for m in run["measurements"]}


@pytest.mark.xdist_group("transfer-tcp")        # with the test below, so the run above is made once
def test_over_loopback_tcp_the_bytes_written_arrive(tcp_run):
    run, got = tcp_run
    plain = got["tls/transfer-tcp/tls1.3/aes-128-gcm/16384/no-ktls"]
    assert plain["status"] == "ok", plain["reason"]
    assert len(plain["ops"]) == 3 and min(plain["ops"]) > 100           # three rounds, each many 16 KiB writes
    assert "TLS_AES_128_GCM_SHA256" in plain["note"] and "kernel TLS off" in plain["note"]
    assert all(v > 0 for v in plain["figures"]["server_cpu_ns"])        # the reader's CPU, from its own process
    assert run["environment"]["placement"]["server_cpu"] is not None or run["environment"]["placement"]


@pytest.mark.xdist_group("transfer-tcp")
def test_kernel_tls_is_used_where_the_kernel_and_library_allow_it(tcp_run):
    run, got = tcp_run
    kernel = got["tls/transfer-tcp/tls1.3/aes-128-gcm/16384/ktls"]
    if kernel["status"] != "ok":      # n/a, and it says precisely why (here: no tls module in the kernel)
        assert kernel["status"] == "n/a" and kernel["reason"].startswith("kernel TLS was asked for but not used")
        if "the kernel: no" in kernel["reason"]:
            assert any("this kernel cannot do TLS itself" in w for w in run["warnings"])
        pytest.skip(f"kernel TLS is not available here: {kernel['reason']}")
    assert "kernel TLS used for sending" in kernel["note"]


def test_over_loopback_tcp_a_changed_byte_is_caught_by_the_reader(sslperf_dirs):
    result = run_cli("tls", "--transfer", "--loopback", "--case", "tls/transfer/tls1.3/aes-128-gcm/1024",
                     "--time", "100", "--samples", "6", "--json", "--no-store",
                     env={"SSLPERF_TRANSFER_FLIP_A_BYTE": "1"})
    assert result.returncode == 1, result.stderr            # every case failed: said last, exit 1
    assert result.stderr.strip().splitlines()[-1].startswith("error: Nothing was measured: every one of its")
    got = {m["case"]: m for m in json.loads(result.stdout)["measurements"]}
    plain = got["tls/transfer-tcp/tls1.3/aes-128-gcm/1024/no-ktls"]
    assert plain["status"] == "error" and "differing from what was written" in plain["reason"]
