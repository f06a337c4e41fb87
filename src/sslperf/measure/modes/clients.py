"""GETs from N client threads at once (each request on a new connection) against one server of the library: QUIC
(the server's one event loop taking N connections at once) or TLS 1.3 over TCP (N server worker threads). A case is
`threads/clients/N/<a GET case>`; one round is one loop of the GETs, a sample of all its requests over the loop's
wall time (requests per second), every request's latency kept. The thread counts are cases of their own, so the
scheduler interleaves them with the libraries."""

from __future__ import annotations

from sslperf import figures
from sslperf.libs.model import Lib
from sslperf.measure import servers
from sslperf import pinning
from sslperf.cases.ids import Case, make, parse
from sslperf.measure.modes import base, loopback, quic
from sslperf.results import Measurement

MODE_NAME = "clients"


def case(of: Case, n: int) -> Case:
    return make("threads", mode=MODE_NAME, size=n, case=of.id)


class Session(base.Session):
    def __init__(self, mode, ctx, cases):
        super().__init__(mode, ctx, cases)
        servers.placement(ctx.run)
        cpus = ctx.run.environment.get("cpus") or 1
        ctx.run.warnings.append(f"the server runs on one CPU and every client thread on another ({cpus} CPUs here): "
                                "the figures show how each server copes with N connections at once on one core, not "
                                "how it scales across cores.")

    def prepare(self, case: Case, libs: list[Lib]) -> base.Prepared:
        n = int(case.part("size"))
        results = {lib.name: Measurement.of(case, lib.name, unit="ops", note=MODE_NAME,
                                         operation=f"{n} client thread{'s' if n > 1 else ''}") for lib in libs}
        return base.Prepared(results, self.passes)

    def take(self, case: Case, lib: Lib) -> Measurement:
        inner, n = parse(case.part("case")), int(case.part("size"))
        count = self.ctx.options_of(quic.MODE).requests
        got = (quic.get(lib, lib, self.ctx.cert_dir, inner, count, n) if inner.template == "tls/quic"
               else loopback.get(lib, lib, self.ctx.cert_dir, inner, count, n))
        result = Measurement.of(case, lib.name, got.status, got.reason, unit="ops")
        if got.status == "ok":          # all the round's requests over the whole loop's time: one sample
            result.ops, result.wall_ns = [len(got.wall_ns)], [got.figures[figures.LOOP][0]]
            result.figures = {k: v for k, v in got.figures.items() if k != figures.LOOP}
            if figures.WAIT in result.figures:      # the round's wait, all its threads': one value, as its sample
                result.figures[figures.WAIT] = [sum(result.figures[figures.WAIT])]
        return result

    def cpus(self) -> set[int]:
        return set(pinning.loopback_cpus())


MODE = base.Mode("clients", "GETs from N client threads at once against one server", ("threads",),
                 base.OPENSSL_ONLY, (figures.TOTAL, figures.PRETRANSFER, figures.CLIENT_CPU, figures.SERVER_CPU,
                                     figures.SERVED, figures.WAIT), base.WALL_ONLY, Session,
                 where=(("mode", (MODE_NAME,)),))
