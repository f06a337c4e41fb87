"""The drivers every harness backend shares (harness/core/: memory.c, transfer.c, https.c), for real against
OpenSSL, rustls and wolfSSL: each backend gives only its library's calls, so each answers a command alike, and a
server of one library serves a client of another."""

import json

import pytest
from conftest import run_cli

from sslperf.libs import installed
from sslperf.measure.certificates import made_by
from sslperf.measure.harness_client import call

pytestmark = pytest.mark.slow

CASE = "tls/handshake/tls1.3/x25519/ecdsa-p256/shared"
MEMORY_KEYS = {"type", "case", "connections", "method", "baseline", "established", "peak", "server_bytes",
               "client_bytes"}


@pytest.fixture(scope="module")
def libs(built_rustls, built_wolfssl, e2e_env):
    with pytest.MonkeyPatch.context() as patch:
        for key, value in e2e_env.items():
            patch.setenv(key, value)
        yield [installed.find(name) for name in ("system", built_rustls, built_wolfssl)]


def test_memory_per_connection_is_one_reply_of_the_same_fields_on_every_backend(libs):
    with made_by(*libs) as cert_dir:
        env = {"SSLPERF_CERT_DIR": str(cert_dir), "SSLPERF_TLS_PEM_DIR": str(cert_dir)}
        for lib in libs:
            reply = call(lib, "memory", CASE, "5", timeout=300, env=env).last
            assert set(reply) - {"negotiated"} == MEMORY_KEYS, (lib.name, reply)   # negotiated: where recorded
            assert reply["connections"] == 5 and reply["client_bytes"] > 0 and reply["server_bytes"] > 0, reply
            assert reply["baseline"] < reply["established"] <= reply["peak"], reply
            # only what freeing the connections gave back is theirs: the transports outlive them
            assert reply["client_bytes"] + reply["server_bytes"] <= reply["established"] - reply["baseline"] + 4096
            refused = call(lib, "memory", CASE.replace("/shared", "/new"), "5", timeout=60, env=env, ok_codes=(1,))
            assert refused.last["type"] == "error" and "shared" in refused.last["reason"], refused.last


def test_a_client_context_that_cannot_be_made_is_one_refusal_on_every_backend(libs, tmp_path):
    # a CA file that is not there: every backend says so once, before any request (OpenSSL's client used to try
    # each request with a context of its own and report the first handshake's failure instead)
    missing = tmp_path / "no-such-ca.pem"
    for lib in libs:
        done = call(lib, "https-get", "1", str(missing), "tls1.3", "x25519", "ecdsa-p256", "shared", "3",
                    timeout=60, ok_codes=(1,))
        assert [line["type"] for line in done.lines] == ["error"], (lib.name, done.lines)
        assert done.last["reason"].startswith("cannot make the client context"), (lib.name, done.last)


def test_rustls_and_wolfssl_serve_each_other_over_loopback(libs):
    rustls, wolfssl = libs[1], libs[2]
    seen = {}
    for server in (rustls, wolfssl):
        # the shared-SSL_CTX loopback case of CASE alone (CASE would add its `new` twin, whose results the
        # (lib, server) keys below would overwrite unchecked)
        result = run_cli("tls", "loopback", "--lib", rustls.name, "--lib", wolfssl.name, "--server-lib", server.name,
                         "--case", CASE.replace("tls/handshake/", "tls/loopback/"), "--requests", "3", "--rounds", "1",
                         "--json", "--no-store")
        assert result.returncode == 0, result.stderr
        for m in json.loads(result.stdout)["measurements"]:
            seen[(m["lib"], server.name)] = m
    assert len(seen) == 4, sorted(seen)
    for (client, server), m in seen.items():
        assert m["status"] == "ok" and len(m["ops"]) == 3, (client, server, m)
        assert f"server: {server}" in m["note"], m
    assert "TLSv1.3 TLS13-AES128-GCM-SHA256 group X25519" in seen[(wolfssl.name, rustls.name)]["note"]
    assert "tls1.3 TLS13_AES_128_GCM_SHA256 group X25519" in seen[(rustls.name, wolfssl.name)]["note"]
