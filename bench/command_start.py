"""The CPU time of short `sslperf` commands, most of which is starting Python
and importing: what the test suite's ~600 `sslperf` processes each pay, and a
user's every `runs list` or `compare`.

Each command is run --repeat times as a fresh process, with the source tree
given (--src, default this checkout's src/) first on PYTHONPATH; the CPU of
each run (user + system, from the kernel's accounting of the ended child) is
printed as median and range. --no-bytecode runs them as an environment with
PYTHONDONTWRITEBYTECODE=1 and no compiled modules in the tree would (the test
command before it kept bytecode): the tree is copied without __pycache__ and
nothing is written back.

    .venv/bin/python bench/command_start.py [--repeat 7] [--src DIR] [--no-bytecode]
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cpu_of(argv: list[str], env: dict) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed:\n{done.stdout}{done.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    parser.add_argument("--no-bytecode", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="command-start-"))
    try:
        src = args.src
        env = {**os.environ, "SSLPERF_DATA_DIR": str(work / "data")}
        if args.no_bytecode:
            src = work / "src"
            shutil.copytree(args.src, src, ignore=shutil.ignore_patterns("__pycache__"))
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        else:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(args.src)], check=True, timeout=300)
        env["PYTHONPATH"] = str(src)
        sslperf = [sys.executable, "-m", "sslperf"]
        for _ in range(2):      # two small runs in 3 worker processes: compare judges them by Welch's t
            cpu_of([*sslperf, "speed", "--lib", "system", "--case", "digest/sha256/64", "--time", "2", "--samples",
                    "3", "--processes", "3"], env)
        listed = subprocess.run([*sslperf, "runs", "list", "--json"], capture_output=True, text=True, timeout=300,
                                env=env)
        ids = [run["id"] for run in json.loads(listed.stdout)][:2]
        commands = {
            "sslperf runs list": ["runs", "list"],
            "sslperf libs list": ["libs", "list"],
            "sslperf compare A B (Welch's t)": ["compare", *ids],
            "sslperf speed, 1 case, 3 samples": ["speed", "--lib", "system", "--case", "digest/sha256/64", "--time",
                                                 "2", "--samples", "3", "--processes", "1", "--no-store"],
        }
        print(f"src: {args.src}  bytecode: {'none, not written' if args.no_bytecode else 'compiled'}  "
              f"(n={args.repeat}, CPU seconds: user + system)")
        for label, argv in commands.items():
            cpu = [cpu_of([*sslperf, *argv], env) for _ in range(args.repeat)]
            print(f"  {label:36} median {statistics.median(cpu):.3f} s  ({min(cpu):.3f}–{max(cpu):.3f})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
