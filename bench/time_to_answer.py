"""Time to a stable answer: the quick suite against `openssl speed`.

Runs `sslperf speed --quick` for one library and reports its wall time and
the share of throughput figures whose 95% CI half-width is under 2%
(target: under 60 s and at least 90%). Then runs `openssl speed` with its
default durations for the same cases (the library's own `openssl`
command) and reports how long that took.

    .venv/bin/python bench/time_to_answer.py [--lib system] [--skip-openssl]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from sslperf.measure import suites
from sslperf.libs import installed

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from agreement import openssl_binary  # noqa: E402  (bench scripts are run as files)

PKEY_COMMANDS = {"rsa-2048": "rsa2048", "ecdsa-p256": "ecdsap256", "ed25519": "ed25519", "ml-dsa-65": "ML-DSA-65",
                 "x25519": "ecdhx25519", "ecdh-p256": "ecdhp256", "ml-kem-768": "ML-KEM-768"}


def openssl_commands(cases: list[suites.Case]) -> list[list[str]]:
    """The `openssl speed` invocations that cover `cases` (sign and verify
    come from one run, as do encaps and decaps)."""
    commands: list[list[str]] = []
    for case in cases:
        if case.family == "cipher":
            cmd = ["-evp", case.algorithm, "-bytes", str(case.size)] + (["-decrypt"] if case.operation == "decrypt" else [])
        elif case.family == "digest":
            cmd = ["-evp", case.algorithm, "-bytes", str(case.size)]
        elif case.family == "mac":
            cmd = ["-hmac", case.algorithm.split("-")[1], "-bytes", str(case.size)]
        else:
            cmd = [PKEY_COMMANDS[case.algorithm]]
        if cmd not in commands:
            commands.append(cmd)
    return commands


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", default="system")
    parser.add_argument("--skip-openssl", action="store_true")
    args = parser.parse_args()
    lib = installed.find(args.lib)

    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "sslperf", "speed", "--quick", "--lib", args.lib, "--json"],
                            capture_output=True, text=True, timeout=1800)
    elapsed = time.monotonic() - started
    if result.returncode != 0:
        sys.exit(result.stderr)
    run = json.loads(result.stdout)
    widths = [m["summary"]["wall"]["ci_half_width"] for m in run["measurements"]
              if m["status"] == "ok" and m["unit"] == "bytes"]
    tight = sum(w < 0.02 for w in widths)
    print(f"sslperf speed --quick --lib {args.lib}: {elapsed:.1f} s for {len(run['measurements'])} cases; "
          f"{tight}/{len(widths)} throughput figures ({tight / len(widths):.0%}) have a 95% CI half-width < 2% "
          f"(median half-width {sorted(widths)[len(widths) // 2]:.2%})")

    if args.skip_openssl:
        return
    binary = openssl_binary(lib)
    total, skipped = 0.0, []
    for cmd in openssl_commands(suites.suite("quick")):
        started = time.monotonic()
        done = subprocess.run([binary, "speed", *cmd], capture_output=True, text=True, timeout=900)
        if done.returncode != 0 or "Doing" not in done.stdout + done.stderr:
            skipped.append(" ".join(cmd))
            continue
        total += time.monotonic() - started
    print(f"openssl speed with its defaults, same cases ({lib.version_string}): {total:.0f} s"
          + (f"; not offered by this version: {', '.join(skipped)}" if skipped else ""))


if __name__ == "__main__":
    main()
