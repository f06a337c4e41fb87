"""One record per family of cases: the tables its results go in, in which
order, how a row is labelled, and which terminal table draws it. Every
output asks here instead of testing family names itself.

Plain data: this module imports nothing of sslperf's. What only the
harness's catalog knows (which of its ciphers are AEADs, the API topics'
titles) is added for measured cases by sslperf.cases.groups.

A label function takes a result (sslperf.results.Measurement: case, family,
algorithm, operation, size, workload, note) and a function that gives its
case id's named parts (measure.case_ids.parts_of: {"template":
"tls/handshake", "protocol": …}); only the TLS families call it (the parts
come from the harness's catalog, which an import need not load)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

AEAD_GROUP, BLOCK_GROUP = "AEAD ciphers", "block ciphers (CBC, CTR)"
TRANSFER_GROUP = "TLS bulk transfer (in memory)"
TRANSFER_TCP_GROUP = "TLS bulk transfer over loopback TCP"
API_PREFIX = "API: "
_AEAD_NAME = re.compile(r"gcm|ccm|ocb|siv|poly1305")


@dataclass(frozen=True)
class Family:
    name: str
    groups: tuple[str, ...]          # its tables, in display order (API topics come from the catalog)
    table: str                       # terminal table: rates | api | tls | loopback | threads (see table_of)
    throughput: bool = False         # rates are bytes/s (sizes on the x axis)
    label: Callable[[object, Callable[[], dict]], str] | None = None
    # All of a sample's work is on the CPU, in the one process that times it (no kernel offload, no peer, no
    # threads): its CPU time is its wall time less what it waited for the CPU, the basis left when the CPU is shared.
    on_cpu: bool = False


def _values(parts: dict, *names: str) -> str:
    """The named parts' values that the id has, in order, joined by spaces."""
    return " ".join(str(parts[n]) for n in names if parts.get(n) is not None)


def _kind(parts: dict) -> str:
    """The last literal segment of the id's template: handshake, resume, loopback, quic …"""
    return str(parts.get("template", "")).rsplit("/", 1)[-1]


def _tls_label(m, parts) -> str:
    p = parts()
    return f"{_kind(p)} {_values(p, 'protocol', 'resumption', 'group', 'suite', 'cert', 'size', 'context')}"


def _request_label(m, parts) -> str:
    p = parts()
    quic = _kind(p).startswith("quic")
    return ("QUIC GET " if quic else "GET ") + _values(p, "protocol", "group", "suite", "cert", "size", "client",
                                                       "kernel", "path")


def _memory_label(m, parts) -> str:
    p = parts()
    return ("QUIC " if _kind(p) == "quic-memory" else "") + _values(p, "protocol", "group", "cert")


def _primitive_label(m, parts=None) -> str:
    """`aes-128-gcm encrypt 16 B [speed-compat]`."""
    parts = [m.algorithm, "" if m.family in ("digest", "mac", "keygen") else m.operation]
    if m.size is not None:
        parts.append(f"{m.size} B")
    if m.workload != "record":
        parts.append(f"[{m.workload}]")
    return " ".join(p for p in parts if p)


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("cipher", (AEAD_GROUP, BLOCK_GROUP), "rates", throughput=True, on_cpu=True),
    Family("digest", ("digests",), "rates", throughput=True, on_cpu=True),
    Family("mac", ("MACs",), "rates", throughput=True, on_cpu=True),
    Family("sig", ("signatures",), "rates", on_cpu=True),
    Family("kex", ("key exchange",), "rates", on_cpu=True),
    Family("kem", ("KEMs",), "rates", on_cpu=True),
    Family("keygen", ("key generation",), "rates", on_cpu=True),
    Family("pke", ("public-key encryption",), "rates"),              # RSA encrypt/decrypt, from imports only
    Family("api", (), "api", label=lambda m, p: m.operation, on_cpu=True),     # the pattern; the group names the topic
    Family("tls", ("TLS handshakes (in memory)", "TLS resumption (in memory)", TRANSFER_GROUP), "tls",
           label=_tls_label, on_cpu=True),
    Family("tls-loopback", ("TLS over loopback (HTTPS GET)", TRANSFER_TCP_GROUP), "loopback", label=_request_label),
    Family("tls-memory", ("TLS memory per connection",), "memory", label=_memory_label),
    Family("tls-serve", ("Real servers under load (wrk against nginx, HAProxy)",), "serve",
           label=lambda m, parts: _values(parts(), "server", "scenario", "protocol", "group", "cert")),
    Family("afalg", ("Kernel crypto (AF_ALG) and the library, per request size",), "rates", throughput=True),
    Family("exec", ("Your program, run against each library",), "exec", label=lambda m, p: m.algorithm),
    Family("threads", ("Across threads (rate per thread count; scaling efficiency)",), "threads",
           label=lambda m, p: f"{m.algorithm} [{m.note}]: {m.operation}"),
)}
OTHER = Family("other", ("other operations",), "rates")


def family(name: str) -> Family:
    return FAMILIES.get(name, OTHER)


def cipher_group(algorithm: str) -> str:
    """AEAD or block cipher, by the mode in the name (imported names; measured
    ciphers are also checked against the catalog's list, measure.groups)."""
    return AEAD_GROUP if _AEAD_NAME.search(algorithm) else BLOCK_GROUP


def tls_group(family_name: str, parts: dict) -> str:
    """TLS in memory (handshakes, resumption or bulk transfer) or over loopback (requests or bulk
    transfer), by the kind of case its template names."""
    second = {"resume": 1, "transfer": 2, "transfer-tcp": 1, "quic-transfer": 1}
    return FAMILIES[family_name].groups[second.get(_kind(parts), 0)]


def table_of(group: str, family_name: str) -> str:
    """The terminal table that draws a group: its family's, but bulk transfer has its own."""
    return "transfer" if group in (TRANSFER_GROUP, TRANSFER_TCP_GROUP) else family(family_name).table


def label(m, parts: Callable[[], dict]) -> str:
    """A row label for tables, from the result and (when its family needs them) its case id's named parts."""
    return (family(m.family).label or _primitive_label)(m, parts)


def _group_key(group: str) -> tuple[int, int]:
    for index, fam in enumerate(FAMILIES.values()):
        if group in fam.groups:
            return index, fam.groups.index(group)
        if fam.name == "api" and group.startswith(API_PREFIX):
            return index, 0
    return len(FAMILIES), 0


def ordered(groups: Iterable[str]) -> list[str]:
    """Table titles in display order (primitives, API topics, TLS); others last, as given."""
    return sorted(groups, key=_group_key)
