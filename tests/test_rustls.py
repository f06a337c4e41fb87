"""rustls through its own harness backend (harness/rustls/, rustls-ffi), for real: a rustls-ffi built by cargo
with the ring provider, its handshakes checked for what was negotiated, its transfers byte for byte, measured
beside OpenSSL in one interleaved run, and what it cannot do answered n/a with the reason."""

import json

import pytest
from conftest import run_cli

from sslperf.errors import SslperfError
from sslperf.libs import installed, variants
from sslperf.measure.certificates import made_by
from sslperf.measure.harness_client import Worker, call

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("rustls")]

CHECKS = {
    # a full handshake of each protocol: version, the one suite allowed, the group, and no resumption
    "tls/handshake/tls1.3/x25519/ecdsa-p256/shared": "tls1.3 TLS13_AES_128_GCM_SHA256 group X25519",
    "tls/handshake/tls1.2/x25519/rsa-2048/new": None,      # a new client config per connection: checked on a shared one
    "tls/handshake/tls1.2/x25519/ed25519/shared": "tls1.2 TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 group X25519",
    # resumption really resumes: by (stateful) ticket in TLS 1.3, by session id in TLS 1.2
    "tls/resume/tls1.3/ticket/x25519/ecdsa-p256": "tls1.3 TLS13_AES_128_GCM_SHA256 group X25519 resumed",
    "tls/resume/tls1.2/session-id/x25519/rsa-2048":
        "tls1.2 TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 group (none: resumed) resumed",
    "tls/transfer/tls1.3/chacha20-poly1305/1048576":
        "tls1.3 TLS13_CHACHA20_POLY1305_SHA256 group X25519, 1048576 bytes received as written",
    "tls/transfer/tls1.2/aes-256-gcm/16":
        "tls1.2 TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 group X25519, 16 bytes received as written",
}

NOT_AVAILABLE = {
    "tls/handshake/tls1.3/p-256/ecdsa-p256/shared": "cannot be told which key-exchange group to use, and this build "
                                                    "negotiates X25519",
    # post-quantum: the ring provider has neither ML-KEM nor ML-DSA (an aws-lc-rs build has both)
    "tls/handshake/tls1.3/x25519mlkem768/ecdsa-p256/shared": "negotiates X25519 (its crypto provider's first "
                                                             "choice); the ring provider has no ML-KEM",
    "tls/resume/tls1.3/ticket/secp256r1mlkem768/ecdsa-p256": "the ring provider has no ML-KEM",
    "tls/handshake/tls1.3/mlkem768/rsa-2048/new": "the ring provider has no ML-KEM",
    "tls/handshake/tls1.3/default/ml-dsa-65/shared": "ring provider cannot sign or verify with ML-DSA",
    "tls/resume/tls1.3/ticket/x25519/ml-dsa-44": "ring provider cannot sign or verify with ML-DSA",
    "tls/handshake/dtls1.2/x25519/ecdsa-p256/shared": "rustls has no DTLS",
    "tls/resume/dtls1.3/ticket/default/ecdsa-p256": "rustls has no DTLS",
    "tls/transfer/dtls1.2/aes-128-gcm/16": "rustls has no DTLS",
    "tls/resume/tls1.2/ticket/x25519/rsa-2048": "no TLS 1.2 ticketer",
    "cipher/aes-128-gcm/encrypt/16": "rustls has no raw cipher API",
    "sig/ecdsa-p256/sign": "rustls has no raw sig API",
    "api/ssl-ctx-new/client": "OpenSSL API calls",
}


@pytest.fixture(scope="module")
def rustls(built_rustls, e2e_env):
    with pytest.MonkeyPatch.context() as patch:
        for key, value in e2e_env.items():
            patch.setenv(key, value)
        yield installed.find(built_rustls)


def test_the_harness_reports_rustls_and_its_crypto_provider(rustls):
    info = call(rustls, "info", timeout=120).last
    assert info["backend"] == "rustls" and info["flavor"] == "rustls"
    assert info["version_string"].startswith("rustls-ffi/0.15.") and info["version_string"].endswith("/ring")
    assert info["crypto_provider"] == {"name": "ring", "fips": False}
    assert info["deterministic_rand"].startswith("unsupported")


def test_each_case_checks_what_was_negotiated_and_what_arrived(rustls):
    system = installed.find("system")
    with made_by(system, rustls) as cert_dir, \
            Worker(rustls, {"SSLPERF_CERT_DIR": str(cert_dir), "SSLPERF_TLS_PEM_DIR": str(cert_dir)}) as worker:
        for case, expected in CHECKS.items():
            reply = worker.request(f"prepare {case}", timeout=120).data
            assert reply["type"] == "prepared", reply
            if expected:
                assert reply["checked"] == expected, reply
            worker.request(f"release {case}", timeout=60)
        for case, reason in NOT_AVAILABLE.items():
            reply = worker.request(f"prepare {case}", timeout=120).data
            assert reply["type"] == "na" and reason in reply["reason"], reply


TLS13_SUITES = {0x1301, 0x1302, 0x1303}
RSA_SCHEMES = {0x0804, 0x0805, 0x0806, 0x0401, 0x0501, 0x0601}     # rsa_pss_rsae_*, rsa_pkcs1_*


def test_each_checked_connection_records_what_it_negotiated_as_deployed_or_pinned(rustls):
    """`default` sets nothing (ring's default groups, X25519 first, and all its suites): the check takes what the two
    sides agree on, and the reply records it as codepoints, with the bytes each side sent for the handshake, read
    from the records in the in-memory pipes. A pinned case records the same and still checks it."""
    system = installed.find("system")
    cases = ["tls/handshake/tls1.3/default/ecdsa-p256/shared", "tls/handshake/tls1.3/x25519/ecdsa-p256/shared",
             "tls/handshake/tls1.2/default/rsa-2048/new", "tls/resume/tls1.3/ticket/default/ecdsa-p256",
             "tls/resume/tls1.2/session-id/x25519/rsa-2048", "tls/transfer/tls1.3/default/1024"]
    got = {}
    with made_by(system, rustls) as cert_dir, \
            Worker(rustls, {"SSLPERF_CERT_DIR": str(cert_dir), "SSLPERF_TLS_PEM_DIR": str(cert_dir)}) as worker:
        for case in cases:
            reply = worker.request(f"prepare {case}", timeout=120).data
            assert reply["type"] == "prepared", reply
            got[case] = reply["negotiated"]
            worker.request(f"release {case}", timeout=60)
    deployed = got["tls/handshake/tls1.3/default/ecdsa-p256/shared"]
    assert deployed["version"] == 0x0304 and deployed["group"] == 0x001d and deployed["suite"] in TLS13_SUITES
    assert deployed["hello_retry"] == 0
    assert "signature" not in deployed      # TLS 1.3's CertificateVerify is encrypted, and rustls-ffi does not say
    # one X25519 share each way; the server's flight carries the certificate and its signature
    assert 150 < deployed["client_bytes"] < deployed["server_bytes"] < 2000, deployed
    pinned = got["tls/handshake/tls1.3/x25519/ecdsa-p256/shared"]
    assert (pinned["version"], pinned["group"], pinned["suite"], pinned["hello_retry"]) == (0x0304, 0x001d, 0x1301, 0)
    tls12 = got["tls/handshake/tls1.2/default/rsa-2048/new"]     # TLS 1.2's ServerKeyExchange is read in the clear
    assert tls12["version"] == 0x0303 and tls12["group"] == 0x001d and tls12["signature"] in RSA_SCHEMES, tls12
    assert tls12["suite"] in {0xc02f, 0xc030, 0xcca8}
    assert tls12["server_bytes"] > 800      # a 2048-bit certificate, and a 256-byte signature over the key share
    resumed13 = got["tls/resume/tls1.3/ticket/default/ecdsa-p256"]   # the resumed connection: psk_dhe_ke
    assert resumed13["group"] == 0x001d and resumed13["signature"] == 0 and resumed13["hello_retry"] == 0
    resumed12 = got["tls/resume/tls1.2/session-id/x25519/rsa-2048"]  # by session id: no key exchange, no signature
    assert (resumed12["version"], resumed12["group"], resumed12["suite"], resumed12["signature"]) == \
        (0x0303, 0, 0xc02f, 0)
    assert resumed12["server_bytes"] < 300 and resumed12["client_bytes"] > 0
    transfer = got["tls/transfer/tls1.3/default/1024"]
    assert transfer["group"] == 0x001d and transfer["suite"] in TLS13_SUITES and transfer["client_bytes"] > 0


def test_rustls_and_openssl_in_one_interleaved_run(rustls):
    cases = ["tls/handshake/tls1.3/x25519/ecdsa-p256/shared", "tls/resume/tls1.3/ticket/x25519/ecdsa-p256",
             "tls/transfer/tls1.3/aes-128-gcm/16384", "tls/handshake/tls1.3/p-256/ecdsa-p256/shared"]
    result = run_cli("tls", "--lib", "system", "--lib", rustls.name, "--time", "5", "--samples", "3", "--processes",
                     "1", "--json", "--no-store", *[a for c in cases for a in ("--case", c)],
                     )
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    got = {(m["lib"], m["case"]): m for m in run["measurements"]}
    for case in cases[:3]:
        for lib in ("system", rustls.name):
            m = got[(lib, case)]
            assert m["status"] == "ok", m
            # client and server CPU apart, on both backends
            assert sum(m["figures"]["client_cpu_ns"]) > 0 and sum(m["figures"]["server_cpu_ns"]) > 0
    assert got[("system", cases[3])]["status"] == "ok"
    assert got[(rustls.name, cases[3])]["status"] == "n/a"
    libraries = {lib["name"]: lib for lib in run["libs"]}
    assert libraries[rustls.name]["version_string"].startswith("rustls-ffi/")


def test_a_changed_byte_fails_the_rustls_transfer_check(rustls):
    system = installed.find("system")
    env = {"SSLPERF_TRANSFER_FLIP_A_BYTE": "1"}
    with made_by(system, rustls) as cert_dir, \
            Worker(rustls, {"SSLPERF_CERT_DIR": str(cert_dir), "SSLPERF_TLS_PEM_DIR": str(cert_dir), **env}) as worker:
        reply = worker.request("prepare tls/transfer/tls1.3/aes-128-gcm/1024", timeout=120).data
    assert reply["type"] == "error" and "other bytes than the writer wrote" in reply["reason"], reply


def test_rustls_build_variants_are_checked_before_building():
    assert variants.cargo_features(variants.lookup(("ring",), "rustls")) == ["ring"]
    assert variants.cargo_features(variants.lookup((), "rustls")) == ["aws-lc-rs"]
    assert variants.cargo_features(variants.lookup(("pq-first",), "rustls")) == ["aws-lc-rs", "prefer-post-quantum"]
    assert variants.canonical_names(("aws-lc-rs",)) == ()      # the default provider is the build without it
    with pytest.raises(SslperfError, match="each choose rustls' crypto provider"):
        variants.lookup(("ring", "pq-first"), "rustls")
    with pytest.raises(SslperfError, match="does not apply to rustls"):
        variants.lookup(("minimal",), "rustls")
    with pytest.raises(SslperfError, match="does not apply to openssl"):
        variants.lookup(("ring",), "openssl")


def test_memory_per_rustls_connection_is_counted_each_side_apart(rustls):
    result = run_cli("tls", "--memory", "--lib", rustls.name, "--case", "tls/handshake/tls1.3/x25519/ecdsa-p256/shared",
                     "--json", "--no-store")
    assert result.returncode == 0, result.stderr
    (m,) = json.loads(result.stdout)["measurements"]
    assert m["status"] == "ok" and m["note"] == "C allocator statistics (mallinfo2)", m
    for client, server in zip(m["figures"]["client_bytes"], m["figures"]["server_bytes"]):
        # a rustls connection holds kilobytes (its buffers, the handshake's secrets), never nothing
        assert 1_000 < client < 200_000 and 1_000 < server < 200_000, m["figures"]


def test_rustls_handshakes_run_in_threads_on_shared_configs(rustls):
    result = run_cli("tls", "--threads", "1,2", "--thread-seconds", "0.1", "--lib", rustls.name, "--json", "--no-store")
    assert result.returncode == 0, result.stderr
    got = {m["case"]: m for m in json.loads(result.stdout)["measurements"]}
    case = "tls/handshake/tls1.3/x25519/ecdsa-p256/shared"
    assert set(got) == {f"threads/shared/00{n}/{case}" for n in (1, 2)}, got
    for m in got.values():       # every round of each thread count did handshakes
        assert m["status"] == "ok" and m["note"] == "shared" and all(ops > 0 for ops in m["ops"]), m


def test_transfer_over_tcp_is_refused_for_rustls_before_anything_runs(rustls):
    result = run_cli("tls", "transfer", "--tcp", "--lib", rustls.name, "--no-store")
    assert result.returncode == 2 and result.stderr.startswith("error: "), result.stderr
    assert "bulk transfer over loopback TCP is not measured for this library's harness yet" in result.stderr
    assert "OpenSSL-API libraries" in result.stderr
    assert "Traceback" not in result.stderr


def test_across_backends_each_first_handshake_proves_what_was_negotiated(rustls):
    # rustls as client against an OpenSSL server, and OpenSSL as client against a rustls server; and rustls
    # against itself, which cannot be made to use P-256 (n/a, with the reason). Only the shared-SSL_CTX loopback
    # case is asserted on, so only it is run (a handshake case would add its `new` twin, and a failed rustls-rustls
    # pair makes the scheduler wait servers.SERVED_WAIT_S for the server's closing line, once per case).
    case = "tls/loopback/tls1.3/p-256/ecdsa-p256/shared"
    seen = {}
    for server in ("system", rustls.name):
        result = run_cli("tls", "--loopback", "--lib", "system", "--lib", rustls.name, "--server-lib", server,
                         "--case", case, "--requests", "3", "--json", "--no-store")
        assert result.returncode == 0, result.stderr
        for m in json.loads(result.stdout)["measurements"]:
            if m["case"].endswith("/shared"):
                seen[(m["lib"], server)] = m
    assert seen[(rustls.name, "system")]["status"] == "ok"
    assert "tls1.3 TLS13_AES_128_GCM_SHA256 group secp256r1" in seen[(rustls.name, "system")]["note"]
    assert seen[("system", rustls.name)]["status"] == "ok"
    assert "TLSv1.3 TLS_AES_128_GCM_SHA256 group" in seen[("system", rustls.name)]["note"]
    assert seen[(rustls.name, rustls.name)]["status"] == "n/a"
    assert "cannot be told which group" in seen[(rustls.name, rustls.name)]["reason"]
