"""What a TLS measurement's connection negotiated: the protocol version, the key-exchange group, the cipher suite,
the server's signature scheme, whether the server asked for another key share (HelloRetryRequest), and the bytes
each side sent for the handshake. The harness reads them off the wire as IANA codepoints (harness/core/wire.c) and
records them beside the samples (Measurement.negotiated); this module is their one typed model and their names.

A pinned case (`tls/handshake/tls1.3/x25519/…`) negotiates what it names, and is checked to. A `default` case sets
nothing and negotiates each library's defaults, so two releases may do different work for one case id: every
output that compares two measurements says so beside the verdict (`difference`).

Plain data: this module imports nothing of sslperf's."""

from __future__ import annotations

from dataclasses import asdict, dataclass

# IANA TLS registries (the rows a harness may report; any other codepoint is shown in hex).
VERSIONS = {0x0304: "TLS 1.3", 0x0303: "TLS 1.2", 0x0302: "TLS 1.1", 0x0301: "TLS 1.0", 0xFEFC: "DTLS 1.3",
            0xFEFD: "DTLS 1.2", 0xFEFF: "DTLS 1.0"}
GROUPS = {0x0017: "secp256r1", 0x0018: "secp384r1", 0x0019: "secp521r1", 0x001D: "X25519", 0x001E: "X448",
          0x0100: "ffdhe2048", 0x0101: "ffdhe3072", 0x0200: "MLKEM512", 0x0201: "MLKEM768", 0x0202: "MLKEM1024",
          0x11EB: "SecP256r1MLKEM768", 0x11EC: "X25519MLKEM768", 0x11ED: "SecP384r1MLKEM1024",
          0x6399: "X25519Kyber768Draft00", 0: "none"}
SUITES = {0x1301: "TLS_AES_128_GCM_SHA256", 0x1302: "TLS_AES_256_GCM_SHA384", 0x1303: "TLS_CHACHA20_POLY1305_SHA256",
          0xC02B: "ECDHE-ECDSA-AES128-GCM-SHA256", 0xC02C: "ECDHE-ECDSA-AES256-GCM-SHA384",
          0xC02F: "ECDHE-RSA-AES128-GCM-SHA256", 0xC030: "ECDHE-RSA-AES256-GCM-SHA384",
          0xCCA9: "ECDHE-ECDSA-CHACHA20-POLY1305", 0xCCA8: "ECDHE-RSA-CHACHA20-POLY1305"}
SIGNATURES = {0x0401: "rsa_pkcs1_sha256", 0x0501: "rsa_pkcs1_sha384", 0x0601: "rsa_pkcs1_sha512",
              0x0403: "ecdsa_secp256r1_sha256", 0x0503: "ecdsa_secp384r1_sha384", 0x0603: "ecdsa_secp521r1_sha512",
              0x0804: "rsa_pss_rsae_sha256", 0x0805: "rsa_pss_rsae_sha384", 0x0806: "rsa_pss_rsae_sha512",
              0x0807: "ed25519", 0x0808: "ed448", 0x0809: "rsa_pss_pss_sha256", 0x0904: "mldsa44",
              0x0905: "mldsa65", 0x0906: "mldsa87", 0: "none"}
# The case ids' names of the groups and suites a pinned case can ask for (harness/core/tls_names.c).
CASE_GROUPS = {0x001D: "x25519", 0x0017: "p-256", 0x0018: "p-384", 0x11EC: "x25519mlkem768",
               0x11EB: "secp256r1mlkem768", 0x0201: "mlkem768"}
CASE_SUITES = {0x1301: "aes-128-gcm", 0x1302: "aes-256-gcm", 0x1303: "chacha20-poly1305",
               0xC02B: "aes-128-gcm", 0xC02F: "aes-128-gcm", 0xC02C: "aes-256-gcm", 0xC030: "aes-256-gcm",
               0xCCA9: "chacha20-poly1305", 0xCCA8: "chacha20-poly1305"}
DEFAULT = "default"          # the case ids' name for "set nothing: the library's own defaults"
CODEPOINTS = ("version", "group", "suite", "signature")
COUNTS = ("client_bytes", "server_bytes")


class BadNegotiation(ValueError):
    """A negotiated record that is not one: a field that is not a codepoint, a count or a flag."""


def _name(table: dict[int, str], code: int | None) -> str:
    if code is None:
        return "unknown"
    return table.get(code, f"0x{code:04x}")


@dataclass(frozen=True)
class Negotiated:
    version: int | None = None
    group: int | None = None              # 0: no key exchange (a resumption by PSK alone, or TLS 1.2's)
    suite: int | None = None
    signature: int | None = None          # 0: no signature (a resumption)
    hello_retry: bool | None = None
    client_bytes: int | None = None       # bytes the client sent for the handshake (records, headers and all)
    server_bytes: int | None = None       # bytes the server sent (with TLS 1.3 session tickets)

    @classmethod
    def from_dict(cls, data: dict) -> Negotiated:
        """Checked: codepoints 0..65535, counts ≥ 0, the flag a bool; unknown keys refused."""
        if not isinstance(data, dict):
            raise BadNegotiation(f"a negotiated record is an object, not {type(data).__name__}")
        unknown = set(data) - {*CODEPOINTS, *COUNTS, "hello_retry"}
        if unknown:
            raise BadNegotiation(f"unknown negotiated field(s): {', '.join(sorted(map(str, unknown)))}")
        for key in CODEPOINTS:
            value = data.get(key)
            if value is not None and (type(value) is not int or not 0 <= value <= 0xFFFF):
                raise BadNegotiation(f"negotiated {key} must be a codepoint 0..65535, not {value!r}")
        for key in COUNTS:
            value = data.get(key)
            if value is not None and (type(value) is not int or value < 0):
                raise BadNegotiation(f"negotiated {key} must be a count ≥ 0, not {value!r}")
        retry = data.get("hello_retry")
        if retry is not None and retry not in (0, 1):
            raise BadNegotiation(f"negotiated hello_retry must be true or false, not {retry!r}")
        return cls(**{**data, **({"hello_retry": bool(retry)} if retry is not None else {})})

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @property
    def version_name(self) -> str:
        return _name(VERSIONS, self.version)

    @property
    def group_name(self) -> str:
        return _name(GROUPS, self.group)

    @property
    def suite_name(self) -> str:
        return _name(SUITES, self.suite)

    @property
    def signature_name(self) -> str:
        return _name(SIGNATURES, self.signature)

    @property
    def wire_bytes(self) -> int | None:
        """Both sides' handshake bytes, when both were counted."""
        return None if self.client_bytes is None or self.server_bytes is None else \
            self.client_bytes + self.server_bytes

    def short(self) -> str:
        """The one short column of a table: the group, and HRR when there was one (the bytes are said where two
        connections differ: `difference`)."""
        return self.group_name + (" +HRR" if self.hello_retry else "")

    def describe(self) -> str:
        """Every field in one line: `TLS 1.3, X25519MLKEM768, TLS_AES_256_GCM_SHA384, ecdsa_secp256r1_sha256, no
        HelloRetryRequest, 1,290 B sent by the client / 2,845 B by the server`."""
        said = [self.version_name, f"group {self.group_name}", self.suite_name, f"signature {self.signature_name}"]
        if self.hello_retry is not None:
            said.append("a HelloRetryRequest" if self.hello_retry else "no HelloRetryRequest")
        if self.wire_bytes is not None:
            said.append(f"{self.client_bytes:,} B sent by the client / {self.server_bytes:,} B by the server")
        return ", ".join(said)

    def differs(self, other: Negotiated) -> list[str]:
        """The parameters (version, group, suite, signature, hello_retry) in which the two differ, where both
        are known."""
        keys = (*CODEPOINTS, "hello_retry")
        return [k for k in keys if getattr(self, k) is not None and getattr(other, k) is not None
                and getattr(self, k) != getattr(other, k)]


def recorded(reply: dict) -> dict | None:
    """The `negotiated` object of a harness reply, checked and as a Measurement keeps it (None: none, or not one —
    a harness is sslperf's own, so a malformed record is dropped rather than trusted)."""
    data = reply.get("negotiated") if isinstance(reply, dict) else None
    if not data:
        return None
    try:
        return Negotiated.from_dict(data).to_dict()
    except BadNegotiation:
        return None


def of(m) -> Negotiated | None:
    """The negotiation a measurement recorded (a results.Measurement, or anything with `negotiated`), or None."""
    data = getattr(m, "negotiated", None)
    if not data:
        return None
    try:
        return Negotiated.from_dict(data)
    except BadNegotiation:
        return None


def _what(n: Negotiated, key: str) -> str:
    return {"version": n.version_name, "group": n.group_name, "suite": n.suite_name,
            "signature": f"signature {n.signature_name}",
            "hello_retry": "a HelloRetryRequest" if n.hello_retry else "no HelloRetryRequest"}[key]


def difference(base, other, base_name: str | None = None, other_name: str | None = None) -> str | None:
    """One sentence when two measurements' connections negotiated different parameters, else None:
    "openssl-3.6.3 negotiates X25519MLKEM768 where openssl-3.0.8 negotiates X25519 (3,833 B on the wire where
    1,520 B)"."""
    a, b = of(base), of(other)
    if a is None or b is None:
        return None
    keys = a.differs(b)
    if not keys:
        return None
    first = base_name or getattr(base, "lib", "the baseline")
    second = other_name or getattr(other, "lib", "the other")
    if first == second:
        first, second = f"{first} (baseline)", f"{second} (this one)"
    wire = f" ({b.wire_bytes:,} B on the wire where {a.wire_bytes:,} B)" if None not in (a.wire_bytes, b.wire_bytes) \
        and a.wire_bytes != b.wire_bytes else ""
    return (f"{second} negotiates {', '.join(_what(b, k) for k in keys)} where {first} negotiates "
            f"{', '.join(_what(a, k) for k in keys)}{wire}")


def pinned_name(n: Negotiated, part: str) -> str | None:
    """The case-id name of what `n` negotiated for `part` ("group" or "suite"), when a pinned case can ask for it."""
    code = n.group if part == "group" else n.suite
    return (CASE_GROUPS if part == "group" else CASE_SUITES).get(code) if code is not None else None
