"""Loopback cases (a real server and client over 127.0.0.1: GETs over TCP or QUIC, bulk transfers, over an
emulated path or not, and real servers under load, tls/serve) measured the way `bisect` and `track` compare libraries: in rounds, each round every library
once in turn, so drift hits them alike, and each round's samples marked as the runner marks a worker process's, so
the comparison pairs them round by round.

One round of a GET case is `requests` GETs, each a sample (its total time); one round of a transfer case is one
fresh server and client writing for the sample time. The case id says everything else: group, certificate, suite,
size and the emulated path (`tls/quic/x25519/ecdsa-p256/rtt50ms-loss1pct`). One round of a serve case is one
wrk run of the sample time against a freshly started server (sslperf.serve_load)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sslperf.errors import SslperfError
from sslperf.libs.model import Lib
from sslperf.measure import certificates, loopback, netpath
from sslperf.measure.case_ids import Case
from sslperf.measure.plan import TRANSFER_TCP_MIN_MS
from sslperf.measure.recording import new_run, record
from sslperf.measure.runner import Progress, Settings
from sslperf.results import PROCESS_KEY, Measurement, Run
from sslperf.serve_load import load as serve_load
from sslperf.serve_load import rounds as serve_rounds

REQUESTS = 30          # GETs per library per round, as `sslperf tls --quic/--loopback` make by default
KINDS = ("quic", "quic-transfer", "loopback", "transfer-tcp", "serve")      # the id's second part


def handles(case: Case) -> bool:
    """Whether `case` runs over loopback (here) rather than in the runner's workers."""
    parts = case.id.split("/")
    return parts[0] == "tls" and parts[1] in KINDS


def serves(case: Case) -> bool:
    """Whether `case` is a real server under load (tls/serve/...)."""
    return case.id.startswith("tls/serve/")


def metric(requested: str, case: Case | None = None) -> tuple[str, str]:
    """The metric a loopback case is compared by, and why: wall time, as a server and a client in two processes
    cannot be counted by one callgrind; for a real server, its CPU time per request by default, as on two CPUs the
    client (wrk) can be what sets the rate."""
    if case is not None and serves(case):
        if requested in ("auto", "cpu"):
            return "cpu", ("real server: its CPU time per request (on few CPUs the load generator can set the "
                           "rate)" if requested == "auto" else "asked for: the server's CPU time per request")
        if requested == "wall":
            return "wall", "asked for: requests per second"
        raise SslperfError(f"--metric {requested} cannot measure a real server: it is timed by the wall clock "
                           "(requests/s) and by its CPU time per request.", hint="Use --metric cpu, wall or auto.")
    if requested in ("auto", "wall"):
        return "wall", ("loopback case: a server and a client process, timed by the wall clock"
                        if requested == "auto" else "asked for")
    raise SslperfError(f"--metric {requested} cannot measure a loopback case: its server and client are two "
                       "processes, timed together by the wall clock.", hint="Use --metric wall (or auto).")


def one(case: Case, lib: Lib, cert_dir: Path, target_ms: float, serving: Serving) -> Measurement:
    """One round of `case` on `lib` (a server and client of `lib`; a real server built against `lib`, loaded by
    wrk as `serving` says, its build made before the rounds)."""
    parts = case.id.split("/")
    kind, rest = parts[1], parts[2:]
    ms = int(max(target_ms, TRANSFER_TCP_MIN_MS))
    if kind == "serve":
        return serve_rounds.one(case, lib, cert_dir, serving.plan, serving.builds[(rest[0], lib.name)])
    if kind == "quic":
        return loopback.quic(lib, lib, cert_dir, rest[0], rest[1], REQUESTS, netpath.from_id(_at(rest, 2)))
    if kind == "quic-transfer":
        return loopback.quic_transfer(lib, cert_dir, rest[0], int(rest[1]), ms, 1, netpath.from_id(_at(rest, 2)))
    if kind == "loopback":
        if rest[3] == "curl":
            raise SslperfError(f"{case.id} is timed by a curl process per request; bisect and track measure the "
                               "harness's own client.", hint=f"Use {'/'.join(parts[:5])}/shared (or /new).")
        return loopback.loopback(lib, lib, cert_dir, *rest[:3], rest[3], REQUESTS)
    return loopback.transfer(lib, cert_dir, rest[0], rest[1], int(rest[2]), ms, 1, rest[3] == "ktls")


def _at(parts: list[str], index: int) -> str | None:
    return parts[index] if len(parts) > index else None


def merged(rounds: list[Measurement]) -> Measurement:
    """One library's rounds as one measurement: every round's samples, each marked with its round; the first
    failure (status and reason) if a round failed."""
    m = rounds[0]
    failed = next((r for r in rounds if r.status != "ok"), None)
    if failed is not None:
        m.status, m.reason = failed.status, failed.reason
        m.ops, m.wall_ns, m.cpu_ns = [], [], []
        return m
    marks = [i for i, r in enumerate(rounds) for _ in r.wall_ns]
    for key in ("ops", "wall_ns", "cpu_ns"):
        setattr(m, key, [v for r in rounds for v in getattr(r, key)])
    m.extra = {**(m.extra or {}), PROCESS_KEY: marks}
    for r in rounds[1:]:
        for key, values in (r.extra or {}).items():
            if isinstance(values, list) and isinstance(m.extra.get(key), list) and key != PROCESS_KEY:
                m.extra[key] = m.extra[key] + values
    return m


@dataclass
class Serving:
    """How real servers are driven (serve_load.rounds.Plan) and their builds, made before any round."""
    plan: serve_rounds.Plan
    builds: dict


def run(libs: list[Lib], cases: list[Case], settings: Settings, store, source: str,
        extra_settings: dict | None = None, progress: Progress | None = None, cert_dir: Path | None = None,
        plan: serve_rounds.Plan | None = None, build_progress=None) -> Run:
    """`cases` on `libs`, each case in settings.processes rounds (at least 3), each round every library once in
    turn; each library's rounds merged into one result per case, kept as the case ends. Servers a serve case
    needs are built first (`build_progress`)."""
    rounds = max(settings.processes, 3)
    run_ = new_run(libs, {"suite": "loopback-rounds", "rounds": rounds, "requests": REQUESTS,
                          "target_ms": settings.target_ms, **(extra_settings or {})})
    served = [c for c in cases if serves(c)]
    serving = Serving(plan or serve_rounds.Plan(serve_load.Load(seconds=max(1.0, settings.target_ms / 1000))), {})
    if served:
        serving.builds = serve_rounds.prepare(libs, served, serving.plan, build_progress)
        run_.settings["serve"] = serving.plan.describe()
        run_.warnings += serving.plan.warnings()

    def measure(keep: Callable[[Measurement], None]) -> None:
        made_here = certificates.made_by(*libs, pem=bool(served)) if cert_dir is None else None
        with made_here or contextlib.nullcontext(cert_dir) as made:
            total, done = rounds * len(libs) * len(cases), 0
            for case in cases:
                taken: dict[str, list[Measurement]] = {lib.name: [] for lib in libs}
                for r in range(rounds):
                    for lib in libs:
                        if progress:
                            progress(f"{case.id} on {lib.name}, round {r + 1}", done, total)
                        done += 1
                        if all(m.status == "ok" for m in taken[lib.name]):   # a failed library is not run again
                            taken[lib.name].append(one(case, lib, made, settings.target_ms, serving))
                for lib in libs:
                    keep(merged(taken[lib.name]))
        run_.warnings += serve_rounds.client_bound(run_.measurements)
    return record(run_, store, source, measure)

