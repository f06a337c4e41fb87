"""Real servers under load: nginx and HAProxy from Debian's source packages built against each library (all of
them before the first round; a library a server cannot be built against gets its row with the reason), each round
one wrk run of the round's time against a freshly started server (sslperf.serve_load), checked against its
scenario."""

from __future__ import annotations

from sslperf import figures
from sslperf.libs.model import Lib
from sslperf.cases.ids import Case
from sslperf.measure.modes import base
from sslperf.results import Measurement
from sslperf.serve_load import rounds as serve_rounds



class Session(base.Session):
    def __init__(self, mode, ctx, cases):
        super().__init__(mode, ctx, cases)
        self.plan: serve_rounds.Plan = self.options
        self.builds = serve_rounds.prepare(ctx.libs, cases, self.plan, ctx.build_progress)
        ctx.run.settings["serve"] = self.plan.describe()
        ctx.run.warnings += self.plan.warnings()

    def take(self, case: Case, lib: Lib) -> Measurement:
        return serve_rounds.one(case, lib, self.ctx.cert_dir, self.plan,
                                self.builds[(case.part("server"), lib.name)])

    def finish(self, results: list[Measurement]) -> list[str]:
        return serve_rounds.client_bound(results)

    def cpus(self) -> set[int]:
        servers, clients = self.plan.cpus()
        return set(servers) | set(clients)


MODE = base.Mode("serve", "real servers (nginx, HAProxy) under load by wrk", ("tls/serve",), base.OPENSSL_ONLY,
                 (figures.CLIENT_CPU, figures.LATENCY_MEAN, *figures.LATENCY_PERCENTILE.values(), figures.LOGGED,
                  figures.RESUMED, figures.FAILED, figures.SERVER_CPUS, figures.CLIENT_CPUS),
                 ("cpu", "wall"), Session, options=serve_rounds.Plan,
                 lacks="cannot be built against this library: nginx's and HAProxy's TLS code calls the OpenSSL API")
