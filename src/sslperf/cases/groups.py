"""The table a measured case's results go in: its family's record
(sslperf.families), with what only the harness's catalog knows — which of
its ciphers are AEADs, and each API topic's title."""

from __future__ import annotations

from sslperf import families
from sslperf.cases import catalog


def group_of(case) -> str:
    """The table of `case` (a case_ids.Case)."""
    if case.family == "cipher":
        return families.AEAD_GROUP if case.algorithm in catalog.aeads() else families.cipher_group(case.algorithm)
    if case.family == "api":
        topic = f"api/{case.part('topic')}"
        return families.API_PREFIX + next(e["title"] for e in catalog.api_cases() if e["topic"] == topic)
    if case.family in ("tls", "tls-loopback"):
        return families.tls_group(case.family, case.parts)
    return families.family(case.family).groups[0]
