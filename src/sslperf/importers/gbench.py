"""Google Benchmark JSON (`--benchmark_format=json`, or the file of
`--benchmark_out`), and first BoringSSL's `bssl_bench`, which replaced `bssl
speed` in December 2025 and is built on it.

The output is `{"context": {…}, "benchmarks": [{…}, …]}`. Each benchmark row has
a `name` (`BM_SpeedAEAD/seal_aes_128_gcm/InputSize:16`,
`BM_SpeedECDSASign/p256/threads:2`), the `run_name` its repetitions share,
`run_type` "iteration" (one repetition) or "aggregate" (mean, median, stddev,
cv … of the repetitions), `threads`, `iterations` (per thread) and `real_time`
and `cpu_time` per iteration in `time_unit`. With N threads, every thread runs
the iterations at once, so the rate is N / real_time; `bytes_per_second` is
Google Benchmark's own counter, over CPU time, and is checked against the
input size.

Each repetition is one sample of its case; aggregates are left for sslperf to
recompute, except where the output holds aggregates only
(`--benchmark_report_aggregates_only`): then the median is the figure. A
bssl_bench benchmark that means what an sslperf case means gets that case's
id (`cipher/aes-128-gcm/encrypt/16/speed-compat`, `sig/ecdsa-p256/sign`,
`kem/ml-kem-768/encaps`); with more than one thread, the threads case
(`threads/own/002/sig/ecdsa-p256/sign`: each thread has its own keys, as in
sslperf's `own` mode), and its 1-thread figure is both the plain case and the
threads table's first row. Any other benchmark, of bssl_bench or of any Google
Benchmark program, is kept as its own row, `other/<name>[/<bytes>]`.
"""

from __future__ import annotations

import json
import math
import re

from sslperf.importers._common import (MAX_FACT, MAX_JSON_DEPTH, MAX_SIZE, BadValue, Builder, ImportFailed,
                                       check_name, join_notes, json_int, json_too_deep, shorten, slug)

# bssl_bench's own lines on standard error, kept when the output was captured with 2>&1
BSSL_NOTICE = re.compile(r"^\S+: use (\d+ threads?|input size \d+ bytes?)\.$")
TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# Name parts Google Benchmark adds for the run's settings, not the benchmark's arguments
SETTINGS = re.compile(r"^(threads|iterations|repeats|min_time|min_warmup_time):|^(real_time|manual_time|process_time)$")
MAX_THREADS = 1 << 16
AGGREGATE_PICK = ("median", "mean")
DAMAGED_JSON = ("Nothing was imported. Give Google Benchmark's JSON as it wrote it (--benchmark_out=FILE, or "
                "--benchmark_format=json > FILE); an entry that was cut short or edited cannot be read.")
EPHEMERAL_NOTE = "bssl_bench times a fresh key pair plus the shared secret on each call"
MLKEM_OPS = {"KeyGenOnly": "keygen", "EncapOnly": "encaps", "DecapOnly": "decaps", "KeyGenDecap": "keygen-decaps",
             "ParseEncap": "parse-encaps"}
# bssl_bench benchmark → (family, algorithm, operation, the kind of its one argument: None for no argument)
BSSL_CASES = {
    "BM_SpeedECDSASign": ("sig", "ecdsa-{}", "sign", "curve"),
    "BM_SpeedECDSAVerify": ("sig", "ecdsa-{}", "verify", "curve"),
    "BM_SpeedECDHComputeKey": ("kex", "ecdh-{}", "derive", "curve"),
    "BM_SpeedECDHEphemeral": ("kex", "ecdh-{}", "keygen-derive", "curve"),
    "BM_SpeedECDHKeyGen": ("keygen", "ecdh-{}", "keygen", "curve"),
    "BM_SpeedRSASign": ("sig", "rsa-{}", "sign", "bits"),
    "BM_SpeedRSAVerify": ("sig", "rsa-{}", "verify", "bits"),
    "BM_SpeedRSAKeyGen": ("keygen", "rsa-{}", "keygen", "bits"),
    "BM_SpeedMLDSAKeyGen": ("keygen", "ml-dsa-{}", "keygen", "ml-dsa"),
    "BM_SpeedMLDSASign": ("sig", "ml-dsa-{}", "sign", "ml-dsa"),
    "BM_SpeedMLDSAVerify": ("sig", "ml-dsa-{}", "verify", "ml-dsa"),
    "BM_SpeedEd25519": ("keygen", "ed25519", "keygen", None),
    "BM_SpeedEd25519Sign": ("sig", "ed25519", "sign", None),
    "BM_SpeedEd25519Verify": ("sig", "ed25519", "verify", None),
    "BM_SpeedCurve25519BasePointMultiply": ("keygen", "x25519", "keygen", None),
    "BM_SpeedCurve25519ArbitraryPointMultiply": ("kex", "x25519", "derive", None),
    "BM_SpeedSLHDSA": ("keygen", "slh-dsa-sha2-128s", "keygen", None),
    "BM_SpeedSLHDSASign": ("sig", "slh-dsa-sha2-128s", "sign", None),
    "BM_SpeedSLHDSAVerify": ("sig", "slh-dsa-sha2-128s", "verify", None),
}
HASHES = {"sha1": "sha1", "sha256": "sha256", "sha512": "sha512", "blake2b256": "blake2b256", "md5": "md5",
          "sha224": "sha224", "sha384": "sha384"}


def looks_like(text: str) -> bool:
    """Whether `text` is shaped like Google Benchmark JSON."""
    body = _body_start(text)
    return body is not None and text.startswith("{", body) and '"benchmarks"' in text and '"context"' in text


def _body_start(text: str) -> int | None:
    """Where the JSON object starts, after bssl_bench's notices (2>&1) and blank lines; None if other text
    comes first."""
    pos = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip().lstrip("\ufeff")
        if stripped.startswith("{"):
            return pos + line.index("{")
        if stripped and not BSSL_NOTICE.match(stripped):
            return None
        pos += len(line)
    return None


def parse(text: str, source: str, b: Builder) -> tuple[bool, dict]:
    """Every benchmark of a Google Benchmark JSON output into `b`; (whether it is bssl_bench's, environment)."""
    start = _body_start(text)
    if start is None:
        raise ImportFailed(f"{source}: Google Benchmark's JSON output is one object `{{\"context\": …, "
                           f"\"benchmarks\": […]}}`; this text has other text before it.",
                           hint="Give the file of --benchmark_out, or standard output of --benchmark_format=json.")
    if (deep := json_too_deep(text, start)) is not None:
        raise _at(source, text, deep, f"JSON nested more than {MAX_JSON_DEPTH} levels deep; Google Benchmark "
                  "writes at most four")
    try:
        data = json.loads(text[start:], parse_int=json_int, parse_float=_finite, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise _at(source, text, start + exc.pos, f"not valid JSON ({exc.msg})") from None
    except BadValue as exc:
        raise ImportFailed(f"{source}: {exc}.", hint=DAMAGED_JSON) from None
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list) \
            or not isinstance(data.get("context", {}), dict):
        raise ImportFailed(f"{source}: Google Benchmark's JSON is an object with a `benchmarks` list and a "
                           f"`context` object; this JSON is not.", hint=DAMAGED_JSON)
    context = data.get("context", {})
    bssl = str(context.get("executable", "")).endswith("bssl_bench") or any(
        isinstance(row, dict) and str(row.get("name", "")).startswith("BM_Speed") for row in data["benchmarks"])
    rows = [_row(source, i, row) for i, row in enumerate(data["benchmarks"], 1)]
    with_iterations = {r["run_name"] for r in rows if r["run_type"] == "iteration"}
    picked: dict[str, dict] = {}
    for r in rows:          # runs reported as aggregates only: their median (else mean) is the figure
        if r["run_type"] == "aggregate" and r["run_name"] not in with_iterations \
                and r.get("aggregate_name") in AGGREGATE_PICK:
            best = picked.get(r["run_name"])
            if best is None or AGGREGATE_PICK.index(r["aggregate_name"]) < AGGREGATE_PICK.index(best["aggregate_name"]):
                picked[r["run_name"]] = r
    # benchmarks run with several thread counts: their 1-thread figure is also the threads table's first row
    swept = {_base(r["run_name"]) for r in rows if not _failed(r) and r["threads"] > 1}
    for r in rows:
        if _failed(r):
            b.warnings.append(f"{source}: `{shorten(r['name'], 120)}` did not run "
                              f"({shorten(str(r.get('error_message') or 'skipped'), 200)}); not imported.")
        elif r["run_type"] == "iteration" or picked.get(r["run_name"]) is r:
            _add(b, r, bssl, source, swept)
    return bssl, _environment(context, source, b)


def _row(source: str, index: int, row) -> dict:
    """One benchmark row, checked: names, counts and times of the types and ranges Google Benchmark writes."""
    where = f"{source}, benchmark {index}"
    if not isinstance(row, dict) or not isinstance(row.get("name"), str):
        raise ImportFailed(f"{where}: each entry of `benchmarks` is an object with a `name`.", hint=DAMAGED_JSON)
    row = dict(row)
    row.setdefault("run_name", row["name"])
    row.setdefault("run_type", "iteration")
    row.setdefault("threads", 1)
    for key in ("name", "run_name", "run_type", "time_unit", "aggregate_name", "error_message", "label"):
        if key in row and (not isinstance(row[key], str) or (problem := check_name(row[key], f"its {key}",
                                                                                   MAX_FACT))):
            raise ImportFailed(f"{where}: {problem if isinstance(row[key], str) else f'its {key} is not text'}.",
                               hint=DAMAGED_JSON)
    if row["run_type"] not in ("iteration", "aggregate"):
        raise ImportFailed(f"{where} (`{row['name'][:80]}`): run_type {_shown(row['run_type'])} is neither "
                           f"\"iteration\" nor \"aggregate\".", hint=DAMAGED_JSON)
    if _failed(row):
        return row
    if row.get("time_unit", "ns") not in TIME_UNITS:
        raise ImportFailed(f"{where} (`{row['name'][:80]}`): time_unit {_shown(row.get('time_unit'))} is not one of "
                           f"{', '.join(TIME_UNITS)}.", hint=DAMAGED_JSON)
    if type(row["threads"]) is not int or not 1 <= row["threads"] <= MAX_THREADS:
        raise ImportFailed(f"{where} (`{row['name'][:80]}`): threads {_shown(row['threads'])} is not a count of 1 to "
                           f"{MAX_THREADS}.", hint=DAMAGED_JSON)
    if type(row.get("iterations")) is not int or row["iterations"] < 1:
        raise ImportFailed(f"{where} (`{row['name'][:80]}`): iterations {_shown(row.get('iterations'))} is not a "
                           f"positive whole number.", hint=DAMAGED_JSON)
    for key in ("real_time", "cpu_time", "bytes_per_second"):
        if key in row and (type(row[key]) not in (int, float) or not row[key] >= 0):
            raise ImportFailed(f"{where} (`{row['name'][:80]}`): {key} {_shown(row[key])} is not a number of 0 or "
                               f"more.", hint=DAMAGED_JSON)
    if "real_time" not in row:
        raise ImportFailed(f"{where} (`{row['name'][:80]}`): it has no real_time.", hint=DAMAGED_JSON)
    return row


def _failed(row: dict) -> bool:
    """A benchmark that reported an error or was skipped (its other fields need not be figures)."""
    return bool(row.get("error_occurred") or row.get("skipped"))


def _add(b: Builder, r: dict, bssl: bool, source: str, swept: set[str]) -> None:
    seconds = r["real_time"] * TIME_UNITS[r.get("time_unit", "ns")]
    parts = r["run_name"].split("/")
    args = [p for p in parts[1:] if not SETTINGS.match(p)]
    threads = r["threads"]
    named = dict(p.split(":", 1) for p in args if ":" in p)
    mapped = _bssl_case(parts[0], args, named) if bssl else None
    counted = _counted_bytes(r)
    size = mapped[4] if mapped else _whole(counted)
    if mapped:
        case, family, alg, op, _, workload, note = mapped
    else:
        alg = slug(" ".join([parts[0].removeprefix("BM_"), *args]))
        case, family, op, workload, note = f"other/{alg}" + (f"/{size}" if size else ""), "other", "", "record", None
    where = f"{source}, `{r['name'][:120]}`"
    if size and counted is not None:
        if abs(counted - size) > 0.02 * size:
            raise ImportFailed(f"{where}: bytes_per_second {r['bytes_per_second']:.6g} is {counted:.6g} bytes per "
                               f"call at its cpu_time, not the {size} bytes its name gives.", hint=DAMAGED_JSON)
    if r["run_type"] == "aggregate":
        note = join_notes(note, f"the {r['aggregate_name']} of {r.get('repetitions') or r['iterations']} repetitions "
                             f"(the output held aggregates only)")
    rate = threads / seconds if seconds > 0 else float("inf")
    if threads == 1:
        b.add(case, family, alg, op, size, rate * size if size else rate, workload=workload, label=r["run_name"],
              note=note, where=where)
    if threads > 1 or _base(r["run_name"]) in swept:
        # as sslperf's own `--threads` results: the inner case's id, the count as the operation, mode `own`
        b.add(f"threads/own/{threads:03}/{case}", "threads", case, f"{threads} thread{'s' if threads > 1 else ''}",
              threads, rate, workload="record", label=r["run_name"], note="own", where=where, unit="ops")


def _base(run_name: str) -> str:
    """A run's name without its thread count: what its runs with other thread counts share."""
    return re.sub(r"/threads:\d+(?=/|$)", "", run_name)


def _counted_bytes(r: dict) -> float | None:
    """The bytes each call processed by Google Benchmark's bytes_per_second counter (over CPU time); None when the
    benchmark counts no bytes."""
    if not r.get("bytes_per_second") or not r.get("cpu_time"):
        return None
    per_call = r["bytes_per_second"] * r["cpu_time"] * TIME_UNITS[r.get("time_unit", "ns")] / r["threads"]
    return per_call if math.isfinite(per_call) else None


def _whole(per_call: float | None) -> int | None:
    """A counted size when it comes out whole (a program that counts no bytes per call has none)."""
    if per_call is None or per_call > MAX_SIZE:
        return None
    whole = round(per_call)
    return whole if 1 <= whole and abs(per_call - whole) <= 0.01 * whole else None


def _bssl_case(base: str, args: list[str], named: dict[str, str]) -> tuple | None:
    """(case id, family, algorithm, operation, bytes per call, workload, note) of a bssl_bench benchmark that
    means what an sslperf case means; None for the others."""
    size = _size(named.get("InputSize"))
    positional = [a for a in args if ":" not in a]
    first = positional[0] if positional else ""
    if base == "BM_SpeedAEAD" and size and (m := re.fullmatch(r"(seal|open)_(\w+)", first)):
        alg, op = m.group(2).replace("_", "-"), "encrypt" if m.group(1) == "seal" else "decrypt"
        workload = "speed-compat"
        if "IOVecFirst" in named:
            workload = f"iovec-{_size(named['IOVecFirst'])}-{_size(named.get('IOVecOthers', '0'))}"
        note = "bssl_bench's scatter/gather (iovec) loop" if workload != "speed-compat" else None
        return f"cipher/{alg}/{op}/{size}/{workload}", "cipher", alg, op, size, workload, note
    if base == "BM_SpeedSipHash" and len(positional) == 1 and (bytes_ := _size(first)) and not named:
        return f"mac/siphash-2-4/{bytes_}", "mac", "siphash-2-4", "mac", bytes_, "record", "bssl_bench's SipHash loop"
    if base == "BM_SpeedHash" and size and first in HASHES:
        alg = HASHES[first]
        return f"digest/{alg}/{size}/speed-compat", "digest", alg, "hash", size, "speed-compat", None
    argument = {"curve": first.lower() if re.fullmatch(r"p\d{3}", first) else None,
                "bits": first if re.fullmatch(r"\d{4,5}", first) else None,
                "ml-dsa": (m.group(1) if (m := re.fullmatch(r"ml_dsa_(44|65|87)", first)) else None)}
    found = BSSL_CASES.get(base)
    if (m := re.fullmatch(r"BM_SpeedMLKEM(768|1024)(\w+)", base)) and m.group(2) in MLKEM_OPS:
        found = ("kem", f"ml-kem-{m.group(1)}", MLKEM_OPS[m.group(2)], None)
    if found is None or named or len(positional) != (found[3] is not None):
        return None
    family, alg, op, kind = found
    if kind is not None:
        if argument[kind] is None:
            return None
        alg = alg.format(argument[kind])
    note = EPHEMERAL_NOTE if op == "keygen-derive" else (
        "X25519_public_from_private" if base == "BM_SpeedCurve25519BasePointMultiply" else None)
    case = f"keygen/{alg}" if family == "keygen" else f"{family}/{alg}/{op}"
    return case, family, alg, op, None, "record", note


def _size(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() and len(text) <= 10 and 1 <= int(text) <= MAX_SIZE \
        else None


def _environment(context: dict, source: str, b: Builder) -> dict:
    """What the run's context says of the machine and the build, as sslperf's environment keys."""
    env: dict = {}
    facts = {"host_name": "tool_host", "executable": "tool_executable", "date": "tool_date",
             "library_version": "gbench_version", "library_build_type": "gbench_build_type"}
    for key, name in facts.items():
        value = context.get(key)
        if isinstance(value, str) and value:
            env[name] = value                   # checked with every other fact the run keeps (check_kept)
    if type(context.get("num_cpus")) is int and 1 <= context["num_cpus"] <= MAX_THREADS:
        env["cpus"] = context["num_cpus"]
    if type(context.get("mhz_per_cpu")) in (int, float) and 0 < context["mhz_per_cpu"] < 1e6 and env.get("cpus"):
        env["cpu_mhz"] = [float(context["mhz_per_cpu"])] * env["cpus"]
    if context.get("cpu_scaling_enabled") is True:
        b.warnings.append(f"{source}: Google Benchmark saw CPU frequency scaling enabled, so its times may vary "
                          f"with the clock (set the performance governor, or compare runs made alike).")
    if env.get("gbench_build_type") == "debug":
        b.warnings.append(f"{source}: the Google Benchmark library was a debug build; its overhead is in every "
                          f"figure (build with CMAKE_BUILD_TYPE=Release).")
    return env


def _shown(value) -> str:
    """A value as a message quotes it: its repr, shortened."""
    return shorten(repr(value), 40)


def _finite(digits: str) -> float:
    """A JSON number with a fraction or exponent (the decoder's parse_float): finite, or refused."""
    value = float(digits[:400])
    if not math.isfinite(value) or len(digits) > 400:
        raise BadValue(f"the JSON number {shorten(digits, 24)} is beyond any figure Google Benchmark writes")
    return value


def _constant(name: str):
    raise BadValue(f"the JSON holds {name}, which Google Benchmark does not write for a figure")


def _at(source: str, text: str, offset: int, problem: str) -> ImportFailed:
    line = text.count("\n", 0, offset) + 1
    return ImportFailed(f"{source}, line {line}: {problem}.", hint=DAMAGED_JSON)

