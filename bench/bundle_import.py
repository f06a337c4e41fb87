"""How long `sslperf libs import` of one built library takes on a machine
that does not have it, set against what building it took.

Exports NAME (default openssl-1.1.1w, which must be built in the current
cache) once, then imports the bundle --repeat times, each into a new empty
cache and data directory, as a fresh process (as a user would), and prints
the median and worst; then the library's build_seconds from its manifest.

    .venv/bin/python bench/bundle_import.py [--repeat 5] [NAME]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path


def sslperf(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sslperf", *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", nargs="?", default="openssl-1.1.1w")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bundle-bench-"))
    try:
        out = scratch / "bundle.tar.gz"
        started = time.monotonic()
        exported = sslperf("libs", "export", args.name, "--out", str(out))
        export_seconds = time.monotonic() - started
        if exported.returncode != 0:
            sys.exit(f"cannot export {args.name}:\n{exported.stderr}")
        with tarfile.open(out) as tar:
            [entry] = json.loads(tar.extractfile("bundle.json").read())["libs"]
        unpacked = sum(f["size"] for f in entry["files"].values())
        times = []
        for i in range(args.repeat):
            target = scratch / f"target-{i}"
            env = {"SSLPERF_CACHE_DIR": str(target / "cache"), "SSLPERF_DATA_DIR": str(target / "data")}
            started = time.monotonic()
            result = sslperf("libs", "import", str(out), env=env)
            times.append(time.monotonic() - started)
            if result.returncode != 0 or f"{entry['name']}: installed" not in result.stdout:
                sys.exit(f"the import did not install {entry['name']}:\n{result.stdout}{result.stderr}")
            shutil.rmtree(target)
        print(f"library {entry['name']}: {out.stat().st_size / 1e6:.1f} MB bundle, {unpacked / 1e6:.1f} MB unpacked, "
              f"{len(entry['files'])} files; export {export_seconds:.2f} s")
        print(f"{'import into an empty cache':32} {'median s':>9} {'worst s':>8}  (n={args.repeat})")
        print(f"{'':32} {statistics.median(times):9.2f} {max(times):8.2f}")
        build = entry.get("build_seconds")
        if build:
            print(f"its build (build_seconds in its manifest): {build:.0f} s, "
                  f"{build / statistics.median(times):.0f}x the median import")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
