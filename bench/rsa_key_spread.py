"""Is a library's RSA-2048 TLS 1.3 handshake time a property of the key? For each of K fresh certificate
directories (a new RSA key each), R fresh harness processes pinned to CPU 1 time the case, for each library named
(e.g. wolfssl and, as a control, aws-lc). Prints µs per handshake per key and process.

    .venv/bin/python bench/rsa_key_spread.py K R LIB [LIB ...]
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from sslperf.libs import installed
from sslperf.measure.harness_client import call

CASE = "tls/handshake/tls1.3/x25519/rsa-2048/shared"


def main() -> None:
    keys, processes = int(sys.argv[1]), int(sys.argv[2])
    system = installed.find("system")
    libs = [installed.find(name) for name in sys.argv[3:]]
    for k in range(keys):
        work = Path(tempfile.mkdtemp(prefix="sslperf-rsa-key-"))
        try:
            call(system, "mkcerts", str(work), "150", timeout=300)
            (work / "pem").mkdir(mode=0o700)
            call(system, "pem-certs", str(work / "pem"), timeout=300)      # a new RSA key in each directory
            env = {"SSLPERF_CERT_DIR": str(work), "SSLPERF_TLS_PEM_DIR": str(work / "pem")}
            for lib in libs:
                us = []
                for _ in range(processes):
                    record = call(lib, "run", "--time-ms", "100", "--samples", "10", CASE, timeout=120, env=env,
                                  cpu=1).last
                    us.append(sum(record["wall_ns"]) / sum(record["ops"]) / 1000)
                print(f"key {k} {lib.name:16s} " + " ".join(f"{u:6.1f}" for u in us)
                      + f"   median {statistics.median(us):6.1f}", flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
