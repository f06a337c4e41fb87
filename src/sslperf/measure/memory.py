"""Memory per TLS connection, through the harness's `memory` command: N
client/server pairs taken through the handshake in lockstep, then the bytes
the library holds per established connection (client and server apart) and
the peak during the handshakes; the same for QUIC connections over loopback
UDP (`quic_per_connection`), to stand beside TLS 1.3's. Counted through the library's allocator
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
    return _counted(m, lib, cert_dir, ("memory", handshake_case), counts)


def quic_per_connection(lib: Lib, cert_dir: Path, group: str, cert: str, counts: list[int]) -> Measurement:
    """The same for QUIC connections over loopback UDP (OpenSSL 3.5+): N clients, each on its own socket, and
    one listener in one process, the sockets not counted."""
    m = make("tls/quic-memory", group=group, cert=cert).result(lib.name, unit="bytes")
    return _counted(m, lib, cert_dir, ("quic-memory", group, cert), counts)


def _counted(m: Measurement, lib: Lib, cert_dir: Path, command: tuple[str, ...], counts: list[int]) -> Measurement:
    """`command` (the harness's, without its count) once per connection count, the bytes per connection into `m`."""
    m.extra = {"connections": [], **{figure: [] for figure in FIGURES}}
    for n in counts:
        try:
            reply = call(lib, *command, str(n), timeout=120 + n * 0.05, env=certificates.env(cert_dir),
                         ok_codes=None).last
        except HarnessError as failed:
            reply = {"type": "error", "reason": failed.message}
        if reply.get("type") != "memory":
            reason = reply.get("reason") or "the harness gave no result"
            if m.extra["connections"]:            # the smaller counts stay measured; the note says where it stopped
                m.note += f"; N={n:,} failed: {reason}"
                return m
            m.status = "n/a" if reply.get("type") == "na" else "error"
            m.reason = reason
            return m
        m.note = reply["method"] + (f"; {reply['checked']}" if reply.get("checked") else "")
        m.extra["connections"].append(n)
        m.extra["client_bytes"].append(round(reply["client_bytes"] / n))
        m.extra["server_bytes"].append(round(reply["server_bytes"] / n))
        m.extra["established_bytes"].append(round((reply["established"] - reply["baseline"]) / n))
        m.extra["peak_bytes"].append(round((reply["peak"] - reply["baseline"]) / n))
    return m


def against_tcp(quic_m: Measurement, tcp: Measurement) -> Measurement:
    """The QUIC measurement, its note saying how many times the bytes of a TLS 1.3 connection (of the same
    library, group and certificate, counted just before it) a QUIC connection holds, client and server, at the
    largest connection count both reached."""
    if quic_m.status == "ok" and tcp.status == "ok":
        n = max(set(quic_m.extra["connections"]) & set(tcp.extra["connections"]), default=None)
        if n is not None:
            at = {m.case: m.extra["connections"].index(n) for m in (quic_m, tcp)}
            ratio = {side: quic_m.extra[side][at[quic_m.case]] / tcp.extra[side][at[tcp.case]]
                     for side in ("client_bytes", "server_bytes")}
            quic_m.note += (f"; against TCP+TLS 1.3 (N={n}): client ×{ratio['client_bytes']:.2f}, "
                            f"server ×{ratio['server_bytes']:.2f}")
    return quic_m
