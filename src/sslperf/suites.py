"""Cases and named suites.

A case id is family/algorithm/operation[/size][/workload], named the way
`openssl speed` names algorithms so users recognise them. The harness
checks the details; this module knows which cases exist and groups them.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from sslperf.errors import SslperfError

AEADS = ("aes-128-gcm", "aes-256-gcm", "aes-128-ccm", "aes-256-ccm", "aes-128-ocb", "aes-256-ocb",
         "chacha20-poly1305")
CIPHERS = AEADS + ("aes-128-cbc", "aes-256-cbc", "aes-128-ctr", "aes-256-ctr")
DIGESTS = ("sha1", "sha256", "sha384", "sha512", "sha3-256", "sha3-512", "blake2b512")
MACS = ("hmac-sha256", "hmac-sha512", "cmac-aes-128", "poly1305")
SIGNATURES = ("rsa-2048", "rsa-3072", "rsa-4096", "ecdsa-p256", "ecdsa-p384", "ecdsa-p521", "ed25519", "ed448",
              "ml-dsa-44", "ml-dsa-65", "ml-dsa-87")
KEY_EXCHANGES = ("x25519", "x448", "ecdh-p256", "ecdh-p384", "ecdh-p521", "ffdh-2048", "ffdh-3072")
KEMS = ("ml-kem-512", "ml-kem-768", "ml-kem-1024")
SPEED_SIZES = (16, 64, 256, 1024, 8192, 16384)
TLS_RECORD = 1350        # a full TLS record on a 1500-byte MTU path (seed 002)
WORKLOADS = ("record", "speed-compat")
FAMILIES = ("cipher", "digest", "mac", "sig", "kex", "kem", "keygen", "api")

# The API-pattern suite (seed 000): per topic, the naive way first, then the
# better ones; the table shows each one's saving against the first.
API_PATTERNS: dict[str, tuple[str, ...]] = {
    "api/digest/sha256/{}/64": ("implicit-fetch", "explicit-fetch", "explicit-fetch-reuse-ctx"),
    "api/cipher/aes-256-cbc/{}/1024": ("full-init", "iv-only"),
    "api/mac/hmac-sha256/{}/200": ("init-each-call", "dup-template", "dup-template-new-key"),
    "api/fetch/{}": ("sha256", "aes-256-cbc", "hmac"),
    "api/ssl-ctx/{}": ("new",),
    "api/ca-load/{}": ("file", "dir"),
    "api/pem/{}": ("private-key", "certificate"),
}
# Topics whose rows are alternative ways of the same work (the others list costs).
API_ALTERNATIVES = ("api/digest", "api/cipher", "api/mac", "api/ca-load")
API_TOPICS = {
    "api/digest": "API: SHA-256 of 64 bytes",
    "api/cipher": "API: AES-256-CBC of 1 KiB",
    "api/mac": "API: HMAC-SHA256 of 200 bytes",
    "api/fetch": "API: one fetch + free",
    "api/ssl-ctx": "API: SSL_CTX_new + free",
    "api/ca-load": "API: CA store of 150 certificates",
    "api/pem": "API: PEM parsing",
}


@dataclass(frozen=True)
class Case:
    id: str
    family: str
    algorithm: str
    operation: str
    size: int | None = None
    workload: str = "record"

    @property
    def symmetric(self) -> bool:
        return self.family in ("cipher", "digest", "mac")

    @property
    def group(self) -> str:
        """The table a result belongs to."""
        if self.family == "api":
            return API_TOPICS["/".join(self.id.split("/")[:2])]
        if self.family == "tls":
            return "TLS resumption (in memory)" if self.id.startswith("tls/resume") else "TLS handshakes (in memory)"
        if self.family == "cipher":
            return "AEAD ciphers" if self.algorithm in AEADS else "block ciphers (CBC, CTR)"
        return {"digest": "digests", "mac": "MACs", "sig": "signatures", "kex": "key exchange",
                "kem": "KEMs", "keygen": "key generation"}[self.family]


def cipher(alg: str, op: str, size: int, workload: str = "record") -> Case:
    suffix = "/speed-compat" if workload == "speed-compat" else ""
    return Case(f"cipher/{alg}/{op}/{size}{suffix}", "cipher", alg, op, size, workload)


def digest(alg: str, size: int, workload: str = "record") -> Case:
    suffix = "/speed-compat" if workload == "speed-compat" else ""
    return Case(f"digest/{alg}/{size}{suffix}", "digest", alg, "hash", size, workload)


def mac(alg: str, size: int) -> Case:
    return Case(f"mac/{alg}/{size}", "mac", alg, "mac", size)


def api_cases() -> list[Case]:
    cases = []
    for template, patterns in API_PATTERNS.items():
        for pattern in patterns:
            case_id = template.format(pattern)
            parts = case_id.split("/")
            size = int(parts[-1]) if parts[-1].isdigit() else None
            algorithm = parts[2] if len(parts) == 5 else parts[1]
            cases.append(Case(case_id, "api", algorithm, pattern, size, "record"))
    return cases


TLS_GROUPS = ("x25519", "p-256", "p-384", "x25519mlkem768")
TLS_CERTS = ("rsa-2048", "rsa-3072", "ecdsa-p256", "ecdsa-p384", "ed25519")


def tls_handshake(proto: str, group: str, cert: str, ctx: str) -> Case:
    return Case(f"tls/handshake/{proto}/{group}/{cert}/{ctx}", "tls", f"{group} {cert}", f"handshake-{ctx}")


def tls_resume(proto: str, how: str, group: str, cert: str) -> Case:
    return Case(f"tls/resume/{proto}/{how}/{group}/{cert}", "tls", f"{group} {cert}", f"resume-{how}")


def tls_suite(depth: str) -> list[Case]:
    """In-memory handshakes. The default answers seed 001 (a new SSL_CTX with
    a CA load per connection, as curl did, against a shared one) and seed
    000 (groups, certificates, resumption); --full crosses everything."""
    if depth == "full":
        cases = [tls_handshake(p, g, c, x) for p in ("tls1.3", "tls1.2") for g in TLS_GROUPS for c in TLS_CERTS
                 for x in ("shared", "new") if not (g == "x25519mlkem768" and p == "tls1.2")]
        cases += [tls_resume(p, h, "x25519", c) for p in ("tls1.3", "tls1.2") for h in ("ticket", "session-id")
                  for c in ("ecdsa-p256", "rsa-2048") if not (p == "tls1.3" and h == "session-id")]
        return cases
    cases = [tls_handshake("tls1.3", g, c, "shared") for g in ("x25519", "p-256", "x25519mlkem768")
             for c in ("ecdsa-p256", "rsa-2048")]
    cases += [tls_handshake("tls1.3", "x25519", c, "shared") for c in ("rsa-3072", "ecdsa-p384", "ed25519")]
    cases += [tls_handshake("tls1.3", "p-384", "ecdsa-p384", "shared")]
    cases += [tls_handshake(p, "x25519", c, x) for p in ("tls1.3", "tls1.2") for c in ("ecdsa-p256", "rsa-2048")
              for x in ("shared", "new")]
    cases += [tls_resume("tls1.3", "ticket", "x25519", "ecdsa-p256"), tls_resume("tls1.2", "ticket", "x25519",
              "ecdsa-p256"), tls_resume("tls1.2", "session-id", "x25519", "ecdsa-p256")]
    if depth == "quick":
        cases = [tls_handshake("tls1.3", "x25519", "ecdsa-p256", x) for x in ("shared", "new")]
        cases += [tls_handshake("tls1.2", "x25519", "rsa-2048", x) for x in ("shared", "new")]
        cases += [tls_handshake("tls1.3", "p-256", "ecdsa-p256", "shared"),
                  tls_handshake("tls1.3", "x25519", "rsa-2048", "shared"),
                  tls_handshake("tls1.3", "x25519mlkem768", "ecdsa-p256", "shared"),
                  tls_resume("tls1.3", "ticket", "x25519", "ecdsa-p256")]
    return _unique(cases)


def pkey(family: str, alg: str, op: str | None = None) -> Case:
    if family == "keygen":
        return Case(f"keygen/{alg}", "keygen", alg, "keygen")
    return Case(f"{family}/{alg}/{op}", family, alg, op or "")


_SIZE = r"[1-9][0-9]*"


def parse_case(text: str) -> Case:
    """A Case from its id; names outside the catalog get a clear error."""
    parts = text.strip().split("/")
    family = parts[0]
    try:
        if family == "cipher" and len(parts) in (4, 5) and parts[1] in CIPHERS and parts[2] in ("encrypt", "decrypt"):
            workload = parts[4] if len(parts) == 5 else "record"
            if re.fullmatch(_SIZE, parts[3]) and workload in WORKLOADS:
                return cipher(parts[1], parts[2], int(parts[3]), workload)
        if family == "digest" and len(parts) in (3, 4) and parts[1] in DIGESTS and re.fullmatch(_SIZE, parts[2]):
            workload = parts[3] if len(parts) == 4 else "record"
            if workload in WORKLOADS:
                return digest(parts[1], int(parts[2]), workload)
        if family == "mac" and len(parts) == 3 and parts[1] in MACS and re.fullmatch(_SIZE, parts[2]):
            return mac(parts[1], int(parts[2]))
        if family == "sig" and len(parts) == 3 and parts[1] in SIGNATURES and parts[2] in ("sign", "verify"):
            return pkey("sig", parts[1], parts[2])
        if family == "kex" and len(parts) == 3 and parts[1] in KEY_EXCHANGES and parts[2] == "derive":
            return pkey("kex", parts[1], "derive")
        if family == "kem" and len(parts) == 3 and parts[1] in KEMS and parts[2] in ("keygen", "encaps", "decaps"):
            return pkey("kem", parts[1], parts[2])
        if family == "keygen" and len(parts) == 2 and parts[1] in SIGNATURES + KEY_EXCHANGES:
            return pkey("keygen", parts[1])
        if family == "api":
            for case in api_cases():
                if case.id == text.strip():
                    return case
        if family == "tls" and len(parts) == 6 and parts[2] in ("tls1.2", "tls1.3"):
            if parts[1] == "handshake" and parts[3] in TLS_GROUPS and parts[4] in TLS_CERTS \
                    and parts[5] in ("shared", "new"):
                return tls_handshake(*parts[2:])
            if parts[1] == "resume" and parts[3] in ("ticket", "session-id") and parts[4] in TLS_GROUPS \
                    and parts[5] in TLS_CERTS:
                return tls_resume(*parts[2:])
    except ValueError:
        pass
    raise SslperfError(
        f"`{text}` is not a case sslperf knows.",
        hint="Cases look like cipher/aes-128-gcm/encrypt/16384, digest/sha256/1024, mac/hmac-sha256/200, "
        "sig/ecdsa-p256/sign, kex/x25519/derive, kem/ml-kem-768/encaps or keygen/rsa-2048; "
        "`sslperf speed --list` shows a suite's cases.",
    )


def parse_sizes(text: str) -> tuple[int, ...]:
    """`16,1350,16384` → sizes; anything else is an error naming the bad part."""
    sizes = []
    for part in (p.strip() for p in text.split(",")):
        if not re.fullmatch(_SIZE, part) or int(part) > 64 * 1024 * 1024:
            raise SslperfError(f"`{part}` in --sizes is not a size in bytes between 1 and 67108864.",
                               hint="Give a comma-separated list, e.g. --sizes 16,1350,16384.")
        sizes.append(int(part))
    return tuple(sizes)


@dataclass(frozen=True)
class Depth:
    name: str
    target_ms: float      # wall time of one sample
    samples: int


DEPTHS = {
    "quick": Depth("quick", 20, 20),
    "default": Depth("default", 30, 10),
    "full": Depth("full", 100, 15),
}


def suite(depth: str, extra_sizes: tuple[int, ...] = (), workloads: tuple[str, ...] = ("record",)) -> list[Case]:
    """The cases of a depth. Sizes add to the depth's own; the speed-compat
    workload applies to encryption and digests (what `openssl speed` times)."""
    cases: list[Case] = []
    if depth == "quick":
        sizes = tuple(sorted({16, TLS_RECORD, 16384, *extra_sizes}))
        for alg in ("aes-128-gcm", "aes-256-gcm", "aes-128-ccm", "aes-128-ocb", "chacha20-poly1305"):
            cases += [cipher(alg, "encrypt", s, w) for w in workloads for s in sizes]
        cases += [cipher(alg, "decrypt", TLS_RECORD) for alg in ("aes-128-gcm", "chacha20-poly1305")]
        cases += [digest(alg, s, w) for alg in ("sha256", "sha512") for w in workloads for s in (64, 16384)]
        cases.append(mac("hmac-sha256", 1024))
        cases += [pkey("sig", alg, op) for alg in ("rsa-2048", "ecdsa-p256", "ed25519", "ml-dsa-65")
                  for op in ("sign", "verify")]
        cases += [pkey("kex", alg, "derive") for alg in ("x25519", "ecdh-p256")]
        cases += [pkey("kem", "ml-kem-768", op) for op in ("encaps", "decaps")]
        return _unique(cases)
    sizes = tuple(sorted({*SPEED_SIZES, TLS_RECORD, *extra_sizes}))
    for alg in CIPHERS:
        cases += [cipher(alg, "encrypt", s, w) for w in workloads for s in sizes]
        cases += [cipher(alg, "decrypt", s) for s in sizes]
    cases += [digest(alg, s, w) for alg in DIGESTS for w in workloads for s in sizes]
    cases += [mac(alg, s) for alg in MACS for s in sizes]
    cases += [pkey("sig", alg, op) for alg in SIGNATURES for op in ("sign", "verify")]
    cases += [pkey("kex", alg, "derive") for alg in KEY_EXCHANGES]
    cases += [pkey("kem", alg, op) for alg in KEMS for op in ("keygen", "encaps", "decaps")]
    keygens = ("rsa-2048", "ecdsa-p256", "ed25519", "x25519", "ml-dsa-65")
    if depth == "full":
        keygens = SIGNATURES + KEY_EXCHANGES      # RSA-3072/4096 keygen is slow: the runner bounds it
    cases += [pkey("keygen", alg) for alg in keygens]
    return _unique(cases)


def select(cases: list[Case], patterns: tuple[str, ...]) -> list[Case]:
    """Cases whose id matches any of the glob `patterns` (all when none)."""
    ids = set(select_ids([c.id for c in cases], patterns))
    return [c for c in cases if c.id in ids]


def select_ids(ids: list[str], patterns: tuple[str, ...]) -> list[str]:
    """Ids that match any of the glob or substring `patterns` (all when none)."""
    if not patterns:
        return ids
    chosen = [i for i in ids if any(fnmatch.fnmatchcase(i, p) or p in i for p in patterns)]
    if not chosen:
        raise SslperfError(f"No case matches {' or '.join(patterns)}.",
                           hint="Patterns are globs or substrings of case ids, e.g. 'cipher/aes-*-gcm/*' or 'x25519'.")
    return chosen


def _unique(cases: list[Case]) -> list[Case]:
    seen: dict[str, Case] = {}
    for case in cases:
        seen.setdefault(case.id, case)
    return list(seen.values())
