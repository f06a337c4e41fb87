"""How often one QUIC stream stalls with nothing but OpenSSL: bench/quic_write_stall.c built against a built library,
its server and client run as two processes, RUNS times per setting (client groups, server read size), the stalls
counted. Not a timing: a count of runs in which a write or the final count took over 20 s.

    .venv/bin/python bench/quic_write_stall.py --lib openssl-3.6.3 --runs 5
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from sslperf.libs import installed
from sslperf.libs.model import find_lib_dir

HERE = Path(__file__).parent
SETTINGS = [  # (client groups, server read size)
    (None, 4096), ("x25519", 4096), (None, 262144), ("x25519", 262144),
]


def build(prefix: Path, out: Path) -> None:
    libdir = find_lib_dir(prefix)
    subprocess.run(["cc", "-O2", "-std=c11", "-o", str(out), str(HERE / "quic_write_stall.c"),
                    f"-I{prefix / 'include'}", str(libdir / "libssl.a"), str(libdir / "libcrypto.a"),
                    "-lpthread", "-ldl"], check=True, timeout=300)


def once(exe: Path, groups: str | None, read_size: int, size: int, ms: int) -> str:
    server = subprocess.Popen([str(exe), "server", str(read_size)], stdout=subprocess.PIPE, text=True)
    try:
        port = server.stdout.readline().strip()
        client = subprocess.run([str(exe), "client", port, str(size), str(ms), *([groups] if groups else [])],
                                capture_output=True, text=True, timeout=120)
        return client.stdout.strip() or client.stderr.strip()[-200:]
    finally:
        server.kill()
        server.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lib", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--size", type=int, default=262144, help="bytes per write")
    parser.add_argument("--ms", type=int, default=1000, help="writing time per run")
    args = parser.parse_args()
    lib = installed.find(args.lib)
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "quic_write_stall"
        build(Path(lib.prefix), exe)
        for groups, read_size in SETTINGS:
            results = [once(exe, groups, read_size, args.size, args.ms) for _ in range(args.runs)]
            stalls = sum(r.startswith("stalled") for r in results)
            print(f"{lib.name}: client groups {groups or 'default'}, server reads {read_size} B, "
                  f"{args.size} B writes for {args.ms} ms: {stalls} of {args.runs} runs stalled")


if __name__ == "__main__":
    main()
