"""When algorithms arrived in OpenSSL, so that a case a version predates is
explained as such ("not in this version (ML-KEM arrived in OpenSSL 3.5)")
rather than with the harness's literal reason ("openssl cannot make
ML-KEM-768 keys through EVP_PKEY"), which reads like a fault.

Sources: OpenSSL's NEWS.md — 1.1.0 added X25519, ChaCha20 and Poly1305 and
OCB mode; 1.1.1 added TLS 1.3, SHA-3, Ed25519/Ed448 and X448; 3.5.0 added
ML-KEM, ML-DSA and SLH-DSA and the hybrid X25519MLKEM768 TLS group. Only
OpenSSL itself is described: LibreSSL, BoringSSL and AWS-LC have their own
histories and keep their own reasons.
"""

from __future__ import annotations

import re

from sslperf.libs import versions

# (a part of a case id — a whole part, or its start up to a dash —, the name shown, the first release)
OPENSSL: tuple[tuple[str, str, str], ...] = (
    ("ml-kem", "ML-KEM", "3.5.0"),
    ("x25519mlkem768", "the X25519MLKEM768 group", "3.5.0"),
    ("secp256r1mlkem768", "the SecP256r1MLKEM768 group", "3.5.0"),
    ("mlkem768", "the MLKEM768 group", "3.5.0"),
    ("ml-dsa", "ML-DSA", "3.5.0"),
    ("slh-dsa", "SLH-DSA", "3.5.0"),
    ("tls1.3", "TLS 1.3", "1.1.1"),
    ("sha3", "SHA-3", "1.1.1"),
    ("ed25519", "Ed25519", "1.1.1"),
    ("ed448", "Ed448", "1.1.1"),
    ("x448", "X448", "1.1.1"),
    ("x25519", "X25519", "1.1.0"),
    ("chacha20-poly1305", "ChaCha20-Poly1305", "1.1.0"),
    ("aes-128-ocb", "AES-OCB", "1.1.0"),
    ("aes-256-ocb", "AES-OCB", "1.1.0"),
)


def _mentions(case_id: str, token: str) -> bool:
    return any(part == token or part.startswith(token + "-") for part in case_id.split("/"))


def arrival(flavor: str | None, version: str | None, case_id: str) -> tuple[str, str] | None:
    """(name, release) of the newest algorithm `case_id` needs that OpenSSL
    `version` predates; None when the version has them all (or is not
    OpenSSL, or cannot be read)."""
    if flavor != "openssl" or not version:
        return None
    have = _release(version)
    if not have:
        return None
    missing = [(_release(first), name, first) for token, name, first in OPENSSL
               if _mentions(case_id, token) and have < _release(first)]
    if not missing:
        return None
    _, name, first = max(missing)
    return name, versions.series(first)


def _release(version: str) -> tuple[int, ...]:
    """3.0.19 → (3, 0, 19); 1.1.1w → (1, 1, 1, 23); a pre-release counts as its release."""
    return versions._numbers(version.partition("-")[0])


# Reasons that say the library lacks something (which a version predating it explains); others — "is a
# TLS 1.3 group", "TLS 1.3 has no session-id resumption" — hold on every version and are kept.
_LACKS = re.compile(r"cannot|does not offer|offers no|not supported|unsupported|unknown|no such", re.I)


def reason(flavor: str | None, version: str | None, case_id: str, original: str | None) -> str | None:
    """The n/a reason to show: "not in this version (… arrived in OpenSSL X)"
    where the version predates the algorithm and the harness's reason is
    that the library lacks it, else the original."""
    if original and not _LACKS.search(original):
        return original
    found = arrival(flavor, version, case_id)
    if found is None:
        return original
    name, first = found
    return f"not in this version ({name} arrived in OpenSSL {first})"
