"""Bulk transfer on one QUIC stream over loopback UDP (through the UDP relay when the case id names an emulated
path): per round a fresh server and client, the client writing the case's write size for the round's time and then
waiting for the server's count of what it read, every byte checked, so the wall time runs until the reader has
everything. Measured beside TLS 1.3 over loopback TCP (kernel TLS off) of the same suite and size."""

from __future__ import annotations

import statistics

from sslperf import figures
from sslperf.libs.model import Lib
from sslperf.measure import certificates, netpath, servers
from sslperf import pinning
from sslperf.cases.ids import Case, make
from sslperf.measure.harness_client import HarnessError, Server, call
from sslperf.measure.modes import base, quic, transfer_tcp
from sslperf.results import Measurement

# OpenSSL's QUIC stack stalls this way (bench/quic_write_stall.py, docs/findings/quic.md).
STALL = (" (OpenSSL's QUIC stack stalls this way when the client offers X25519 alone, as an X25519 case's client "
         "does, more often with large writes; reproduced without sslperf by bench/quic_write_stall.py, "
         "docs/findings/quic.md)")


def case(suite: str, size: int | str, path: netpath.NetPath = netpath.NetPath()) -> Case:
    return make("tls/quic-transfer", suite=suite, size=size, path=path.id)


def cases(in_memory: list[Case], path: netpath.NetPath) -> list[Case]:
    """Per TLS 1.3 in-memory transfer case's suite and size: TCP (on loopback as it is) and QUIC over `path`."""
    shapes = dict.fromkeys((c.part("suite"), c.part("size")) for c in in_memory
                           if c.template == "tls/transfer" and c.part("protocol") == "tls1.3")
    return [c for suite, size in shapes
            for c in ((transfer_tcp.case("tls1.3", suite, size, False),) if not path.emulated else ())
            + (case(suite, size, path),)]


class Session(base.Session):
    def __init__(self, mode, ctx, cases_):
        super().__init__(mode, ctx, cases_)
        servers.placement(ctx.run)
        for path in {netpath.from_id(c.part("path")) for c in cases_}:
            quic.describe_path(ctx.run, path)

    def take(self, case: Case, lib: Lib):
        ms = max(transfer_tcp.MIN_MS, self.ctx.options_of(transfer_tcp.MODE).milliseconds)
        return transfer(lib, self.ctx.cert_dir, case, ms)

    def finish(self, results: list[Measurement]) -> list[str]:
        for m, tcp in base.beside(self.mode, results):
            against_tcp(m, tcp)
        return []

    def cpus(self) -> set[int]:
        return set(pinning.loopback_cpus())


def transfer(lib: Lib, cert_dir, c: Case, milliseconds: int) -> Measurement:
    """One round: a fresh QUIC server and client of `lib`, the client writing for `milliseconds`."""
    suite, size, path = c.part("suite"), int(c.part("size")), netpath.from_id(c.part("path"))
    m = Measurement.of(c, lib.name, unit="bytes", bytes_per_op=size)
    env = certificates.env(cert_dir)
    server_cpu, client_cpu = pinning.loopback_cpus()
    with Server(lib, "quic-transfer-server", str(cert_dir), suite, str(size), env=env, cpu=server_cpu) as running:
        hello = servers.listening(running, m)
        if hello is None:
            return m
        try:
            with servers.relayed(lib, hello["port"], path, server_cpu) as port:
                sent = call(lib, "quic-transfer-client", str(port), hello["ca_file"], suite, str(size),
                            str(milliseconds), timeout=300 + milliseconds / 10, env=env, ok_codes=None,
                            cpu=client_cpu).last
            received = running.line(timeout=120)
        except HarnessError as failed:
            m.status, m.reason = "error", failed.message
            return m
    if not servers.delivered(m, sent, received):
        if m.reason.startswith("stalled"):
            m.reason += STALL
        return m
    servers.took_transfer(m, sent, received)
    m.note = f"{sent['checked']}; one stream; the time runs until the reader has every byte; path: {path.describe()}"
    return m


def against_tcp(quic_m: Measurement, tcp: Measurement) -> None:
    """The QUIC transfer's note says its throughput against TLS 1.3 over TCP."""
    rates = [statistics.median(m.rates()) for m in (quic_m, tcp) if m.status == "ok" and m.ops]
    if len(rates) == 2:
        quic_m.note += f"; against TCP+TLS 1.3: throughput ×{rates[0] / rates[1]:.2f}"


MODE = base.Mode("quic-transfer", "bulk transfer on a QUIC stream over loopback UDP", ("tls/quic-transfer",),
                 base.OPENSSL_ONLY, (figures.CLIENT_CPU, figures.SERVER_CPU), base.WALL_ONLY, Session,
                 beside=lambda c: transfer_tcp.case("tls1.3", c.part("suite"), c.part("size"), False))
