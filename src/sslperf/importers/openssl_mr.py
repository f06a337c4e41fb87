"""`openssl speed -mr`: the machine-readable lines.

Standard output holds `+H:<sizes>` and one `+F…` line per result; standard
error holds the progress (`+DT`, `+DTP`) and the counts (`+R…`). The codes
and their fields changed across versions (1.1.1/3.x: +F6 EdDSA, +F7 SM2, +F8
FFDH, +F9 KEM, +F10 signatures; 4.x: +F4 covers all EC signatures, +F7 FFDH,
+F8 KEM, +F9 signatures), and the indices are version-specific, so rows are
matched by name, never by index: +F names symmetric algorithms, +F2/+F3 give
key bits, +F6/+F7(SM2) name the curve. +F4/+F5 give only bits; 4.x names the
curve on its +R7/+R9 lines (standard error), otherwise the curve is inferred
from the bits and the measurement says so. The KEM and signature rows carry
only an index: their names come from the +R15…+R20 lines, so standard error
must be part of the text (`2>&1`).

LibreSSL's -mr prints seconds per operation where OpenSSL prints op/s, and
-mr prints no version line: such text is refused rather than misread.
"""

from __future__ import annotations

import math
import re

from sslperf.importers._common import BadValue, Builder, ImportFailed, line_error, quoted, shorten, size_value
from sslperf.importers.openssl_speed import (ERROR_LINE, _BadRow, add_curve_sig, add_kem, add_kex, add_rsa,
                                             add_sigalg, add_symmetric, bits_value, curve_signature_alg, ecdh_alg,
                                             figure)

LINE = re.compile(r"^\+(H|F\d*|R\d*|DT|DTP|DN):(.*)$")
SKIP = re.compile(r"^(Got: \+.* from \d+|Forked child \d+)$")
# What speed.c prints on standard error when a benchmark cannot run ("RSA sign setup failure.  No RSA
# sign will be done.", "… failure", "… not supported") — standard output of -mr has only +lines.
DIAGNOSTIC = re.compile(r"(failure|failed|error|will be done\.|not supported|Don't understand|Unknown type)",
                        re.I)
BY_BITS = {160: ["secp160r1"], 192: ["p192"], 224: ["p224"], 256: ["p256", "brainpoolp256r1", "brainpoolp256t1"],
           384: ["p384", "brainpoolp384r1", "brainpoolp384t1"], 521: ["p521"],
           512: ["brainpoolp512r1", "brainpoolp512t1"], 163: ["sect163k1", "sect163r2"],
           233: ["sect233k1", "sect233r1"], 283: ["sect283k1", "sect283r1"], 409: ["sect409k1", "sect409r1"],
           571: ["sect571k1", "sect571r1"]}


class MrParser:
    def __init__(self, text: str, source: str, builder: Builder):
        self.lines = text.splitlines()
        self.source = source
        self.b = builder
        self.sizes: list[int] | None = None
        self.rows: list[tuple[int, str, str, list[str]]] = []       # (line no, line, code, fields)
        self.counts: dict[str, list[tuple[int, list[str]]]] = {}     # +R code → (line no, fields) of each line

    def fail(self, n: int, line: str, problem: str):
        return line_error(self.source, n, line, problem)

    def parse(self) -> None:
        seen = False
        for n, line in enumerate(self.lines, 1):
            stripped = line.strip()
            if not stripped or SKIP.match(stripped):
                continue
            m = LINE.match(stripped)
            if not m:
                if ERROR_LINE.match(stripped) or DIAGNOSTIC.search(stripped):
                    self.b.warnings.append(f"{self.source}, line {n}: openssl printed: {quoted(stripped)}")
                elif seen:
                    raise self.fail(n, line, "unknown line among openssl speed -mr's lines")
                continue
            seen = True
            code, rest = m.group(1), m.group(2)
            fields = rest.split(":")
            if code == "H":
                if not all(re.fullmatch(r"\d+", f) for f in fields):
                    raise self.fail(n, line, "the +H line should list the block sizes")
                try:
                    self.sizes = [size_value(f) for f in fields]
                except BadValue as exc:
                    raise self.fail(n, line, str(exc)) from None
            elif code.startswith("F"):
                self.rows.append((n, line, code, fields))
            elif code.startswith("R") and code != "R":
                self.counts.setdefault(code, []).append((n, fields))
        if not self.rows:
            raise ImportFailed(f"{self.source}: no +F result line was found in the openssl speed -mr output.",
                               hint="The +F lines are printed on standard output at the end of the run; give the "
                               "whole output.")
        self.generation = self._generation()
        self._names = {"F4": self._named("R7"), "F5": self._named("R9")}
        kem_rows = [r for r in self.rows if self._kind(r) == "kem"]
        sig_rows = [r for r in self.rows if self._kind(r) == "sig"]
        kem_names = self._index_names(kem_rows, ("R15", "R16", "R17"), "KEM")
        sig_names = self._index_names(sig_rows, ("R18", "R19", "R20"), "signature")
        ordinal: dict[tuple[str, int], int] = {}
        for row in self.rows:
            n, line, code, fields = row
            try:
                self._row(row, kem_names, sig_names, ordinal)
            except BadValue as exc:
                raise self.fail(n, line, str(exc)) from None
            except (ValueError, IndexError):
                raise self.fail(n, line, f"the fields of this {code} line are not what openssl speed prints") \
                    from None
            except _BadRow as exc:
                raise self.fail(n, line, str(exc)) from None

    # ---- which version's codes ------------------------------------------------

    def _generation(self) -> str:
        """`3` for the codes of 1.1.1 … 3.x, `4` for 4.x."""
        four = three = False
        for _, _, code, fields in self.rows:
            if code == "F7":
                four, three = four or len(fields) == 4, three or len(fields) == 5
            elif code == "F8" and len(fields) == 4:
                four, three = four or "." in fields[1], three or "." not in fields[1]
            elif code in ("F6", "F10"):
                three = True
        if any(not _numeric(f[1]) for code in ("R7", "R8", "R9") for _, f in self.counts.get(code, []) if len(f) > 1):
            four = True
        if four and three:
            n, line, _, _ = self.rows[0]
            raise self.fail(n, line, "these -mr lines mix the result codes of OpenSSL 3.x and 4.x")
        if not four and not three and any(code == "F9" for _, _, code, _ in self.rows):
            kems, sigs = self._has("R15", "R16", "R17"), self._has("R18", "R19", "R20")
            if kems == sigs:
                n, line, _, _ = next(r for r in self.rows if r[2] == "F9")
                raise line_error(self.source, n, line, "cannot tell whether this +F9 line is a KEM (OpenSSL 3.x) "
                                 "or a signature (OpenSSL 4.x) result",
                                 hint="Nothing was imported. Capture standard error too (`openssl speed -mr … "
                                 "2>&1`): its +R lines say which.")
            four = sigs
        return "4" if four else "3"

    def _has(self, *codes: str) -> bool:
        return any(self.counts.get(c) for c in codes)

    def _kind(self, row) -> str:
        code = row[2]
        if self.generation == "4":
            return {"F8": "kem", "F9": "sig"}.get(code, "")
        return {"F9": "kem", "F10": "sig"}.get(code, "")

    def _named(self, code: str) -> list[str]:
        """Names on 4.x's +R7 (EC sign) / +R9 (ECDH) lines, in order of first appearance."""
        names: list[str] = []
        for _, fields in self.counts.get(code, []):
            if len(fields) > 1 and not _numeric(fields[1]) and fields[1] not in names:
                names.append(fields[1])
        return names

    def _index_names(self, rows, codes: tuple[str, ...], what: str) -> list[str]:
        if not rows:
            return []
        names: list[str] = []
        for _, fields in sorted(line for code in codes for line in self.counts.get(code, [])):
            if len(fields) > 1 and fields[1] not in names:       # in the order they ran (-multi repeats them)
                names.append(fields[1])
        if len(names) != len(rows):
            n, line, _, _ = rows[0]
            found = f"{len(names)} named on the +R lines" if names else "no +R line naming them"
            raise line_error(self.source, n, line, f"openssl speed -mr prints {what} results by index only, and "
                             f"this output has {len(rows)} of them but {found}",
                             hint="Nothing was imported. Capture standard error too (`openssl speed -mr … 2>&1`): "
                             "its +R lines name them.")
        return names

    # ---- one result line -----------------------------------------------------------

    def _row(self, row, kem_names, sig_names, ordinal) -> None:
        n, line, code, f = row
        where = f"{self.source}, line {n}"
        b, label = self.b, line.strip()
        fields = {"F2": (4, 6), "F3": (4,), "F4": (4,), "F5": (4,), "F6": (5,), "F7": (4, 5), "F8": (4,),
                  "F9": (4,), "F10": (4,)}
        if code in fields and len(f) not in fields[code]:
            raise self.fail(n, line, f"a +{code} line has {' or '.join(map(str, fields[code]))} fields after the "
                            f"code, this one {len(f)}")
        if code == "F":
            if self.sizes is None:
                raise self.fail(n, line, "a +F line before the +H line that gives the block sizes")
            values = [figure(v, 2) for v in f[2:]]
            if len(values) != len(self.sizes):
                raise self.fail(n, line, f"expected {len(self.sizes)} figures (one per block size of +H)")
            add_symmetric(b, f[1], self.sizes, values, where)
        elif code == "F2":
            bits, values = bits_value(f[1]), [_f6(v) for v in f[2:]]
            if len(values) not in (2, 4):
                raise ValueError
            self._not_seconds(values, n, line, bits)
            ops = dict(zip(("sign", "verify", "encrypt", "decrypt"), values))
            add_rsa(b, "rsa", bits, ops, where, label)
        elif code == "F3":
            values = [_f6(v) for v in f[2:4]]
            bits = bits_value(f[1])
            self._not_seconds(values, n, line, bits)
            add_rsa(b, "dsa", bits, dict(zip(("sign", "verify"), values)), where, label)
        elif code == "F4":
            name, note = self._curve("F4", bits_value(f[1]), ordinal)
            add_curve_sig(b, curve_signature_alg("EC", name), _f6(f[2]), _f6(f[3]), where, label, note)
        elif code == "F5":
            name, note = self._curve("F5", bits_value(f[1]), ordinal)
            add_kex(b, ecdh_alg(name), self._op_rate(f[2], f[3], n, line, ecdh=True), where, label, note)
        elif code == "F6" or (code == "F7" and len(f) == 5):
            kind = "EdDSA" if code == "F6" else "SM2"
            add_curve_sig(b, curve_signature_alg(kind, f[2]), _f6(f[3]), _f6(f[4]), where, label)
        elif (code == "F7" and len(f) == 4) or (code == "F8" and self.generation == "3"):
            add_kex(b, f"ffdh-{bits_value(f[1])}", self._op_rate(f[2], f[3], n, line), where, label)
        elif self._kind(row) == "kem":
            index = [r[0] for r in self._rows_of("kem")].index(n)
            add_kem(b, kem_names[index], _f6(f[1]), _f6(f[2]), _f6(f[3]), where, label)
        elif self._kind(row) == "sig":
            index = [r[0] for r in self._rows_of("sig")].index(n)
            add_sigalg(b, sig_names[index], _f6(f[1]), _f6(f[2]), _f6(f[3]), where, label)
        else:
            raise self.fail(n, line, f"+{shorten(code)} is not a result line this importer knows")

    def _rows_of(self, kind: str):
        return [r for r in self.rows if self._kind(r) == kind]

    def _curve(self, code: str, bits: int, ordinal: dict) -> tuple[str, str | None]:
        """The curve of the i-th +F4/+F5 line: named by 4.x's +R lines, or
        inferred from the bits (the i-th line of a size takes the i-th curve
        of that size in OpenSSL's table order)."""
        key, line_key = (code, bits), (code, 0)
        index = ordinal.get(line_key, 0)
        ordinal[line_key] = index + 1
        ordinal[key] = ordinal.get(key, 0) + 1
        named = self._names[code]
        if len(named) == sum(1 for r in self.rows if r[2] == code):
            return named[index], None
        if code == "F4" and bits in (253, 456):
            return ("ed25519" if bits == 253 else "ed448"), None
        if code == "F5" and bits in (253, 448):
            return ("x25519" if bits == 253 else "x448"), None
        options = BY_BITS.get(bits)
        if not options:
            return f"{bits}-bit-curve", f"-mr output gives only the size of this curve ({bits} bits)"
        name = options[min(ordinal[key], len(options)) - 1]
        return name, f"curve inferred from its size ({bits} bits): openssl speed -mr does not name it"

    def _op_rate(self, ops: str, secs: str, n: int, line: str, ecdh: bool = False) -> float:
        """op/s of a +F5 (ECDH) or FFDH line, which prints op/s then s/op."""
        a, b = _f6(ops), _f6(secs)
        if math.isfinite(a) and math.isfinite(b) and a > 0 and b > 0:
            if ecdh and a < 1 < b:
                raise self.fail(n, line, "this line gives seconds before op/s, as LibreSSL's -mr does; LibreSSL "
                                "-mr output is not supported, import its text output instead")
            if abs(1 / a - b) > 0.5e-6 * 1.01:
                raise self.fail(n, line, "op/s and s/op on this line do not agree")
        return a

    def _not_seconds(self, values: list[float], n: int, line: str, bits: int) -> None:
        if bits <= 4096 and all(0 < v < 1 for v in values):
            raise self.fail(n, line, "these figures look like seconds per operation, as LibreSSL's -mr prints "
                            "them; LibreSSL -mr output is not supported, import its text output instead")


def _f6(text: str) -> float:
    return figure(text, 6)                      # "%f"


def _numeric(text: str) -> bool:
    return bool(re.fullmatch(r"\d+", text))
