"""QUIC over loopback UDP with OpenSSL's own QUIC stack (`sslperf tls --quic`, harness/openssl/quic.c): a real
QUIC connection per request on a built OpenSSL 3.6, checked before it is timed (QUIC, suite, group, ALPN) and
measured beside TLS 1.3 over TCP; n/a with the reason on a library without a QUIC server; the server bound to
127.0.0.1 alone."""

import json

import pytest
from conftest import run_cli

from sslperf.libs import installed
from sslperf.measure import loopback
from sslperf.measure.certificates import made_by
from sslperf.measure.harness_client import Server

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("quic")]


def udp_sockets_on(port: int) -> list[str]:
    """The local addresses of the UDP sockets bound to `port`, as /proc/net/udp lists them (hex address:port)."""
    found = []
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        with open(table) as rows:
            for row in list(rows)[1:]:
                local = row.split()[1]
                if int(local.rsplit(":", 1)[1], 16) == port:
                    found.append(local)
    return found


def test_a_quic_get_is_checked_and_set_beside_tcp_on_a_built_36(built_openssl3, in_e2e_cache):
    result = run_cli("tls", "--quic", "--lib", built_openssl3, "--lib", "system", "--requests", "5",
                     "--case", "tls/handshake/tls1.3/x25519/ecdsa-p256/shared",
                     "--case", "tls/handshake/tls1.3/x25519mlkem768/rsa-2048/shared", "--json")
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    got = {(m["lib"], m["case"]): m for m in run["measurements"]}
    lib = next(m["lib"] for m in run["measurements"] if m["lib"] != "system")
    for group, cert, seen in (("x25519", "ecdsa-p256", "group x25519"),
                              ("x25519mlkem768", "rsa-2048", "group X25519MLKEM768")):
        quic, tcp = got[(lib, f"tls/quic/{group}/{cert}")], got[(lib, f"tls/loopback/tls1.3/{group}/{cert}/shared")]
        assert quic["status"] == "ok" and tcp["status"] == "ok", (quic, tcp)
        # The first connection proved QUIC, the TLS 1.3 suite, the group and the ALPN before any request was timed.
        assert f"QUICv1 TLS_AES_128_GCM_SHA256 {seen} ALPN sslperf" in quic["note"], quic["note"]
        assert "against TCP+TLS 1.3: handshake ×" in quic["note"], quic["note"]
        assert len(quic["extra"]["total_ns"]) == 5 and all(t > h > 0 for t, h in zip(
            quic["extra"]["total_ns"], quic["extra"]["pretransfer_ns"]))
    # The system library (OpenSSL 3.0) has no QUIC server: n/a, saying so; its TCP rows are measured.
    assert got[("system", "tls/quic/x25519/ecdsa-p256")]["status"] == "n/a"
    assert "no QUIC server (OpenSSL 3.5 added one" in got[("system", "tls/quic/x25519/ecdsa-p256")]["reason"]
    assert got[("system", "tls/loopback/tls1.3/x25519/ecdsa-p256/shared")]["status"] == "ok"
    assert run["environment"]["path"] == "loopback, no emulated delay or loss"


def test_the_quic_server_binds_loopback_only(built_openssl3, in_e2e_cache):
    lib = installed.find(built_openssl3)
    with made_by(lib) as cert_dir, Server(lib, "quic-server", str(cert_dir), "x25519", "ecdsa-p256", "1",
                                          env={"SSLPERF_CERT_DIR": str(cert_dir)}) as server:
        hello = server.line(timeout=120)
        assert hello["type"] == "listening" and hello["protocol"] == "quic", hello
        # 0100007F is 127.0.0.1 in /proc's byte order; nothing else (0.0.0.0, ::) listens on the port.
        assert udp_sockets_on(hello["port"]) == [f"0100007F:{hello['port']:04X}"]


def test_quic_transfer_bytes_are_checked_by_the_reader(built_openssl3, in_e2e_cache, monkeypatch):
    lib = installed.find(built_openssl3)
    with made_by(lib) as cert_dir:
        sent = loopback.quic_transfer(lib, cert_dir, "chacha20-poly1305", 16384, 200, 1)
        assert sent.status == "ok" and sent.ops[0] > 0, sent.reason
        assert "QUICv1 TLS_CHACHA20_POLY1305_SHA256 group x25519 ALPN sslperf" in sent.note, sent.note
        assert sent.extra["client_cpu_ns"][0] > 0 and sent.extra["server_cpu_ns"][0] > 0
        monkeypatch.setenv("SSLPERF_TRANSFER_FLIP_A_BYTE", "1")      # the writer changes one byte of its buffer
        flipped = loopback.quic_transfer(lib, cert_dir, "chacha20-poly1305", 16384, 200, 1)
    assert flipped.status == "error" and "differing from what was written" in flipped.reason, flipped.reason


def test_quic_transfer_runs_beside_tcp(built_openssl3, in_e2e_cache):
    result = run_cli("tls", "--quic", "--transfer", "--lib", built_openssl3, "--time", "250",
                     "--case", "tls/transfer/tls1.3/aes-128-gcm/16384", "--json", "--no-store")
    assert result.returncode == 0, result.stderr
    got = {m["case"]: m for m in json.loads(result.stdout)["measurements"]}
    assert set(got) == {"tls/transfer-tcp/tls1.3/aes-128-gcm/16384/no-ktls", "tls/quic-transfer/aes-128-gcm/16384"}
    assert all(m["status"] == "ok" for m in got.values()), got
    assert "against TCP+TLS 1.3: throughput ×" in got["tls/quic-transfer/aes-128-gcm/16384"]["note"]


def test_quic_refusals_are_one_clear_paragraph(built_rustls, in_e2e_cache):
    result = run_cli("tls", "--quic", "--loopback", "--lib", "system", "--no-store")
    assert result.returncode == 2 and "are different measurements" in result.stderr, result.stderr
    result = run_cli("tls", "--quic", "--lib", "rustls-0.15+ring", "--no-store")
    assert result.returncode == 2, result.stderr
    assert "QUIC over loopback UDP (--quic) is not measured for this library yet" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
