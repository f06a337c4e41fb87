"""Memory per TLS connection, through the harness's `memory` command: N client/server pairs taken through the
handshake in lockstep, then the bytes the library holds per established connection (client and server apart) and
the peak during the handshakes, for each connection count. Counted through the library's allocator hooks where it
has them (OpenSSL), else from glibc's statistics (BoringSSL, AWS-LC, LibreSSL); each result says which. One round
takes every count; memory does not drift with the clock, so one pass is enough."""

from __future__ import annotations

from dataclasses import dataclass

from sslperf import figures, negotiation
from sslperf.libs.model import Lib
from sslperf.measure import certificates
from sslperf.cases.ids import Case, make
from sslperf.measure.harness_client import HarnessError, call
from sslperf.measure.modes import base
from sslperf.results import Measurement

# The curl regression's two connection shapes: what `tls memory` counts when no case is chosen (`--case
# tls/memory/tls1.3/default/ecdsa-p256` for each library's own groups, `…/dtls1.2/…` for DTLS).
SHAPES = (("tls1.3", "x25519", "ecdsa-p256"), ("tls1.2", "x25519", "rsa-2048"))
PER_COUNT = (figures.CLIENT_BYTES, figures.SERVER_BYTES, figures.ESTABLISHED_BYTES, figures.PEAK_BYTES)


@dataclass(frozen=True)
class Options:
    connections: tuple[int, ...] = (100, 1000)      # connections at once, one count after another


def case(protocol: str, group: str, cert: str) -> Case:
    return make("tls/memory", protocol=protocol, group=group, cert=cert)


class Session(base.Session):
    fixed_passes = 1

    def take(self, case: Case, lib: Lib) -> Measurement:
        handshake = f"tls/handshake/{case.part('protocol')}/{case.part('group')}/{case.part('cert')}/shared"
        return counted(Measurement.of(case, lib.name, unit="bytes"), lib, self.ctx.cert_dir, ("memory", handshake),
                       self.options.connections)


def counted(m: Measurement, lib: Lib, cert_dir, command: tuple[str, ...], counts) -> Measurement:
    """`command` (the harness's, without its count) once per connection count, the bytes per connection into `m`;
    the counts before a failing one stay measured and the note says where it stopped."""
    m.figures = {figures.CONNECTIONS: [], **{figure: [] for figure in PER_COUNT}}
    for n in counts:
        try:
            reply = call(lib, *command, str(n), timeout=120 + n * 0.05, env=certificates.env(cert_dir),
                         ok_codes=None).last
        except HarnessError as failed:
            reply = {"type": "error", "reason": failed.message}
        if reply.get("type") != "memory":
            reason = reply.get("reason") or "the harness gave no result"
            if m.figures[figures.CONNECTIONS]:
                m.note += f"; N={n:,} failed: {reason}"
                return m
            m.status = "n/a" if reply.get("type") == "na" else "error"
            m.reason = reason
            return m
        m.note = reply["method"] + (f"; {reply['checked']}" if reply.get("checked") else "")
        m.negotiated = m.negotiated or negotiation.recorded(reply)
        m.figures[figures.CONNECTIONS].append(n)
        m.figures[figures.CLIENT_BYTES].append(round(reply["client_bytes"] / n))
        m.figures[figures.SERVER_BYTES].append(round(reply["server_bytes"] / n))
        m.figures[figures.ESTABLISHED_BYTES].append(round((reply["established"] - reply["baseline"]) / n))
        m.figures[figures.PEAK_BYTES].append(round((reply["peak"] - reply["baseline"]) / n))
    return m


MODE = base.Mode("memory", "memory per TLS connection", ("tls/memory",), base.ALL_BACKENDS,
                 (figures.CONNECTIONS, *PER_COUNT), base.WALL_ONLY, Session, options=Options)
