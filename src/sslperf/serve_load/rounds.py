"""A `tls/serve/...` case as results: the servers built for every library before anything is measured (a library
a server cannot be built against gets its row with the reason), then one round at a time as a measurement —
requests over the round's wall time (the rate), the server's CPU time (CPU per request), wrk's latency
percentiles, the server's and the client's CPU use, and the server's own count of resumed sessions — each round
checked against its scenario. measure/rounds.py interleaves the rounds across libraries and merges them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sslperf import figures, tempdirs
from sslperf.errors import BuildFailed, SslperfError
from sslperf.libs.model import Lib
from sslperf import pinning
from sslperf.cases.ids import Case
from sslperf.results import Measurement, serve_busy
from sslperf.serve_load import build, config, debian, load

ERRORS_AT_MOST = 0.01     # of a round's requests: more failed requests than this and the round is an error
MANY_CORES = 8            # server CPUs from which a run shows how the library scales across cores


@dataclass
class Plan:
    """How every round of a run is driven."""
    load: load.Load = field(default_factory=load.Load)
    server_cpus: tuple[int, ...] | None = None      # None: the first half of the CPUs (the first, up to 3)
    client_cpus: tuple[int, ...] | None = None      # None: every other CPU (the last when there is one)
    port: int | None = None                         # None: a free port per round
    version: str | None = None                      # the server's version (Debian's newest when None)

    def describe(self) -> dict:
        """What a run records of how it loaded the servers."""
        servers, clients = self.cpus()
        return {"connections": self.load.connections, "seconds": self.load.seconds,
                "warmup_seconds": self.load.warmup_seconds, "server_cpus": list(servers),
                "client_cpus": list(clients), "client": f"wrk {load.wrk_version()}",
                "version": self.version or "newest in Debian's suites"}

    def warnings(self) -> list[str]:
        """What a reader of the figures must know about where they were measured."""
        servers, clients = self.cpus()
        said = []
        if len(servers) < MANY_CORES:
            said.append(f"Server on CPU {_cpus(servers)} ({len(servers)} worker{'s' if len(servers) > 1 else ''}), "
                        f"wrk on CPU {_cpus(clients)}: so few server CPUs cannot show how the library scales over "
                        "many cores (lock contention, per-core caches); `sslperf scale` sweeps the library itself.")
        if set(servers) & set(clients):
            said.append(f"The server and wrk share CPU {_cpus(tuple(set(servers) & set(clients)))} (this process "
                        "may use no other): each rate is both sides' work, and busy shares overlap.")
        return said

    def cpus(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(the server's CPUs: one worker each, the client's: one wrk thread each). By default, from 4 CPUs on, the
        server gets the first half and wrk the rest; below that the first CPU and the others."""
        allowed = pinning.allowed()
        server, client = pinning.loopback_cpus()
        servers = self.server_cpus or (tuple(allowed[:len(allowed) // 2]) if len(allowed) >= 4 else (server,))
        return servers, self.client_cpus or tuple(c for c in allowed if c not in servers) or (client,)


def _cpus(cpus: tuple[int, ...]) -> str:
    return ",".join(str(c) for c in cpus)


def parts(case: Case) -> dict[str, str]:
    return {name: case.part(name) for name in ("server", "scenario", "protocol", "group", "cert")}


def prepare(libs: list[Lib], cases: list[Case], plan: Plan, progress=None) -> dict[tuple[str, str], object]:
    """(server, library) → its build, or the BuildFailed/SslperfError that says why there is none. A
    --server-version that Debian does not offer for a server is the input that is wrong: refused before any
    build, for every library."""
    builds: dict[tuple[str, str], object] = {}
    servers = list(dict.fromkeys(parts(c)["server"] for c in cases))
    if plan.version:
        for server in servers:
            debian.choose(server, plan.version)
    for server in servers:
        for lib in libs:
            try:
                builds[(server, lib.name)] = build.build(server, lib, progress, plan.version)
            except (BuildFailed, SslperfError) as exc:
                builds[(server, lib.name)] = exc
    return builds


def one(case: Case, lib: Lib, cert_dir: Path, plan: Plan, built: object) -> Measurement:
    """One round of `case` on the server built against `lib` (`built`, from prepare)."""
    p = parts(case)
    server_cpus, client_cpus = plan.cpus()
    m = Measurement.of(case, lib.name, unit="ops")
    if not isinstance(built, build.ServerBuild):
        m.status, m.reason = "n/a", getattr(built, "message", str(built))
        return m
    setup = config.Setup(p["server"], config.SCENARIOS[p["scenario"]], p["protocol"], p["group"], p["cert"],
                         plan.port or load.free_port(), server_cpus, cert_dir, load.run_dir())
    try:
        r = load.one_round(built, setup, plan.load, client_cpus)
    except SslperfError as exc:
        m.status, m.reason = "error", exc.message
        return m
    finally:
        tempdirs.remove(setup.run_dir)
    m.ops, m.wall_ns, m.cpu_ns = [r.requests], [round(r.seconds * 1e9)], [round(r.server_cpu_s * 1e9)]
    m.figures = {**{figures.LATENCY_PERCENTILE[p]: [round(us * 1000)] for p, us in r.latency_us.items()},
                 figures.LATENCY_MEAN: [round(r.mean_us * 1000)], figures.CLIENT_CPU: [round(r.client_cpu_s * 1e9)],
                 figures.LOGGED: [r.logged], figures.RESUMED: [r.resumed], figures.FAILED: [sum(r.errors.values())],
                 figures.SERVER_CPUS: [len(server_cpus)], figures.CLIENT_CPUS: [len(client_cpus)]}
    m.note = (f"{built.label} (Debian {built.debian}); {r.described}; server on CPU "
              f"{','.join(map(str, server_cpus))}, wrk {load.wrk_version()} on CPU {','.join(map(str, client_cpus))} "
              f"with {plan.load.connections} connections")
    problem = _scenario_problem(setup.scenario, r, plan.load.connections)
    if problem:
        m.status, m.reason = "error", problem
    return m


def _scenario_problem(scenario: config.Scenario, r: load.Round, connections: int) -> str | None:
    """Why a round did not measure what its scenario names, or None. Each of wrk's `connections` begins with a
    full handshake: a resumed round's share is counted on the requests after those (on a slow or busy machine a
    1-second round of 615 requests had 64 of them, and 84% resumed in all)."""
    failed = sum(r.errors.values())
    if r.requests == 0 or failed > ERRORS_AT_MOST * r.requests:
        shown = ", ".join(f"{k} {v}" for k, v in r.errors.items() if v)
        return f"{failed} of {r.requests} requests failed ({shown or 'no requests'})"
    if scenario.name == "new" and r.resumed:
        return f"the server resumed {r.resumed} of {r.logged} sessions with resumption off"
    if scenario.name == "resumed" and r.resumed < load.RESUMED_AT_LEAST * max(r.logged - connections, 1):
        return (f"only {r.resumed} of {r.logged} requests were on resumed sessions (at least "
                f"{load.RESUMED_AT_LEAST:.0%} expected): the client did not resume")
    return None



def client_bound(measurements: list[Measurement]) -> list[str]:
    """The warning for results whose client (wrk) was the busier side: their rate is the client's."""
    bound = [(m, shares) for m in measurements if m.family == "tls-serve" and (shares := serve_busy(m))
             and shares[1] > load.CLIENT_SATURATED and shares[1] > shares[0] + 0.1]
    if not bound:
        return []
    names = ", ".join(f"{m.case} on {m.lib} (client {c:.0%}, server {s:.0%})" for m, (s, c) in bound[:3])
    return [f"In {len(bound)} result(s) wrk kept its CPUs busier than the server did ({names}"
            f"{' …' if len(bound) > 3 else ''}): their rate is the client's, not the server's. Compare them by the "
            "server's CPU per request (--metric cpu; bisect's default), or give wrk more CPUs (--client-cpus)."]
