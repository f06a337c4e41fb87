"""Do verdicts hold on this machine? First the noise floor, as `sslperf
noise` measures it (the first library as two columns, runs back to back);
then back-to-back quick runs of two libraries with the default settings
(pinned workers, several processes per case):

- A/A false verdicts within a run: the same library as two columns;
- A/A false verdicts across runs: `compare` of run k against run 1 for the
  same library, share of cases called faster/slower, with the plain 2%
  threshold and with the measured floor;
- within-run ratio stability: per case the ratio lib2/lib1 in each run,
  share of cases whose ratio stays within 2% of its median over the runs;
- time of the quick suite per library.

    .venv/bin/python bench/reproducibility.py --lib system --lib openssl-1.1.1w --runs 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from sslperf.compare import Column, compare
from sslperf.libs import installed
from sslperf.measure import suites
from sslperf.measure import scheduler
from sslperf.measure.settings import Settings
from sslperf.noise import floor


def measure(libs, cases, processes: int, fixed_layout: bool):
    depth = suites.DEPTHS["quick"]
    settings = Settings(depth.target_ms, depth.samples, processes=processes, fixed_layout=fixed_layout)
    return scheduler.measure_libs(libs, cases, settings, None, "bench/reproducibility.py")


def false_share(result) -> tuple[int, int]:
    changes = [row.changes[1] for row in result.rows if row.changes[1] is not None]
    return sum(c.verdict in ("faster", "slower") for c in changes), len(changes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", action="append", default=[])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--floor-runs", type=int, default=3)
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--fixed-layout", action="store_true")
    args = parser.parse_args()
    libs = [installed.find(name) for name in (args.lib or ["system", "openssl-1.1.1w"])]
    cases = suites.suite("quick")
    say = lambda text: print(text, file=sys.stderr)      # noqa: E731

    # 1. The noise floor, as `sslperf noise` measures it: libs[0] and its twin, back to back.
    aa_runs = []
    for k in range(args.floor_runs):
        aa_runs.append(measure([libs[0], floor.twin(libs[0])], cases, args.processes, args.fixed_layout))
        say(f"A/A run {k + 1}/{args.floor_runs}")
    floors = floor.floors(aa_runs, libs[0].name)
    within = sum(f.false_verdicts for f in floors if f.kind == "within")
    within_n = sum(f.comparisons for f in floors if f.kind == "within")
    table = {(f.kind, f.family): f.floor for f in floors}

    # 2. Back-to-back runs of the two libraries, as a user makes them.
    runs, seconds = [], []
    for k in range(args.runs):
        started = time.monotonic()
        runs.append(measure(libs, cases, args.processes, args.fixed_layout))
        seconds.append(time.monotonic() - started)
        say(f"run {k + 1}/{args.runs}: {seconds[-1]:.0f} s")
    every = {r.id: r for r in runs}
    layout = "fixed layout" if args.fixed_layout else "randomised layout"
    print(f"quick suite, {len(cases)} cases, {len(libs)} libraries, {args.processes} processes, pinned to CPU "
          f"{runs[0].environment.get('pinned_cpu')}, {layout}: {statistics.median(seconds) / len(libs):.1f} s per "
          f"library (median of {args.runs} runs, {min(seconds):.0f}-{max(seconds):.0f} s per run)")
    print(f"A/A within one run ({libs[0].name} as two columns, paired, 2% threshold): {within} of {within_n} "
          f"({100 * within / max(within_n, 1):.1f}%) called faster/slower, over {args.floor_runs} runs")
    print("noise floor (95th percentile of the A/A changes; the largest in brackets): " + ", ".join(
        f"{f.family} {f.kind} {f.floor:.1%} ({f.largest:.1%})" for f in sorted(floors, key=lambda f: (f.kind, f.family))))
    for lib in libs:
        for floors_used, label in ((None, "2% threshold"), (table, "measured floor")):
            called = total = 0
            for run in runs[1:]:
                result = compare([Column("1", runs[0].id, lib.name), Column("k", run.id, lib.name)], every,
                                 floors=floors_used)
                c, t = false_share(result)
                called, total = called + c, total + t
            print(f"A/A across runs, {lib.name}, {label}: {called} of {total} case comparisons called "
                  f"faster/slower ({100 * called / max(total, 1):.1f}%)")
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


if __name__ == "__main__":
    main()
