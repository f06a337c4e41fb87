"""Exports of a Run: JSON (everything, every sample), CSV (one row per
measurement with its descriptive statistics) and Markdown tables. The formats of
continuous-benchmarking services (Bencher, Conbench) are in `services`."""

from __future__ import annotations

import csv
import io

from sslperf import families
from sslperf.units import rate, throughput
from sslperf.results import Run

CSV_FIELDS = ("run", "case", "group", "algorithm", "operation", "size", "workload", "lib", "status", "reason", "unit",
              "n", "median", "ci_low", "ci_high", "mean", "stdev", "min", "max", "p95", "p99", "us_per_op",
              "cycles_per_op", "cycles_per_byte")


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
            row["cycles_per_op"], row["cycles_per_byte"] = m.cycles_per_op(), m.cycles_per_byte()
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


def to_hyperfine(run: Run) -> str:
    """An exec run in hyperfine's `--export-json` format, so scripts that read hyperfine's results read it: one
    result per library (its command with `parameters.lib`), every run's wall time in `times` (seconds), the mean
    user and system time, and the exit codes (every timed run exited 0: a failing one is never timed)."""
    import json
    import shlex
    import statistics

    from sslperf import figures
    from sslperf.errors import SslperfError

    command = (run.settings.get("exec") or {}).get("command")
    timed = [m for m in run.measurements if m.family == "exec" and m.status == "ok" and m.wall_ns]
    if not command or not timed:
        raise SslperfError(f"Run {run.id} has no timed `sslperf exec` results; hyperfine's format holds command "
                           "runs only.", hint="Export an exec run, or use --format json or csv for this one.")
    results = []
    for m in timed:
        times = [ns / 1e9 for ns in m.wall_ns]
        f = m.figures or {}
        results.append({
            "command": shlex.join(a.replace("{lib}", m.lib) for a in command) + f"  [{m.lib}]",
            "mean": statistics.fmean(times), "stddev": statistics.stdev(times) if len(times) > 1 else None,
            "median": statistics.median(times), "user": statistics.fmean(f.get(figures.USER_CPU) or [0]) / 1e9,
            "system": statistics.fmean(f.get(figures.SYSTEM_CPU) or [0]) / 1e9, "min": min(times),
            "max": max(times), "times": times, "exit_codes": [0] * len(times), "parameters": {"lib": m.lib},
        })
    return json.dumps({"results": results}, indent=2) + "\n"
