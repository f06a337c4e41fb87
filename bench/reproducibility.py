"""Do verdicts hold on this machine? Back-to-back quick runs of two libraries
with the default settings (pinned workers, several processes per case), and
one run with the first library as two columns (an A/A run):

- A/A false verdicts across runs: `compare` of run k against run 1 for the
  same library, share of cases called faster/slower;
- A/A false verdicts within a run: the same library as two columns;
- within-run ratio stability: per case the ratio lib2/lib1 in each run,
  share of cases whose ratio stays within 2% of its median over the runs;
- time of the quick suite per library.

    .venv/bin/python bench/reproducibility.py --lib system --lib openssl-1.1.1w --runs 5
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time

from sslperf.compare import Column, compare
from sslperf.libs import installed
from sslperf.measure import suites
from sslperf.measure.runner import Runner, Settings


def measure(libs, cases, processes: int):
    depth = suites.DEPTHS["quick"]
    runner = Runner(libs, Settings(depth.target_ms, depth.samples, processes=processes))
    try:
        return runner.measure(cases)
    finally:
        runner.close()


def false_share(result) -> tuple[int, int]:
    changes = [row.changes[1] for row in result.rows if row.changes[1] is not None]
    return sum(c.verdict in ("faster", "slower") for c in changes), len(changes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", action="append", default=[])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--processes", type=int, default=5)
    args = parser.parse_args()
    libs = [installed.find(name) for name in (args.lib or ["system", "openssl-1.1.1w"])]
    cases = suites.suite("quick")
    runs, seconds = [], []
    for k in range(args.runs):
        started = time.monotonic()
        runs.append(measure(libs, cases, args.processes))
        seconds.append(time.monotonic() - started)
        print(f"run {k + 1}/{args.runs}: {seconds[-1]:.0f} s", file=sys.stderr)
    every = {r.id: r for r in runs}
    print(f"quick suite, {len(cases)} cases, {len(libs)} libraries, {args.processes} processes, pinned to CPU "
          f"{runs[0].environment.get('pinned_cpu')}: {statistics.median(seconds) / len(libs):.1f} s per library "
          f"(median of {args.runs} runs, {min(seconds):.0f}-{max(seconds):.0f} s per run)")
    for lib in libs:
        called = total = 0
        for run in runs[1:]:
            c, t = false_share(compare([Column("1", runs[0].id, lib.name), Column("k", run.id, lib.name)], every))
            called, total = called + c, total + t
        print(f"A/A across runs, {lib.name}: {called} of {total} case comparisons called faster/slower "
              f"({100 * called / max(total, 1):.1f}%)")
    ratios: dict[str, list[float]] = {}
    for run in runs:
        result = compare([Column("a", run.id, libs[0].name), Column("b", run.id, libs[1].name)], {run.id: run})
        for row in result.rows:
            if row.changes[1] is not None:
                ratios.setdefault(row.case, []).append(row.changes[1].ratio)
    stable = [c for c, r in ratios.items() if all(abs(x / statistics.median(r) - 1) <= 0.02 for x in r)]
    worst = max((max(abs(x / statistics.median(r) - 1) for x in r), c) for c, r in ratios.items())
    print(f"within-run ratio {libs[1].name}/{libs[0].name}, across {args.runs} runs: {len(stable)} of {len(ratios)} "
          f"cases within 2% of their median ratio ({100 * len(stable) / len(ratios):.0f}%); worst {worst[0]:.1%} "
          f"({worst[1]})")
    twin = dataclasses.replace(libs[0], name=libs[0].name + "#2")
    aa = measure([libs[0], twin], cases, args.processes)
    c, t = false_share(compare([Column("a", aa.id, libs[0].name), Column("b", aa.id, twin.name)], {aa.id: aa}))
    print(f"A/A within one run ({libs[0].name} as two columns, paired): {c} of {t} cases called faster/slower "
          f"({100 * c / max(t, 1):.1f}%)")


if __name__ == "__main__":
    main()
