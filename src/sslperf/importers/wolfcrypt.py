"""wolfSSL's wolfCrypt benchmark (wolfcrypt/benchmark/benchmark), as text or `-csv`.

Both start with a banner (`wolfSSL version 5.9.4`, the CPU and math lines) and
`wolfCrypt Benchmark (block bytes N, min 1.0 sec each)`: N, the block each
symmetric call processes, is the size of every symmetric row. Text rows:

    AES-128-GCM-enc          25290 MiB took 1.000 seconds, 25285.280 MiB/s Cycles per byte =   0.10
    RSA     2048   public     88000 ops took 1.000 sec, avg 0.011 ms, 87992.448 ops/sec, 2596347650 cycles    29504.0 Cycles/op

`-csv` prints `Algorithm,MB/s,Cycles per byte,` rows, then `Algorithm,key
size,operation,avg ms,ops/sec,` rows. Its MB/s are 2^20 bytes (the default;
`-base10` makes them 10^6 and the CSV does not say so). Every row is checked
against itself (amount over seconds, ops over seconds, cycles over ops; in CSV,
cycles per byte times the rate is the same clock on every row), so a damaged
row is refused.

Cycles are wolfCrypt's rdtsc readings: time-stamp-counter ticks at the CPU's
nominal clock, not core cycles. They are kept per operation
(figures.REPORTED_CYCLES), which the tables show as cycles per byte beside bytes/s.

Symmetric rows get workload `wolfcrypt-bench` (wolfCrypt's own loop: an AEAD
call with a 13-byte AAD per block; a digest updated per block and finished
once), asymmetric rows sslperf's plain case ids (`sig/ecdsa-p256/sign`,
`pke/rsa-2048/encrypt`, `kem/ml-kem-768/encaps`, `kex/x25519/derive`).
"""

from __future__ import annotations

import re

from sslperf.importers._common import (BadValue, Builder, ImportFailed, line_error, number, size_value, slug)
from sslperf import figures

VERSION = re.compile(r"^\s*wolfSSL version (\S+)\s*$")
HEADER = re.compile(r"^wolfCrypt Benchmark \(block bytes (\d+), min (\S+) sec each\)\s*$")
UNITS = {"bytes": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3, "KB": 1000, "MB": 1000 ** 2, "GB": 1000 ** 3}
_UNIT = "|".join(UNITS)
SYM = re.compile(rf"^(?P<desc>\S.*?)\s+(?P<amount>\d+(?:\.\d+)?) (?P<unit>{_UNIT}) took (?P<secs>\d+\.\d+) seconds?, "
                 rf"\s*(?P<rate>\d+\.\d+) (?P<runit>{_UNIT})/s(?:,? Cycles per byte =\s*(?P<cpb>\d+\.\d+))?,?\s*$")
ASYM = re.compile(r"^(?P<desc>\S.*?)\s+(?P<ops>\d+) ops took (?P<secs>\d+\.\d+) sec, avg (?P<avg>\d+\.\d+) ms, "
                  r"\s*(?P<rate>\d+\.\d+) ops/sec(?:, (?P<cycles>\d+) cycles\s+(?P<cpo>\d+\.\d+) Cycles/op)?,?\s*$")
DESC = re.compile(r"^(?P<algo>\S.*?)\s+(?P<strength>\d+)\s+(?P<op>[a-z][a-z ]*?)\s*$")
CSV_SYM_HEADER = re.compile(r"^Algorithm,(?:HW/SW,)?MB/s,(?P<cpb>Cycles per byte,)?")
CSV_ASYM_HEADER = re.compile(r"^Algorithm,(?:HW/SW,)?key size,operation,avg ms,ops/sec,")
CSV_SYM = re.compile(r"^(?P<desc>[^,]+),(?P<rate>\d+\.\d+),(?:(?P<cpb>\d+\.\d+),)?\s*$")
CSV_ASYM = re.compile(r"^(?P<algo>[^,]+),(?P<strength>\d+),(?P<op>[a-z][a-z ]*),(?P<avg>\d+\.\d+),"
                      r"(?P<rate>\d+\.\d+),\s*$")
NOISE = re.compile(r"^(-{20,}|CPU: .*|Math: .*|\t.*|\s+(Single|Multi)-Precision: .*|\s+Assembly Speedups: .*"
                   r"|This format allows you to easily copy the output to a csv file\.|(Symmetric|Asymmetric) "
                   r"Ciphers:|Benchmark complete|Benchmark Test(s)? (completed|passed).*|)\s*$")
WORKLOAD = "wolfcrypt-bench"
LOOP_NOTE = "wolfCrypt benchmark's loop"
CYCLES_NOTE = "cycles: wolfCrypt's rdtsc (time-stamp-counter ticks at the nominal clock)"
CSV_CLOCK_SPREAD = 0.05          # cycles per byte × bytes/s is the TSC's rate on every row, within jitter
CURVES = {"SECP256R1": "p256", "SECP384R1": "p384", "SECP521R1": "p521", "SECP224R1": "p224"}


def looks_like(text: str) -> bool:
    return any(HEADER.match(line) for line in text.splitlines()[:40])


def parse(text: str, source: str, b: Builder) -> tuple[str | None, bool, dict]:
    """Every row into `b`; (wolfSSL's version, whether the output was -csv, environment)."""
    version, size, csv, environment = None, None, False, {}
    clocks: list[tuple[float, int, str]] = []           # CSV: (cycles per byte × bytes/s, line, text)
    started = False
    for n, line in enumerate(text.splitlines(), 1):
        where = f"{source}, line {n}"
        if m := VERSION.match(line):
            version = m.group(1)
            continue
        if m := HEADER.match(line):
            try:
                size = size_value(m.group(1))
            except BadValue as exc:
                raise line_error(source, n, line, str(exc)) from None
            started = True
            continue
        if line.startswith("CPU: "):
            environment["cpu_features"] = line[5:].strip()[:200]
        if CSV_SYM_HEADER.match(line) or CSV_ASYM_HEADER.match(line):
            csv = True
            continue
        if NOISE.match(line):
            continue
        if not started:
            continue
        # wolfCrypt pads its columns with runs of spaces: the patterns read the line with each run as one space,
        # so none is tried at every position of a long run (time quadratic in the line)
        flat = " ".join(line.split())
        try:
            if m := SYM.match(flat):
                _sym_text(b, m, size, where)
            elif m := ASYM.match(flat):
                _asym_text(b, m, where)
            elif m := CSV_SYM.match(flat):
                csv = True
                rate = number(m.group("rate")) * UNITS["MiB"]
                cpb = number(m.group("cpb")) if m.group("cpb") else None
                if cpb:
                    clocks.append((cpb * rate, n, line))
                _add_sym(b, m.group("desc").strip(), size, rate, cpb, where)
            elif m := CSV_ASYM.match(flat):
                csv = True
                rate, avg = number(m.group("rate")), number(m.group("avg"))
                if rate > 0 and abs(1000 / rate - avg) > 0.0005 + 1e-6 * avg:
                    raise line_error(source, n, line, f"{m.group('rate')} ops/sec is not the average of "
                                     f"{m.group('avg')} ms printed")
                _add_asym(b, m.group("algo").strip(), m.group("strength"), m.group("op").strip(), rate, None, where)
            else:
                raise line_error(source, n, line, "unknown line in the wolfCrypt benchmark's output")
        except BadValue as exc:
            raise line_error(source, n, line, str(exc)) from None
    if not started:
        raise ImportFailed(f"{source}: no `wolfCrypt Benchmark (block bytes …)` line was found; this is not the "
                           f"output of wolfCrypt's benchmark.", hint="Give the benchmark's whole standard output.")
    _check_clock(source, clocks)
    if csv:
        b.warnings.append(f"{source}: wolfCrypt's CSV does not say its unit; its MB/s were read as 2^20 bytes/s, "
                          f"the benchmark's default (not -base10).")
    return version, csv, environment


def _sym_text(b: Builder, m: re.Match, size: int | None, where: str) -> None:
    amount = number(m.group("amount")) * UNITS[m.group("unit")]
    secs, rate = number(m.group("secs")), number(m.group("rate")) * UNITS[m.group("runit")]
    if secs > 0 and amount > 0:
        low, high = amount / (secs + 0.0005), amount / max(secs - 0.0005, 1e-9)
        slack = 0.5 * UNITS[m.group("unit")] / amount      # the amount is printed rounded to its unit
        if not low * (1 - slack) * 0.999 <= rate <= high * (1 + slack) * 1.001:
            raise BadValue(f"{m.group('amount')} {m.group('unit')} in {m.group('secs')} seconds is not the "
                           f"{m.group('rate')} {m.group('runit')}/s printed")
    cpb = number(m.group("cpb")) if m.group("cpb") else None
    _add_sym(b, m.group("desc").strip(), size, rate, cpb, where)


def _asym_text(b: Builder, m: re.Match, where: str) -> None:
    ops, secs, rate = int(m.group("ops")[:16]), number(m.group("secs")), number(m.group("rate"))
    if secs > 0 and not ops / (secs + 0.0005) * 0.999 <= rate <= ops / max(secs - 0.0005, 1e-9) * 1.001:
        raise BadValue(f"{ops} ops in {m.group('secs')} seconds is not the {m.group('rate')} ops/sec printed")
    cycles_per_op = None
    if m.group("cycles"):
        cycles, printed = int(m.group("cycles")[:20]), number(m.group("cpo"))
        if ops and abs(cycles / ops - printed) > 0.051 + 1e-9 * printed:
            raise BadValue(f"{cycles} cycles over {ops} ops is not the {m.group('cpo')} Cycles/op printed")
        cycles_per_op = printed
    desc = DESC.match(m.group("desc"))
    if not desc:
        raise BadValue(f"`{m.group('desc')[:60]}` is not an algorithm, a key size and an operation")
    _add_asym(b, desc.group("algo"), desc.group("strength"), desc.group("op"), rate, cycles_per_op, where)


def _add_sym(b: Builder, desc: str, size: int | None, rate: float, cpb: float | None, where: str) -> None:
    if size is None:
        raise BadValue("a symmetric row before the `wolfCrypt Benchmark (block bytes …)` line")
    case, family, alg, op = _sym_case(desc, size)
    added = b.add(case, family, alg, op, size, rate, workload=WORKLOAD if family != "other" else "record",
                  label=desc, note=LOOP_NOTE + ("; " + CYCLES_NOTE if cpb else ""), where=where)
    if added and cpb:
        _cycles(b, added, cpb * size)


def _add_asym(b: Builder, algo: str, strength: str, op: str, rate: float, cycles_per_op: float | None,
              where: str) -> None:
    case, family, alg, operation = _asym_case(" ".join(algo.split()), strength, " ".join(op.split()))
    added = b.add(case, family, alg, operation, None, rate, workload="record", label=f"{algo} {strength} {op}",
                  note=CYCLES_NOTE if cycles_per_op else None, where=where)
    if added and cycles_per_op:
        _cycles(b, added, cycles_per_op)


def _cycles(b: Builder, case: str, per_op: float) -> None:
    m = b.measurements[case]
    m.figures = m.figures or {}
    m.figures.setdefault(figures.REPORTED_CYCLES, []).append(per_op)


def _sym_case(desc: str, size: int) -> tuple[str, str, str, str]:
    """(case id, family, algorithm, operation) of a symmetric row."""
    low = desc.lower()
    if m := re.fullmatch(r"(aes-\d+-[a-z]+)-(enc|dec)", low):
        op = "encrypt" if m.group(2) == "enc" else "decrypt"
        return f"cipher/{m.group(1)}/{op}/{size}/{WORKLOAD}", "cipher", m.group(1), op
    if m := re.fullmatch(r"cha-poly-(enc|dec)", low):
        op = "encrypt" if m.group(1) == "enc" else "decrypt"
        return f"cipher/chacha20-poly1305/{op}/{size}/{WORKLOAD}", "cipher", "chacha20-poly1305", op
    if m := re.fullmatch(r"(sha|sha3)-(\d{3})", low):
        alg = f"{m.group(1)}{m.group(2)}" if m.group(1) == "sha" else f"sha3-{m.group(2)}"
        return f"digest/{alg}/{size}/{WORKLOAD}", "digest", alg, "hash"
    if low in ("sha", "md5"):
        alg = "sha1" if low == "sha" else "md5"
        return f"digest/{alg}/{size}/{WORKLOAD}", "digest", alg, "hash"
    if m := re.fullmatch(r"hmac-(sha|sha3-)(\d{3})?", low):
        alg = f"hmac-{m.group(1).replace('-', '')}{m.group(2) or '1'}" if m.group(1) == "sha" else \
            f"hmac-sha3-{m.group(2)}"
        return f"mac/{alg}/{size}/{WORKLOAD}", "mac", alg, "mac"
    alg = slug(desc)
    return f"other/{alg}/{size}", "other", alg, ""


def _asym_case(algo: str, strength: str, op: str) -> tuple[str, str, str, str]:
    """(case id, family, algorithm, operation) of an asymmetric row: algorithm, key size (or security bits), and
    operation as wolfCrypt prints them."""
    low = algo.lower()
    curve = re.fullmatch(r"(ecdhe|ecdsa|ecc) \[\s*(\S+)\]", low)
    alg = None
    if low == "rsa":
        alg = f"rsa-{strength}"
        ops = {"public": ("pke", "encrypt"), "private": ("pke", "decrypt"), "sign": ("sig", "sign"),
               "verify": ("sig", "verify")}
    elif m := re.fullmatch(r"ml-kem (512|768|1024)", low):
        alg, ops = f"ml-kem-{m.group(1)}", {"key gen": ("kem", "keygen"), "encap": ("kem", "encaps"),
                                            "decap": ("kem", "decaps")}
    elif curve and curve.group(2).upper() in CURVES:
        alg = CURVES[curve.group(2).upper()]
        alg, ops = (f"ecdh-{alg}", {"agree": ("kex", "derive")}) if curve.group(1) == "ecdhe" else \
            (f"ecdsa-{alg}", {"sign": ("sig", "sign"), "verify": ("sig", "verify")})
    elif low == "curve" and strength in ("25519", "448"):
        alg, ops = f"x{strength}", {"agree": ("kex", "derive")}
    elif low == "ed" and strength in ("25519", "448"):
        alg, ops = f"ed{strength}", {"sign": ("sig", "sign"), "verify": ("sig", "verify")}
    elif low == "ml-dsa" and strength in ("44", "65", "87"):
        alg, ops = f"ml-dsa-{strength}", {"sign": ("sig", "sign"), "verify": ("sig", "verify")}
    elif low == "dh":
        alg, ops = f"ffdh-{strength}", {"agree": ("kex", "derive")}
    if alg and op == "key gen" and not alg.startswith("ml-kem"):
        return f"keygen/{alg}", "keygen", alg, "keygen"
    if alg and op in ops:
        family, operation = ops[op]
        return f"{family}/{alg}/{operation}", family, alg, operation
    name = slug(f"{algo} {strength} {op}")
    return f"other/{name}", "other", name, ""


def _check_clock(source: str, clocks: list[tuple[float, int, str]]) -> None:
    """In CSV, cycles per byte × bytes/s is the rate of the TSC on every row: a row far from the others' median
    was damaged."""
    if len(clocks) < 3:
        return
    middle = sorted(c for c, _, _ in clocks)[len(clocks) // 2]
    for clock, n, line in clocks:
        if middle > 0 and abs(clock / middle - 1) > CSV_CLOCK_SPREAD:
            raise line_error(source, n, line, f"its cycles per byte and MB/s give a clock of {clock / 1e6:.0f} MHz, "
                             f"the other rows {middle / 1e6:.0f} MHz")
