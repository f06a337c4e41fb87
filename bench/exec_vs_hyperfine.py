"""One command timed by `sslperf exec --lib system` and by hyperfine (Debian's package), side by side: the two
tools take turns, --pairs times, each turn --runs runs of the command after one warm-up; then each tool's mean and
standard deviation over all its runs, and their ratio. Both start the command without a shell (hyperfine -N), and
both time from starting the process to reaping it, so the means should agree within a few percent; what differs is
what each adds around a run (sslperf: posix_spawn from Python, wait4, the library's links first on the loader's path;
hyperfine: its own spawn in Rust). Both run pinned to the same CPU (taskset).

    .venv/bin/python bench/exec_vs_hyperfine.py [--pairs 3] [--runs 20] [-- CMD ARG…]

Default command: `curl --version` (it loads the system's libssl and libcrypto). Needs hyperfine (scripts/bootstrap.sh
installs it with EXTRAS=test).
"""

import argparse
import os
import json
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Both tools, and so the command under each, on the same CPU (the last this process may use): no migration, and
# neither tool's own work runs beside the command on another CPU.
PINNED = ["taskset", "-c", str(max(os.sched_getaffinity(0)))]


def hyperfine_times(command: list[str], runs: int, out: Path) -> list[float]:
    subprocess.run([*PINNED, "hyperfine", "-N", "--style", "none", "--warmup", "1", "--runs", str(runs), "--export-json",
                    str(out), shlex.join(command)], check=True, timeout=600, capture_output=True)
    return json.loads(out.read_text())["results"][0]["times"]


def sslperf_times(command: list[str], runs: int, out: Path, env: dict) -> list[float]:
    subprocess.run([*PINNED, sys.executable, "-m", "sslperf", "exec", "--lib", "system", "--runs", str(runs), "--rounds",
                    "1", "--warmup", "1", "--no-store", "--export-json", str(out), "--force", "--", *command],
                   check=True, timeout=600, capture_output=True, env=env)
    return json.loads(out.read_text())["results"][0]["times"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("command", nargs="*", default=["curl", "--version"])
    args = parser.parse_args()
    if not shutil.which("hyperfine"):
        sys.exit("hyperfine is not installed: EXTRAS=test bash scripts/bootstrap.sh installs it")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    times: dict[str, list[float]] = {"hyperfine": [], "sslperf exec": []}
    with tempfile.TemporaryDirectory() as tmp:
        for pair in range(args.pairs):
            order = ["hyperfine", "sslperf exec"] if pair % 2 == 0 else ["sslperf exec", "hyperfine"]
            for tool in order:
                out = Path(tmp) / f"{tool.replace(' ', '-')}-{pair}.json"
                got = (hyperfine_times(args.command, args.runs, out) if tool == "hyperfine"
                       else sslperf_times(args.command, args.runs, out, env))
                times[tool] += got
                print(f"pair {pair + 1}: {tool}: mean {statistics.fmean(got) * 1e3:.3f} ms over {len(got)} runs",
                      flush=True)
    print(f"\ncommand: {shlex.join(args.command)}")
    print(f"{'tool':<14} {'runs':>5} {'mean ms':>9} {'stdev ms':>9} {'median ms':>10}")
    for tool, got in times.items():
        print(f"{tool:<14} {len(got):>5} {statistics.fmean(got) * 1e3:>9.3f} {statistics.stdev(got) * 1e3:>9.3f} "
              f"{statistics.median(got) * 1e3:>10.3f}")
    ratio = statistics.fmean(times["sslperf exec"]) / statistics.fmean(times["hyperfine"])
    print(f"sslperf exec / hyperfine, means: {ratio:.3f} ({(ratio - 1) * 100:+.1f}%)")


if __name__ == "__main__":
    main()
