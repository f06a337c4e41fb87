"""wolfSSL through its own harness backend (harness/wolfssl/): built by sslperf's configure from the wolfssl-sys
crate's source, its TLS through wolfSSL's API and its primitives through wolfCrypt, each checked before it is timed
and measured beside OpenSSL in one interleaved run; what it does not measure is n/a with the reason."""

import json

import pytest
from conftest import run_cli

from sslperf.errors import SslperfError
from sslperf.libs import installed, variants
from sslperf.measure.certificates import made_by
from sslperf.measure.harness_client import Worker, call

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wolfssl")]

CHECKED = {
    "tls/handshake/tls1.3/x25519/ecdsa-p256/shared": "TLSv1.3 TLS13-AES128-GCM-SHA256 group X25519",
    "tls/handshake/tls1.3/p-256/rsa-2048/shared": "TLSv1.3 TLS13-AES128-GCM-SHA256 group SECP256R1",
    "tls/handshake/tls1.3/x25519mlkem768/ecdsa-p256/shared": "TLSv1.3 TLS13-AES128-GCM-SHA256 group X25519MLKEM768",
    "tls/handshake/tls1.2/p-384/ecdsa-p384/new": "TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256 group SECP384R1",
    "tls/resume/tls1.3/ticket/x25519/ecdsa-p256": "TLSv1.3 TLS13-AES128-GCM-SHA256 group X25519 resumed",
    "tls/resume/tls1.2/session-id/x25519/rsa-2048": "TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256 group (none: resumed) resumed",
    "tls/transfer/tls1.3/chacha20-poly1305/1048576":
        "TLSv1.3 TLS13-CHACHA20-POLY1305-SHA256 group X25519, 1048576 bytes received as written",
}

PRIMITIVES = ["cipher/aes-128-gcm/encrypt/16384", "cipher/aes-256-gcm/decrypt/1350",
              "cipher/chacha20-poly1305/decrypt/16", "digest/sha256/16384", "digest/sha3-512/64", "mac/hmac-sha512/1024",
              "sig/rsa-2048/sign", "sig/ecdsa-p384/verify", "sig/ed25519/sign", "kex/x25519/derive",
              "kex/ecdh-p256/derive", "kem/ml-kem-768/decaps", "kem/ml-kem-1024/keygen", "sig/ml-dsa-65/sign",
              "sig/ml-dsa-87/verify", "keygen/ecdsa-p256", "keygen/x25519", "keygen/ml-dsa-44"]

NOT_AVAILABLE = {
    "cipher/aes-128-cbc/encrypt/16": "measures the AEADs TLS uses",
    "cipher/aes-128-gcm/encrypt/16/speed-compat": "wolfSSL measures the record workload",
    "sig/ecdsa-p521/sign": "does not measure sig ecdsa-p521",
    "keygen/ed448": "does not measure keygen ed448",
    "api/ssl-ctx-new/client": "OpenSSL API calls",
}


@pytest.fixture(scope="module")
def wolfssl(built_wolfssl, e2e_env):
    with pytest.MonkeyPatch.context() as patch:
        for key, value in e2e_env.items():
            patch.setenv(key, value)
        yield installed.find(built_wolfssl)


def test_the_harness_reports_wolfssl(wolfssl):
    info = call(wolfssl, "info", timeout=120).last
    assert info["backend"] == "wolfssl" and info["version_string"].startswith("wolfSSL 5.")
    # sslperf's configure, with the assembly on
    assert "--enable-intelasm" in wolfssl.info["configure_options"]


def test_tls_and_primitives_are_checked_before_they_are_timed(wolfssl):
    with made_by(installed.find("system"), wolfssl) as cert_dir, \
            Worker(wolfssl, {"SSLPERF_CERT_DIR": str(cert_dir), "SSLPERF_TLS_PEM_DIR": str(cert_dir)}) as worker:
        for case, expected in CHECKED.items():
            reply = worker.request(f"prepare {case}", timeout=120).data
            assert reply["type"] == "prepared" and reply["checked"] == expected, reply
            worker.request(f"release {case}", timeout=60)
        for case in PRIMITIVES:
            reply = worker.request(f"prepare {case}", timeout=120).data
            assert reply["type"] == "prepared", reply
            worker.request(f"release {case}", timeout=60)
        for case, reason in NOT_AVAILABLE.items():
            reply = worker.request(f"prepare {case}", timeout=120).data
            assert reply["type"] == "na" and reason in reply["reason"], reply


def test_a_changed_byte_fails_the_wolfssl_transfer_check(wolfssl):
    env = {"SSLPERF_TRANSFER_FLIP_A_BYTE": "1"}
    with made_by(installed.find("system"), wolfssl) as cert_dir, \
            Worker(wolfssl, {"SSLPERF_CERT_DIR": str(cert_dir), "SSLPERF_TLS_PEM_DIR": str(cert_dir), **env}) as worker:
        reply = worker.request("prepare tls/transfer/tls1.3/aes-128-gcm/1024", timeout=120).data
    assert reply["type"] == "error" and "other bytes than the writer wrote" in reply["reason"], reply


def test_wolfssl_and_openssl_in_one_interleaved_run(wolfssl):
    cases = ["cipher/aes-128-gcm/encrypt/16384", "sig/ecdsa-p256/sign", "kem/ml-kem-768/encaps",
             "tls/handshake/tls1.3/x25519/ecdsa-p256/shared", "cipher/aes-128-ocb/encrypt/16"]
    result = run_cli("speed", "--lib", "system", "--lib", wolfssl.name, "--time", "5", "--samples", "3",
                     "--processes", "1", "--json", "--no-store", *[a for c in cases for a in ("--case", c)])
    assert result.returncode == 0, result.stderr
    got = {(m["lib"], m["case"]): m for m in json.loads(result.stdout)["measurements"]}
    for case in cases[:4]:
        assert got[(wolfssl.name, case)]["status"] == "ok", got[(wolfssl.name, case)]
    assert got[(wolfssl.name, cases[4])]["status"] == "n/a"
    assert sum(got[(wolfssl.name, cases[3])]["figures"]["server_cpu_ns"]) > 0


def test_wolfssl_variants_and_modes_it_lacks_are_refused_clearly(wolfssl):
    assert "--disable-asm" in variants.wolfssl_configure(variants.lookup(("no-asm",), "wolfssl"))
    assert "--enable-intelasm" not in variants.wolfssl_configure(variants.lookup(("no-asm",), "wolfssl"))
    with pytest.raises(SslperfError, match="does not apply to wolfssl"):
        variants.lookup(("minimal",), "wolfssl")
    result = run_cli("tls", "--transfer", "--loopback", "--lib", wolfssl.name, "--no-store")
    assert result.returncode == 2 and "is not measured for this library's harness yet" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_wolfssl_and_openssl_serve_each_other_over_loopback_and_prove_the_negotiation(wolfssl):
    # wolfSSL as client against an OpenSSL server configured for P-256, and OpenSSL as client against a wolfSSL
    # server: each first handshake is checked before a request is timed, and the note says what was negotiated
    # (the shared-SSL_CTX loopback case alone: only it is asserted on, a handshake case would add its `new` twin)
    case = "tls/loopback/tls1.3/p-256/ecdsa-p256/shared"
    seen = {}
    for server in ("system", wolfssl.name):
        result = run_cli("tls", "--loopback", "--lib", "system", "--lib", wolfssl.name, "--server-lib", server,
                         "--case", case, "--requests", "3", "--json", "--no-store")
        assert result.returncode == 0, result.stderr
        for m in json.loads(result.stdout)["measurements"]:
            if m["case"].endswith("/shared"):
                seen[(m["lib"], server)] = m
    for (client, server), m in seen.items():
        assert m["status"] == "ok" and len(m["ops"]) == 3, m
        assert f"server: {server}" in m["note"], m
    assert "TLSv1.3 TLS13-AES128-GCM-SHA256 group SECP256R1" in seen[(wolfssl.name, "system")]["note"]
    assert "TLSv1.3 TLS_AES_128_GCM_SHA256 group" in seen[("system", wolfssl.name)]["note"]
    assert "TLSv1.3 TLS13-AES128-GCM-SHA256 group SECP256R1" in seen[(wolfssl.name, wolfssl.name)]["note"]


def test_memory_per_wolfssl_connection_is_counted_each_side_apart(wolfssl):
    result = run_cli("tls", "--memory", "--lib", wolfssl.name, "--case", "tls/handshake/tls1.3/x25519/ecdsa-p256/shared",
                     "--case", "tls/handshake/tls1.2/x25519mlkem768/rsa-2048/shared", "--json", "--no-store")
    assert result.returncode == 0, result.stderr
    got = {m["case"]: m for m in json.loads(result.stdout)["measurements"]}
    m = got["tls/memory/tls1.3/x25519/ecdsa-p256"]
    assert m["status"] == "ok" and m["note"] == "C allocator statistics (mallinfo2)", m
    for client, server in zip(m["figures"]["client_bytes"], m["figures"]["server_bytes"]):
        # a wolfSSL connection holds kilobytes (its buffers, the session's keys), never nothing
        assert 1_000 < client < 200_000 and 1_000 < server < 200_000, m["figures"]
    tls12_hybrid = got["tls/memory/tls1.2/x25519mlkem768/rsa-2048"]
    assert tls12_hybrid["status"] == "n/a" and "is a TLS 1.3 group" in tls12_hybrid["reason"], tls12_hybrid


def test_wolfssl_ecdsa_sign_is_the_signature_alone_as_openssls_is(wolfssl):
    """wc_SignatureGenerate verifies each signature it makes; the harness signs without that check, as
    EVP_DigestSign does. Counted in instructions (callgrind: the same count every time), a P-256 signature
    costs under half a verification; sign plus verify would cost more than one."""
    result = run_cli("speed", "--lib", wolfssl.name, "--case", "sig/ecdsa-p256/sign", "--case", "sig/ecdsa-p256/verify",
                     "--metric", "instructions", "--json", "--no-store")
    assert result.returncode == 0, result.stderr
    per_op = {m["case"]: min(n / ops for n, ops in zip(m["figures"]["instructions"], m["ops"]))
              for m in json.loads(result.stdout)["measurements"]}
    assert per_op["sig/ecdsa-p256/sign"] < 0.7 * per_op["sig/ecdsa-p256/verify"], per_op
