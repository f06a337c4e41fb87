"""A release series built by `sslperf fleet build` on a real Dask cluster of
this machine: with 1 worker, then with 2, each worker with an empty build
cache of its own (ccache off, so nothing is reused between the two runs or
between the workers), wall time for each and the speed-up.

    python bench/fleet_builds.py [--releases openssl-1.1.1o openssl-1.1.1p …] [--workers 1 2]

Both workers share this machine's cores, so here the speed-up measures what
the cluster overlaps (one build's serial configure and link phases beside
another's compile), not what more machines add.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RELEASES = [f"openssl-1.1.1{letter}" for letter in "opqstuvw"]        # 8 releases of one series
PYTHON = sys.executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(argv: list[str], env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(argv, stdout=log.open("w"), stderr=subprocess.STDOUT, env={**os.environ, **env},
                            start_new_session=True)


def stop(processes: list[subprocess.Popen]) -> None:
    for p in processes:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in processes:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)


def one_cluster(workers: int, releases: list[str], root: Path) -> float:
    port = free_port()
    address = f"tls://127.0.0.1:{port}"
    os.environ["SSLPERF_CONFIG_DIR"] = str(root / "config")     # the fleet's credentials, made by its scheduler
    processes = [start([PYTHON, "-m", "sslperf", "fleet", "scheduler", "--port", str(port), "--http-port",
                        str(free_port())], {}, root / "scheduler.log")]
    try:
        time.sleep(2)
        for n in range(workers):
            env = {"SSLPERF_CACHE_DIR": str(root / f"cache-{n}"), "SSLPERF_DATA_DIR": str(root / f"data-{n}"),
                   "SSLPERF_CCACHE": "0"}
            processes.append(start([PYTHON, "-m", "sslperf", "fleet", "worker", "--scheduler", address, "--tag",
                                    f"w{n}"], env, root / f"worker-{n}.log"))
        time.sleep(5)
        started = time.monotonic()
        done = subprocess.run([PYTHON, "-m", "sslperf", "fleet", "build", "--scheduler", address, *releases],
                              env={**os.environ, "SSLPERF_DATA_DIR": str(root / "client"), "COLUMNS": "160"},
                              capture_output=True, text=True, timeout=4 * 3600)
        seconds = time.monotonic() - started
        print(done.stdout, done.stderr, file=sys.stderr)
        if done.returncode != 0:
            raise SystemExit(f"fleet build failed with {workers} workers (exit {done.returncode})")
        return seconds
    finally:
        stop(processes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--releases", nargs="+", default=RELEASES)
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    args = parser.parse_args()
    times = {}
    for workers in args.workers:
        root = Path(tempfile.mkdtemp(prefix=f"sslperf-fleet-{workers}-"))
        try:
            times[workers] = one_cluster(workers, args.releases, root)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        print(f"{workers} worker(s): {times[workers]:.0f} s", file=sys.stderr)
    print(f"{len(args.releases)} releases ({', '.join(args.releases)}), {os.cpu_count()} cores, ccache off")
    print("| workers | wall time | speed-up |\n|---:|---:|---:|")
    base = times[min(times)]
    for workers, seconds in times.items():
        print(f"| {workers} | {seconds:.0f} s | {base / seconds:.2f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
