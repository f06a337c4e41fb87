"""Does the harness's in-memory transfer loop add anything to the library's
own cost? Bytes per second of `tls/transfer/tls1.3/SUITE/SIZE` against a
minimal hand-written SSL_write/SSL_read loop over the same API
(bench/minimal_transfer.c), the same library, alternated over rounds, both
pinned to one CPU. Target: within 3%.

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

from sslperf.libs import installed
from sslperf.measure import harness_client, pinning

HERE = Path(__file__).parent
SUITES = {"aes-128-gcm": "TLS_AES_128_GCM_SHA256", "chacha20-poly1305": "TLS_CHACHA20_POLY1305_SHA256"}
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
        minimal = work / "minimal_transfer"
        subprocess.run(["cc", "-O2", "-std=c11", *lib.linkage.cflags, str(HERE / "minimal_transfer.c"), "-o",
                        str(minimal), *lib.linkage.libs], check=True, timeout=300)
        openssl = Path(shutil.which("openssl") or "openssl")
        subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", "leaf.key", "-out", "leaf.pem", "-subj", "/CN=localhost", "-days", "2"],
                       check=True, capture_output=True, cwd=work, timeout=120)
        harness_client.call(lib, "mkcerts", str(work), "1", timeout=300)
        env = {"SSLPERF_CERT_DIR": str(work)}
        ms = int(args.seconds * 1000)
        print(f"{lib.name} ({lib.version_string}), pinned to CPU {cpu}, {args.rounds} alternating rounds of "
              f"{args.seconds:g} s each")
        print("| case | minimal loop | harness | harness / minimal: median (min … max of the rounds) |")
        print("|---|---:|---:|---:|")
        for suite, name in SUITES.items():
            for size in SIZES:
                case = f"tls/transfer/tls1.3/{suite}/{size}"
                theirs, ours, ratios = [], [], []
                for _ in range(args.rounds):
                    out = subprocess.run([minimal, work / "leaf.pem", work / "leaf.key", name, str(size), str(ms)],
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
