"""Memory per QUIC connection over loopback UDP (OpenSSL 3.5+): N clients, each on its own socket, and one
listener in one process, the sockets not counted; measured beside a TLS 1.3 connection's (the memory mode's case of
the same group and certificate), so each QUIC row says how many times a TLS 1.3 connection's bytes it holds."""

from __future__ import annotations

from sslperf.libs.model import Lib
from sslperf.cases.ids import Case, make
from sslperf.measure.modes import base, memory
from sslperf.results import Measurement


def case(group: str, cert: str) -> Case:
    return make("tls/quic-memory", group=group, cert=cert)


def cases(shapes) -> list[Case]:
    """Each shape's TLS 1.3 memory case, then its QUIC one."""
    return [c for group, cert in shapes for c in (memory.case("tls1.3", group, cert), case(group, cert))]


class Session(base.Session):
    fixed_passes = 1

    def take(self, case: Case, lib: Lib) -> Measurement:
        connections = self.ctx.options_of(memory.MODE).connections
        return memory.counted(Measurement.of(case, lib.name, unit="bytes"), lib, self.ctx.cert_dir,
                              ("quic-memory", case.part("group"), case.part("cert")), connections)

    def finish(self, results: list[Measurement]) -> list[str]:
        for m, tcp in base.beside(self.mode, results):
            against_tcp(m, tcp)
        return []


def against_tcp(quic_m: Measurement, tcp: Measurement) -> None:
    """The QUIC result's note: how many times a TLS 1.3 connection's bytes a QUIC connection holds, client and
    server, at the largest connection count both reached."""
    if quic_m.status != "ok" or tcp.status != "ok":
        return
    counts = {id(m): m.figures[memory.figures.CONNECTIONS] for m in (quic_m, tcp)}
    n = max(set(counts[id(quic_m)]) & set(counts[id(tcp)]), default=None)
    if n is None:
        return
    at = {id(m): counts[id(m)].index(n) for m in (quic_m, tcp)}
    ratio = {side: quic_m.figures[side][at[id(quic_m)]] / tcp.figures[side][at[id(tcp)]]
             for side in (memory.figures.CLIENT_BYTES, memory.figures.SERVER_BYTES)}
    quic_m.note += (f"; against TCP+TLS 1.3 (N={n}): client ×{ratio[memory.figures.CLIENT_BYTES]:.2f}, "
                    f"server ×{ratio[memory.figures.SERVER_BYTES]:.2f}")


MODE = base.Mode("quic-memory", "memory per QUIC connection", ("tls/quic-memory",), base.OPENSSL_ONLY,
                 memory.MODE.figures, base.WALL_ONLY, Session,
                 beside=lambda c: memory.case("tls1.3", c.part("group"), c.part("cert")))
