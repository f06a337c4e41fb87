"""Does the harness's in-memory handshake loop add anything to the
library's own cost? Its TLS 1.3 X25519 / ECDSA-P256 handshakes per second
against a minimal hand-written loop over the same API
(bench/minimal_handshake.c; for rustls and wolfSSL, their own APIs in
bench/minimal_rustls_handshake.c and bench/minimal_wolfssl_handshake.c),
both against the same library, alternated
over rounds. Target: within 3%.

    .venv/bin/python bench/handshake_overhead.py [--lib system] [--rounds 7] [--seconds 2]
"""

from __future__ import annotations

import argparse
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

HERE = Path(__file__).parent
CASE = "tls/handshake/tls1.3/x25519/ecdsa-p256/shared"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", default="system")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    lib = installed.find(args.lib)
    work = Path(tempfile.mkdtemp(prefix="sslperf-bench-"))
    try:
        backend = harness_backend(lib.flavor)
        minimal = work / "minimal_handshake"
        source = HERE / {"rustls": "minimal_rustls_handshake.c", "wolfssl": "minimal_wolfssl_handshake.c"}.get(
            backend, "minimal_handshake.c")
        subprocess.run(["cc", "-O2", "-std=c11", *lib.linkage.cflags, str(source), "-o",
                        str(minimal), *lib.linkage.libs], check=True, timeout=300)
        # The same shape of certificates as the harness makes: a P-256 CA and a P-256 leaf,
        # and a CA file of ~150 certificates for the client to load.
        env = bench_certs.make(lib, work)
        ms = int(args.seconds * 1000)
        theirs, ours = [], []
        for _ in range(args.rounds):
            out = subprocess.run([minimal, work / "leaf.pem", work / "leaf.key", work / "cafile.pem", str(ms)],
                                 capture_output=True, text=True, timeout=120, check=True).stdout
            theirs.append(float(out))
            record = harness_client.call(lib, "run", "--time-ms", str(ms // 10), "--samples", "10", CASE,
                                         timeout=120, env=env).last
            ours.append(sum(record["ops"]) * 1e9 / sum(record["wall_ns"]))
        t, o = statistics.median(theirs), statistics.median(ours)
        print(f"{lib.name} ({lib.version_string}): minimal loop {t:,.0f} hs/s, harness {o:,.0f} hs/s, "
              f"harness/minimal {o / t:.3f} (medians of {args.rounds} alternating rounds of {args.seconds:g} s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
