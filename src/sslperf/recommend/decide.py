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
from sslperf.recommend import groups as pq_groups
from sslperf.recommend.costs import Evidence, micros_text
from sslperf.recommend.weigh import Cost, Tie, Weigh, beside, interval, less, noise_warnings, times

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
    plain += [TLS_FULL, TLS_NEW_CTX, TLS_RESUMED, *pq_groups.HANDSHAKES]
    return list(dict.fromkeys(plain)), [a.case for a in AEADS]


@dataclass
class Point:
    """One line of advice and the numbers it rests on."""
    topic: str
    decision: str
    because: list[str] = field(default_factory=list)
    ties: list[Tie] = field(default_factory=list)     # neighbours in its order the verdict rule did not tell apart


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
    warnings: list[str] = field(default_factory=list)     # what weakens the evidence (noise), said first

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
    """The settings for a server on `lib`, each argued from `evidence`: every order between two measured options
    is the verdict rule's (weigh.py), ties ordered by a stated rule."""
    accepts = accepts or (lambda _key, _value: True)
    weigh = Weigh(evidence)
    points: list[Point] = []
    aeads, equal, prioritize = _aeads(evidence, weigh, flavor, clients, min_security, points)
    groups = _groups(evidence, weigh, min_security, accepts, points)
    certs = _certs(evidence, weigh, min_security, compat, points)
    sigalgs = [s for s, _key, bits in _ordered_sigalgs(certs) if bits >= min_security and accepts("sigalgs", s)]
    points.append(Point("signature algorithms", ":".join(sigalgs), [
        f"the certificate's own algorithm first ({', '.join(c.sigalg for c in certs)}); no SHA-1 or SHA-224; "
        f"nothing under the {min_security}-bit floor"]))
    points.append(Point("protocols", "TLS 1.2 and TLS 1.3 only", [
        "TLS 1.2 suites are all ECDHE with an AEAD: no static RSA key exchange (no forward secrecy), no DHE, "
        "no CBC, no SHA-1, no RC4/3DES/ECB"]))
    _resumption_points(evidence, weigh, lib, points)
    notes = [] if evidence.masked else [
        "note: ChaCha20 vs AES without AES instructions was not measured (CPU masks need x86); "
        "the AEAD order rests on this CPU alone"]
    return Advice(lib, flavor, version, clients, min_security, aeads, equal, prioritize, groups, certs, sigalgs,
                  points, notes, noise_warnings(evidence))


# What orders options the verdict rule does not tell apart: the larger security margin, then the usual preference.
def _preference(table: tuple) -> Callable:
    return lambda option: (-option.bits, table.index(option))


def _tie_rule(usual: str) -> Callable:
    def rule(first, second) -> str:
        if first.bits != second.bits:
            return f"ordered by security margin ({first.label}, {first.bits}-bit, first)"
        return f"ordered by the usual preference ({first.label} before {second.label}: {usual})"
    return rule


def _ordered(options: list, ties: list[Tie]) -> str:
    """`A ~ B, C`: an order with its ties marked."""
    tied = {(t.first, t.second) for t in ties} | {(t.second, t.first) for t in ties}
    text = options[0].label if options else ""
    for first, second in zip(options, options[1:]):
        text += (" ~ " if (first.label, second.label) in tied else ", ") + second.label
    return text


def _as_cheap(change) -> str:
    """`60× [48, 75] cheaper than` where the rule calls it cheaper, else that the two are not told apart."""
    if change is not None and change.verdict == "faster":
        return f"{times(change)} cheaper {interval(change)} than"
    return f"about as cheaply ({times(change)} {interval(change)}: not told apart) as"


def _aead_cost(aead: Aead, masked: bool = False) -> Cost:
    return Cost(aead.label + (" (AES-NI hidden)" if masked else ""), (aead.case,), masked)


def _aeads(evidence: Evidence, weigh: Weigh, flavor: str, clients: str, floor: int, points: list[Point]):
    allowed = [a for a in AEADS if a.bits >= floor]
    measured = [a for a in allowed if evidence.micros(a.case) is not None]
    if not measured:
        raise ValueError("no AEAD was measured")
    server, ties = weigh.rank(measured, _aead_cost, _preference(AEADS),
                              _tie_rule("AES-GCM is the cheaper one for clients with AES hardware, most of them"))
    chacha = next((a for a in measured if a.name == "chacha20-poly1305"), None)
    aes = [a for a in measured if a is not chacha]
    because = ["this server: " + ", ".join(f"{a.label} {evidence.figure(a.case)}" for a in server)
               + f" per {TLS_RECORD}-byte record"]
    because += [t.text() for t in ties]
    chacha_wins_without_aes = False
    masked_aes = [a for a in aes if evidence.micros(a.case, True)]
    if chacha and masked_aes and evidence.micros(chacha.case, True):
        # Against the AES-GCM cheapest there by its median: ChaCha20 called cheaper than it is cheaper than both.
        fastest_aes = min(masked_aes, key=lambda a: evidence.micros(a.case, True))
        without = weigh.versus(_aead_cost(fastest_aes, True), _aead_cost(chacha, True))
        chacha_wins_without_aes = without is not None and without.verdict == "faster"
        lead = (f"a CPU without AES instructions (measured here with OPENSSL_ia32cap hiding AES-NI): "
                f"{fastest_aes.label} {evidence.figure(fastest_aes.case, True)}, {chacha.label} "
                f"{evidence.figure(chacha.case, True)}: ")
        if chacha_wins_without_aes:
            because.append(lead + f"ChaCha20 is {times(without)} cheaper there {interval(without)}")
        elif without is not None and without.verdict == "slower":
            dearer = weigh.versus(_aead_cost(chacha, True), _aead_cost(fastest_aes, True))
            because.append(lead + f"ChaCha20 is {times(dearer)} dearer there too {interval(dearer)}")
        else:
            because.append(lead + Tie(chacha.label, fastest_aes.label, without,
                                      "ChaCha20 is not put ahead for such clients on a tie").text())
    if chacha and aes and server[0] is not chacha:
        change = weigh.versus(_aead_cost(chacha), _aead_cost(server[0]))
        because.append(f"serving ChaCha20 costs this server {times(change)} {interval(change)} the per-record CPU "
                       f"of {server[0].label}")
    order = list(server)
    prioritize = False
    tied_first = bool(ties) and ties[0].first == server[0].label
    if chacha and clients == "mobile" and chacha_wins_without_aes:
        order = [chacha] + [a for a in server if a is not chacha]
        decision = "ChaCha20-Poly1305 first: most clients lack AES instructions, and for them it is the cheap one"
    elif chacha and clients == "mixed" and chacha_wins_without_aes and order[0] is not chacha:
        prioritize = not is_bssl(flavor)
        decision = (f"{order[0].label} first for clients with AES hardware; clients that list ChaCha20 first "
                    "(those without) get ChaCha20 " + ("through PrioritizeChaCha" if prioritize
                                                       else "through an equal-preference group"))
    elif tied_first:
        decision = (f"{order[0].label} first: tied with {ties[0].second} as the cheapest for this server, "
                    f"{ties[0].rule}")
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
    points.append(Point("record cipher", decision + ". Order: " + _ordered(order, ties), because, ties))
    return order, equal, prioritize


def _group_cost(group: Group) -> Cost:
    return Cost(group.label, group.server_cases)


def _groups(evidence: Evidence, weigh: Weigh, floor: int, accepts: Accepts, points: list[Point]) -> list[Group]:
    """The groups in order: one hybrid first where it is offered, then the classical ones cheapest first. Whether
    X25519MLKEM768 goes first is weighed from its measured handshake against X25519's (groups.py); where the runs
    predate that case, from the primitive costs, said so."""
    handshakes, lacks = pq_groups.measured(evidence), pq_groups.refused(evidence)
    shaken = pq_groups.TLS_PQ in evidence.plain
    usable = [g for g in GROUPS if g.bits >= floor and accepts("groups", g.tls_name)
              and not (g.tls_name == pq_groups.HYBRID and lacks)
              and (evidence.micros_sum(g.server_cases) is not None or (g.tls_name == pq_groups.HYBRID and shaken))]
    if not usable:
        raise ValueError(f"no key exchange group at or above {floor} bits was measured and accepted")
    rule = _tie_rule("X25519 is the group clients offer first")
    classical, ties = weigh.rank([g for g in usable if not g.post_quantum], _group_cost, _preference(GROUPS), rule)
    # One hybrid: the cheapest that meets the floor; the others are named with their cost.
    hybrids, hybrid_ties = weigh.rank([g for g in usable if g.post_quantum], _group_cost, _preference(GROUPS), rule)
    hybrid = hybrids[:1]
    cost = lambda g: evidence.micros_sum(g.server_cases)        # noqa: E731
    cheapest = classical[0] if classical else None
    because = ["server CPU per key share (key generation + derivation): "
               + ", ".join(f"{g.label} {micros_text(cost(g))}" for g in classical)]
    because += [t.text() for t in ties]
    weighed = None
    if handshakes:
        pq = next(g for g in GROUPS if g.tls_name == pq_groups.HYBRID)
        weighed = pq_groups.choice(evidence, weigh, bool(hybrid) and hybrid[0] is pq,
                                   _why_not(pq, hybrid, usable, lacks, floor), [g.tls_name for g in classical])
        because += weighed.because
    for g in hybrid:
        if weighed is not None and g.tls_name == pq_groups.HYBRID:
            continue
        extra = f", {micros_text(cost(g) - cost(cheapest))} more than {cheapest.label}" if cheapest else ""
        because.append(f"{g.label}: {micros_text(cost(g))} (adds ML-KEM encapsulation{extra}); first because it "
                       "protects today's traffic against a future quantum computer, a security gain worth its cost"
                       + ("" if handshakes else f" (from primitive costs: {_unweighed(evidence)})"))
    because += [t.text() for t in hybrid_ties[:1]]
    for g in hybrids[1:]:
        because.append(f"{g.label} left out: {_key_share(evidence, g)}, and {hybrid[0].label} already gives "
                       "post-quantum protection at this floor")
    missing = [g.label for g in GROUPS if g.post_quantum and g.bits >= floor and g not in hybrid]
    if missing and not hybrid and weighed is None:
        because.append(f"no hybrid post-quantum group: this library has none "
                       f"({evidence.missing_reason.get(GROUPS[0].server_cases[-1], 'not accepted')})")
    dhe = evidence.micros_sum(DHE_CASES)
    if dhe is not None and cheapest is not None:
        change = weigh.versus(Cost("ffdhe2048", DHE_CASES), _group_cost(cheapest))
        because.append(f"no DHE: ffdhe2048 would cost {micros_text(dhe)} per handshake, {times(change)} "
                       f"{cheapest.label} {interval(change)}, for 112-bit security")
    ordered = hybrid + classical
    how = ("the hybrid first, then " if hybrid and weighed is None else "") + "cheapest for this server first"
    if weighed is not None:
        other_hybrid = f"{hybrid[0].label} first, then " if hybrid and not weighed.first else ""
        how = weighed.decision + ("; then " if weighed.first else "; " + other_hybrid) + how
    if ties:
        how += "; tied (~, by the rule below): " + _ordered(classical, ties)
    points.append(Point("key exchange groups", f"{':'.join(g.tls_name for g in ordered)} ({how})", because,
                        ties + hybrid_ties[:1] + (weighed.ties if weighed else [])))
    return ordered


def _unweighed(evidence: Evidence) -> str:
    """Why the hybrid's handshake was not weighed: it failed, or the runs predate the case."""
    return pq_groups.failed(evidence) or f"no {pq_groups.HYBRID} handshake was measured in these runs"


def _key_share(evidence: Evidence, group: Group) -> str:
    cost = evidence.micros_sum(group.server_cases)
    return micros_text(cost) if cost is not None else "its key share not measured"


def _why_not(pq: Group, hybrid: list[Group], usable: list[Group], lacks: str | None, floor: int) -> str | None:
    """Why X25519MLKEM768 is not offered first (None where it is)."""
    if hybrid and hybrid[0] is pq:
        return None
    if lacks:
        return f"not offered: this library cannot negotiate it ({lacks})"
    if pq.bits < floor:
        return f"not offered: its classical part is {pq.bits}-bit, under the {floor}-bit floor"
    if pq not in usable:
        return "not offered: the library does not accept it as a group (or its key share was not measured)"
    return f"not first: {hybrid[0].label} is the hybrid offered at this floor"


def _sign_cost(cert: CertType) -> Cost:
    return Cost(cert.label, (f"sig/{cert.name}/sign",))


def _certs(evidence: Evidence, weigh: Weigh, floor: int, compat: bool, points: list[Point]) -> list[CertType]:
    measured = [c for c in CERTS if evidence.micros(f"sig/{c.name}/sign") is not None]
    allowed = [c for c in measured if c.bits >= floor]
    if not allowed:
        raise ValueError(f"no certificate type at or above {floor} bits was measured")
    by_sign, ties = weigh.rank(allowed, _sign_cost, _preference(CERTS),
                               _tie_rule("ECDSA keeps handshakes small, and smaller RSA keys cost less"))
    primary = by_sign[0]
    because = ["server CPU per full handshake (one signature): "
               + ", ".join(f"{c.label} {micros_text(evidence.micros(f'sig/{c.name}/sign'))}" for c in measured),
               "client CPU (one verification): "
               + ", ".join(f"{c.label} {micros_text(v)}" for c in measured
                           if (v := evidence.micros(f"sig/{c.name}/verify")) is not None)]
    tied = [t for t in ties if t.first == primary.label]
    because += [t.text() for t in tied]
    certs = [primary]
    rsa = [c for c in by_sign if c.key == "rsa"]
    decision = primary.label + (f" (~ {tied[0].second}: tied as the cheapest signer, see below)" if tied else "")
    if primary.key != "rsa" and rsa:
        change = weigh.versus(_sign_cost(rsa[0]), _sign_cost(primary))
        because.append(f"{primary.label} signs {_as_cheap(change)} {rsa[0].label}; the server "
                       "signs once per full handshake, clients verify once per connection")
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
    points.append(Point("certificate", decision, because, tied))
    return certs


def _ordered_sigalgs(certs: list[CertType]):
    own = [s for c in certs for s in SIGALGS if s[0] == c.sigalg]
    rest = [s for s in SIGALGS if s not in own and (s[1] != "rsa" or any(c.key == "rsa" for c in certs)
                                                     or s[0].startswith("rsa_pss"))]
    return list(dict.fromkeys(own + rest))


def _side_cost(case: str, side: str, label: str) -> Cost:
    """A TLS case's CPU on one side, labelled as a sentence names it (what the two connections negotiated)."""
    return Cost(label, (case,), figure={"client": figures.CLIENT_CPU, "server": figures.SERVER_CPU}[side])


def _resumption_points(evidence: Evidence, weigh: Weigh, lib: str, points: list[Point]) -> None:
    full, resumed = evidence.side_micros(TLS_FULL, "server"), evidence.side_micros(TLS_RESUMED, "server")
    because = []
    if full and resumed:
        change = weigh.versus(_side_cost(TLS_FULL, "server", "the full handshake"),
                              _side_cost(TLS_RESUMED, "server", "the resumed one"))
        because.append(f"server CPU: full TLS 1.3 handshake {micros_text(full)}, resumed with a ticket "
                       f"{micros_text(resumed)} ({less(change)})" + beside(change))
    because.append("rotate ticket keys (and share them across a fleet) so tickets do not weaken forward secrecy")
    points.append(Point("session resumption", "on: tickets and a shared session cache", because))
    new, shared = evidence.side_micros(TLS_NEW_CTX, "client"), evidence.side_micros(TLS_FULL, "client")
    if new and shared:
        change = weigh.versus(_side_cost(TLS_NEW_CTX, "client", "a new SSL_CTX's handshake"),
                              _side_cost(TLS_FULL, "client", "a shared one's"))
        points.append(Point("client code", "create one SSL_CTX (with its CA store) and share it across connections", [
            f"on {lib}, a new SSL_CTX with a 151-certificate CA file per connection costs the client "
            f"{micros_text(new)} of CPU per handshake, a shared one {micros_text(shared)} ({times(change)} "
            f"{interval(change)}; the curl 1.1.1 → 3.0 regression)" + beside(change)]))
