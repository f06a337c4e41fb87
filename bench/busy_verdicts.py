"""Verdicts on a busy machine (issue 50): are sslperf's within-run verdicts still right when another process keeps
the workers' CPU busy?

One run measures three columns at once: a library (A), the same build registered a second time under another name
(its twin, A'), and a different library (B). Nothing differs between A and A', so every faster/slower verdict
between them is false; A against B is compared with the same comparison in a quiet run. Each load is one run:

- quiet: nothing else on the workers' CPU;
- same: a CPU-bound loop pinned to the workers' CPU, sslperf at the same priority;
- nice: the same loop, sslperf started under `nice -n 10` (the loop gets ~90% of that CPU).

Every verdict comes from the one rule (sslperf.verdict.judge, paired: one interleaved run), so the figures are those
of the sslperf on PYTHONPATH: run it with another tree's src/ first on PYTHONPATH to score that tree.

    .venv/bin/python bench/busy_verdicts.py --lib openssl-3.6 --other system --load quiet --load same --load nice \\
        --repeat 2 --out /tmp/busy [-- --filter 'cipher/*' ...]

Prints, per run, the A/A false verdicts; then, per load, a Markdown table of the A/A false verdicts and the A-B
verdicts against those of the quiet runs (the cases all quiet runs agree on: a change at the threshold flips between
two quiet runs too). The runs' JSON is kept in --out; --score DIR scores runs kept before, measuring nothing."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SSLPERF = [sys.executable, "-m", "sslperf"]
LOADS = ("quiet", "same", "nice")


def sslperf(args: list[str], env: dict, nice: int = 0) -> subprocess.CompletedProcess:
    prefix = ["nice", "-n", str(nice)] if nice else []
    return subprocess.run([*prefix, *SSLPERF, *args], capture_output=True, text=True, env=env, timeout=7200)


def hog() -> subprocess.Popen:
    """A CPU-bound loop on the last CPU this process may use: the one sslperf pins its workers to by default."""
    cpu = max(os.sched_getaffinity(0))
    return subprocess.Popen([sys.executable, "-c", "while True: pass"],
                            preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))


def measure(load: str, libs: list[str], extra: list[str], env: dict) -> dict:
    loop = hog() if load != "quiet" else None
    try:
        time.sleep(0.5 if loop else 0)
        args = ["speed", "--quick", *[x for lib in libs for x in ("--lib", lib)], "--json", "--no-store", *extra]
        done = sslperf(args, env, nice=10 if load == "nice" else 0)
    finally:
        if loop:
            loop.kill()
            loop.wait(timeout=30)
    if done.returncode != 0:
        sys.exit(f"sslperf {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def verdicts(run: dict, base: str, other: str) -> dict[str, object]:
    """case → the one rule's Change of `other` against `base` within `run` (paired)."""
    from sslperf.results import Run
    from sslperf.verdict import judge

    loaded = Run.from_dict(run)
    by = {(m.case, m.lib): m for m in loaded.measurements if m.status == "ok"}
    out = {}
    for case in dict.fromkeys(m.case for m in loaded.measurements):
        if (case, base) in by and (case, other) in by:
            row = [m for m in loaded.measurements if m.case == case and m.status == "ok"]     # as the table asks
            change = judge(by[(case, base)], by[(case, other)], "wall", paired=True, **_row(row))
            if change is not None:
                out[case] = change
    return out


def score(measured: list[tuple[str, dict]], lib: str, twin: str, other: str) -> str:
    """The Markdown table: per load, the A/A false verdicts and `?`, and the A-B verdicts against the quiet runs'.
    The reference for a case is the verdict every quiet run gave it; a case the quiet runs disagree on is unsettled
    even on a quiet machine (a change at the threshold) and is counted apart."""
    quiet = [verdicts(run, lib, other) for load, run in measured if load == "quiet"]
    settled = {case: quiet[0][case].verdict for case in quiet[0] if all(
        case in q and q[case].verdict == quiet[0][case].verdict for q in quiet)} if quiet else {}
    unsettled = len(quiet[0]) - len(settled) if quiet else 0
    rows: dict[str, list[int]] = {}
    lines = []
    for load, run in measured:
        aa, ab = verdicts(run, lib, twin), verdicts(run, lib, other)
        row = rows.setdefault(load, [0] * 9)
        row[0] += 1
        row[1] += sum(1 for c in aa.values() if c.verdict in ("faster", "slower"))
        row[2] += sum(1 for c in aa.values() if c.verdict == "?")
        row[3] += len(aa)
        if load == "quiet" and len(quiet) < 2:
            continue
        for case, reference in settled.items():
            if case not in ab:
                continue
            got = ab[case].verdict
            row[4] += 1
            row[5] += got == reference
            row[6] += got in ("~", "?") and reference in ("faster", "slower")          # a change not seen
            row[7] += got in ("faster", "slower") and got != reference                   # a change not there
            row[8] += got == "?"
            if got != reference:
                c = ab[case]
                lines.append(f"    {load}: {case}: {c.symbol} {c.percent:+.1f}% [{(c.low or 1) * 100 - 100:+.1f}, "
                             f"{(c.high or 1) * 100 - 100:+.1f}] ({getattr(c, 'basis', 'wall')}); quiet: {reference}")
    table = ["", f"A-B reference: the verdicts all {len(quiet)} quiet runs agree on ({len(settled)} cases; "
             f"{unsettled} unsettled even quiet)", *lines, "",
             "| load | runs | A/A false verdicts | A/A `?` | A-B as the quiet runs | not seen (`~`/`?`) | "
             "contradicting | `?` |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for load, (runs, false, unknown, aa, compared, agree, missed, wrong, ab_unknown) in rows.items():
        share = f"{agree} of {compared} ({agree / compared:.0%})" if compared and load != "quiet" else "(reference)"
        table.append(f"| {load} | {runs} | {false} of {aa} ({false / aa:.1%}) | {unknown} | {share} | {missed} | "
                     f"{wrong} | {ab_unknown} |")
    return "\n".join(table)


def _row(row: list) -> dict:
    """judge's `row` where the sslperf scored has it (a tree from before issue 50 judges pairs alone)."""
    import inspect

    from sslperf.verdict import judge

    return {"row": row} if "row" in inspect.signature(judge).parameters else {}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", required=True, help="the library measured twice (A and its twin)")
    parser.add_argument("--other", required=True, help="a different library (B)")
    parser.add_argument("--load", action="append", choices=LOADS, help="the loads, in order (default: all)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per load")
    parser.add_argument("--out", type=Path, default=None, help="where the runs' JSON is kept")
    parser.add_argument("--score", type=Path, default=None, help="score the runs kept in this folder, measure nothing")
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="after --: more options for `sslperf speed`")
    args = parser.parse_args()
    if args.score:
        kept = sorted(args.score.glob("*.json"), key=lambda p: (LOADS.index(p.stem.split("-")[0]), p.stem))
        print(score([(p.stem.split("-")[0], json.loads(p.read_text())) for p in kept], args.lib,
                    f"{args.lib}-twin", args.other))
        return 0
    extra = [a for a in args.extra if a != "--"]
    loads = args.load or list(LOADS)
    out = args.out or Path(tempfile.mkdtemp(prefix="busy-verdicts-"))
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SSLPERF_DATA_DIR": tempfile.mkdtemp(prefix="busy-data-")}
    twin = f"{args.lib}-twin"
    prefix = json.loads(sslperf(["libs", "list", "--json"], env).stdout)
    found = next((lib for lib in prefix if lib["name"] == args.lib), None)
    if found is None or not found.get("prefix"):
        sys.exit(f"{args.lib} is not a built library with a prefix (sslperf libs list --json)")
    added = sslperf(["libs", "add", twin, "--prefix", found["prefix"]], env)
    if added.returncode != 0:
        sys.exit(added.stderr)
    libs = [args.lib, twin, args.other]

    measured: list[tuple[str, dict]] = []
    for load in loads:
        for number in range(args.repeat):
            started = time.monotonic()
            run = measure(load, libs, extra, env)
            (out / f"{load}-{number}.json").write_text(json.dumps(run))
            measured.append((load, run))
            aa = verdicts(run, args.lib, twin)
            false = [case for case, c in aa.items() if c.verdict in ("faster", "slower")]
            print(f"{load} #{number + 1} ({time.monotonic() - started:.0f} s): A/A {len(false)} of {len(aa)} called",
                  flush=True)
            for case in false:
                c = aa[case]
                print(f"    A/A {case}: {c.symbol} {c.percent:+.1f}% p={c.p:.3f} ({getattr(c, 'basis', 'wall')})",
                      flush=True)
    print(score(measured, args.lib, twin, args.other))
    print(f"\nruns kept in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
