"""What `serve-load`'s options become before anything runs: the cases (checked), where the servers and wrk run
(CPU lists checked against this process's CPUs, never overlapping when both are given), how wrk loads them, and the
request the scheduler takes (the serve mode's options are the Plan)."""

from __future__ import annotations

from sslperf.errors import SslperfError
from sslperf.measure import plan, suites
from sslperf import pinning
from sslperf.measure.request import Request
from sslperf.serve_load import cases as serve_cases
from sslperf.serve_load.load import Load, check_port
from sslperf.serve_load.rounds import Plan


def chosen_cases(case_ids, servers, scenarios, protocols, groups, certs) -> list:
    """The cases given (each a real-server case), else every combination of the choices (or their defaults)."""
    if case_ids:
        chosen = [suites.parse_case(c) for c in case_ids]
        strays = [c.id for c in chosen if c.template != "tls/serve"]
        if strays:
            raise SslperfError(f"{strays[0]} is not a real-server case.",
                               hint="serve-load measures tls/serve/SERVER/SCENARIO/PROTOCOL/GROUP/CERT cases; "
                                    "`sslperf serve-load --list` shows them.")
        return chosen
    return serve_cases(servers or ("nginx",), scenarios or ("new", "keepalive"), protocols or ("tls1.3",),
                       groups or ("x25519",), certs or ("rsa-2048",))


def cpus(text: str | None, option: str) -> tuple[int, ...] | None:
    """`0,1` → (0, 1), each a CPU this process may run on; None when not given."""
    if text is None:
        return None
    try:
        found = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise SslperfError(f"{option} {text} is not a list of CPU numbers.", hint=f"e.g. {option} 0 or 0,1.") from None
    allowed = pinning.allowed()
    strays = [c for c in found if c not in allowed]
    if strays or not found:
        raise SslperfError(f"{option} {text}: CPU {strays[0] if strays else text} is not one this process may run on.",
                           hint=f"Choose among {shown(tuple(allowed))}.")
    return found


def shown(cpus: tuple[int, ...]) -> str:
    return ",".join(str(c) for c in cpus)


def request(p: dict) -> Request:
    """serve-load's parsed options as the request the scheduler takes."""
    cases = chosen_cases(p["case_ids"], p["servers"], p["scenarios"], p["protocols"], p["groups"], p["certs"])
    if p["port"] is not None:
        check_port(p["port"])
    serve_plan = Plan(Load(p["connections"], p["seconds"], p["warmup"]), cpus(p["server_cpus"], "--server-cpus"),
                      cpus(p["client_cpus"], "--client-cpus"), p["port"], p["server_version"])
    servers_at, clients_at = serve_plan.cpus()
    if p["server_cpus"] and p["client_cpus"] and set(servers_at) & set(clients_at):
        raise SslperfError(f"The server CPUs ({shown(servers_at)}) and wrk's ({shown(clients_at)}) overlap, so the "
                           "client would compete with the server it measures.",
                           hint="Give --server-cpus and --client-cpus CPUs apart.")
    settings = plan.settings(1, 1, None, True, p["round_count"])
    return Request("sslperf serve-load", list(p["lib_names"] or ("system",)), [c.id for c in cases], settings,
                   {"serve": serve_plan}, {"suite": "serve-load", "metric": p["metric"]})
