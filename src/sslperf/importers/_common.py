"""What the importers share: the builder that collects measurements (unique
case ids, nothing kept until the whole text is read), the errors that name a
line, the guards of JSON input, and the case naming that follows
`sslperf.measure.suites`."""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field

from sslperf.errors import SslperfError
from sslperf.results import LibInfo, Measurement, Run
from sslperf import families
from sslperf.untrusted import BAD_CHARS, MAX_JSON_DEPTH, json_too_deep, shorten, visible  # noqa: F401



class ImportFailed(SslperfError):
    """A text that is not, or not entirely, a speed output we can read."""


DAMAGED = ("Nothing was imported. Give the tool's output as it printed it; a line that was cut short or "
           "edited, or text pasted into the middle of a table, cannot be read.")


# ---- what an import accepts ---------------------------------------------------
# Every value of an accepted Run must fit the store (SQLite and PostgreSQL) and
# every exporter; anything outside these bounds is refused with ImportFailed.

MAX_INPUT_CHARS = 8 * 1024 * 1024   # the longest real output seen is a few 10 KB
MAX_INPUT_BYTES = 4 * MAX_INPUT_CHARS  # what is read of a file or stream: UTF-8 takes at most 4 bytes a character
MAX_SIZE = 2**31 - 1                # bytes per operation: `size`/`bytes_per_op` are INTEGER columns
                                    # (32-bit in PostgreSQL); openssl speed's -bytes is a C int too
MAX_COUNT = 10**15 - 1              # calls or microseconds of one bssl benchmark (10^15 us = 31 years)
MAX_BITS = 10**6                    # key, curve or prime bits (real ones stop at 16384)
MAX_FIGURE_CHARS = 32               # a printed rate: below 10^15 with six decimals is 22 characters
MAX_RATE = 1e15                     # op/s or bytes/s (1 PB/s); anything faster is a damaged figure
MIN_RATE = 1e-9                     # op/s or bytes/s above 0 (one call in 31 years): keeps µs/op finite
MAX_CASE = 255                      # a case id, library name, version line or ia32cap vector (the store's
                                    # VARCHAR(255); real ones are under 100: 3.6's 5-word ia32cap is 94)
MAX_VERSION = 80                    # a version (`3.6.3`, `1.1.1w`): run_libs.version was VARCHAR(80)
MAX_FACT = 4096                     # an environment line (compiler flags, CPUINFO …)
MAX_LINE = MAX_FACT                 # any line of text output (real ones are under 400 characters), checked
                                    # before any pattern sees the text


class BadValue(ValueError):
    """A figure outside the bounds above; its message says which."""


def bounded_int(text: str, what: str, low: int, high: int) -> int:
    """`text` (digits) as an int in [low, high]; BadValue otherwise. The
    digits are counted before int() is called, so a number of any length
    costs nothing and never reaches int()'s 4300-digit limit."""
    digits = text.strip()
    if not digits.isascii() or not digits.isdigit():
        raise BadValue(f"{what} `{shorten(digits)}` is not a whole number")
    significant = digits.lstrip("0") or "0"
    if len(significant) > len(str(high)) or not low <= int(significant) <= high:
        raise BadValue(f"{what} {shorten(digits)} is outside what sslperf accepts ({low} … {high})")
    return int(significant)


def size_value(text: str) -> int:
    """A block size (bytes per operation): 1 … 2^31-1."""
    return bounded_int(text, "a block size of", 1, MAX_SIZE)


def quoted(line: str) -> str:
    """A line as errors and warnings quote it: at most 160 characters, control characters shown as escapes
    (`\\x1b`), so a message never sends the input's terminal sequences to the terminal that prints it."""
    return visible(line if len(line) <= 160 else line[:157] + "...")


def line_error(source: str, number: int, line: str, problem: str, hint: str = DAMAGED) -> SslperfError:
    return ImportFailed(f"{source}, line {number}: {problem}: `{quoted(line).strip()}`.", hint=hint)


def number(text: str) -> float:
    """A figure as printed (`1234.5`, `inf`, `nan`); ValueError otherwise
    (BadValue for a figure longer than any rate speed prints)."""
    if len(text) > MAX_FIGURE_CHARS:
        raise BadValue(f"the figure {shorten(text)} is longer than any rate the tool prints")
    value = float(text)
    if text.strip().lower() not in ("inf", "-inf", "nan") and not re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", text):
        raise ValueError(text)
    return value


def decode(data: str | bytes, where: str) -> tuple[str, int]:
    """The text to parse, decoded once, and how many characters were not
    UTF-8. Policy: bytes that are not UTF-8 become U+FFFD, whether they come
    as bytes, from standard input read with `surrogateescape` (Python's
    stdin under a C/UTF-8 locale) or from a file read with
    `errors="replace"`, so standard input and the same file by path give
    the same run. A replaced character inside a figure or a table line makes
    that line fail like any damaged line; elsewhere (progress, compiler
    flags) it is harmless, and the run carries a warning that says how many
    there were. Text with NUL characters is binary, not speed output, and is
    refused, as is text longer than MAX_INPUT_CHARS."""
    if isinstance(data, (bytes, bytearray)):
        if len(data) > MAX_INPUT_BYTES:
            raise _too_long(where, len(data))
        text = bytes(data).decode("utf-8", errors="replace")
    else:
        text = data
        if re.search(r"[\ud800-\udfff]", text):
            try:
                text = text.encode("utf-8", "surrogateescape").decode("utf-8", errors="replace")
            except UnicodeEncodeError:              # surrogates that were not escaped bytes
                text = re.sub(r"[\ud800-\udfff]", "\ufffd", text)
    if len(text) > MAX_INPUT_CHARS:
        raise _too_long(where, len(text))
    if "\x00" in text:
        n = text.count("\n", 0, text.index("\x00")) + 1
        raise ImportFailed(f"{where}, line {n}: the text holds NUL characters: it is binary data, not the output "
                           "of openssl speed or bssl speed.", hint=DAMAGED)
    return text, text.count("\ufffd")


def check_lines(text: str, where: str) -> None:
    """Refuse a line longer than MAX_LINE, before any pattern reads the text
    (a string method, linear in the text)."""
    for number, line in enumerate(text.splitlines(), 1):
        if len(line) > MAX_LINE:
            raise ImportFailed(f"{where}, line {number}: {len(line):,} characters long; no line of openssl speed or "
                               f"bssl speed output is longer than a few hundred (sslperf reads lines of up to "
                               f"{MAX_LINE:,}).", hint=DAMAGED)


def _too_long(where: str, length: int) -> ImportFailed:
    return ImportFailed(f"{where}: {length} characters is far longer than any openssl speed or bssl speed output "
                        f"(sslperf reads at most {MAX_INPUT_CHARS}).",
                        hint="Import one tool run per file.")


def check_name(text: str, what: str, limit: int = MAX_CASE) -> str | None:
    """Why `text` cannot be stored as a name (None when it can)."""
    if BAD_CHARS.search(text):
        return f"{what} `{shorten(visible(text), 60)}` holds control characters"
    if len(text) > limit:
        return f"{what} `{shorten(text, 60)}` is longer than the {limit} characters sslperf keeps"
    return None


def json_int(digits: str) -> int:
    """A JSON integer (the decoder's parse_int), its digits counted before int() sees them."""
    if len(digits) > 20:
        raise BadValue(f"the JSON number {digits[:8]}…{digits[-4:]} ({len(digits)} digits) is beyond any count "
                       "a benchmark tool prints")
    return int(digits)


def slug(text: str) -> str:
    """`SPAKE2 over Ed25519` → `spake2-over-ed25519` (ids stay one path segment)."""
    out = re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")
    return out[:80] or "unnamed"


# ---- algorithm names --------------------------------------------------------

_CURVES = {
    "nistp192": "p192", "prime192v1": "p192", "p-192": "p192", "secp192r1": "p192",
    "nistp224": "p224", "secp224r1": "p224", "p-224": "p224",
    "nistp256": "p256", "prime256v1": "p256", "p-256": "p256", "secp256r1": "p256", "ecp-256": "p256",
    "nistp384": "p384", "secp384r1": "p384", "p-384": "p384", "ecp-384": "p384",
    "nistp521": "p521", "secp521r1": "p521", "p-521": "p521", "ecp-521": "p521",
    "nistk163": "sect163k1", "nistk233": "sect233k1", "nistk283": "sect283k1", "nistk409": "sect409k1",
    "nistk571": "sect571k1", "nistb163": "sect163r2", "nistb233": "sect233r1", "nistb283": "sect283r1",
    "nistb409": "sect409r1", "nistb571": "sect571r1",
}


def curve(name: str) -> str:
    """A curve as sslperf names it: `nistp256`, `prime256v1`, `P-256` → `p256`;
    others lower-cased (`brainpoolP256r1` → `brainpoolp256r1`)."""
    low = name.strip().lower()
    return _CURVES.get(low, slug(low))


def is_edwards_or_montgomery(name: str) -> str | None:
    low = name.strip().lower()
    return low if low in ("x25519", "x448", "ed25519", "ed448") else None


_DIGEST = re.compile(r"(md[245]|mdc2|sha1|sha\d{3}(-\d{3})?|sha3-\d+|shake\d+|blake2[bs]\d*|rmd160|ripemd(160)?"
                     r"|whirlpool|sm3|keccak-\w+)")
_CIPHER_WORDS = re.compile(r"(^|-)(cbc|ecb|ctr|gcm|ccm|ocb|cfb\d*|ofb|xts|ige|siv|wrap|rc4|chacha20|des|ede3?|idea|"
                           r"seed|rc2|rc5|bf|blowfish|cast5?|camellia|aes|aria|sm4)(-|$)")


def normalise_symmetric(name: str) -> str:
    """`aes-128 cbc` → `aes-128-cbc`, `hmac(sha256)` → `hmac-sha256`,
    `SHA2-256` → `sha256`, `AES-128-GCM` → `aes-128-gcm`."""
    low = name.strip().lower()
    low = re.sub(r"^(hmac|cmac)\((.+)\)$", r"\1-\2", low)
    low = re.sub(r"[\s/()]+", "-", low).strip("-")
    low = re.sub(r"sha2-(\d{3})", r"sha\1", low)
    return low


def symmetric_kind(alg: str) -> str:
    """`digest`, `mac`, `cipher` or `other` for a normalised name."""
    if re.match(r"(hmac|cmac|kmac|gmac|siphash)|ghash$|poly1305$", alg) and not alg.startswith("chacha20"):
        return "mac"
    if _DIGEST.fullmatch(alg):
        return "digest"
    if _CIPHER_WORDS.search(alg):
        return "cipher"
    return "other"


# ---- building a run -----------------------------------------------------------

@dataclass
class Builder:
    """Measurements of one imported run, keyed by case id."""
    lib: str
    measurements: dict[str, Measurement] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)      # case id → the row that gave it
    warnings: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)        # case id → how many rows of other names gave it

    def add(self, case: str, family: str, algorithm: str, operation: str, size: int | None, rate: float,
            *, workload: str = "speed-compat", group: str | None = None, label: str = "", tag: str = "",
            note: str | None = None, where: str = "", unit: str | None = None
            ) -> str | None:
        """One reported figure. `rate` is bytes/s when `size` is given, op/s
        otherwise, unless `unit` says so ("ops" for a threads case, whose size
        is its thread count). A rate that is zero, infinite or not a number is
        not a measurement: it becomes a warning. The same case from a different
        row becomes workload `tag` (its id ends in `/tag` instead of the workload); from the same row it
        is one more sample."""
        if not math.isfinite(rate) or rate <= 0:
            self.warnings.append(f"{where}: {quoted(label or case)} reported no usable rate ({rate}); not imported.")
            return None
        shown = shorten(label or case, 80)
        if not MIN_RATE <= rate <= MAX_RATE:
            raise ImportFailed(f"{where}: `{shown}` gives {rate:.4g} {'bytes' if size is not None else 'operations'}"
                               f"/s, outside what any real measurement gives (sslperf accepts {MIN_RATE:g} to "
                               f"{MAX_RATE:g} per second).", hint=DAMAGED)
        if size is not None and not 1 <= size <= MAX_SIZE:
            raise ImportFailed(f"{where}: `{shown}` gives a block size of {size} bytes (sslperf accepts 1 to "
                               f"{MAX_SIZE}).", hint=DAMAGED)
        if case in self.measurements and self.labels[case] != label and tag:
            # another loop of the tool's: a workload of its own, the id's last part (harness.h id templates)
            base = case.removesuffix(f"/{workload}") if workload != "record" else case
            case, workload = f"{base}/{tag}", tag
        for text, what, limit in ((case, "the case id", MAX_CASE), (algorithm, "the algorithm name", MAX_FACT),
                                  (label, "the row", MAX_FACT), (note or "", "the note", MAX_FACT)):
            if problem := check_name(text, what, limit):
                raise ImportFailed(f"{where}: {problem}.", hint=DAMAGED)
        if case in self.measurements:
            existing = self.measurements[case]
            existing.reported_rates.append(rate)
            if self.labels[case] != label:
                self._join(case, existing, label, where)
            return case
        if group is None:
            group = families.cipher_group(algorithm) if family == "cipher" else families.family(family).groups[0]
        unit = unit or ("bytes" if size is not None else "ops")
        self.measurements[case] = Measurement(
            case, family, group, algorithm[:80], operation[:40], size, workload, self.lib, "ok", unit=unit,
            bytes_per_op=size or 0 if unit == "bytes" else 0, note=note, reported_rates=[rate])
        self.labels[case] = label
        return case

    def _join(self, case: str, existing: Measurement, label: str, where: str) -> None:
        """Name one more row of the case in its note; the note is checked against MAX_FACT once joined (each
        row's name alone may fit, all of them together need not)."""
        self.rows[case] = self.rows.get(case, 1) + 1
        note = join_notes(existing.note, f"also reported as `{label}`")
        if len(note) > MAX_FACT:
            raise ImportFailed(
                f"{where}: this row and {self.rows[case] - 1} before it, each of another name, give the case "
                f"{shorten(case, 60)}; such rows are joined as the samples of one result, whose note names each "
                f"row, and the joined note would be {len(note):,} characters long (sslperf keeps {MAX_FACT:,}).",
                hint="Import the rows of that case in separate runs (split the file), or give the benchmarks "
                     "shorter names.")
        existing.note = note

    def run(self, settings: dict, environment: dict, lib: LibInfo) -> Run:
        if not self.measurements:
            where = "standard input" if settings["file"] == "-" else settings["file"]
            if self.warnings:
                raise ImportFailed(f"{where}: no figure of this {settings['source']} output is a usable rate "
                                   f"(first: {self.warnings[0]})",
                                   hint="A benchmark that failed is printed as 0.00 or inf; there is nothing to "
                                   "import.")
            raise ImportFailed(f"{where}: the {settings['source']} output holds no result to import.",
                               hint="Give the whole output, including the result tables that the tool prints "
                               "at the end (on standard output).")
        run = Run.new(settings, {**environment, "imported": True})
        run.libs = [lib]
        run.measurements = list(self.measurements.values())
        run.warnings = [visible(warning) for warning in self.warnings]
        run.complete = True
        run.finished = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        check_kept(run, "standard input" if settings["file"] == "-" else settings["file"])
        return run


# ---- what a run keeps -----------------------------------------------------------------

def check_kept(run: Run, where: str) -> None:
    """Every text an imported run keeps, checked as names are (check_name: no
    control characters or line breaks, and within its length): the
    environment's facts (a CPU: or compiler: line), the library's name,
    version and version line, and each result's names and note; ImportFailed
    naming the first that is not. One check for every importer, on the run
    it returns, so no fact reaches the store, the exports, the terminal or
    the HTML report unchecked."""
    for key, value in _facts(run.environment):
        if problem := check_name(value, f"the environment's {key}", MAX_FACT):
            raise ImportFailed(f"{where}: {problem}.", hint=DAMAGED)
    for lib in run.libs:
        for text, what, limit in ((lib.name, "the library name", MAX_CASE), (lib.version, "the version", MAX_VERSION),
                                  (lib.version_string, "the version line", MAX_CASE),
                                  (lib.flavor, "the flavor", MAX_CASE), (lib.ia32cap or "", "the capability vector",
                                                                          MAX_CASE)):
            if problem := check_name(text, what, limit):
                raise ImportFailed(f"{where}: {problem}.", hint=DAMAGED)
    for m in run.measurements:
        texts = (m.case, m.family, m.group, m.algorithm, m.operation, m.workload, m.lib, m.note or "")
        if BAD_CHARS.search(" ".join(texts)) or len(m.case) > MAX_CASE or len(m.note or "") > MAX_FACT:
            for text, what, limit in zip(texts, ("the case id", "the family", "the group", "the algorithm name",
                                                 "the operation", "the workload", "the library name", "the note"),
                                         (MAX_CASE, *[MAX_FACT] * 7)):
                if problem := check_name(text, what, limit):
                    raise ImportFailed(f"{where}: {problem} (result {shorten(visible(m.case), 80)}).",
                                       hint=DAMAGED)


def _facts(value, key: str = ""):
    """(key, text) of every string in an environment (nested dicts and lists)."""
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _facts(v, k if not key else f"{key}.{k}")
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _facts(v, key)


def join_notes(a: str | None, b: str) -> str:
    """Two notes as one (`a; b`), or `b` alone."""
    return f"{a}; {b}" if a else b


def flavor_from_name(name: str | None) -> str | None:
    if not name:
        return None
    low = name.lower()
    for flavor in ("libressl", "boringssl", "aws-lc", "openssl", "wolfssl"):
        if low.startswith(flavor):
            return flavor
    return None
