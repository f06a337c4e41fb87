"""What a measured connection negotiated, recorded by the real harness against a real library on every path that is
not an in-memory handshake: a loopback GET's first connection (handshake to close, so a TLS 1.3 server's tickets
count), an in-memory and a loopback TCP transfer (a first connection of the same contexts, the measured one checked
to agree), and OpenSSL 3.6's QUIC (its TLS messages, and its Initial, Handshake and Retry packets for the bytes).
Codepoints and protocol facts are asserted, never timings."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from sslperf.libs import installed
from sslperf.measure.certificates import made_by
from sslperf.measure.modes import loopback, quic, quic_transfer, transfer_tcp

TLS13, TLS12 = 0x0304, 0x0303
X25519, P256, HYBRID = 0x001D, 0x0017, 0x11EC
AES128_13, AES256_13, AES128_12_RSA, CHACHA_12_ECDSA = 0x1301, 0x1302, 0xC02F, 0xCCA9
ECDSA_P256, RSA_PSS_SHA256 = 0x0403, 0x0804


def codepoints(negotiated: dict) -> tuple:
    return tuple(negotiated[key] for key in ("version", "group", "suite", "signature", "hello_retry"))


def test_a_loopback_get_records_its_first_connection_on_the_system_lib(sslperf_dirs):
    lib = installed.find("system")
    with made_by(lib) as cert_dir:
        tls13 = loopback.get(lib, lib, cert_dir, loopback.case("tls1.3", "x25519", "ecdsa-p256", "shared"), 2)
        tls12 = loopback.get(lib, lib, cert_dir, loopback.case("tls1.2", "p-256", "rsa-2048", "new"), 2)
    for m in (tls13, tls12):
        assert m.status == "ok", m.reason
    assert codepoints(tls13.negotiated) == (TLS13, X25519, AES128_13, ECDSA_P256, False)
    assert codepoints(tls12.negotiated) == (TLS12, P256, AES128_12_RSA, RSA_PSS_SHA256, False)
    # Each side's handshake records: a ClientHello with one X25519 share is under 400 bytes; the TLS 1.3 server's
    # flight and its two session tickets (read with the response, before the close) are more than its flight alone.
    assert 200 < tls13.negotiated["client_bytes"] < 400
    assert tls13.negotiated["server_bytes"] > 900
    assert tls12.negotiated["server_bytes"] > tls12.negotiated["client_bytes"] > 0


def test_transfers_in_memory_and_over_tcp_record_the_connection(sslperf_dirs):
    result = run_cli("tls", "transfer", "--lib", "system", "--case", "tls/transfer/tls1.3/aes-256-gcm/1024",
                     "--case", "tls/transfer/tls1.2/chacha20-poly1305/16", "--time", "5", "--samples", "2",
                     "--processes", "1", "--json", "--no-store")
    assert result.returncode == 0, result.stderr
    got = {m["case"]: m for m in json.loads(result.stdout)["measurements"]}
    assert codepoints(got["tls/transfer/tls1.3/aes-256-gcm/1024"]["negotiated"]) == (
        TLS13, X25519, AES256_13, ECDSA_P256, False)
    assert codepoints(got["tls/transfer/tls1.2/chacha20-poly1305/16"]["negotiated"]) == (
        TLS12, X25519, CHACHA_12_ECDSA, ECDSA_P256, False)
    lib = installed.find("system")
    with made_by(lib) as cert_dir:
        tcp = transfer_tcp.transfer(lib, cert_dir, transfer_tcp.case("tls1.3", "aes-128-gcm", 1024, False), 20)
    assert tcp.status == "ok", tcp.reason
    assert codepoints(tcp.negotiated) == (TLS13, X25519, AES128_13, ECDSA_P256, False)
    assert tcp.negotiated["server_bytes"] > 900           # its tickets too, read on the way to the close


@pytest.mark.slow
@pytest.mark.xdist_group("quic")
def test_36_records_the_hybrid_group_over_tcp_and_quic(built_openssl3, in_e2e_cache):
    lib = installed.find(built_openssl3)
    with made_by(lib) as cert_dir:
        tcp = loopback.get(lib, lib, cert_dir, loopback.case("tls1.3", "x25519mlkem768", "ecdsa-p256", "shared"), 2)
        over_quic = quic.get(lib, lib, cert_dir, quic.case("x25519mlkem768", "ecdsa-p256"), 2)
        rsa = quic.get(lib, lib, cert_dir, quic.case("x25519", "rsa-2048"), 2)
        stream = quic_transfer.transfer(lib, cert_dir, quic_transfer.case("aes-256-gcm", 1024), 20)
    for m in (tcp, over_quic, rsa, stream):
        assert m.status == "ok", (m.case, m.reason)
    assert codepoints(tcp.negotiated) == (TLS13, HYBRID, AES128_13, ECDSA_P256, False)
    # QUIC carries TLS 1.3 (its handshake messages read as over TCP).
    assert codepoints(over_quic.negotiated) == (TLS13, HYBRID, AES128_13, ECDSA_P256, False)
    assert codepoints(rsa.negotiated) == (TLS13, X25519, AES128_13, RSA_PSS_SHA256, False)
    assert codepoints(stream.negotiated) == (TLS13, X25519, AES256_13, ECDSA_P256, False)
    for m in (over_quic, rsa, stream):
        # Each side's Initial, Handshake and Retry packets, whole: a client's first Initial is padded to 1200 bytes
        # (RFC 9000 §14.1); the server's flight carries its certificate.
        assert m.negotiated["client_bytes"] >= 1200 and m.negotiated["server_bytes"] > 1000, m.negotiated
    # The hybrid's 1216-byte key share takes the ClientHello past one Initial datagram; X25519's does not.
    assert over_quic.negotiated["client_bytes"] > stream.negotiated["client_bytes"]
