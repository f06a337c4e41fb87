"""How long `sslperf serve-load` takes to build its servers: nginx and HAProxy from Debian's source packages against
each library given, one after the other, with the outcome (the binary's own version line, or the build's first
error). A server already in the cache is reported as cached; remove ~/.cache/sslperf/servers (or point
SSLPERF_CACHE_DIR elsewhere) for cold builds.

    .venv/bin/python bench/server_builds.py --lib openssl-1.1.1w --lib openssl-3.6.3 --lib boringssl-5.4.0
"""

from __future__ import annotations

import argparse
import time

from sslperf.errors import SslperfError
from sslperf.libs import installed
from sslperf.serve_load import build


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lib", action="append", required=True, help="a library in hand (repeatable)")
    parser.add_argument("--server", action="append", choices=sorted(build.RECIPES), help="default: both")
    args = parser.parse_args()
    for name in args.lib:
        lib = installed.find(name)
        for server in args.server or ["nginx", "haproxy"]:
            started = time.monotonic()
            try:
                made = build.build(server, lib)
                outcome = ("cached" if made.cached else "built") + f": {build.describe(made)[:100]}"
            except SslperfError as failed:
                outcome = "fails: " + " ".join(failed.message.split())[:160]
            print(f"{server:8} {name:18} {time.monotonic() - started:6.1f} s  {outcome}", flush=True)


if __name__ == "__main__":
    main()
