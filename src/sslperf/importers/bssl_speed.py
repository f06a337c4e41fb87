"""`bssl speed` of BoringSSL and AWS-LC (tool/speed.cc), as text or `-json`.

Text: one line per benchmark, `Did <calls> <description> operations in
<us>us (<ops/s> ops/sec)`, with `: <MB/s> MB/s` for benchmarks over a buffer
(and `  min: …us, median: …us, max: …us` after an RSA key generation).
JSON: `[{"description": …, "numCalls": …, "microseconds": …,
"bytesPerCall": …}, …]`. The block size is `(N bytes)` in the description:
BoringSSL puts it in the name (`AES-128-GCM (16 bytes) seal`), AWS-LC after it
(`AEAD-AES-128-GCM seal (16 bytes)`), and AWS-LC's JSON only in bytesPerCall.
Rates are recomputed from calls and microseconds (what bssl divides too) and
checked against the printed ones, so a damaged line is refused.
"""

from __future__ import annotations

import json
import re

from sslperf.importers._common import (MAX_BITS, MAX_COUNT, MAX_FACT, MAX_JSON_DEPTH, MAX_SIZE, BadValue, Builder,
                                       ImportFailed, bounded_int, check_name, json_int, json_too_deep, line_error,
                                       number, size_value, slug)

TEXT = re.compile(r"^Did (\d+) (.+) operations in (\d+)us \((\S+) ops/sec\)(?::\s+(\S+) MB/s)?\s*$")
KEYGEN_STATS = re.compile(r"^\s+min: (\d+)us, median: (\d+)us, max: (\d+)us\s*$")
DEBUG = "Benchmarking in debug mode."
# No leading \s* in these: tried at every position of a long run of spaces it would take time quadratic in
# the run; the spaces around what they remove are collapsed afterwards (_collapsed).
SIZE = re.compile(r"\((\d+) bytes?\)")
PRIMES = re.compile(r"\((\d+) bits?\)")
AWS_LC = re.compile(r"^(AEAD-|EVP-)|Kyber|Dilithium|\bFIPS\b|with EVP_PKEY_keygen|with EC_KEY_generate_key|^ECMUL "
                    r"|^Jitter|PKCS#8|secp256k1|^DH check|(seal|open|encrypt|decrypt) \(\d+ bytes?\)$", re.I)
BORING = re.compile(r"\(\d+ bytes?\) (seal|open)$|^MLDSA |^ML-KEM-\d+ (generate \+ decap|parse \+ encap)$"
                    r"|^SLHDSA-|^Parse X\.509", re.I)
DIGESTS = {"md4": "md4", "md5": "md5", "sha-1": "sha1", "sha-224": "sha224", "sha-256": "sha256",
           "sha-384": "sha384", "sha-512": "sha512", "sha-512-256": "sha512-256", "sha3-224": "sha3-224",
           "sha3-256": "sha3-256", "sha3-384": "sha3-384", "sha3-512": "sha3-512", "blake2b-256": "blake2b256"}
KEX_NOTE = "bssl speed times a fresh key pair plus the shared secret on each call"
JSON_KEYS = {"numCalls": (0, MAX_COUNT), "microseconds": (0, MAX_COUNT), "bytesPerCall": (1, MAX_SIZE),
             "primeSizePerCall": (1, MAX_BITS)}


def detect_flavor(descriptions: list[str]) -> str | None:
    aws = any(AWS_LC.search(d) for d in descriptions)
    boring = any(BORING.search(d) for d in descriptions)
    if aws and not boring:
        return "aws-lc"
    if boring and not aws:
        return "boringssl"
    return None


def add(b: Builder, description: str, calls: int, us: int, size: int | None, where: str,
        note: str | None = None) -> str | None:
    """One benchmark; returns its case id (None when it had no usable rate)."""
    ops = calls / us * 1e6 if us > 0 else float("inf")
    desc = _collapsed(SIZE.sub(" ", description))
    if primes := PRIMES.search(desc):
        desc = _collapsed(PRIMES.sub(" ", desc)) + f" {primes.group(1)}-bit"
    case, family, alg, op, workload, class_note = classify(desc, size)
    if family in ("cipher", "digest", "mac") and size is None:
        alg = slug(desc)
        case, family, op = f"other/{alg}" + ("" if workload == "record" else f"/{workload}"), "other", ""
    value = ops * size if size is not None else ops
    return b.add(case, family, alg, op, size, value, workload=workload, label=description, where=where,
                 note=note or class_note)


def _collapsed(text: str) -> str:
    """Runs of whitespace as one space, none at the ends."""
    return " ".join(text.split())


def classify(d: str, size: int | None) -> tuple[str, str, str, str, str, str | None]:
    """(case id, family, algorithm, operation, workload, note) of a bssl description."""
    low = d.lower()
    sized = f"/{size}" if size is not None else ""
    if m := re.fullmatch(r"(aead-)?(.+?) (seal|open)", low):
        alg, op = m.group(2), "encrypt" if m.group(3) == "seal" else "decrypt"
        return f"cipher/{alg}/{op}{sized}/speed-compat", "cipher", alg, op, "speed-compat", None
    if m := re.fullmatch(r"evp-(.+?) (encrypt|decrypt)", low):
        alg, op = m.group(1), m.group(2)
        return (f"cipher/{alg}/{op}{sized}/bssl-evp", "cipher", alg, op, "bssl-evp",
                "AWS-LC's EVP_Encrypt*/Decrypt* loop, not the EVP_AEAD seal/open loop")
    if m := re.fullmatch(r"(aes-\d+-xts) (?:init and )?(encrypt|decrypt)", low):
        alg, op = m.group(1), m.group(2)
        return f"cipher/{alg}/{op}{sized}/speed-compat", "cipher", alg, op, "speed-compat", None
    if m := re.fullmatch(r"rsa (fips )?(\d+) (signing|verify \(same key\)|verify \(fresh key\)|key-gen)", low):
        alg = f"rsa-{m.group(2)}"
        what = m.group(3)
        if what == "key-gen":
            alg += "-fips" if m.group(1) else ""
            return f"keygen/{alg}", "keygen", alg, "keygen", "record", None
        op = {"signing": "sign", "verify (same key)": "verify"}.get(what, "verify-fresh-key")
        return f"sig/{alg}/{op}", "sig", alg, op, "record", None
    if m := re.fullmatch(r"ecdsa (\S+) (signing|verify)", low):
        alg, op = f"ecdsa-{_curve(m.group(1))}", "sign" if m.group(2) == "signing" else "verify"
        return f"sig/{alg}/{op}", "sig", alg, op, "record", None
    if m := re.fullmatch(r"ecdh (p-\d+|secp256k1|x25519)", low):
        alg = "x25519" if m.group(1) == "x25519" else f"ecdh-{_curve(m.group(1))}"
        return f"kex/{alg}/keygen-derive", "kex", alg, "keygen-derive", "record", KEX_NOTE
    if low == "curve25519 arbitrary point multiplication":
        return "kex/x25519/derive", "kex", "x25519", "derive", "record", None
    if low == "curve25519 base-point multiplication":
        return "keygen/x25519", "keygen", "x25519", "keygen", "record", "X25519_public_from_private"
    if m := re.fullmatch(r"(ed25519|ed448) (key generation|signing|verify)", low):
        return _sig(m.group(1), m.group(2))
    if m := re.fullmatch(r"ml-?dsa-?(44|65|87)? (key generation|keygen|sign \(randomized\)|signing|sign"
                         r"|verify \(valid signature\)|verify)", low):
        note = None if m.group(1) else "BoringSSL's MLDSA benchmark uses ML-DSA-65"
        case = _sig(f"ml-dsa-{m.group(1) or '65'}", m.group(2))
        return (*case[:5], note)
    if m := re.fullmatch(r"(slh-?dsa-\S+|dilithium\d) (key generation|keygen|signing|verify)", low):
        return _sig(re.sub(r"^slh-?dsa", "slh-dsa", m.group(1)), m.group(2))
    if m := re.fullmatch(r"(ml-?kem-?(512|768|1024)|kyber\d+_r3|hrss) (generate \+ decap|parse \+ encap|keygen"
                         r"|generate|encaps?|decaps?)", low):
        alg = f"ml-kem-{m.group(2)}" if m.group(2) else slug(m.group(1))
        op = {"generate + decap": "keygen-decaps", "parse + encap": "parse-encaps", "generate": "keygen",
              "encap": "encaps", "decap": "decaps"}.get(m.group(3), m.group(3))
        return f"kem/{alg}/{op}", "kem", alg, op, "record", None
    if low in DIGESTS:
        alg = DIGESTS[low]
        return f"digest/{alg}{sized}/speed-compat", "digest", alg, "hash", "speed-compat", None
    if m := re.fullmatch(r"hmac-(\S+?)(-oneshot)?", low):
        alg = f"hmac-{m.group(1).replace('sha-', 'sha')}{m.group(2) or ''}"
        return f"mac/{alg}{sized}", "mac", alg, "mac", "record", "bssl speed's HMAC loop"
    if low == "siphash-2-4":
        return f"mac/siphash-2-4{sized}", "mac", "siphash-2-4", "mac", "record", "bssl speed's SipHash loop"
    alg = slug(d)
    return f"other/{alg}{sized}/speed-compat", "other", alg, "", "speed-compat", None


def _sig(alg: str, what: str) -> tuple[str, str, str, str, str, None]:
    if what in ("key generation", "keygen"):
        return f"keygen/{alg}", "keygen", alg, "keygen", "record", None
    op = "verify" if what.startswith("verify") else "sign"
    return f"sig/{alg}/{op}", "sig", alg, op, "record", None


def _curve(name: str) -> str:
    return name.replace("-", "").lower() if name.lower().startswith("p-") else name.lower()


def _close(printed: float, computed: float, decimals: int = 1) -> bool:
    return abs(printed - computed) <= 0.51 * 10 ** -decimals + 1e-9 * abs(computed)


# ---- text ------------------------------------------------------------------------

def parse_text(text: str, source: str, b: Builder) -> tuple[list[str], dict]:
    descriptions: list[str] = []
    environment: dict = {}
    last: str | None = None
    started = False
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        where = f"{source}, line {n}"
        if stripped == DEBUG:
            environment["debug_build"] = True
            continue
        m = TEXT.match(stripped)
        if not m:
            if (s := KEYGEN_STATS.match(line)) and last and last.startswith("keygen/"):
                try:
                    low, median, high = (bounded_int(t, "a time (us) of", 0, MAX_COUNT) for t in s.groups())
                except BadValue as exc:
                    raise line_error(source, n, line, str(exc)) from None
                b.measurements[last].note = f"per key: min {low} us, median {median} us, max {high} us"
                continue
            if not stripped and started:
                continue
            if started:
                raise line_error(source, n, line, "unknown line in bssl speed's output")
            continue
        started = True
        desc = m.group(2)
        try:
            calls = bounded_int(m.group(1), "a call count of", 0, MAX_COUNT)
            us = bounded_int(m.group(3), "a time (us) of", 0, MAX_COUNT)
            printed_ops = number(m.group(4))
            mbs = number(m.group(5)) if m.group(5) is not None else None
            size_m = SIZE.search(desc)
            size = size_value(size_m.group(1)) if size_m else None
        except BadValue as exc:
            raise line_error(source, n, line, str(exc)) from None
        except ValueError:
            raise line_error(source, n, line, "a figure on this line is not a number") from None
        ops = calls / us * 1e6 if us else float("inf")
        if us and not _close(printed_ops, ops, 3 if re.search(r"\.\d{3}$", m.group(4)) else 1):
            raise line_error(source, n, line, f"{calls} calls in {us} us is not the {m.group(4)} ops/sec printed")
        if mbs is not None and size is not None and us and not _close(mbs, calls * size / us):
            raise line_error(source, n, line, f"the MB/s printed does not match {size} bytes per call")
        descriptions.append(desc)
        note = "bssl printed MB/s but not the bytes per call; imported as op/s" \
            if mbs is not None and size is None else None
        last = add(b, desc, calls, us, size, where, note)
    if not started:
        raise ImportFailed(f"{source}: no `Did … operations in …us` line was found in the bssl speed output.")
    return descriptions, environment


# ---- JSON ------------------------------------------------------------------------

def parse_json(text: str, source: str, b: Builder) -> tuple[list[str], dict]:
    environment: dict = {}
    start = text.find("[")
    prefix = text[:start].strip() if start >= 0 else text.strip()
    if start < 0 or prefix not in ("", DEBUG):
        raise ImportFailed(f"{source}: bssl speed -json output starts with `[`; this text does not.")
    if prefix == DEBUG:
        environment["debug_build"] = True
    decoder = json.JSONDecoder(parse_int=json_int)
    pos, descriptions, lines = start + 1, [], text.splitlines()
    counted = [0, 1]                                  # an offset and its line number: items come in order

    def lineno(offset: int) -> int:
        if offset < counted[0]:
            return text.count("\n", 0, offset) + 1
        counted[:] = [offset, counted[1] + text.count("\n", counted[0], offset)]
        return counted[1]

    def fail(offset: int, problem: str):
        n = lineno(max(offset, 0))
        return line_error(source, n, lines[n - 1] if 0 < n <= len(lines) else "", problem)

    if (deep := json_too_deep(text, start)) is not None:
        raise fail(deep, f"JSON nested more than {MAX_JSON_DEPTH} levels deep; bssl speed -json prints a list of "
                   "flat objects")

    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text):
            raise fail(len(text.rstrip()) - 1, "the JSON list is not closed with `]` (the output was cut short)")
        if text[pos] == "]":
            break
        try:
            item, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise fail(exc.pos, f"not valid JSON ({exc.msg})") from None
        except BadValue as exc:
            raise fail(pos, str(exc)) from None
        except RecursionError:                        # not reachable after the depth check; kept as a guard
            raise fail(pos, "JSON nested too deeply") from None
        if not isinstance(item, dict) or set(item) - {"description", *JSON_KEYS} \
                or not isinstance(item.get("description"), str) \
                or not all(type(item.get(k)) is int for k in ("numCalls", "microseconds")) \
                or not all(type(item[k]) is int for k in JSON_KEYS if k in item):
            raise fail(pos, "a bssl speed result should have description, numCalls, microseconds (whole numbers) "
                       "and optionally bytesPerCall")
        for key, (low, high) in JSON_KEYS.items():
            if key in item and not low <= item[key] <= high:
                raise fail(pos, f"{key} {item[key]} is outside what sslperf accepts ({low} … {high})")
        desc = item["description"]
        if problem := check_name(desc, "the description", MAX_FACT):
            raise fail(pos, problem)
        size_m = SIZE.search(desc)
        size = item.get("bytesPerCall")
        try:
            described = size_value(size_m.group(1)) if size_m else None
        except BadValue as exc:
            raise fail(pos, str(exc)) from None
        if described is not None and size is not None and described != size:
            raise fail(pos, "the bytes in the description and bytesPerCall differ")
        size = size if size is not None else described
        if "primeSizePerCall" in item:
            desc = f"{desc} ({item['primeSizePerCall']} bits)"
        descriptions.append(desc)
        add(b, desc, item["numCalls"], item["microseconds"], size, f"{source}, line {lineno(pos)}")
        pos = end
    if text[pos + 1:].strip():
        raise fail(pos + 1 + len(text[pos + 1:]) - len(text[pos + 1:].lstrip()), "text after the JSON list")
    return descriptions, environment

