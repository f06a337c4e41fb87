"""Exports of a Run: JSON (everything, every sample), CSV (one row per
measurement with its descriptive statistics), Markdown tables, and Bencher
Metric Format JSON (for the Bencher continuous-benchmarking service)."""

from __future__ import annotations

import csv
import io
import json
import statistics

from sslperf import families
from sslperf.report.terminal import rate, throughput
from sslperf.results import Run

CSV_FIELDS = ("run", "case", "group", "algorithm", "operation", "size", "workload", "lib", "status", "reason", "unit",
              "n", "median", "ci_low", "ci_high", "mean", "stdev", "min", "max", "p95", "p99", "us_per_op")


def to_csv(run: Run, metric: str = "wall") -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, CSV_FIELDS)
    writer.writeheader()
    for m in run.measurements:
        row = {"run": run.id, "case": m.case, "group": m.group, "algorithm": m.algorithm, "operation": m.operation,
               "size": m.size, "workload": m.workload, "lib": m.lib, "status": m.status, "reason": m.reason,
               "unit": "bytes/s" if m.unit == "bytes" else "op/s"}
        summary = m.summary(metric) if m.status == "ok" else None
        if summary:
            row.update({k: getattr(summary, k) for k in ("n", "median", "ci_low", "ci_high", "mean", "stdev", "min",
                                                         "max", "p95", "p99")})
            row["us_per_op"] = m.micros_per_op(metric)
        writer.writerow(row)
    return out.getvalue()


def to_markdown(run: Run, metric: str = "wall") -> str:
    libs = [lib.name for lib in run.libs]
    lines = [f"# sslperf run {run.id}", "",
             f"{run.environment.get('cpu_model', '?')}, {metric} time, median ± 95% CI half-width", ""]
    lines += [f"- {lib.name}: {lib.version_string}" for lib in run.libs]
    groups: dict[str, dict[str, dict]] = {}
    for m in run.measurements:
        groups.setdefault(m.group, {}).setdefault(m.case, {})[m.lib] = m
    for group in families.ordered(groups):
        lines += ["", f"## {group}", "", "| case | " + " | ".join(libs) + " |", "|---|" + "---:|" * len(libs)]
        for case, per_lib in groups[group].items():
            cells = []
            for lib in libs:
                m = per_lib.get(lib)
                s = m.summary(metric) if m and m.status == "ok" else None
                if s is None:
                    cells.append(m.status if m else "")
                else:
                    value = throughput(s.median) if m.unit == "bytes" else rate(s.median)
                    cells.append(f"{value} ±{s.ci_half_width * 100:.1f}%")
            lines.append(f"| {case} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


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
        p50 = (m.extra or {}).get("latency_p50_ns")
        if p50:
            cost = {"value": statistics.median(p50), "lower_value": min(p50), "upper_value": max(p50)}
        measures["latency" if metric == "wall" or p50 else f"{metric}-latency"] = cost
    return json.dumps(out, indent=1) + "\n"
