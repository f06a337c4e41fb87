"""GETs each on a new QUIC connection over loopback UDP (OpenSSL 3.5+'s own QUIC stack, ALPN "sslperf", the
request on one bidirectional stream), over an emulated network path when the case id names one
(`tls/quic/x25519/ecdsa-p256/rtt50ms-loss1pct`: sslperf's user-space UDP relay). Measured beside TLS 1.3 over
TCP of the same library, group and certificate (a loopback case of the same run), so that each QUIC row says
what it costs against TCP+TLS."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from sslperf import figures
from sslperf.libs import installed
from sslperf.libs.model import Lib
from sslperf.measure import netpath, servers
from sslperf import pinning
from sslperf.cases.ids import Case, make
from sslperf.measure.modes import base, loopback
from sslperf.results import Measurement, cpu_per_request

# The groups operators weigh, and RSA's bigger flight: what `tls quic` measures when no case is chosen.
SHAPES = (("x25519", "ecdsa-p256"), ("p-256", "ecdsa-p256"), ("x25519mlkem768", "ecdsa-p256"),
          ("x25519", "rsa-2048"))


@dataclass(frozen=True)
class Options:
    requests: int = 30                  # GETs per library per round
    server: str | None = None           # the server's library (None: each client's own)


def case(group: str, cert: str, path: netpath.NetPath = netpath.NetPath()) -> Case:
    return make("tls/quic", group=group, cert=cert, path=path.id)


def tcp_case(group: str, cert: str) -> Case:
    """The TCP+TLS 1.3 GET case a QUIC GET of `group` and `cert` stands beside."""
    return loopback.case("tls1.3", group, cert, "shared")


def cases(shapes, path: netpath.NetPath) -> list[Case]:
    """Each shape's QUIC case and, on loopback as it is, the TCP case beside it (the relay carries UDP only)."""
    return [c for group, cert in shapes
            for c in ((tcp_case(group, cert),) if not path.emulated else ()) + (case(group, cert, path),)]


def describe_path(run, path: netpath.NetPath) -> None:
    """The run records its path and whether the kernel could have emulated it."""
    run.environment["path"] = path.describe()
    if path.emulated:
        netem = netpath.kernel_netem()
        run.environment["kernel_netem"] = netem
        warning = (f"the path is emulated by sslperf's user-space UDP relay, for QUIC only (kernel netem: "
                   f"{netem.removeprefix('no: ')}); there are no TCP rows over it, and these rows are compared only "
                   "with rows over the same path.")
        if warning not in run.warnings:
            run.warnings.append(warning)


class Session(base.Session):
    def __init__(self, mode, ctx, cases_):
        super().__init__(mode, ctx, cases_)
        self.server = installed.find(self.options.server) if self.options.server else None
        servers.placement(ctx.run)
        for path in {netpath.from_id(c.part("path")) for c in cases_}:
            describe_path(ctx.run, path)

    def take(self, case: Case, lib: Lib):
        return get(lib, self.server or lib, self.ctx.cert_dir, case, self.options.requests)

    def finish(self, results: list[Measurement]) -> list[str]:
        for m, tcp in base.beside(self.mode, results):
            against_tcp(m, tcp)
        return []

    def cpus(self) -> set[int]:
        return set(pinning.loopback_cpus())


def get(lib: Lib, server: Lib, cert_dir, c: Case, count: int, threads: int = 1) -> Measurement:
    """`count` sequential GETs of `c` from `lib`'s client to a server of `server`, each on a new QUIC connection
    (with `threads`, that many client threads at once, the server's one event loop taking them all)."""
    path = netpath.from_id(c.part("path"))
    group, cert = c.part("group"), c.part("cert")
    m = Measurement.of(c, lib.name, unit="ops", note=f"server: {server.name}; path: {path.describe()}")
    return servers.requests(m, lib, server, cert_dir, ("quic-server", str(cert_dir), group, cert),
                            ("quic-get", group, cert), count, path, threads)


def against_tcp(quic_m: Measurement, tcp: Measurement) -> None:
    """The QUIC result's note says what it costs against TLS 1.3 over TCP of the same library, group and
    certificate: median time to a finished handshake and to the whole response, and the server's CPU time per
    request."""
    if quic_m.status != "ok" or tcp.status != "ok":
        return
    ratios = [statistics.median(quic_m.figures[k]) / statistics.median(tcp.figures[k])
              for k in (figures.PRETRANSFER, figures.TOTAL)]
    quic_m.note += f"; against TCP+TLS 1.3: handshake ×{ratios[0]:.2f}, whole request ×{ratios[1]:.2f}"
    cpu = [cpu_per_request(m) for m in (quic_m, tcp)]
    if all(cpu):
        quic_m.note += f", server CPU per request ×{cpu[0][0] / cpu[1][0]:.2f}"


MODE = base.Mode("quic", "QUIC GETs over loopback UDP", ("tls/quic",), base.OPENSSL_ONLY,
                 loopback.MODE.figures, base.WALL_ONLY, Session, options=Options,
                 beside=lambda c: tcp_case(c.part("group"), c.part("cert")))
