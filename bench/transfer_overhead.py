"""Does the harness's in-memory transfer loop add anything to the library's
own cost? Bytes per second of `tls/transfer/tls1.3/SUITE/SIZE` against a
minimal hand-written write/read loop over the same API
(bench/minimal_transfer.c; for rustls and wolfSSL, their own APIs in
bench/minimal_rustls_transfer.c and bench/minimal_wolfssl_transfer.c), the
same library, alternated over rounds, both pinned to one CPU. Target:
within 3%.

    .venv/bin/python bench/transfer_overhead.py [--lib system] [--rounds 7] [--seconds 1]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import bench_certs
from sslperf.libs import installed
from sslperf.libs.model import harness_backend
from sslperf.measure import harness_client
from sslperf import pinning

HERE = Path(__file__).parent
# Each minimal loop's own name for the suite: OpenSSL's, rustls' codepoint, wolfSSL's.
SUITES = {
    "openssl": {"aes-128-gcm": "TLS_AES_128_GCM_SHA256", "chacha20-poly1305": "TLS_CHACHA20_POLY1305_SHA256"},
    "rustls": {"aes-128-gcm": "0x1301", "chacha20-poly1305": "0x1303"},
    "wolfssl": {"aes-128-gcm": "TLS13-AES128-GCM-SHA256", "chacha20-poly1305": "TLS13-CHACHA20-POLY1305-SHA256"},
}
MINIMAL = {"openssl": "minimal_transfer.c", "rustls": "minimal_rustls_transfer.c",
           "wolfssl": "minimal_wolfssl_transfer.c"}
SIZES = (1024, 16384, 1024 * 1024)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", default="system")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=1.0)
    args = parser.parse_args()
    lib = installed.find(args.lib)
    cpu = pinning.choose(None)
    os.sched_setaffinity(0, {cpu})          # both loops (children inherit it) on one CPU
    work = Path(tempfile.mkdtemp(prefix="sslperf-bench-"))
    try:
        backend = harness_backend(lib.flavor)
        minimal = work / "minimal_transfer"
        subprocess.run(["cc", "-O2", "-std=c11", *lib.linkage.cflags, str(HERE / MINIMAL[backend]), "-o",
                        str(minimal), *lib.linkage.libs], check=True, timeout=300)
        env = bench_certs.make(lib, work)
        ms = int(args.seconds * 1000)
        print(f"{lib.name} ({lib.version_string}), pinned to CPU {cpu}, {args.rounds} alternating rounds of "
              f"{args.seconds:g} s each")
        print("| case | minimal loop | harness | harness / minimal: median (min … max of the rounds) |")
        print("|---|---:|---:|---:|")
        for suite, name in SUITES[backend].items():
            for size in SIZES:
                case = f"tls/transfer/tls1.3/{suite}/{size}"
                theirs, ours, ratios = [], [], []
                for _ in range(args.rounds):
                    out = subprocess.run([minimal, work / "leaf.pem", work / "leaf.key", work / "cafile.pem", name,
                                          str(size), str(ms)],
                                         capture_output=True, text=True, timeout=120, check=True).stdout
                    record = harness_client.call(lib, "run", "--time-ms", str(ms // 10), "--samples", "10", case,
                                                 timeout=120, env=env).last
                    theirs.append(float(out))
                    ours.append(sum(record["ops"]) * size * 1e9 / sum(record["wall_ns"]))
                    ratios.append(ours[-1] / theirs[-1])
                print(f"| {case} | {statistics.median(theirs) / 1e6:,.0f} MB/s | {statistics.median(ours) / 1e6:,.0f} "
                      f"MB/s | {statistics.median(ratios):.3f} ({min(ratios):.3f} … {max(ratios):.3f}) |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
