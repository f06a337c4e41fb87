"""Fuzzing the importers: mutated real `openssl speed` / `bssl speed` outputs.

Every input is one of the real outputs of tests/data/speed/ with one to
three mutations (bytes flipped, a digit run inflated to 5000 digits, huge,
zero or non-finite numbers, lines duplicated, deleted, swapped or spliced
from another output, JSON nested 1001 deep or given values of the wrong
type, bytes that are not UTF-8, control characters, very long names). It is
imported the way `sslperf import` does (`sslperf.importers.parse`; the text
as standard input gives it, as a file read gives it, or as bytes), and the
outcome must be a Run or ImportFailed with a one-paragraph message. Every
Run must then survive the real store (SQLite: save, load) and the JSON, CSV,
Bencher and Conbench exports of the loaded run (finite numbers, one result
in each per result) and keep no control character and no note over 4,096
characters. Anything else is a crash, counted by its cause.

    .venv/bin/python bench/fuzz_importers.py [--count 300000] [--seed 1] [--jobs 2] [--via stdin,file,bytes]

Each import has a time budget in CPU time (BUDGET_S + BUDGET_S_PER_MB per megabyte of
input; an import still going after HARD_STOP_S is stopped): an input over it
is a failure too, so an importer that is slower than linear in some input
(a pattern backtracking over a long run of spaces) is found like a crash.

Prints inputs, accepted, rejected, slow and crashes (by cause, with the
first tracebacks), the import closest to its budget and the wall time;
exits 1 on any crash or slow input. An accepted run equal
in content to one already checked is not stored again, and `stats.describe`
(a pure function) is memoised, so 300,000 inputs take about 5 minutes on 2
CPUs. tests/test_import_fuzz.py runs the same fuzzer on 2,000 inputs.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import math
import os
import random
import re
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

from sslperf import importers
from sslperf.importers import FORMATS, ImportFailed
from sslperf.importers._common import BAD_CHARS, MAX_FACT
from sslperf.report import export, services
from sslperf.store import Store

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "speed"


def samples() -> list[tuple[str, bytes]]:
    """The real outputs, as bytes, by name."""
    return sorted((p.name, p.read_bytes()) for p in DATA.iterdir() if p.is_file() and p.name != "README.md")


# ---- mutators: (rng, data, pool of all samples) → data ------------------------------

NUMBER = re.compile(rb"\d+(?:\.\d+)?")
DIGITS = re.compile(rb"\d+")
WORD = re.compile(rb"[A-Za-z][A-Za-z0-9-]*")
SIZES = re.compile(rb"(?<!\d)\d+(?= ?bytes?\b)|(?<=\"bytesPerCall\": )\d+|(?<=\+H:)\d+|(?<=:)\d+(?=:|\r?\n|$)")
JSON_VALUE = re.compile(rb"(?<=\": )(?:\"[^\"]*\"|-?\d+(?:\.\d+)?)")
HUGE = (b"0", b"00", b"0.00", b"0.000000", b"-1", b"-1.00", b"1e200", b"1e400", b"inf", b"-inf", b"nan",
        b"2147483647", b"2147483648", b"4294967296", b"9223372036854775807", b"9223372036854775808",
        b"18446744073709551616", b"9" * 200 + b".00", b"1" + b"0" * 300 + b".0", b"0.000001", b"0.01",
        b"999999999999999.99", b"1000000000000000000000.00", b"1.0e-300")
JSON_ODD = (b"true", b"false", b"null", b"1e400", b"-1", b"0", b"1.5", b"\"x\"", b"[]", b"{}", b"NaN", b"Infinity",
            b"\"\\u0000\"", b"\"\\ud800\"", b"\"a\\nb\"", b"9223372036854775808", b"9" * 400, b"9" * 5000,
            b"[" * 1001 + b"]" * 1001, b"{\"a\": " * 50 + b"1" + b"}" * 50, b"\"" + b"x" * 5000 + b"\"")
BAD_BYTES = (b"\xff", b"\xfe", b"\x80", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\xc0\xaf")
CONTROL = (b"\x00", b"\x01", b"\x1b[31m", b"\x7f", b"\t", b"\x0b", b"\x0c", b"\x1c", b"\r", b"\x85", b"\xe2\x80\xa8")


def _replace(rng: random.Random, data: bytes, pattern: re.Pattern, new: bytes) -> bytes:
    """`new` in place of the first match of `pattern` from a random point on (wrapping around)."""
    m = pattern.search(data, rng.randrange(len(data) + 1)) or pattern.search(data)
    if not m:
        return data
    return data[:m.start()] + new + data[m.end():]


def _insert(rng: random.Random, data: bytes, new: bytes) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + new + data[at:]


def flip_bytes(rng, data, pool):
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if b:
            b[rng.randrange(len(b))] = rng.randrange(256)
    return bytes(b)


def inflate_digits(rng, data, pool):
    """A digit run becomes up to 5000 digits (int()'s limit is 4300)."""
    n = rng.choice((16, 17, 20, 64, 200, 400, 4300, 4301, 5000))
    digits = rng.choice((b"9" * n, b"1" + b"0" * (n - 1), bytes(rng.choices(b"0123456789", k=n))))
    return _replace(rng, data, DIGITS, digits)


def huge_number(rng, data, pool):
    return _replace(rng, data, NUMBER, rng.choice(HUGE))


def zero_size(rng, data, pool):
    return _replace(rng, data, SIZES, rng.choice((b"0", b"00", b"2147483648", b"9223372036854775808")))


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def duplicate_line(rng, data, pool):
    lines = _lines(data)
    i = rng.randrange(len(lines))
    lines[i:i] = [lines[i]] * rng.choice((1, 1, 2, 50))
    return b"\n".join(lines)


def delete_line(rng, data, pool):
    lines = _lines(data)
    del lines[rng.randrange(len(lines))]
    return b"\n".join(lines)


def swap_lines(rng, data, pool):
    lines = _lines(data)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def splice(rng, data, pool):
    """Lines of another real output pasted in."""
    other = _lines(rng.choice(pool)[1])
    start = rng.randrange(len(other))
    chunk = other[start:start + rng.randint(1, 6)]
    lines = _lines(data)
    at = rng.randrange(len(lines) + 1)
    lines[at:at] = chunk
    return b"\n".join(lines)


def truncate(rng, data, pool):
    return data[:rng.randrange(len(data) + 1)]


def nest(rng, data, pool):
    """Deep JSON: `[` × 1001 (or `{"a":` …) after the list's `[`, or anywhere."""
    depth = rng.choice((3, 10, 100, 999, 1001, 5000))
    opener, closer = rng.choice(((b"[", b"]"), (b"{\"a\": ", b"}"), (b"[{\"a\": ", b"}]")))
    deep = opener * depth
    if rng.random() < 0.5:
        deep += b"1" + closer * depth
    at = data.find(b"[") + 1 if rng.random() < 0.7 else rng.randrange(len(data) + 1)
    return data[:at] + deep + data[at:]


def json_value(rng, data, pool):
    return _replace(rng, data, JSON_VALUE, rng.choice(JSON_ODD))


def non_utf8(rng, data, pool):
    for _ in range(rng.randint(1, 3)):
        data = _insert(rng, data, rng.choice(BAD_BYTES))
    return data


def control(rng, data, pool):
    return _insert(rng, data, rng.choice(CONTROL))


def long_name(rng, data, pool):
    n = rng.choice((81, 256, 300, 5000))
    return _replace(rng, data, WORD, bytes(rng.choices(b"abcdefghij-", k=n)))


def whitespace(rng, data, pool):
    return _replace(rng, data, re.compile(rb"[ \t]+"), rng.choice((b"", b" ", b"\t", b" " * 40, b"\r")))


# What the importers' patterns look for, repeated: a pattern that backtracks over a long run of its own
# tokens takes time quadratic in the run, which the time budget catches.
RUN_UNITS = (b" ", b"\t", b"\xc2\xa0", b"0", b"9", b".", b"-", b")", b"(", b":", b"+", b"s", b"k", b"\"", b"[",
             b" 1", b"1 ", b"1s ", b" in ", b" operations in ", b"(16 bytes)", b" bytes", b" bits ", b"1.00s ",
             b" ops/sec)", b"+F:", b"+H:1:", b"Did 1 ", b"1.00k ", b"rsa ", b"ecdsa (", b": ", b"\n ", b"\r\n")
RUN_WEIGHTS = (6, 3, 3) + (1,) * (len(RUN_UNITS) - 3)     # whitespace most: descriptions are split on it
RUN_LENGTHS = (1000, 4000, 4096, 4097, 20_000, 100_000, 1_000_000)


def long_run(rng, data, pool):
    """A run of up to a megabyte of one character or token, inside a line (often where whitespace was:
    inside a description) or as a whole line."""
    [unit] = rng.choices(RUN_UNITS, RUN_WEIGHTS)
    run = unit * max(1, rng.choice(RUN_LENGTHS) // len(unit))
    spaces = [m.start() for m in re.finditer(rb"[ \t]", data)]
    if spaces and rng.random() < 0.6:
        at = rng.choice(spaces)
        return data[:at] + run + data[at:]
    if rng.random() < 0.5:
        lines = _lines(data)
        lines[rng.randrange(len(lines))] = run
        return b"\n".join(lines)
    return _insert(rng, data, run)


MUTATORS = {f.__name__: (f, weight) for f, weight in (
    (flip_bytes, 4), (inflate_digits, 4), (huge_number, 4), (zero_size, 2), (duplicate_line, 2),
    (delete_line, 2), (swap_lines, 1), (splice, 2), (truncate, 1), (nest, 1), (json_value, 2), (non_utf8, 2),
    (control, 1), (long_name, 1), (whitespace, 1), (long_run, 2))}
LIB_NAMES = ("openssl-3.6.3", "aws-lc", "boringssl-prod", "libressl-2.8.3-" + "9" * 100, "x" * 300, "bad\x00name")


VIAS = ("stdin", "file", "bytes")


def make_input(rng: random.Random, pool: list[tuple[str, bytes]],
               vias: tuple[str, ...] = VIAS) -> tuple[str, bytes, list[str], dict]:
    """(sample name, mutated bytes, mutators applied, parse options) of one input."""
    name, data = rng.choice(pool)
    names, weights = zip(*((n, w) for n, (_, w) in MUTATORS.items()))
    applied = rng.choices(names, weights, k=rng.choice((1, 1, 1, 2, 2, 3)))
    for mutator in applied:
        data = MUTATORS[mutator][0](rng, data, pool)
    options = {"via": rng.choice(vias),
               "fmt": rng.choice(FORMATS) if rng.random() < 0.15 else None,
               "lib_name": rng.choice(LIB_NAMES) if rng.random() < 0.1 else None}
    return name, data, applied, options


def parse_as_cli(name: str, data: bytes, via: str, fmt: str | None, lib_name: str | None):
    """What `sslperf import` hands the importer: standard input as sys.stdin.read()
    gives it (surrogateescape under a C.UTF-8 or UTF-8-mode locale), a file as
    its read_text(errors="replace") gives it, or the raw bytes."""
    if via == "stdin":
        return importers.parse(data.decode("utf-8", "surrogateescape"), fmt, lib_name, "-")
    if via == "file":
        return importers.parse(data.decode("utf-8", "replace"), fmt, lib_name, name)
    return importers.parse(data, fmt, lib_name, name)


# ---- what an accepted run must survive -----------------------------------------------

def _no_constant(name: str):
    raise ValueError(f"non-finite number {name} in the JSON export")


def check_run(run, store: Store, run_id: str) -> None:
    """The store (save, load) and the exports of the loaded run; raises on any problem."""
    for m in run.measurements:
        assert m.reported_rates and all(math.isfinite(r) and r > 0 for r in m.reported_rates), \
            f"a rate that is not finite and positive: {m.reported_rates}"
        assert m.size is None or 1 <= m.size < 2**31, f"a block size of {m.size}"
    run.id = run_id                      # unique within a session: two imports in one second may share an id
    store.save(run, run.settings["source"])
    try:
        loaded = store.load(run.id)
        assert len(loaded.measurements) == len(run.measurements)
        assert [m.reported_rates for m in loaded.measurements] == [m.reported_rates for m in run.measurements]
        kept = [t for t in _texts(json.loads(loaded.to_json(), parse_constant=_no_constant)) if BAD_CHARS.search(t)]
        kept += [m.note for m in loaded.measurements if len(m.note or "") > MAX_FACT]
        assert not kept, f"control characters, or a note over 4,096 characters, kept: {kept[0][:100]!r}"
        for row in csv.DictReader(io.StringIO(export.to_csv(loaded))):
            for key in ("median", "ci_low", "ci_high", "mean", "stdev", "min", "max", "p95", "p99", "us_per_op"):
                if row[key]:
                    assert math.isfinite(float(row[key])), (key, row)
        results = len({(m.case, m.lib) for m in loaded.measurements})
        bencher = json.loads(services.to_bencher(loaded), parse_constant=_no_constant)     # NaN, Infinity: refused
        conbench = json.loads(services.to_conbench(loaded), parse_constant=_no_constant)
        assert len(bencher) == len(conbench) == results and all(r["stats"]["data"] for r in conbench), results
    finally:
        store.delete(run.id)


def _texts(value) -> list[str]:            # every string in a run's JSON form, keys included
    if isinstance(value, dict):
        return [text for k, v in value.items() for text in (k, *_texts(v))]
    if isinstance(value, list):
        return [text for v in value for text in _texts(v)]
    return [value] if isinstance(value, str) else []


def cause(exc: BaseException) -> str:
    """`OverflowError at bssl_speed.py:52 add: integer division result too large for a float`."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "sslperf" in f.filename] or frames
    where = f"{Path(ours[-1].filename).name}:{ours[-1].lineno} {ours[-1].name}" if ours else "?"
    message = str(exc).splitlines()[0] if str(exc) else ""
    for pattern in (r"\\u[0-9a-f]{4}|\\x[0-9a-f]{2}", r"'[^'\s]{0,40}'|`[^`]*`", r"\S+\.(txt|json)\b|standard input",
                    r"\d+"):
        message = re.sub(pattern, "…", message)                       # one cause, whatever the value
    message = message[:90]
    return f"{type(exc).__name__} at {where}: {message}"


def content(run) -> str:
    """What a run stores and exports, without its id and times: two runs
    with the same content meet the store and the exporters alike."""
    return repr((run.settings, run.environment, run.warnings, run.complete, run.libs, run.measurements))


# The time budget of one import (the import alone, not the store round trip of an accepted run), in
# CPU time of this process, so a loaded machine does not make a linear importer look slow (655 ms of
# wall time for 101 KB once, with two test workers and a build on two cores): an importer linear in
# its input reads a megabyte of the worst lines seen (half a million blank ones) in under a second;
# one quadratic in a line's length took 9.5 s on 100 KB. An import still going at HARD_STOP_S (wall
# time) is stopped and counted.
BUDGET_S = 0.25
BUDGET_S_PER_MB = 3.0
HARD_STOP_S = 10.0


def budget(size: int) -> float:
    """Seconds an import of `size` bytes may take."""
    return BUDGET_S + BUDGET_S_PER_MB * size / 1e6


class _Stopped(Exception):
    pass


def _stop(signum, frame):
    raise _Stopped


@contextlib.contextmanager
def hard_stop(seconds: float):
    """Raise _Stopped in the import after `seconds` (the regular-expression engine checks for signals)."""
    previous = signal.signal(signal.SIGALRM, _stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def fuzz_one(rng: random.Random, pool, store: Store, index: int, checked: set | None = None,
             vias: tuple[str, ...] = VIAS) -> tuple[str, str | None, str | None, float]:
    """("accepted" | "rejected" | "slow" | "crash", cause, description of the
    input, seconds the import took)."""
    name, data, applied, options = make_input(rng, pool, vias)
    return _import_and_check(name, data, applied, options, store, index, checked)


def _import_and_check(name, data, applied, options, store, index, checked):
    """The outcome of one input. An accepted run whose content is in
    `checked` was already saved, loaded and exported and is not again: most
    accepted inputs give a run seen before (a mutation in a progress line,
    the same line duplicated)."""
    described = f"{name} + {', '.join(applied)} via {options['via']}, fmt={options['fmt']}, {len(data):,} bytes"
    began = time.process_time()
    try:
        with hard_stop(HARD_STOP_S):
            run = parse_as_cli(name, data, **options)
    except _Stopped:
        return "slow", f"still importing after {HARD_STOP_S:g} s ({', '.join(sorted(set(applied)))})", described, \
            time.process_time() - began
    except ImportFailed as exc:
        took = time.process_time() - began
        message = str(exc)
        if "\n" in message or len(message) > 2000:
            return "crash", "ImportFailed message not one short paragraph", f"{described}\n{message[:500]}", took
        if took > budget(len(data)):
            return "slow", _over(applied), f"{described}: {took * 1000:.0f} ms", took
        return "rejected", None, None, took
    except Exception as exc:            # noqa: BLE001 — every other exception is what we count
        return "crash", cause(exc), described + "\n" + "".join(traceback.format_exception(exc)), \
            time.process_time() - began
    took = time.process_time() - began
    if took > budget(len(data)):
        return "slow", _over(applied), f"{described}: {took * 1000:.0f} ms", took
    try:
        key = content(run) if checked is not None else None
        if key is None or key not in checked:
            check_run(run, store, f"fuzz-{index:09d}")
            if key is not None:
                checked.add(key)
    except Exception as exc:            # noqa: BLE001
        return "crash", "accepted, then " + cause(exc), described + "\n" + "".join(traceback.format_exception(exc)), \
            took
    return "accepted", None, None, took


def _over(applied: list[str]) -> str:
    return f"over the time budget ({', '.join(sorted(set(applied)))})"


def cache_summaries() -> None:
    """Memoise `stats.describe` as the run model calls it. It is a pure
    function of the values, and the distinct runs the fuzzer accepts share
    most of their measurements, so the exports compute the same summaries
    (scipy's binomial quantiles are most of their cost) much faster."""
    import functools

    from sslperf import results, stats

    cached = functools.lru_cache(maxsize=200_000)(lambda values: stats.describe(list(values)))
    results.describe = lambda values: cached(tuple(values))


def fuzz(count: int, seed: int, start: int = 0, vias: tuple[str, ...] = VIAS, url: str | None = None) -> dict:
    """Inputs start … start+count-1 of the stream `seed` (each input has its
    own generator, so a shard gives the same inputs as a single run)."""
    pool = samples()
    for name, data in pool:              # warm up: the first import pays for imports and pattern compiles
        with contextlib.suppress(ImportFailed):
            importers.parse(data, None, None, name)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(url or f"sqlite:///{tmp}/fuzz.db")
        outcomes: Counter = Counter()
        causes: Counter = Counter()
        checked: set = set()
        examples: dict[str, str] = {}
        slowest = (0.0, "")                 # the import that used the largest share of its budget
        for index in range(start, start + count):
            rng = random.Random(f"{seed}:{index}")
            name, data, applied, options = make_input(rng, pool, vias)
            outcome, why, detail, took = _import_and_check(name, data, applied, options, store, index, checked)
            share = took / budget(len(data))
            if share > slowest[0]:
                slowest = (share, f"input {index}: {took * 1000:.0f} ms for {len(data):,} bytes "
                                  f"({', '.join(applied)})")
            outcomes[outcome] += 1
            if why:
                causes[why] += 1
                examples.setdefault(why, f"input {index}: {detail}")
        store.engine.dispose()
    return {"outcomes": outcomes, "causes": causes, "examples": examples, "slowest": slowest,
            "distinct": len(checked)}


def _shard(args: tuple) -> dict:
    cache_summaries()
    return fuzz(*args)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=300_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: CPUs)")
    parser.add_argument("--show", type=int, default=3, help="tracebacks to print (first of each cause)")
    parser.add_argument("--via", default=",".join(VIAS),
                        help="how inputs reach the importer: stdin (str as sys.stdin.read() gives it), file (str as "
                        "the CLI reads a file), bytes; comma-separated (default: all three)")
    args = parser.parse_args()

    began = time.perf_counter()
    jobs = max(1, min(args.jobs, args.count))
    bounds = [args.count * i // jobs for i in range(jobs + 1)]
    vias = tuple(v for v in args.via.split(",") if v)
    if not vias or set(vias) - set(VIAS):
        parser.error(f"--via takes {', '.join(VIAS)}")
    shards = [(bounds[i + 1] - bounds[i], args.seed, bounds[i], vias) for i in range(jobs)]
    if jobs == 1:
        results = [_shard(shards[0])]
    else:
        from multiprocessing import get_context

        with get_context("spawn").Pool(jobs) as workers:
            results = workers.map(_shard, shards)
    wall = time.perf_counter() - began

    outcomes, causes, examples = Counter(), Counter(), {}
    for r in results:
        outcomes.update(r["outcomes"])
        causes.update(r["causes"])
        for k, v in r["examples"].items():
            examples.setdefault(k, v)
    slowest = max(r["slowest"] for r in results)
    total = sum(outcomes.values())
    print(f"inputs    {total}  (seed {args.seed}, {len(MUTATORS)} mutators over {len(samples())} real outputs)")
    distinct = sum(r["distinct"] for r in results)
    print(f"accepted  {outcomes['accepted']}  ({distinct} distinct runs, each saved to SQLite, loaded, exported as "
          "JSON, CSV, Bencher and Conbench)")
    print(f"rejected  {outcomes['rejected']}  (ImportFailed, one paragraph)")
    print(f"crashes   {outcomes['crash']}  ({100 * outcomes['crash'] / max(total, 1):.3f}%)")
    print(f"slow      {outcomes['slow']}  (an import over its budget of {BUDGET_S * 1000:.0f} ms + "
          f"{BUDGET_S_PER_MB * 1000:.0f} ms per MB)")
    for why, n in causes.most_common():
        print(f"  {n:8d}  {why}")
    for why in list(examples)[:args.show]:
        print(f"\n--- first input of cause: {why}\n{examples[why]}")
    print(f"wall time {wall:.1f} s with {jobs} process{'es' if jobs > 1 else ''} ({total / wall:.0f} inputs/s)")
    print(f"closest to its budget: {slowest[0] * 100:.1f}% of it, {slowest[1]}")
    return 1 if outcomes["crash"] or outcomes["slow"] else 0


if __name__ == "__main__":
    sys.exit(main())
