"""`sslperf recommend`'s decisions: from measured figures to TLS server settings.

The decisions live here, as a pure function of the evidence (measurements
of one library, plain and with the no-aesni CPU mask) so they can be tested
and explained; evidence.py gathers the evidence and snippets.py writes the
settings in each server's syntax. A security floor is applied first and
never traded for speed: speed only orders what is already acceptable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sslperf import figures
from sslperf.libs.model import is_bssl
from sslperf.measure.suites import TLS_RECORD
from sslperf.results import Measurement

CLIENT_PROFILES = {
    "mixed": "clients of every kind: most have AES instructions, some (older phones, small devices) do not",
    "mobile": "mostly clients without AES instructions (measured here by hiding AES-NI with OPENSSL_ia32cap)",
    "desktop": "clients with AES instructions",
}
FLOORS = (128, 192, 256)


@dataclass(frozen=True)
class Aead:
    name: str                  # case algorithm
    label: str
    bits: int
    tls13: str
    tls12_ecdsa: str
    tls12_rsa: str

    @property
    def case(self) -> str:
        return f"cipher/{self.name}/encrypt/{TLS_RECORD}"


AEADS = (
    Aead("aes-128-gcm", "AES-128-GCM", 128, "TLS_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256",
         "ECDHE-RSA-AES128-GCM-SHA256"),
    Aead("aes-256-gcm", "AES-256-GCM", 256, "TLS_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384",
         "ECDHE-RSA-AES256-GCM-SHA384"),
    Aead("chacha20-poly1305", "ChaCha20-Poly1305", 256, "TLS_CHACHA20_POLY1305_SHA256",
         "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"),
)


@dataclass(frozen=True)
class Group:
    tls_name: str              # as Groups / ssl_ecdh_curve spell it
    label: str
    bits: int                  # classical security; a hybrid adds post-quantum protection on top
    server_cases: tuple[str, ...]     # the server's work for one key share
    post_quantum: bool = False


GROUPS = (
    Group("X25519MLKEM768", "X25519MLKEM768 (hybrid)", 128,
          ("keygen/x25519", "kex/x25519/derive", "kem/ml-kem-768/encaps"), True),
    Group("SecP384r1MLKEM1024", "SecP384r1MLKEM1024 (hybrid)", 192,
          ("keygen/ecdh-p384", "kex/ecdh-p384/derive", "kem/ml-kem-1024/encaps"), True),
    Group("X25519", "X25519", 128, ("keygen/x25519", "kex/x25519/derive")),
    Group("P-256", "P-256", 128, ("keygen/ecdh-p256", "kex/ecdh-p256/derive")),
    Group("P-384", "P-384", 192, ("keygen/ecdh-p384", "kex/ecdh-p384/derive")),
    Group("X448", "X448", 224, ("keygen/x448", "kex/x448/derive")),
    Group("P-521", "P-521", 256, ("keygen/ecdh-p521", "kex/ecdh-p521/derive")),
)
DHE_CASES = ("keygen/ffdh-2048", "kex/ffdh-2048/derive")


@dataclass(frozen=True)
class CertType:
    name: str                  # case algorithm
    label: str
    bits: int
    key: str                   # "ecdsa" or "rsa": which TLS 1.2 suites it needs
    sigalg: str                # what it signs TLS 1.3 handshakes with


CERTS = (
    CertType("ecdsa-p256", "ECDSA P-256", 128, "ecdsa", "ecdsa_secp256r1_sha256"),
    CertType("ecdsa-p384", "ECDSA P-384", 192, "ecdsa", "ecdsa_secp384r1_sha384"),
    CertType("ecdsa-p521", "ECDSA P-521", 256, "ecdsa", "ecdsa_secp521r1_sha512"),
    CertType("rsa-2048", "RSA-2048", 112, "rsa", "rsa_pss_rsae_sha256"),
    CertType("rsa-3072", "RSA-3072", 128, "rsa", "rsa_pss_rsae_sha256"),
    CertType("rsa-4096", "RSA-4096", 128, "rsa", "rsa_pss_rsae_sha256"),   # ~150 bits: above 128, below 192
)
# Signature algorithms with their security (hash and key), strongest-first within a key type.
SIGALGS = (
    ("ecdsa_secp256r1_sha256", "ecdsa", 128), ("ecdsa_secp384r1_sha384", "ecdsa", 192),
    ("ecdsa_secp521r1_sha512", "ecdsa", 256), ("ed25519", "eddsa", 128), ("ed448", "eddsa", 224),
    ("rsa_pss_rsae_sha256", "rsa", 128), ("rsa_pss_rsae_sha384", "rsa", 128), ("rsa_pss_rsae_sha512", "rsa", 128),
    ("rsa_pkcs1_sha256", "rsa", 128), ("rsa_pkcs1_sha384", "rsa", 128), ("rsa_pkcs1_sha512", "rsa", 128),
)
TLS_FULL = "tls/handshake/tls1.3/x25519/ecdsa-p256/shared"
TLS_NEW_CTX = "tls/handshake/tls1.3/x25519/ecdsa-p256/new"
TLS_RESUMED = "tls/resume/tls1.3/ticket/x25519/ecdsa-p256"


def needed_cases(min_security: int) -> tuple[list[str], list[str]]:
    """(cases measured as the CPU is, cases measured with the no-aesni mask)."""
    plain = [a.case for a in AEADS]
    plain += [c for g in GROUPS if g.bits >= min_security or g.post_quantum for c in g.server_cases]
    plain += list(DHE_CASES)
    plain += [f"sig/{c.name}/{op}" for c in CERTS for op in ("sign", "verify")
              if c.bits >= min_security or c.name in ("rsa-2048", "rsa-3072")]
    plain += [TLS_FULL, TLS_NEW_CTX, TLS_RESUMED]
    return list(dict.fromkeys(plain)), [a.case for a in AEADS]


class Evidence:
    """The measurements advice rests on, looked up by case id."""

    def __init__(self, plain: list[Measurement], masked: list[Measurement], sources: list[str] | None = None):
        self.plain = {m.case: m for m in plain if m.status == "ok" and m.summary()}
        self.masked = {m.case: m for m in masked if m.status == "ok" and m.summary()}
        self.missing_reason = {m.case: m.reason or m.status for m in plain if m.status != "ok"}
        self.sources = sources or []

    def micros(self, case: str, masked: bool = False) -> float | None:
        m = (self.masked if masked else self.plain).get(case)
        return m.micros_per_op("wall") if m else None

    def micros_sum(self, cases: tuple[str, ...]) -> float | None:
        values = [self.micros(c) for c in cases]
        return None if any(v is None for v in values) else sum(values)

    def side_micros(self, case: str, side: str) -> float | None:
        """A TLS case's per-handshake CPU on one side ("client" or "server")."""
        m = self.plain.get(case)
        return m.figure_micros_per_op({"client": figures.CLIENT_CPU, "server": figures.SERVER_CPU}[side]) if m else None

    def figure(self, case: str, masked: bool = False) -> str:
        """`0.52 µs (2.61 GB/s ±1.2%, n=15)`: a figure with its spread, for the argument."""
        m = (self.masked if masked else self.plain).get(case)
        if not m:
            return "not measured"
        s = m.summary("wall")
        us = m.micros_per_op("wall")
        rate = (f"{s.median / 1e9:.2f} GB/s" if s.median >= 1e9 else f"{s.median / 1e6:.0f} MB/s") \
            if m.unit == "bytes" else f"{s.median:,.0f}/s"
        return f"{_us(us)} ({rate} ±{s.ci_half_width * 100:.1f}%, n={s.n})"


@dataclass
class Point:
    """One line of advice and the numbers it rests on."""
    topic: str
    decision: str
    because: list[str] = field(default_factory=list)


@dataclass
class Advice:
    lib: str
    flavor: str
    version: str
    clients: str
    min_security: int
    aeads: list[Aead]
    equal_preference: list[Aead]        # BoringSSL/AWS-LC: the first AEADs as one [A|B] group
    prioritize_chacha: bool
    groups: list[Group]
    certs: list[CertType]
    sigalgs: list[str]
    points: list[Point]
    notes: list[str] = field(default_factory=list)

    @property
    def boringssl_family(self) -> bool:
        return is_bssl(self.flavor)

    @property
    def tls13_suites(self) -> list[str]:
        return [a.tls13 for a in self.aeads]

    def tls12_ciphers(self) -> list[str]:
        return [cipher for cert in self.certs for cipher in self._tls12_for(cert.key, self.aeads)]

    def cipher_string(self) -> str:
        """The TLS 1.2 cipher string; BoringSSL/AWS-LC get [A|B] equal-preference groups, which let a
        client without AES instructions pick ChaCha20 (as the BoringSSL-with-nginx write-up sets them up)."""
        if not (self.boringssl_family and self.equal_preference):
            return ":".join(dict.fromkeys(self.tls12_ciphers()))
        parts = []
        for cert in self.certs:
            group = self._tls12_for(cert.key, self.equal_preference)
            parts.append("[" + "|".join(group) + "]")
            parts += [c for c in self._tls12_for(cert.key, self.aeads) if c not in group]
        return ":".join(parts)

    @staticmethod
    def _tls12_for(key: str, aeads) -> list[str]:
        return [a.tls12_ecdsa if key == "ecdsa" else a.tls12_rsa for a in aeads]


Accepts = Callable[[str, str], bool]      # (key, value) → does the library accept it


def decide(evidence: Evidence, lib: str, flavor: str, version: str, clients: str = "mixed",
           min_security: int = 128, compat: bool = False, accepts: Accepts | None = None) -> Advice:
    """The settings for a server on `lib`, each argued from `evidence`."""
    accepts = accepts or (lambda _key, _value: True)
    points: list[Point] = []
    aeads, equal, prioritize = _aeads(evidence, flavor, clients, min_security, points)
    groups = _groups(evidence, min_security, accepts, points)
    certs = _certs(evidence, min_security, compat, points)
    sigalgs = [s for s, _key, bits in _ordered_sigalgs(certs) if bits >= min_security and accepts("sigalgs", s)]
    points.append(Point("signature algorithms", ":".join(sigalgs), [
        f"the certificate's own algorithm first ({', '.join(c.sigalg for c in certs)}); no SHA-1 or SHA-224; "
        f"nothing under the {min_security}-bit floor"]))
    points.append(Point("protocols", "TLS 1.2 and TLS 1.3 only", [
        "TLS 1.2 suites are all ECDHE with an AEAD: no static RSA key exchange (no forward secrecy), no DHE, "
        "no CBC, no SHA-1, no RC4/3DES/ECB"]))
    _resumption_points(evidence, lib, points)
    notes = [] if evidence.masked else [
        "note: ChaCha20 vs AES without AES instructions was not measured (CPU masks need x86); "
        "the AEAD order rests on this CPU alone"]
    return Advice(lib, flavor, version, clients, min_security, aeads, equal, prioritize, groups, certs, sigalgs,
                  points, notes)


def _aeads(evidence: Evidence, flavor: str, clients: str, floor: int, points: list[Point]):
    allowed = [a for a in AEADS if a.bits >= floor]
    measured = [a for a in allowed if evidence.micros(a.case) is not None]
    if not measured:
        raise ValueError("no AEAD was measured")
    server = sorted(measured, key=lambda a: evidence.micros(a.case))        # cheapest for this server first
    chacha = next((a for a in measured if a.name == "chacha20-poly1305"), None)
    aes = [a for a in measured if a is not chacha]
    because = ["this server: " + ", ".join(f"{a.label} {evidence.figure(a.case)}" for a in server)
               + f" per {TLS_RECORD}-byte record"]
    chacha_wins_without_aes = False
    if chacha and aes:
        fastest_aes = min(aes, key=lambda a: evidence.micros(a.case, masked=True) or float("inf"))
        masked_aes, masked_chacha = evidence.micros(fastest_aes.case, True), evidence.micros(chacha.case, True)
        if masked_aes and masked_chacha:
            chacha_wins_without_aes = masked_chacha < masked_aes
            because.append(f"a CPU without AES instructions (measured here with OPENSSL_ia32cap hiding AES-NI): "
                           f"{fastest_aes.label} {evidence.figure(fastest_aes.case, True)}, {chacha.label} "
                           f"{evidence.figure(chacha.case, True)}: ChaCha20 is "
                           + (f"{masked_aes / masked_chacha:.1f}× cheaper there" if chacha_wins_without_aes
                              else f"{masked_chacha / masked_aes:.1f}× dearer there too"))
        server_ratio = evidence.micros(chacha.case) / evidence.micros(server[0].case)
        if server[0] is not chacha:
            because.append(f"serving ChaCha20 costs this server {server_ratio:.1f}× the per-record CPU of "
                           f"{server[0].label}")
    order = list(server)
    prioritize = False
    if chacha and clients == "mobile" and chacha_wins_without_aes:
        order = [chacha] + [a for a in server if a is not chacha]
        decision = "ChaCha20-Poly1305 first: most clients lack AES instructions, and for them it is the cheap one"
    elif chacha and clients == "mixed" and chacha_wins_without_aes and order[0] is not chacha:
        prioritize = not is_bssl(flavor)
        decision = (f"{order[0].label} first for clients with AES hardware; clients that list ChaCha20 first "
                    "(those without) get ChaCha20 " + ("through PrioritizeChaCha" if prioritize
                                                       else "through an equal-preference group"))
    else:
        decision = f"{order[0].label} first: the cheapest for this server and for the clients named"
    equal: list[Aead] = []
    if is_bssl(flavor) and chacha and aes and chacha_wins_without_aes and clients != "desktop":
        first_aes = next(a for a in order if a is not chacha)
        equal = [chacha, first_aes] if order[0] is chacha else [first_aes, chacha]
    dropped = [a.label for a in AEADS if a.bits < floor]
    if dropped:
        because.append(f"{', '.join(dropped)} left out: under the {floor}-bit floor")
    because.append("AEADs only: no CBC (and so no SHA-1 MAC), no RC4, no 3DES, no ECB")
    points.append(Point("record cipher", decision + ". Order: " + ", ".join(a.label for a in order), because))
    return order, equal, prioritize


def _groups(evidence: Evidence, floor: int, accepts: Accepts, points: list[Point]) -> list[Group]:
    because, usable = [], []
    for g in GROUPS:
        cost = evidence.micros_sum(g.server_cases)
        if g.bits < floor or cost is None or not accepts("groups", g.tls_name):
            continue
        usable.append((g, cost))
    if not usable:
        raise ValueError(f"no key exchange group at or above {floor} bits was measured and accepted")
    classical = sorted([(g, c) for g, c in usable if not g.post_quantum], key=lambda gc: gc[1])
    # One hybrid: the cheapest that meets the floor; the others are named with their cost.
    hybrids = sorted([(g, c) for g, c in usable if g.post_quantum], key=lambda gc: gc[1])
    hybrid = hybrids[:1]
    cheapest = classical[0][1] if classical else None
    because.append("server CPU per key share (key generation + derivation): "
                   + ", ".join(f"{g.label} {_us(c)}" for g, c in classical))
    for g, c in hybrid:
        extra = f", {_us(c - cheapest)} more than {classical[0][0].label}" if cheapest is not None else ""
        because.append(f"{g.label}: {_us(c)} (adds ML-KEM encapsulation{extra}); first because it protects "
                       "today's traffic against a future quantum computer, a security gain worth its cost")
    for g, c in hybrids[1:]:
        because.append(f"{g.label} left out: {_us(c)}, and {hybrid[0][0].label} already gives post-quantum "
                       "protection at this floor")
    missing = [g.label for g in GROUPS if g.post_quantum and g.bits >= floor and all(g is not h for h, _ in hybrid)]
    if missing and not hybrid:
        because.append(f"no hybrid post-quantum group: this library has none "
                       f"({evidence.missing_reason.get(GROUPS[0].server_cases[-1], 'not accepted')})")
    dhe = evidence.micros_sum(DHE_CASES)
    if dhe is not None and cheapest is not None:
        because.append(f"no DHE: ffdhe2048 would cost {_us(dhe)} per handshake, {dhe / cheapest:.0f}× "
                       f"{classical[0][0].label}, for 112-bit security")
    ordered = [g for g, _ in hybrid] + [g for g, _ in classical]
    how = ("the hybrid first, then " if hybrid else "") + "cheapest for this server first"
    points.append(Point("key exchange groups", f"{':'.join(g.tls_name for g in ordered)} ({how})", because))
    return ordered


def _certs(evidence: Evidence, floor: int, compat: bool, points: list[Point]) -> list[CertType]:
    measured = [c for c in CERTS if evidence.micros(f"sig/{c.name}/sign") is not None]
    allowed = [c for c in measured if c.bits >= floor]
    if not allowed:
        raise ValueError(f"no certificate type at or above {floor} bits was measured")
    by_sign = sorted(allowed, key=lambda c: evidence.micros(f"sig/{c.name}/sign"))
    primary = by_sign[0]
    because = ["server CPU per full handshake (one signature): "
               + ", ".join(f"{c.label} {_us(evidence.micros(f'sig/{c.name}/sign'))}" for c in measured),
               "client CPU (one verification): "
               + ", ".join(f"{c.label} {_us(v)}" for c in measured
                           if (v := evidence.micros(f"sig/{c.name}/verify")) is not None)]
    certs = [primary]
    rsa = [c for c in by_sign if c.key == "rsa"]
    if primary.key == "rsa":
        decision = f"{primary.label}"
    else:
        worst_rsa = rsa[0] if rsa else None
        decision = primary.label
        if worst_rsa:
            ratio = evidence.micros(f"sig/{worst_rsa.name}/sign") / evidence.micros(f"sig/{primary.name}/sign")
            because.append(f"{primary.label} signs {ratio:.0f}× cheaper than {worst_rsa.label}; the server signs "
                           "once per full handshake, clients verify once per connection")
    if compat:
        if rsa and primary.key != "rsa":
            certs.append(rsa[0])
            decision += f" plus {rsa[0].label} for clients without ECDSA (dual certificates; the library " \
                        "picks one per client from its signature_algorithms)"
        else:
            because.append(f"no RSA certificate reaches the {floor}-bit floor at a practical size, so no dual "
                           "certificate")
    below = [c.label for c in measured if c.bits < floor]
    if below:
        because.append(f"{', '.join(below)} not offered: under the {floor}-bit floor (RSA-2048 is 112-bit)")
    points.append(Point("certificate", decision, because))
    return certs


def _ordered_sigalgs(certs: list[CertType]):
    own = [s for c in certs for s in SIGALGS if s[0] == c.sigalg]
    rest = [s for s in SIGALGS if s not in own and (s[1] != "rsa" or any(c.key == "rsa" for c in certs)
                                                     or s[0].startswith("rsa_pss"))]
    return list(dict.fromkeys(own + rest))


def _resumption_points(evidence: Evidence, lib: str, points: list[Point]) -> None:
    full, resumed = evidence.side_micros(TLS_FULL, "server"), evidence.side_micros(TLS_RESUMED, "server")
    because = []
    if full and resumed:
        because.append(f"server CPU: full TLS 1.3 handshake {_us(full)}, resumed with a ticket {_us(resumed)} "
                       f"({(1 - resumed / full) * 100:.0f}% less)")
    because.append("rotate ticket keys (and share them across a fleet) so tickets do not weaken forward secrecy")
    points.append(Point("session resumption", "on: tickets and a shared session cache", because))
    new, shared = evidence.side_micros(TLS_NEW_CTX, "client"), evidence.side_micros(TLS_FULL, "client")
    if new and shared:
        points.append(Point("client code", "create one SSL_CTX (with its CA store) and share it across connections", [
            f"on {lib}, a new SSL_CTX with a 151-certificate CA file per connection costs the client {_us(new)} "
            f"of CPU per handshake, a shared one {_us(shared)} ({new / shared:.1f}×; the curl 1.1.1 → 3.0 regression)"]))


def _us(us: float) -> str:
    if us >= 1000:
        return f"{us / 1000:,.2f} ms"
    return f"{us:,.1f} µs" if us >= 10 else f"{us:.2f} µs"
