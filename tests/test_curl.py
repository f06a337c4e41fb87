"""A real curl built from the curl-sys crate's source against a library of
the matrix: cached like a library, run in the curl regression's pattern
against the harness's loopback server, and refused with a clear message
where it cannot be built."""

import json
import subprocess
import time
from pathlib import Path

import pytest
from conftest import run_cli

from sslperf.errors import BuildFailed
from sslperf.libs import curl, installed
from sslperf.libs.footprint import Linkage
from sslperf.libs.model import Lib


@pytest.mark.slow
def test_curl_is_built_against_a_built_library_once_and_measures_like_the_harness(built_openssl, in_e2e_cache):
    lib = installed.find(built_openssl)
    asked = time.time()
    with pytest.raises(BuildFailed) as refused:          # the newest curl needs OpenSSL 3.0: said plainly
        curl.build(lib)
    assert "needs OpenSSL 3.0 or later, and openssl-1.1.1w is OpenSSL 1.1.1w" in refused.value.message
    # ... from the versions, before anything was configured (a build writes its log first)
    logs = Path(in_e2e_cache["SSLPERF_CACHE_DIR"]) / "logs"
    assert not [p for p in logs.glob(f"curl-*-{built_openssl}-*.log") if p.stat().st_mtime >= asked]
    assert "--curl 8.17" in refused.value.hint
    first = curl.build(lib, curl_spec="8.17")
    again = curl.build(lib, curl_spec="8.17")
    assert again.cached and again.binary == first.binary                 # the second is the cached one
    banner = subprocess.run([str(again.binary), "--version"], capture_output=True, text=True, timeout=30).stdout
    assert "OpenSSL/1.1.1w" in banner                                # linked with that library, not the system's

    got = both_clients(built_openssl)
    by_curl = got["tls/loopback/tls1.3/x25519/ecdsa-p256/curl"]
    by_harness = got["tls/loopback/tls1.3/x25519/ecdsa-p256/new"]
    assert by_curl["status"] == "ok", by_curl["reason"]
    assert by_curl["note"].startswith("curl 8.17.0 ") and "its own -w timings" in by_curl["note"]
    assert len(by_curl["figures"]["pretransfer_ns"]) == 3
    assert all(0 < p <= t for p, t in zip(by_curl["figures"]["pretransfer_ns"], by_curl["figures"]["total_ns"]))
    assert by_harness["status"] == "ok" and len(by_harness["figures"]["pretransfer_ns"]) == 3


def both_clients(lib: str) -> dict:
    """3 GETs in one round by a real curl 8.17 and by the harness's client, both against `lib`, by case id."""
    result = run_cli("tls", "loopback", "--client", "both", "--curl", "8.17", "--requests", "3", "--rounds", "1",
                     "--lib", lib, "--json", "--no-store")
    assert result.returncode == 0, result.stderr
    return {m["case"]: m for m in json.loads(result.stdout)["measurements"]}


@pytest.mark.slow
@pytest.mark.timing
def test_curl_and_the_harness_client_pay_the_same_order_of_cost_per_new_connection(built_openssl, in_e2e_cache):
    """Both clients make a new SSL_CTX with the 151-certificate CA file per request (measured times: alone)."""
    curl.build(installed.find(built_openssl), curl_spec="8.17")
    got = both_clients(built_openssl)
    median = lambda xs: sorted(xs)[len(xs) // 2]        # noqa: E731
    ratio = median(got["tls/loopback/tls1.3/x25519/ecdsa-p256/curl"]["figures"]["pretransfer_ns"]) / \
        median(got["tls/loopback/tls1.3/x25519/ecdsa-p256/new"]["figures"]["pretransfer_ns"])
    assert 0.3 < ratio < 3, ratio


def test_a_library_curl_cannot_build_against_is_refused_with_a_clear_message(sslperf_dirs, tmp_path):
    prefix = tmp_path / "not-openssl"
    (prefix / "include" / "openssl").mkdir(parents=True)
    (prefix / "include" / "openssl" / "ssl.h").write_text("#error this is not a TLS library\n")
    (prefix / "lib").mkdir()
    for name in ("libssl.a", "libcrypto.a"):
        (prefix / "lib" / name).write_bytes(b"not an archive")
    # It says it is an OpenSSL new enough for any curl: the refusal comes from the build that fails, not the version.
    fake = Lib("fake-tls", "registered", "openssl", "3.5.0", (), prefix,
               Linkage([f"-I{prefix / 'include'}"], [str(prefix / "lib" / "libssl.a")], static=True), {})
    with pytest.raises(BuildFailed) as refused:
        curl.build(fake)
    message = refused.value.message
    assert message.startswith("curl ") and "cannot be built against fake-tls" in message
    assert "step failed" in message and "Traceback" not in message
    assert "curl-like client" in refused.value.hint
    cache, _ = sslperf_dirs
    assert not list((cache / "curl").glob("*fake-tls*"))          # nothing that looks built is left


def test_client_needs_loopback(sslperf_dirs):
    result = run_cli("tls", "--client", "curl")
    assert result.returncode == 2 and "--client belongs to `sslperf tls loopback`" in result.stderr
