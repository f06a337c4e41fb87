"""A thread sweep: any case of `speed`, `api` or `tls` with 1, 2, 4, … threads up to the CPUs this process may
use, the libraries interleaved in rounds on the one scheduler (each thread count a case of the threads mode),
threads pinned one per CPU; then each curve read back from the run — rate, efficiency with its interval, latency
percentiles per count — and, for the largest count, why it bends (scale.contention)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sslperf import figures
from sslperf.measure import plan, suites, verbs
from sslperf import pinning
from sslperf.measure.modes import threads
from sslperf.measure.request import Request
from sslperf.results import Measurement, Run, latency_percentiles
from sslperf.scale.efficiency import Efficiency, efficiencies

# What `sslperf scale` sweeps when no case is given: a full and a resumed TLS 1.3 handshake, and the fetch-heavy
# digest OpenSSL 3.0's locks slowed most (openssl/openssl#23388, #30456).
DEFAULT_CASES = ("tls/handshake/tls1.3/x25519/ecdsa-p256/shared", "tls/resume/tls1.3/ticket/x25519/ecdsa-p256",
                 "api/digest/sha256/implicit-fetch/64")


def counts(cpus: int) -> list[int]:
    """1, 2, 4, … below `cpus`, and `cpus` itself."""
    found, n = [], 1
    while n < cpus:
        found.append(n)
        n *= 2
    return found + [cpus]


def request(lib_names, case_ids, patterns, thread_list: str | None, mode: str, seconds: float, rounds: int,
            pin: bool, explain: bool, providers=(), fips_modules=()) -> Request:
    """The sweep's request: every case × thread count a case of the threads mode."""
    inner = suites.select([suites.parse_case(c) for c in case_ids or DEFAULT_CASES], patterns)
    thread_list = thread_list or ",".join(map(str, counts(len(pinning.allowed()))))
    settings = plan.settings(1, 1, None, True, rounds)
    made = verbs.across_threads("sslperf scale", lib_names, inner, thread_list, seconds, mode, rounds, settings,
                                providers, fips_modules)
    made.options["threads"] = threads.Options(int(seconds * 1000), pin, explain=explain)
    made.labels["suite"] = "scale"
    made.tuning = ["--seconds", "--rounds"]        # what a warning may suggest: `scale`'s own options
    return made


@dataclass
class Point:
    threads: int
    rate: float                     # median op/s (or bytes/s) of all threads together
    ci: tuple[float, float]         # its 95% interval
    efficiency: Efficiency | None
    latency: dict[int, float] | None       # p50 … p99 of single operations, ns
    unit: str


@dataclass
class Curve:
    lib: str
    case: str                       # the case swept
    mode: str
    points: list[Point] = field(default_factory=list)


def curves(run: Run, metric: str = "wall") -> list[Curve]:
    """The run's curves, one per library, case and mode, points by thread count."""
    measured = [m for m in run.measurements if m.family == "threads" and m.note in threads.MODES]
    found = efficiencies(measured, metric)
    by_key: dict[tuple[str, str, str], Curve] = {}
    for m in sorted(measured, key=lambda m: m.size or 0):
        parts = m.parts
        curve = by_key.setdefault((m.lib, parts["case"], parts["mode"]), Curve(m.lib, parts["case"], parts["mode"]))
        s = m.summary(metric) if m.status == "ok" else None
        if s is None:
            continue
        curve.points.append(Point(m.size, s.median, (s.ci_low, s.ci_high), found.get((m.case, m.lib)),
                                  latency_percentiles(m), m.unit))
    return list(by_key.values())


def contention_of(run: Run) -> list[dict]:
    """The contention each library's largest count showed (threads mode, explain), as recorded in the run."""
    return list(run.settings.get("contention") or [])


def one_thread_wider(run: Run, metric: str = "wall") -> list[str]:
    """Curves whose 1-thread interval is still wider than the median of the others' (more rounds would help)."""
    said = []
    for curve in curves(run, metric):
        widths = [(p.ci[1] - p.ci[0]) / 2 / p.rate for p in curve.points if p.rate]
        if len(widths) > 2 and curve.points[0].threads == 1:
            others = sorted(widths[1:])[len(widths[1:]) // 2]
            if widths[0] > 1.5 * others:
                said.append(f"{curve.case} on {curve.lib}: the 1-thread rate's interval (±{widths[0]:.1%}) is "
                            f"wider than the others' (±{others:.1%}); every efficiency divides by it — give more "
                            "--rounds or --seconds.")
    return said


def preempted(run: Run, share: float = 0.05) -> list[str]:
    """Thread counts whose threads waited for their CPUs (another task held them) more than `share` of their time:
    their rates and efficiencies hold that task's share, not the library's scaling."""
    said = []
    for m in run.measurements:
        waits = (m.figures or {}).get(figures.WAIT)
        if m.family != "threads" or m.status != "ok" or not waits or not m.wall_ns or not m.size:
            continue
        found = sum(waits) / (m.size * sum(m.wall_ns))
        if found > share:
            said.append(f"{m.case} on {m.lib}: the {m.size} thread{'s' if m.size > 1 else ''} waited for a CPU another "
                        f"task held {found:.0%} of their time: the rate and efficiency show that task's share, not "
                        "the library's scaling (and lock waits then include preempted holders); measure on idle "
                        "CPUs.")
    return said


def measurement_of(run: Run, lib: str, case: str, mode: str, n: int) -> Measurement | None:
    return next((m for m in run.measurements if m.lib == lib and m.case == threads.case(case, n, mode).id), None)


def as_dict(run: Run, found: list[Curve]) -> dict:
    """The sweep as JSON: the run's id and settings, every curve's points (rate and its interval, efficiency and
    its interval, latency percentiles) and the contention of each library's largest count."""
    return {"run_id": run.id, "settings": run.settings, "environment": run.environment, "warnings": run.warnings,
            "curves": [{"lib": c.lib, "case": c.case, "mode": c.mode,
                        "points": [{"threads": p.threads, "rate": p.rate, "rate_ci": list(p.ci), "unit": p.unit,
                                    "efficiency": p.efficiency.as_dict() if p.efficiency else None,
                                    "latency_ns": {str(k): v for k, v in (p.latency or {}).items()}}
                                   for p in c.points]} for c in found],
            "contention": contention_of(run)}
