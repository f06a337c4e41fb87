"""Cases and named suites.

A case id is family/algorithm/operation[/size][/workload], named the way
`openssl speed` names algorithms so users recognise them; the harness's
catalog says how each family names its cases (case_ids). The harness
checks the details; this module chooses which cases a suite runs.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from sslperf import suggest
from sslperf.errors import SslperfError
from sslperf.cases import catalog
from sslperf.measure import case_hints
from sslperf.cases.ids import MAX_SIZE, Case, make, parse, parts_of, size_in_bounds

SPEED_SIZES = (16, 64, 256, 1024, 8192, 16384)
TLS_RECORD = 1350        # a full TLS record on a 1500-byte MTU path (the AES-GCM vs ChaCha20 comparison)

# Which algorithms exist, with which operations, is the harness's catalog
# (catalog.py); the suites below only choose among them.
QUICK_AEADS = ("aes-128-gcm", "aes-256-gcm", "aes-128-ccm", "aes-128-ocb", "chacha20-poly1305")
# The two AEADs TLS negotiates most get five sizes, enough to draw a curve; the rest three.
QUICK_CURVES = ("aes-128-gcm", "chacha20-poly1305")
QUICK_CURVE_SIZES = (256, 4096)
QUICK_SIGNATURES = ("rsa-2048", "ecdsa-p256", "ed25519", "ml-dsa-65")
DEFAULT_KEYGENS = ("rsa-2048", "ecdsa-p256", "ed25519", "x25519", "ml-dsa-65")


def cipher(alg: str, op: str, size: int, workload: str = "record") -> Case:
    return make("cipher", algorithm=alg, operation=op, size=size, workload=workload)


def digest(alg: str, size: int, workload: str = "record") -> Case:
    return make("digest", algorithm=alg, size=size, workload=workload)


def mac(alg: str, size: int) -> Case:
    return make("mac", algorithm=alg, size=size)


def api_cases() -> list[Case]:
    return [parse(entry["id"]) for entry in catalog.api_cases()]


def tls_handshake(proto: str, group: str, cert: str, ctx: str) -> Case:
    return make("tls/handshake", protocol=proto, group=group, cert=cert, context=ctx)


def tls_resume(proto: str, how: str, group: str, cert: str) -> Case:
    return make("tls/resume", protocol=proto, resumption=how, group=group, cert=cert)


def tls_transfer(proto: str, suite: str, size: int) -> Case:
    return make("tls/transfer", protocol=proto, suite=suite, size=size)


TRANSFER_SIZES = (1024, 16384, 1024 * 1024)     # a small write, one full record, a large download


def transfer_suite(depth: str) -> list[Case]:
    """Bulk transfer after one handshake: per protocol, cipher suite and write size."""
    suites_ = catalog.tls()["suites"]
    if depth == "quick":
        return [tls_transfer("tls1.3", s, 16384) for s in suites_]
    protocols = [p for p in catalog.tls()["protocols"] if p.startswith("tls")] if depth == "full" else ("tls1.3",)
    cases = [tls_transfer(p, s, n) for p in protocols for s in suites_ for n in TRANSFER_SIZES]
    if depth != "full":
        cases += [tls_transfer("tls1.2", "aes-128-gcm", n) for n in TRANSFER_SIZES]
    return cases


def _tls13_only(group: str) -> bool:
    return any(g["name"] == group and g.get("tls13_only") for g in catalog.tls()["groups"])


def _is_13(protocol: str) -> bool:
    return protocol in ("tls1.3", "dtls1.3")


def tls_suite(depth: str) -> list[Case]:
    """In-memory handshakes. The default answers the curl regression (a new
    SSL_CTX with a CA load per connection, as curl did, against a shared
    one) and the tuning talk's questions (groups, certificates,
    resumption); --full crosses everything the catalog has."""
    if depth == "full":
        tls = catalog.tls()
        groups, certs = [g["name"] for g in tls["groups"]], [c["name"] for c in tls["certs"]]
        cases = [tls_handshake(p, g, c, x) for p in tls["protocols"] for g in groups for c in certs
                 for x in tls["contexts"] if _is_13(p) or not _tls13_only(g)]
        cases += [tls_resume(p, h, "x25519", c) for p in tls["protocols"] for h in tls["resumption"]
                  for c in ("ecdsa-p256", "rsa-2048") if not (p == "tls1.3" and h == "session-id")]
        return cases
    # As deployed (`default`: each library's own groups and suites) beside the pinned groups it may negotiate.
    cases = [tls_handshake("tls1.3", g, c, "shared") for g in ("default", "x25519", "p-256", "x25519mlkem768")
             for c in ("ecdsa-p256", "rsa-2048")]
    cases += [tls_handshake("tls1.3", "x25519", c, "shared") for c in ("rsa-3072", "ecdsa-p384", "ed25519")]
    cases += [tls_handshake("tls1.3", "p-384", "ecdsa-p384", "shared")]
    cases += [tls_handshake(p, "x25519", c, x) for p in ("tls1.3", "tls1.2") for c in ("ecdsa-p256", "rsa-2048")
              for x in ("shared", "new")]
    cases += [tls_resume("tls1.3", "ticket", g, "ecdsa-p256") for g in ("default", "x25519", "x25519mlkem768")]
    cases += [tls_resume("tls1.2", "ticket", "x25519", "ecdsa-p256"),
              tls_resume("tls1.2", "session-id", "x25519", "ecdsa-p256")]
    if depth == "quick":
        cases = [tls_handshake("tls1.3", "default", "ecdsa-p256", "shared")]      # as deployed, beside pinned
        cases += [tls_handshake("tls1.3", "x25519", "ecdsa-p256", x) for x in ("shared", "new")]
        cases += [tls_handshake("tls1.2", "x25519", "rsa-2048", x) for x in ("shared", "new")]
        cases += [tls_handshake("tls1.3", "p-256", "ecdsa-p256", "shared"),
                  tls_handshake("tls1.3", "x25519", "rsa-2048", "shared"),
                  tls_handshake("tls1.3", "x25519mlkem768", "ecdsa-p256", "shared"),
                  tls_resume("tls1.3", "ticket", "x25519", "ecdsa-p256")]
    return _unique(cases)


def pkey(family: str, alg: str, op: str | None = None) -> Case:
    return make(family, algorithm=alg, operation=op)


_SIZE = r"[1-9][0-9]*"


def parse_case(text: str) -> Case:
    """A Case from its id; names outside the catalog get a clear error."""
    case = parse(text.strip())
    if case is not None:
        return case
    size = parts_of(text.strip()).get("size")        # the case's shape, read: is its size what is wrong?
    if size is not None and not size_in_bounds(size):
        shown = size if len(size) <= 30 else f"{size[:12]}… ({len(size)} digits)"
        raise SslperfError(f"`{text[:100]}{'…' if len(text) > 100 else ''}` names the size {shown}; a case's size "
                           f"is 1 to {MAX_SIZE} bytes (64 MiB). Nothing was measured.",
                           hint="Give a smaller size, e.g. cipher/aes-128-gcm/encrypt/16384.")
    raise SslperfError(f"`{text}` is not a case sslperf knows.", hint=_unknown_case_hint(text.strip()))


def _unknown_case_hint(text: str) -> str:
    """The close ids of the catalog, and the --list of the command that runs the family `text` is one of."""
    meant = case_hints.close_ids(text)
    said = f"Did you mean {suggest.either(meant)}? " if meant else ""
    listing = case_hints.where_listed(text)
    if listing is not None:
        return said + listing
    return said + ("Cases look like cipher/aes-128-gcm/encrypt/16384, digest/sha256/1024, sig/ecdsa-p256/sign, "
                   "kem/ml-kem-768/encaps (`sslperf speed --list`), tls/handshake/tls1.3/x25519/ecdsa-p256/shared "
                   "(`sslperf tls handshake --list`) or api/fetch/sha256 (`sslperf api`).")


def parse_sizes(text: str) -> tuple[int, ...]:
    """`16,1350,16384` → sizes; anything else is an error naming the bad part."""
    sizes = []
    for part in (p.strip() for p in text.split(",")):
        if not re.fullmatch(_SIZE, part) or not size_in_bounds(part):
            raise SslperfError(f"`{part}` in --sizes is not a size in bytes between 1 and {MAX_SIZE}.",
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
        for alg in QUICK_AEADS:
            curve = sizes + (QUICK_CURVE_SIZES if alg in QUICK_CURVES else ())
            cases += [cipher(alg, "encrypt", s, w) for w in workloads for s in sorted(set(curve))]
        cases += [cipher(alg, "decrypt", TLS_RECORD) for alg in ("aes-128-gcm", "chacha20-poly1305")]
        cases += [digest(alg, s, w) for alg in ("sha256", "sha512") for w in workloads for s in (64, 16384)]
        cases.append(mac("hmac-sha256", 1024))
        cases += [pkey("sig", alg, op) for alg in QUICK_SIGNATURES for op in ("sign", "verify")]
        cases += [pkey("kex", alg, "derive") for alg in ("x25519", "ecdh-p256")]
        cases += [pkey("kem", "ml-kem-768", op) for op in ("encaps", "decaps")]
        return _unique(cases)
    sizes = tuple(sorted({*SPEED_SIZES, TLS_RECORD, *extra_sizes}))
    for alg in catalog.names("cipher"):
        cases += [cipher(alg, "encrypt", s, w) for w in workloads for s in sizes]
        cases += [cipher(alg, "decrypt", s) for s in sizes]
    cases += [digest(alg, s, w) for alg in catalog.names("digest") for w in workloads for s in sizes]
    cases += [mac(alg, s) for alg in catalog.names("mac") for s in sizes]
    for family in ("sig", "kex", "kem"):
        cases += [pkey(family, alg, op) for alg in catalog.names(family) for op in catalog.operations(family)]
    # RSA-3072/4096 key generation is slow (the runner bounds it): only --full has every key.
    # (ML-KEM key generation is the kem family's keygen operation.)
    every_keygen = tuple(n for n in catalog.names("keygen") if n not in catalog.names("kem"))
    keygens = every_keygen if depth == "full" else DEFAULT_KEYGENS
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
    chosen = [i for i in ids if matches(i, patterns)]
    if not chosen:
        raise SslperfError(f"No case matches {' or '.join(patterns)}.",
                           hint="Patterns are globs or substrings of case ids, e.g. 'cipher/aes-*-gcm/*' or 'x25519'.")
    return chosen


def matches(case_id: str, patterns: tuple[str, ...]) -> bool:
    """Whether the id matches one of the glob or substring `patterns`."""
    return any(fnmatch.fnmatchcase(case_id, p) or p in case_id for p in patterns)


def _unique(cases: list[Case]) -> list[Case]:
    seen: dict[str, Case] = {}
    for case in cases:
        seen.setdefault(case.id, case)
    return list(seen.values())
