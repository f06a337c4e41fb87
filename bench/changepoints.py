"""Change-point detection's false alarms and misses on synthetic series.

Each series has 60 points at one level with relative Gaussian noise and a
few outliers (a point ×3 or ÷3, not among the 3 at either end), and, for the step rows, a level step of
the given size at a random place between points 15 and 45. `sslperf
regressions`' detection (Apache Otava's E-Divisive means, its defaults
p < 0.001, a change of at least 1%, window 30) runs on each.

- a step is found when a change point lies within 2 points of it;
- a false alarm is any other change point: per flat series (no step),
  and per step series (beyond the one that is the step).

    .venv/bin/python bench/changepoints.py [--series 200] [--seed 1]

Prints one row per (noise, outliers, step) with the rates and the wall time.
"""

from __future__ import annotations

import argparse
import random
import time

from sslperf.regressions import DetectionSettings, Point, Series, find_change_points

LENGTH = 60
NOISES = (0.005, 0.02)
OUTLIERS = (0, 3)
STEPS = (0.0, 0.02, 0.05, 0.10)


def series(rng: random.Random, noise: float, outliers: int, step: float) -> tuple[Series, int | None]:
    at = rng.randint(15, 45) if step else None
    values = [1000.0 * (1 - step if at is not None and i >= at else 1) * (1 + rng.gauss(0, noise))
              for i in range(LENGTH)]
    for index in rng.sample(range(3, LENGTH - 3), outliers):
        values[index] *= 3 if rng.random() < 0.5 else 1 / 3
    points = [Point(f"c{i}", "lib", f"r{i}", f"2026-01-01T00:00:{i:02d}", v) for i, v in enumerate(values)]
    return Series("case", "case", "line", "host", "wall", points), at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--series", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    settings = DetectionSettings()
    print("| noise | outliers | step | series | found | false alarms per series | seconds |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for noise in NOISES:
        for outliers in OUTLIERS:
            for step in STEPS:
                started = time.perf_counter()
                found = alarms = 0
                for _ in range(args.series):
                    s, at = series(rng, noise, outliers, step)
                    points = [c.index for c in find_change_points(s, settings)]
                    hit = at is not None and any(abs(i - at) <= 2 for i in points)
                    found += hit
                    alarms += len(points) - (1 if hit else 0)
                seconds = time.perf_counter() - started
                found_text = f"{found / args.series:.1%}" if step else "—"
                print(f"| {noise:.1%} | {outliers} | {step:.0%} | {args.series} | {found_text} | "
                      f"{alarms / args.series:.3f} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
