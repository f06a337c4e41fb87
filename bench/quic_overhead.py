"""Does the harness's QUIC request loop (`harness quic-get`) add anything to OpenSSL's QUIC client's own cost?
Requests per second, each on a new QUIC connection to one `harness quic-server` on 127.0.0.1, of the harness's
loop against a minimal hand-written loop of the same API (bench/minimal_quic_get.c), alternated over rounds; the
server pinned to one CPU, both clients to the other. Target: within 3%.

    .venv/bin/python bench/quic_overhead.py [--lib openssl-3.6] [--rounds 7] [--seconds 2]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from sslperf.libs import installed
from sslperf.measure import harness_client
from sslperf import pinning
from sslperf.measure.harness_client import Server

HERE = Path(__file__).parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", default="openssl-3.6")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    lib = installed.find(args.lib)
    server_cpu, client_cpu = pinning.loopback_cpus()
    work = Path(tempfile.mkdtemp(prefix="sslperf-bench-"))
    try:
        minimal = work / "minimal_quic_get"
        subprocess.run(["cc", "-O2", "-std=c11", *lib.linkage.cflags, str(HERE / "minimal_quic_get.c"), "-o",
                        str(minimal), *lib.linkage.libs], check=True, timeout=300)
        harness_client.call(lib, "mkcerts", str(work), "150", timeout=300)
        env = {"SSLPERF_CERT_DIR": str(work)}
        theirs, ours, ratios = [], [], []
        with Server(lib, "quic-server", str(work), "x25519", "ecdsa-p256", "1000000", env=env,
                    cpu=server_cpu) as server:
            hello = server.line(timeout=120)
            port, ca_file = str(hello["port"]), hello["ca_file"]
            for _ in range(args.rounds):
                out = subprocess.run(["taskset", "-c", str(client_cpu), minimal, port, ca_file,
                                      str(int(args.seconds * 1000))], capture_output=True, text=True, timeout=120,
                                     check=True).stdout
                theirs.append(float(out))
                count = max(10, int(theirs[-1] * args.seconds))          # about as long as the minimal loop
                reply = harness_client.call(lib, "quic-get", port, ca_file, "x25519", "ecdsa-p256", str(count),
                                            timeout=120, env=env, cpu=client_cpu).last
                ours.append(count * 1e9 / reply["loop_ns"])
                ratios.append(ours[-1] / theirs[-1])
        print(f"{lib.name} ({lib.version_string}): minimal loop {statistics.median(theirs):,.0f} req/s, harness "
              f"{statistics.median(ours):,.0f} req/s, harness/minimal {statistics.median(ratios):.3f} "
              f"({min(ratios):.3f} … {max(ratios):.3f}; {args.rounds} alternating rounds of {args.seconds:g} s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
