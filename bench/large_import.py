"""How long `sslperf import` and `sslperf runs show` take on the largest
inputs an import accepts.

Two inputs are generated, the same bytes every time: a wolfCrypt benchmark
text output of 8.3 MB (just under the importers' 8 MiB cap), the real
capture tests/data/speed/wolfcrypt-5.9.4-text.txt's banner and rows repeated
with a number in each algorithm's name, so that each row is a case of its
own (80,701 of them); and a Google Benchmark JSON of 16,000 rows, the real
bssl_bench capture gbench-bssl_bench-5.4.0-threads-repetitions.json's
repetition rows repeated likewise (22,171 results: a row of a benchmark run
on several thread counts is also a row of its threads case). Each is
imported --repeat times into a new, empty SQLite store (a fresh process, as
a user runs it), then shown with `runs show latest` (its tables written to a
pipe that is thrown away); the table gives the minimum and median of each
command's wall time and the median of its CPU time (user + system: what a
loaded machine changes least).

    .venv/bin/python bench/large_import.py [--repeat 5] [--src DIR] [--json FILE] [--lock FILE]

--src runs the sslperf of another source tree (its `src` directory, for a
before/after comparison); --json also writes the timings there; --lock
takes an exclusive flock on FILE for each timed command (and only then
starts its clock), so that measurements made by others on a shared machine
do not overlap with these.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "speed"
WOLFCRYPT = DATA / "wolfcrypt-5.9.4-text.txt"
GBENCH = DATA / "gbench-bssl_bench-5.4.0-threads-repetitions.json"
WOLFCRYPT_BYTES = 8_300_000           # the importers read at most 8 MiB (8,388,608 characters)
GBENCH_ROWS = 16_000


def wolfcrypt_text(size_limit: int = WOLFCRYPT_BYTES) -> str:
    """The real capture's banner, then its result rows again and again, the
    first word of each numbered (`AES-128-GCM-enc-17`, `RSA-17 2048 public`)
    so that every row is a case of its own, up to `size_limit` bytes. The rows'
    column padding is one space (wolfCrypt pads to the width of its longest
    name; the importer reads any run of spaces as one), so that the 8.3 MB
    hold about 80,700 rows."""
    lines = WOLFCRYPT.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("wolfCrypt Benchmark ("))
    banner, rows = lines[:start + 1], [line for line in lines[start + 1:] if " took " in line]
    out, size, copy = [*banner], sum(len(line) + 1 for line in banner), 0
    while True:
        for row in rows:
            first, rest = " ".join(row.split()).split(" ", 1)
            line = f"{first}-{copy} {rest}"
            if size + len(line) + 1 + len("Benchmark complete\n") > size_limit:
                return "\n".join([*out, "Benchmark complete"]) + "\n"
            out.append(line)
            size += len(line) + 1
        copy += 1


def gbench_json(count: int = GBENCH_ROWS) -> str:
    """The real capture's context and its benchmark rows (the repetitions; not
    the aggregates, which sslperf recomputes) again and again, each row's
    benchmark numbered (`BM_SpeedAEAD_7_2/seal_aes_128_gcm/InputSize:16`:
    copy 7, repetition 2) so that each is a case of its own, `count` rows in
    all."""
    data = json.loads(GBENCH.read_text())
    repetitions = [row for row in data["benchmarks"] if row.get("run_type", "iteration") == "iteration"]
    rows, copy = [], 0
    while len(rows) < count:
        for row in repetitions[:count - len(rows)]:
            number = f"_{copy}_{row.get('repetition_index', 0)}"
            rows.append({**row, **{key: row[key].replace("/", number + "/", 1) if "/" in row[key] else
                                   row[key] + number for key in ("name", "run_name")}})
        copy += 1
    return json.dumps({"context": data["context"], "benchmarks": rows}, indent=1)


@contextlib.contextmanager
def held(lock: Path | None):
    """An exclusive flock on `lock` (nothing when None)."""
    if lock is None:
        yield
        return
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def timed(argv: list[str], env: dict, lock: Path | None) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system) of the command, run to its end."""
    with held(lock):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                              timeout=1800)
        took = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"`{' '.join(argv[3:])}` failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return took, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def measure(path: Path, repeat: int, src: Path | None, scratch: Path, lock: Path | None) -> dict:
    """Import `path` into a new store and show it, `repeat` times: the (wall, CPU) seconds of each, and how many
    results the store kept."""
    env = {**os.environ, "COLUMNS": "200"}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    sslperf = [sys.executable, "-m", "sslperf"]
    imports, shows, kept = [], [], set()
    for i in range(repeat):
        data_dir = scratch / f"data-{path.stem}-{i}"
        data_dir.mkdir()
        env["SSLPERF_DATA_DIR"] = str(data_dir)
        imports.append(timed([*sslperf, "import", str(path)], env, lock))
        shows.append(timed([*sslperf, "runs", "show", "latest"], env, lock))
        listed = subprocess.run([*sslperf, "runs", "list", "--json"], capture_output=True, text=True, env=env,
                                timeout=600, check=True)
        kept.update(run["measurements"] for run in json.loads(listed.stdout))
        shutil.rmtree(data_dir)
    return {"import": imports, "show": shows, "results": sorted(kept)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--src", type=Path, help="the `src` directory of the sslperf to time (default: this one)")
    parser.add_argument("--json", type=Path, help="also write the timings here")
    parser.add_argument("--lock", type=Path, help="hold an exclusive flock on this file while timing each command")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="large-import-"))
    try:
        inputs = {"wolfcrypt-text": scratch / "wolfcrypt-large.txt", "gbench-json": scratch / "gbench-large.json"}
        inputs["wolfcrypt-text"].write_text(wolfcrypt_text())
        inputs["gbench-json"].write_text(gbench_json())
        figures = {}
        for fmt, path in inputs.items():
            figures[fmt] = {"bytes": path.stat().st_size, **measure(path, args.repeat, args.src, scratch, args.lock)}
        print(f"sslperf from {args.src or 'this tree'}; {args.repeat} runs each, a fresh process and an empty SQLite "
              f"store for each import; wall seconds (min, median) and CPU seconds (user + system, median)")
        print(f"{'input':16} {'MB':>5} {'results':>8}   {'import: min':>11} {'median':>7} {'CPU':>6}   "
              f"{'runs show: min':>14} {'median':>7} {'CPU':>6}")
        for fmt, f in figures.items():
            kept = "/".join(format(n, ",") for n in f["results"])
            cells = []
            for verb in ("import", "show"):
                walls, cpus = [w for w, _ in f[verb]], [c for _, c in f[verb]]
                cells.append(f"{min(walls):{11 if verb == 'import' else 14}.2f} {statistics.median(walls):7.2f} "
                             f"{statistics.median(cpus):6.2f}")
            print(f"{fmt:16} {f['bytes'] / 1e6:5.2f} {kept:>8}   {cells[0]}   {cells[1]}")
        if args.json:
            args.json.write_text(json.dumps(figures, indent=1))
    finally:
        shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
