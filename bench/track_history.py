"""`sslperf track` on a 20-commit local history: builds, measuring, total.

The history is OpenSSL 1.1.1w's released source with the deliberate
slow-down of tests/toy_history.py and 17 harmless commits after it (20 in
all). One call tracks all 20 (`--limit 20`) with one case and both metrics,
on a private cache and store; a second call must find nothing to do. Then
`sslperf regressions` is asked where the series changed.

    .venv/bin/python bench/track_history.py [--case digest/sha256/16] [--keep DIR]

Needs an OpenSSL 1.1.1w source in the cache it uses (the first build of
openssl-1.1.1w fetches it; it is built here first, so the commit builds
start with a warm ccache, as they would after any earlier build).
Prints the `track` summary line, the wall time of each call and the change
points found.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from toy_history import openssl_history  # noqa: E402


def sslperf(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sslperf", *args], capture_output=True, text=True, env=env,
                          timeout=7200)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", default="digest/sha256/16")
    parser.add_argument("--keep", type=Path, help="Use (and keep) this directory instead of a temporary one.")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="sslperf-track-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SSLPERF_CACHE_DIR": str(root / "cache"), "SSLPERF_DATA_DIR": str(root / "data")}
    prepared = sslperf(env, "libs", "build", "openssl-1.1.1w")
    assert prepared.returncode == 0, prepared.stderr
    repo = root / "openssl"
    if not repo.exists():
        openssl_history(env["SSLPERF_CACHE_DIR"], repo, ("harmless",) * 17)
    for call in ("first", "second"):
        began = time.monotonic()
        done = sslperf(env, "track", "--git", str(repo), "--branch", "main", "--limit", "20", "--case", args.case)
        took = time.monotonic() - began
        summary = [line for line in done.stdout.splitlines() if line.startswith(("Tracked", "Nothing"))]
        print(f"{call} call: exit {done.returncode}, {took:.0f} s: {' '.join(summary) or done.stderr.strip()[-300:]}")
    found = json.loads(sslperf(env, "regressions", "--json", "--all").stdout)
    for c in found["change_points"]:
        print(f"change point: {c['case']} {c['metric']}: {c['from']['label']} -> {c['to']['label']}: "
              f"{c['percent']:+.1f}% (p={c['p']:.1g})")
    print(f"{found['series']} series; data in {root}")


if __name__ == "__main__":
    main()
