"""Brute force over a release series: instructions per operation of a few
cases on every release the crates carry, in one interleaved run, and the
change from each release to the next — the table a bisect is checked
against (docs/findings.md).

    python bench/release_series.py --series 3.0 [--case ID …] [--processes 3]

Every release of the series must be built (`sslperf libs build openssl-3.0.0
…`). Instruction counts are deterministic (callgrind, the harness loop only),
so one run is enough; a change from one release to the next above 1% is
marked.
"""

from __future__ import annotations

import argparse
import sys

from sslperf.libs import installed, releases, versions
from sslperf.measure import plan, scheduler, suites

CASES = ["api/ssl-ctx/new", "api/pem/private-key", "api/fetch/sha256", "api/ca-load/file",
         "tls/handshake/tls1.3/x25519/ecdsa-p256/new", "sig/rsa-2048/sign", "sig/ecdsa-p256/sign",
         "digest/sha256/64", "cipher/aes-128-gcm/encrypt/16"]
MARK = 0.01


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--series", default="3.0")
    parser.add_argument("--case", action="append", dest="cases")
    parser.add_argument("--processes", type=int, default=3)
    args = parser.parse_args()
    offered = [r.version for r in releases.offered("openssl") if versions.series(r.version) == args.series]
    libs = [installed.find(f"openssl-{v}") for v in offered]
    cases = [suites.parse_case(c) for c in (args.cases or CASES)]
    settings = plan.settings(20, 3, None, False, args.processes, metric="instructions")
    print(f"{len(cases)} cases × {len(libs)} releases ({', '.join(offered)}), instructions, "
          f"{args.processes} processes each", file=sys.stderr)
    run = scheduler.measure_libs(libs, cases, settings, None, "bench/release_series.py",
                            progress=lambda what, done, total: print(f"  {done}/{total} {what}", file=sys.stderr))
    cells = {(m.case, m.lib): m for m in run.measurements}
    print(f"| case | {' | '.join(offered)} |")
    print("|---|" + "---:|" * len(offered))
    for case in cases:
        row, previous = [], None
        for lib in libs:
            m = cells.get((case.id, lib.name))
            per_op = m.instructions_per_op() if m is not None and m.status == "ok" else None
            if per_op is None:
                row.append(m.status if m is not None else "—")
                continue
            text = f"{per_op:,.0f}"
            if previous and abs(per_op / previous - 1) > MARK:
                text = f"**{text}** ({(per_op / previous - 1) * 100:+.1f}%)"
            row.append(text)
            previous = per_op
        print(f"| {case.id} | {' | '.join(row)} |")
    print(f"\ninstructions per operation (median of {args.processes} worker processes, callgrind, the harness "
          f"loop only); bold: more than {MARK * 100:.0f}% from the release before; run at {run.started}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
