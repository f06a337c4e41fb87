"""A/A across runs: the same libraries measured in several back-to-back runs, then each library compared with
itself across every pair of runs. Nothing changed between the runs, so every faster/slower verdict is false: the
share of cases called is the false-verdict rate of comparisons across runs (issues 37 and 38 ask for at most 5%).

    python bench/aa_runs.py --runs 3 -- speed --quick --lib system --lib openssl-1.1.1w \\
        --filter 'cipher/*' --filter 'digest/*' --filter 'sig/*'
    python bench/aa_runs.py --runs 3 -- tls loopback --lib system --lib openssl-1.1.1w --requests 10

Everything after `--` is the sslperf command measured each time (its runs go to a store of their own, in a
temporary data directory unless SSLPERF_DATA_DIR is set). With --busy, one CPU is kept busy by another process
throughout (the case of a loaded machine). Prints each comparison's verdict counts and the total share."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time

SSLPERF = [sys.executable, "-m", "sslperf"]


def sslperf(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([*SSLPERF, *args], capture_output=True, text=True, env=env, timeout=7200)


def busy_process() -> subprocess.Popen:
    """A process that keeps one CPU busy until it is stopped: the last this process may use, the one sslperf pins
    its workers to by default, so the other process competes with the measurement itself."""
    cpu = max(os.sched_getaffinity(0))
    return subprocess.Popen([sys.executable, "-c", "while True: pass"],
                            preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--busy", action="store_true",
                        help="keep the workers' CPU busy with another process throughout")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = [a for a in args.command if a != "--"]
    env = {**os.environ, "SSLPERF_DATA_DIR": os.environ.get("SSLPERF_DATA_DIR") or tempfile.mkdtemp(prefix="aa-")}
    hog = busy_process() if args.busy else None
    try:
        run_ids, libs = [], []
        for number in range(args.runs):
            started = time.monotonic()
            done = sslperf(*command, "--json", env=env)
            if done.returncode != 0:
                print(done.stderr, file=sys.stderr)
                return 1
            run = json.loads(done.stdout)
            run_ids.append(run["id"])
            libs = [lib["name"] for lib in run["libs"]]
            print(f"run {number + 1}: {run['id']} ({time.monotonic() - started:.0f} s, "
                  f"{len(run['warnings'])} warnings)", file=sys.stderr)
    finally:
        if hog:
            hog.kill()
    called = total = 0
    print("| library | runs | cases | faster | slower | ~ or ? |\n|---|---|---:|---:|---:|---:|")
    for lib in libs:
        for a, b in itertools.combinations(run_ids, 2):
            done = sslperf("compare", f"{a}:{lib}", f"{b}:{lib}", "--format", "json", env=env)
            rows = json.loads(done.stdout)["rows"]
            verdicts = [r["changes"][1]["verdict"] for r in rows if r["changes"][1]]
            faster, slower = verdicts.count("faster"), verdicts.count("slower")
            called, total = called + faster + slower, total + len(verdicts)
            print(f"| {lib} | {a[-6:]} vs {b[-6:]} | {len(verdicts)} | {faster} | {slower} | "
                  f"{len(verdicts) - faster - slower} |")
    print(f"\n{called} of {total} comparisons called faster or slower: {called / max(total, 1):.1%} false verdicts"
          f"{' (one CPU kept busy throughout)' if args.busy else ''}; store {env['SSLPERF_DATA_DIR']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
