"""Two builds of one OpenSSL source at two homes, through one empty ccache: what the second costs.

The second build is what a bisect's or a track's next commit is (one changed file at most): every object it
needs was compiled by the first. Each build is `sslperf libs build --source-dir SRC --name NAME` in a cache of
its own (so a home of its own), both with the same new SSLPERF_CCACHE_DIR; the figures are each build's wall
time and its CPU time (user + system, sslperf and everything it ran), and ccache's count of direct hits,
preprocessed hits and misses (its stats log).

    .venv/bin/python bench/rebuild_ccache.py [--source DIR] [--keep DIR]

DIR defaults to the OpenSSL 1.1.1w source in .test-cache/e2e/sources. Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build(work: Path, source: Path, n: int) -> tuple[float, float, collections.Counter]:
    stats = work / f"ccache-{n}.log"
    env = {**os.environ, "SSLPERF_CACHE_DIR": str(work / f"cache-{n}"), "SSLPERF_DATA_DIR": str(work / "data"),
           "SSLPERF_CCACHE_DIR": str(work / "ccache"), "CCACHE_STATSLOG": str(stats)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "sslperf", "libs", "build", "--source-dir", str(source),
                           "--name", f"openssl-bench{n}"], capture_output=True, text=True, env=env, timeout=3600)
    wall = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(done.stdout + done.stderr)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    outcomes = collections.Counter(line for line in stats.read_text().splitlines()
                                   if line in ("direct_cache_hit", "preprocessed_cache_hit", "cache_miss"))
    return wall, cpu, outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path,
                        default=next((ROOT / ".test-cache/e2e/sources").glob("openssl-src-*+1.1.1w"), Path()) / "openssl")
    parser.add_argument("--keep", type=Path, help="work here and keep it (default: a temporary directory, removed)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="sslperf-bench-rebuild-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        print(f"{'build':<8} {'wall s':>7} {'CPU s':>7} {'direct':>7} {'preproc':>8} {'miss':>6}")
        for n, what in ((1, "first"), (2, "second")):
            wall, cpu, outcomes = build(work, args.source, n)
            print(f"{what:<8} {wall:7.1f} {cpu:7.1f} {outcomes['direct_cache_hit']:7d} "
                  f"{outcomes['preprocessed_cache_hit']:8d} {outcomes['cache_miss']:6d}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
