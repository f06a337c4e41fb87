"""`openssl speed` as it prints its tables (OpenSSL 1.0.2 … 4.x, LibreSSL).

The result section starts with the version line ("OpenSSL 1.1.1w  11 Sep
2023", "version: 3.0.19", "LibreSSL 3.3.6"), then built on/options/compiler
(and CPUINFO on 3.x), then one table per kind: the symmetric table in 1000s of
bytes/s ("k"; figures of 10000 bytes/s or less are printed without the k and
are bytes/s), RSA (sign/verify; later 3.x such as 3.6 add encrypt/decrypt
columns), DSA, ECDSA ("EC" on 4.x, which also holds EdDSA), ECDH, EdDSA, SM2,
FFDH, and the KEM and signature tables of later 3.x and 4.x. What comes before
the version line (the "Doing …" progress of standard error, a shell prompt) is
skipped; after it every line must belong to a table, and every figure must
have the decimals speed.c prints it with (a cut-off figure does not).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

from sslperf.importers._common import (MAX_BITS, MAX_CASE, MAX_FACT, MAX_VERSION, BadValue, Builder, bounded_int,
                                       check_name, curve, is_edwards_or_montgomery, line_error, normalise_symmetric,
                                       number, quoted, shorten, size_value, slug, symmetric_kind)

VERSION = re.compile(r"^(?:version:\s*(?P<v3>\S+)|(?P<flavor>OpenSSL|LibreSSL)\s+(?P<v>\d\S*)(?P<rest>.*))$")
NOISE = re.compile(r"^(Doing |You have chosen|Forked child|Got: |Skip |\+(DT|DTP|DN|R\d*|H|F\d*):|"
                   r"\d+ \S.* in \d+\.\d+s\s*$|Don't understand line|Unknown type )")
ERROR_LINE = re.compile(r"^[0-9A-Fa-f]{4,}:error:")
SYM_HEADER = "The 'numbers' are in 1000s of bytes per second processed."
TYPE_LINE = re.compile(r"^type(\s+\d+\s+bytes)+\s*$")
HEADERS = {
    "sign2": re.compile(r"^\s+sign\s+verify\s+sign/s\s+verify/s\s*$"),
    "rsa4": re.compile(r"^\s+sign\s+verify\s+encrypt\s+decrypt\s+sign/s\s+verify/s\s+encr\./s\s+decr\./s\s*$"),
    "op": re.compile(r"^\s+op\s+op/s\s*$"),
    "kem": re.compile(r"^\s+keygen\s+encaps\s+decaps\s+keygens/s\s+encaps/s\s+decaps/s\s*$"),
    "sig": re.compile(r"^\s+keygen\s+signs\s+verify\s+keygens/s\s+sign/s\s+verify/s\s*$"),
}
F = r"(\S+?)"                                   # a figure; checked by figure()
ROWS = {
    "rsa2": re.compile(rf"^(rsa|dsa)\s+(\d+)\s+bits\s+{F}s\s+{F}s\s+{F}\s+{F}\s*$"),
    "rsa4": re.compile(rf"^rsa\s+(\d+)\s+bits\s+{F}s\s+{F}s\s+{F}s\s+{F}s\s+{F}\s+{F}\s+{F}\s+{F}\s*$"),
    "curve2": re.compile(rf"^\s*(\d+)\s+bits?\s+(ecdsa|EdDSA|SM2|EC)\s+\((.+?)\)\s+{F}s\s+{F}s\s+{F}\s+{F}\s*$"),
    "ecdh": re.compile(rf"^\s*(\d+)\s+bits?\s+ecdh\s+\((.+?)\)\s+{F}s\s+{F}\s*$"),
    "ffdh": re.compile(rf"^\s*(\d+)\s+bits\s+ffdh\s+{F}s\s+{F}\s*$"),
    "three": re.compile(rf"^\s*(\S+)\s+{F}s\s+{F}s\s+{F}s\s+{F}\s+{F}\s+{F}\s*$"),
}
VALUE = re.compile(r"^(-?(?:\d+\.\d\d|inf|nan))(k?)$", re.I)     # " %11.2fk" or " %11.2f "


def parse_version(line: str) -> tuple[str, str, str] | None:
    """(flavor, version, version_string) from a version line, else None."""
    m = VERSION.match(line.strip())
    if not m:
        return None
    if m.group("v3"):
        return "openssl", m.group("v3"), f"OpenSSL {m.group('v3')}"
    return m.group("flavor").lower(), m.group("v"), line.strip()


def figure(text: str, decimals: int) -> float:
    """A figure printed with `%.<decimals>f` (or inf/nan); a figure with other
    decimals was cut short or edited."""
    if not re.fullmatch(rf"-?(\d+\.\d{{{decimals}}}|inf|nan)", text, re.I):
        raise _BadRow(f"`{shorten(text)}` is not a figure as openssl speed prints it ({decimals} decimals)")
    return number(text)


def rate(ops_per_s: str, secs_per_op: str, secs_decimals: int, ops_decimals: int = 1) -> float:
    """op/s of a public-key row. The row prints the same measurement twice,
    as s/op and as op/s, each rounded: the rate is taken from whichever of
    the two is the more precise (op/s for fast operations, 1/(s/op) for slow
    ones such as RSA key generation, whose op/s shows 0.1). When the two
    disagree beyond their rounding, the row was damaged."""
    ops, secs = figure(ops_per_s, ops_decimals), figure(secs_per_op, secs_decimals)
    if not (math.isfinite(ops) and math.isfinite(secs)) or ops < 0 or secs < 0:
        return ops
    ops_error, secs_error = 0.5 * 10 ** -ops_decimals, 0.5 * 10 ** -secs_decimals
    if ops > 0 and abs(1 / ops - secs) > (secs_error + ops_error / ops ** 2) * 1.01:
        raise _BadRow(f"{ops_per_s} op/s and {secs_per_op} s per operation do not agree")
    if secs > 0 and (ops == 0 or secs_error / secs < ops_error / ops):
        return 1 / secs
    return ops


# ---- adding the public-key rows (shared with the -mr parser) -------------------

def add_rsa(b: Builder, kind: str, bits: int, ops: dict[str, float], where: str, label: str) -> None:
    alg = f"{kind}-{bits}"
    for op, value in ops.items():
        family = "pke" if op in ("encrypt", "decrypt") else "sig"
        b.add(f"{family}/{alg}/{op}", family, alg, op, None, value, workload="record", label=label, where=where)


def curve_signature_alg(kind: str, name: str) -> str:
    """`ecdsa`/`EC`/`EdDSA`/`SM2` rows → sslperf's algorithm name."""
    ed = is_edwards_or_montgomery(name)
    if ed:
        return ed
    if kind.upper() == "SM2" or name.strip().lower() in ("sm2", "curvesm2"):
        return "sm2"
    return f"ecdsa-{curve(name)}"


def add_curve_sig(b: Builder, alg: str, sign: float, verify: float, where: str, label: str,
                  note: str | None = None) -> None:
    for op, value in (("sign", sign), ("verify", verify)):
        b.add(f"sig/{alg}/{op}", "sig", alg, op, None, value, workload="record", label=label, where=where, note=note)


def ecdh_alg(name: str) -> str:
    return is_edwards_or_montgomery(name) or f"ecdh-{curve(name)}"


def add_kex(b: Builder, alg: str, value: float, where: str, label: str, note: str | None = None) -> None:
    b.add(f"kex/{alg}/derive", "kex", alg, "derive", None, value, workload="record", label=label, where=where,
          note=note)


def kem_alg(name: str) -> str:
    low = name.strip().lower()
    if m := re.fullmatch(r"rsa(\d+)", low):
        return f"rsa-{m.group(1)}"
    if m := re.fullmatch(r"ecp-(\d+)", low):
        return f"dhkem-p{m.group(1)}"
    if low in ("x25519", "x448"):
        return f"dhkem-{low}"
    return slug(low)


def sig_alg(name: str) -> str:
    low = name.strip().lower()
    if m := re.fullmatch(r"(rsa|dsa)(\d+)", low):
        return f"{m.group(1)}-{m.group(2)}"
    return slug(low)


def add_kem(b: Builder, name: str, keygen: float, encaps: float, decaps: float, where: str, label: str) -> None:
    alg = kem_alg(name)
    for op, value in (("keygen", keygen), ("encaps", encaps), ("decaps", decaps)):
        b.add(f"kem/{alg}/{op}", "kem", alg, op, None, value, workload="record", label=label, tag="kem-table",
              where=where)


def add_sigalg(b: Builder, name: str, keygen: float, sign: float, verify: float, where: str, label: str) -> None:
    alg = sig_alg(name)
    b.add(f"keygen/{alg}", "keygen", alg, "keygen", None, keygen, workload="record", label=label, tag="sig-table",
          where=where)
    for op, value in (("sign", sign), ("verify", verify)):
        b.add(f"sig/{alg}/{op}", "sig", alg, op, None, value, workload="record", label=label, tag="sig-table",
              where=where)


def add_symmetric(b: Builder, name: str, sizes: list[int], values: list[float], where: str) -> None:
    """One row of the symmetric table; `values` in bytes/s."""
    low_level = " " in name.strip()             # 1.x/LibreSSL names of the non-EVP loops: "aes-128 cbc"
    alg = normalise_symmetric(name)
    kind = symmetric_kind(alg)
    for size, value in zip(sizes, values):
        tag = "low-level" if low_level else ""
        if kind == "cipher":
            b.add(f"cipher/{alg}/encrypt/{size}/speed-compat", "cipher", alg, "encrypt", size, value, label=name,
                  tag=tag, where=where, note="openssl speed does not print whether -decrypt was used; "
                  "imported as encrypt")
        elif kind == "digest":
            b.add(f"digest/{alg}/{size}/speed-compat", "digest", alg, "hash", size, value, label=name, tag=tag,
                  where=where)
        elif kind == "mac":
            b.add(f"mac/{alg}/{size}", "mac", alg, "mac", size, value, workload="record", label=name, tag=tag,
                  where=where, note="openssl speed's MAC loop")
        else:
            b.add(f"other/{alg}/{size}/speed-compat", "other", alg, "", size, value, label=name, tag=tag,
                  where=where)


# ---- the text parser --------------------------------------------------------------

class TextParser:
    def __init__(self, text: str, source: str, builder: Builder):
        self.lines = text.splitlines()
        self.source = source
        self.b = builder
        self.version: tuple[str, str, str] | None = None
        self.environment: dict = {}
        self.state: str | None = None            # the table we are in
        self.sizes: list[int] = []
        self.after_compiler = False              # a long compiler line may come wrapped

    def fail(self, n: int, line: str, problem: str):
        return line_error(self.source, n, line, problem)

    def parse(self) -> None:
        for n, line in enumerate(self.lines, 1):
            stripped = line.strip()
            if stripped.startswith("You have chosen to measure elapsed time"):
                self.environment["speed_timing"] = "elapsed (wall clock), -elapsed"
            if self.version is None:
                if ERROR_LINE.match(stripped):
                    self.b.warnings.append(f"{self.source}, line {n}: openssl printed an error: {quoted(stripped)}")
                elif (v := parse_version(stripped)) and not NOISE.match(stripped):
                    self._start(v, n, line)
                elif stripped == SYM_HEADER or any(p.match(line) for p in HEADERS.values()):
                    self._start(("openssl", "", ""), n, line)      # a table pasted without the version line
                    self.b.warnings.append(f"{self.source}: no version line before the first table; the "
                                           "library's version is unknown (name it with --lib-name).")
                    self._line(n, line, stripped)
                continue
            self._line(n, line, stripped)
        if self.version is None:
            raise self.fail(len(self.lines), self.lines[-1] if self.lines else "",
                            "no version line of openssl speed's result section was found")

    def _start(self, version: tuple[str, str, str], n: int, line: str) -> None:
        problem = check_name(version[1], "the version", MAX_VERSION) or \
            check_name(version[2], "the version line", MAX_CASE)
        if problem:
            raise self.fail(n, line, problem)
        if self.version is not None and self.version[1] and self.version[:2] != version[:2]:
            raise self.fail(n, line, f"a second result section of a different library "
                            f"({self.version[1]} before) starts here; import one library per file")
        self.version = version
        self.state, self.after_compiler = None, False

    def _line(self, n: int, line: str, stripped: str) -> None:
        where = f"{self.source}, line {n}"
        if not stripped:
            self.state = None
            return
        if v := parse_version(stripped):              # the next section of concatenated outputs
            self._start(v, n, line)
            return
        after_compiler, self.after_compiler = self.after_compiler, False
        if self._header_fact(stripped, n, line):
            self.after_compiler = stripped.startswith("compiler:")
            return
        if stripped == SYM_HEADER:
            self.state = "sym-type"
            return
        if self.state == "sym-type":
            if not TYPE_LINE.match(stripped):
                raise self.fail(n, line, "expected the `type 16 bytes 64 bytes …` line of the symmetric table")
            try:
                self.sizes = [size_value(s) for s in re.findall(r"(\d+)\s+bytes", stripped)]
            except BadValue as exc:
                raise self.fail(n, line, str(exc)) from None
            self.state = "sym"
            return
        for kind, pattern in HEADERS.items():
            if pattern.match(line):
                self.state = kind
                return
        if self.state is None and (NOISE.match(stripped) or ERROR_LINE.match(stripped)):
            if ERROR_LINE.match(stripped):
                self.b.warnings.append(f"{where}: openssl printed an error: {quoted(stripped)}")
            return
        if after_compiler and self.state is None and stripped.startswith("-"):
            self.environment["compiler"] += " " + stripped        # a wrapped compiler line
            if len(self.environment["compiler"]) > MAX_FACT:
                raise self.fail(n, line, f"the compiler line is longer than the {MAX_FACT} characters sslperf keeps")
            self.after_compiler = True
            return
        if self.state is None:
            raise self.fail(n, line, "unknown line in openssl speed's result section")
        try:
            self._row(line, stripped, where)
        except BadValue as exc:
            raise self.fail(n, line, str(exc)) from None
        except ValueError:
            raise self.fail(n, line, "a figure in this row is not a number") from None
        except _BadRow as exc:
            raise self.fail(n, line, str(exc)) from None

    def _header_fact(self, stripped: str, n: int = 0, line: str = "") -> bool:
        for prefix, key in (("built on:", "built_on"), ("options:", "options"), ("compiler:", "compiler"),
                            ("CPUINFO:", "cpuinfo"), ("platform:", "platform")):
            if stripped.startswith(prefix) and self.state is None:
                value = stripped[len(prefix):].strip()
                if len(value) > MAX_FACT:
                    raise self.fail(n, line, f"the {prefix} line is longer than the {MAX_FACT} characters sslperf "
                                    "keeps")
                self.environment[key] = value
                return True
        return False

    def _row(self, line: str, stripped: str, where: str) -> None:
        b, state = self.b, self.state
        if state == "sym":
            tokens = stripped.split()
            count = len(self.sizes)
            values = tokens[-count:] if count else []
            if len(tokens) <= count or not all(VALUE.match(t) for t in values) or VALUE.match(tokens[-count - 1]):
                raise _BadRow(f"expected an algorithm name and {count} figures (one per block size)")
            rates = []
            for token in values:
                m = VALUE.match(token)
                value = number(m.group(1))
                in_bytes = value * 1000 if m.group(2) else value
                if math.isfinite(value) and (in_bytes > 10000 - 5) != bool(m.group(2)):      # 5: %.2fk rounding
                    raise _BadRow(f"`{token}`: openssl speed prints figures above 10000 bytes/s in 1000s with a "
                                  "`k`, and only those")
                rates.append(float(Decimal(m.group(1)) * 1000) if m.group(2) else value)
            add_symmetric(b, " ".join(tokens[:-count]), self.sizes, rates, where)
        elif state == "rsa4":
            m = _match("rsa4", line, "an `rsa N bits` row with four times and four rates")
            bits = bits_value(m.group(1))
            f = m.groups()[1:]
            add_rsa(b, "rsa", bits, {"sign": rate(f[4], f[0], 6), "verify": rate(f[5], f[1], 6),
                                     "encrypt": rate(f[6], f[2], 6), "decrypt": rate(f[7], f[3], 6)}, where, stripped)
        elif state == "sign2":
            if m := ROWS["rsa2"].match(line):
                add_rsa(b, m.group(1), bits_value(m.group(2)),
                        {"sign": rate(m.group(5), m.group(3), 6), "verify": rate(m.group(6), m.group(4), 6)},
                        where, stripped)
            else:
                m = _match("curve2", line, "a sign/verify row (`rsa N bits …` or `N bits ecdsa (curve) …`)")
                alg = curve_signature_alg(m.group(2), m.group(3))
                add_curve_sig(b, alg, rate(m.group(6), m.group(4), 4), rate(m.group(7), m.group(5), 4), where,
                              stripped)
        elif state == "op":
            if m := ROWS["ecdh"].match(line):
                add_kex(b, ecdh_alg(m.group(2)), rate(m.group(4), m.group(3), 4), where, stripped)
            else:
                m = _match("ffdh", line, "an `N bits ecdh (curve)` or `N bits ffdh` row")
                add_kex(b, f"ffdh-{bits_value(m.group(1))}", rate(m.group(3), m.group(2), 4), where, stripped)
        elif state in ("kem", "sig"):
            m = _match("three", line, f"a {'KEM' if state == 'kem' else 'signature'} row: name, three times, "
                       "three rates")
            g = m.groups()
            add = add_kem if state == "kem" else add_sigalg
            add(b, g[0], rate(g[4], g[1], 6), rate(g[5], g[2], 6), rate(g[6], g[3], 6), where, stripped)


class _BadRow(Exception):
    pass


def bits_value(text: str) -> int:
    """Key, curve or group bits: 1 … MAX_BITS."""
    return bounded_int(text, "a size of", 1, MAX_BITS)


def _match(kind: str, line: str, expected: str) -> re.Match:
    m = ROWS[kind].match(line)
    if not m:
        raise _BadRow(f"expected {expected}")
    return m
