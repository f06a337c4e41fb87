"""Memory per TLS connection, through the harness's `memory` command: N
client/server pairs taken through the handshake in lockstep, then the bytes
the library holds per established connection (client and server apart) and
the peak during the handshakes. Counted through the library's allocator
hooks where it has them (OpenSSL), else from glibc's statistics (BoringSSL,
AWS-LC, LibreSSL); each result says which."""

from __future__ import annotations

from pathlib import Path

from sslperf.libs.model import Lib
from sslperf.measure import certificates
from sslperf.measure.case_ids import make
from sslperf.measure.harness_client import HarnessError, call
from sslperf.results import Measurement

# The curl regression's two connection shapes.
CASES = ("tls/handshake/tls1.3/x25519/ecdsa-p256/shared", "tls/handshake/tls1.2/x25519/rsa-2048/shared")
FIGURES = ("client_bytes", "server_bytes", "established_bytes", "peak_bytes")


def per_connection(lib: Lib, cert_dir: Path, handshake_case: str, counts: list[int]) -> Measurement:
    """One measurement of `lib` with a result per connection count: the bytes
    per connection (already divided by N) in extra, N in extra["connections"]."""
    proto, group, cert = handshake_case.split("/")[2:5]
    m = make("tls/memory", protocol=proto, group=group, cert=cert).result(lib.name, unit="bytes")
    m.extra = {"connections": [], **{figure: [] for figure in FIGURES}}
    for n in counts:
        try:
            reply = call(lib, "memory", handshake_case, str(n), timeout=120 + n * 0.05,
                         env=certificates.env(cert_dir), ok_codes=None).last
        except HarnessError as failed:
            m.status, m.reason = "error", failed.message
            return m
        if reply.get("type") != "memory":
            reason = reply.get("reason") or "the harness gave no result"
            m.status = "n/a" if reply.get("type") == "na" else "error"
            m.reason = reason
            return m
        m.note = reply["method"]
        m.extra["connections"].append(n)
        m.extra["client_bytes"].append(round(reply["client_bytes"] / n))
        m.extra["server_bytes"].append(round(reply["server_bytes"] / n))
        m.extra["established_bytes"].append(round((reply["established"] - reply["baseline"]) / n))
        m.extra["peak_bytes"].append(round((reply["peak"] - reply["baseline"]) / n))
    return m
