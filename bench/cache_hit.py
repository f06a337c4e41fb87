"""How long `sslperf libs build NAME` takes when NAME is already built.

Target: under 2 s. Runs the real command (a fresh Python process each time,
as a user would) for every built lib, or the names given, and prints the
median and worst of --repeat runs.

    .venv/bin/python bench/cache_hit.py [--repeat 7] [NAME ...]
"""

import argparse
import json
import statistics
import subprocess
import sys
import time


def sslperf(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sslperf", *args], capture_output=True, text=True, timeout=600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    names = args.names or [lib["name"] for lib in json.loads(sslperf("libs", "list", "--json").stdout)
                           if lib["kind"] == "built"]
    if not names:
        sys.exit("nothing is built yet: run `sslperf libs build openssl-1.1.1w` first")
    print(f"{'library':32} {'median s':>9} {'worst s':>8}  (n={args.repeat})")
    for name in names:
        times = []
        for _ in range(args.repeat):
            started = time.monotonic()
            result = sslperf("libs", "build", name)
            times.append(time.monotonic() - started)
            if result.returncode != 0 or "cached build" not in result.stdout:
                sys.exit(f"{name}: not a cache hit:\n{result.stdout}{result.stderr}")
        print(f"{name:32} {statistics.median(times):9.2f} {max(times):8.2f}")


if __name__ == "__main__":
    main()
