"""HTTPS GETs over loopback TCP with the harness's own client (curl's pattern in its 1.1.1 → 3.0 regression): per
round a fresh server of the server's library on one CPU and a client on another, one warm-up GET, then the round's
GETs, each timed to the TCP connection, the finished handshake and the whole response; the client makes a new
SSL_CTX with a CA load per request (`new`, as curl did) or shares one (`shared`)."""

from __future__ import annotations

from dataclasses import dataclass

from sslperf import figures
from sslperf.libs import installed
from sslperf.libs.model import Lib
from sslperf.measure import servers
from sslperf.cases.ids import Case, make
from sslperf.measure.modes import base
from sslperf.results import Measurement



@dataclass(frozen=True)
class Options:
    requests: int = 30                  # GETs per library per round
    server: str | None = None           # the server's library (None: each client's own)


def case(protocol: str, group: str, cert: str, client: str) -> Case:
    return make("tls/loopback", protocol=protocol, group=group, cert=cert, client=client)


def get(lib: Lib, server: Lib, cert_dir, c: Case, count: int, threads: int = 1):
    """`count` sequential GETs of `c` from `lib`'s client to a server of `server` (with `threads`, that many
    client threads at once, `count` each, and as many server workers): one round's measurement."""
    proto, group, cert, ctx = (c.part(p) for p in ("protocol", "group", "cert", "client"))
    m = Measurement.of(c, lib.name, unit="ops", note=f"server: {server.name}")
    return servers.requests(m, lib, server, cert_dir, ("https-server", str(cert_dir), proto, group, cert),
                            ("https-get", proto, group, cert, ctx), count, threads=threads)


class Session(base.Session):
    def __init__(self, mode, ctx, cases):
        super().__init__(mode, ctx, cases)
        self.server = installed.find(self.options.server) if self.options.server else None
        servers.placement(ctx.run)
        ctx.run.settings.setdefault("requests", self.options.requests)
        if self.server:
            ctx.run.settings["server_lib"] = self.server.name

    def take(self, case: Case, lib: Lib):
        return get(lib, self.server or lib, self.ctx.cert_dir, case, self.options.requests)

    def cpus(self) -> set[int]:
        return set(servers.pinning.loopback_cpus())


MODE = base.Mode("loopback", "HTTPS GETs over loopback TCP", ("tls/loopback",), base.ALL_BACKENDS,
                 (figures.CONNECT, figures.PRETRANSFER, figures.TOTAL, figures.LOOP, figures.CLIENT_CPU,
                  figures.SERVER_CPU, figures.SERVED, figures.WAIT), base.WALL_ONLY, Session,
                 where=(("client", ("new", "shared")),), options=Options)
