"""Exports for continuous-benchmarking services, so a team that already keeps
its history there can feed it from sslperf:

- Bencher Metric Format JSON (`bencher run --adapter json --file FILE`);
- Conbench benchmark results (the body of Conbench's `POST /api/benchmark-result`,
  one per case and library, as a JSON list).

Both read the one Run model, as every other export does."""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Mapping

from sslperf import __version__, figures
from sslperf.errors import SslperfError
from sslperf.results import Measurement, Run

# Conbench's own units: it reads "B/s" and "i/s" as higher-is-better, any other unit as lower-is-better.
CONBENCH_UNITS = {"bytes": "B/s", "ops": "i/s"}
# The variables Conbench's own client (benchadapt) reads for the commit a result belongs to.
CONBENCH_REPOSITORY, CONBENCH_COMMIT, CONBENCH_PR = (
    "CONBENCH_PROJECT_REPOSITORY", "CONBENCH_PROJECT_COMMIT", "CONBENCH_PROJECT_PR_NUMBER")


def to_bencher(run: Run, metric: str = "wall") -> str:
    """Bencher Metric Format: one benchmark per case and library (`CASE [LIB]`), each with its rate and its cost
    per operation, median and 95% CI as value, lower_value and upper_value. Bencher's own measures where they
    mean the same thing: `throughput` (operations/s) and `latency` (ns per operation); bytes/s as
    `bytes-per-second`; instruction counts (--metric instructions) as `instructions` per operation. A real server
    under load serves many requests at once, so its latency is wrk's median request latency (the rounds' p50s:
    median, lowest, highest), not the inverse of its rate. Results that are not ok, or have no figure, are left
    out (BMF has no place for a reason)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for m in run.measurements:
        summary = m.summary(metric) if m.status == "ok" else None
        if summary is None or not summary.median:
            continue
        measures = out.setdefault(f"{m.case} [{m.lib}]", {})
        per_op = m.bytes_per_op if m.unit == "bytes" and m.bytes_per_op else 1
        rate = {"value": summary.median}
        cost = {"value": 1e9 * per_op / summary.median}
        if summary.n > 1 and summary.ci_low > 0:
            rate.update(lower_value=summary.ci_low, upper_value=summary.ci_high)
            cost.update(lower_value=1e9 * per_op / summary.ci_high, upper_value=1e9 * per_op / summary.ci_low)
        if metric == "instructions":       # the rate is per 10^9 instructions: the cost is instructions per op
            measures["instructions"] = cost
            continue
        measures["bytes-per-second" if m.unit == "bytes" else "throughput"] = rate
        p50 = (m.figures or {}).get(figures.LATENCY_PERCENTILE[50])
        if p50:
            cost = {"value": statistics.median(p50), "lower_value": min(p50), "upper_value": max(p50)}
        measures["latency" if metric == "wall" or p50 else f"{metric}-latency"] = cost
    return json.dumps(out, indent=1) + "\n"


def to_conbench(run: Run, metric: str = "wall", github: dict | None = None) -> str:
    """Conbench benchmark results: one per ok case and library. `stats.data` holds every sample's figure in the
    order measured, so Conbench computes its own statistics and change detection from them: bytes/s ("B/s") or
    operations/s ("i/s") by the wall clock or CPU time, or instructions per operation (`--metric instructions`,
    which Conbench reads as lower-is-better); `stats.times` holds each sample's seconds (null for an imported
    figure, which has none). The benchmark's name is the case id and the library is a tag, so Conbench follows
    each library's history of a case on its own. `github` ({"repository", "commit"}, optionally "pr_number" or
    "branch") ties the results to the commit that was measured."""
    libs = {lib.name: lib for lib in run.libs}
    machine = _machine_info(run.environment)
    out = []
    for m in run.measurements:
        data, times = _samples(m, metric)
        if m.status != "ok" or not data:
            continue
        lib = libs.get(m.lib)
        result = {
            "run_id": run.id,
            "batch_id": run.id,
            "timestamp": run.started,
            "tags": {"name": m.case, "library": m.lib, "group": m.group},
            "stats": {"data": data, "unit": "instructions" if metric == "instructions" else CONBENCH_UNITS[m.unit],
                      "times": times, "time_unit": "s", "iterations": len(data)},
            "context": {"benchmark_language": "C", "benchmark_tool": "sslperf",
                        "source": run.settings.get("source", ""), "metric": metric,
                        **({"library_variant": lib.variant} if lib else {})},
            "info": {"sslperf_version": __version__,
                     **({"library_version": lib.version_string or lib.version, "library_flavor": lib.flavor}
                        if lib else {})},
            "machine_info": machine,
        }
        if m.note:
            result["optional_benchmark_info"] = {"note": m.note}
        if github:
            result["github"] = github
        out.append(result)
    return json.dumps(out, indent=1) + "\n"


def github_from_env(env: Mapping[str, str]) -> dict | None:
    """Conbench's `github` object from the variables its client reads, checked as Conbench checks it: a
    repository `https://github.com/ORG/REPO` and the commit's full hash, together or not at all."""
    repository, commit, pr = (env.get(k, "").strip() for k in (CONBENCH_REPOSITORY, CONBENCH_COMMIT, CONBENCH_PR))
    if not (repository or commit or pr):
        return None
    problems = []
    if not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", repository):
        problems.append(f"{CONBENCH_REPOSITORY} is {repository!r}, not https://github.com/ORG/REPO")
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        problems.append(f"{CONBENCH_COMMIT} is {commit!r}, not a commit's full 40-digit hash")
    if pr and not pr.isdigit():
        problems.append(f"{CONBENCH_PR} is {pr!r}, not a number")
    if problems:
        raise SslperfError(f"Conbench ties a result to a commit only by its repository and full hash: "
                           f"{'; '.join(problems)}.",
                           hint=f"Set {CONBENCH_REPOSITORY} and {CONBENCH_COMMIT} together (and "
                           f"{CONBENCH_PR} for a pull request), or unset them all for results tied to no commit.")
    return {"repository": repository, "commit": commit, **({"pr_number": int(pr)} if pr else {})}


def _samples(m: Measurement, metric: str) -> tuple[list[float], list[float | None]]:
    """(each sample's figure, each sample's seconds) of `m` by `metric`."""
    if metric == "instructions":
        counts = (m.figures or {}).get(figures.INSTRUCTIONS) or []
        per_op = m.bytes_per_op if m.unit == "bytes" and m.bytes_per_op else 1
        pairs = [(c / n / per_op, w) for c, n, w in zip(counts, m.ops, m.wall_ns) if n and c > 0]
        return [p[0] for p in pairs], [p[1] / 1e9 for p in pairs]
    rates = m.rates(metric)
    if m.reported_rates is not None and not m.ops:
        return rates, [None] * len(rates)
    seconds = m.wall_ns if metric == "wall" else m.cpu_ns
    return rates, [ns / 1e9 for ns in seconds if ns > 0]


def _machine_info(env: dict) -> dict:
    """Conbench's machine_info from the facts sslperf records; what sslperf does not record (caches, memory,
    operating system, GPUs) is 0 or empty, as Conbench's own client leaves what it cannot read."""
    cpus = env.get("cpus") or 0
    mhz = env.get("cpu_mhz") or []
    return {"name": env.get("host") or "unknown", "architecture_name": env.get("machine") or "",
            "kernel_name": env.get("kernel") or "", "os_name": "Linux" if env.get("kernel") else "",
            "os_version": env.get("kernel") or "", "cpu_model_name": env.get("cpu_model") or "",
            "cpu_core_count": cpus, "cpu_thread_count": cpus,
            "cpu_frequency_max_hz": int(max(mhz) * 1e6) if mhz else 0,
            "cpu_l1d_cache_bytes": 0, "cpu_l1i_cache_bytes": 0, "cpu_l2_cache_bytes": 0, "cpu_l3_cache_bytes": 0,
            "memory_bytes": 0, "gpu_count": 0, "gpu_product_names": []}
