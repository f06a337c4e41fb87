"""`recommend --fips`: advice for a server that must run the FIPS provider.
The evidence is measured through the FIPS module, so what the module does
not offer is never measured and never advised (the library is asked, not a
list). What that costs is measured too: the AEAD a client without AES
instructions would have chosen, ChaCha20-Poly1305, against the AES-GCM it
must use instead, both on the library's default provider with AES-NI hidden."""

from __future__ import annotations

from sslperf.cases.ids import parts_of
from sslperf.recommend.decide import AEADS, Evidence, Point
from sslperf.recommend.weigh import Cost, Weigh, interval, times

CHACHA = next(a for a in AEADS if a.name == "chacha20-poly1305")
AES = next(a for a in AEADS if a.name == "aes-128-gcm")


def cost_cases() -> list[str]:
    """What the cost rests on: both AEADs, measured with AES-NI hidden on the default provider."""
    return [AES.case, CHACHA.case]


def refused(evidence: Evidence) -> dict[str, str]:
    """The cases the FIPS module did not offer, with the library's reason."""
    return {case: reason for case, reason in evidence.missing_reason.items() if "FIPS provider" in reason}


def cost_point(module: str, fips_evidence: Evidence, default_masked: Evidence | None) -> Point:
    """The FIPS point: what the module does not offer, and what clients without AES instructions pay."""
    gone = refused(fips_evidence)
    names = sorted({parts_of(case).get("algorithm") or case for case in gone})
    because = [f"{module}: asked through the library, the module does not offer "
               + (", ".join(names) if names else "anything the advice needed to leave out")]
    if default_masked is not None:
        aes, chacha = default_masked.micros(AES.case, True), default_masked.micros(CHACHA.case, True)
        if aes and chacha:
            change = Weigh(default_masked).versus(Cost(AES.label, (AES.case,), True),
                                                  Cost(CHACHA.label, (CHACHA.case,), True))
            because.append(f"a client without AES instructions (AES-NI hidden, default provider): {AES.label} "
                           f"{default_masked.figure(AES.case, True)} vs {CHACHA.label} "
                           f"{default_masked.figure(CHACHA.case, True)} per {AES.case.rsplit('/', 1)[1]}-byte record: "
                           f"without ChaCha20 such clients pay {times(change)} the record cost {interval(change)}")
    else:
        because.append("the cost for clients without AES instructions was not measured (CPU masks need x86)")
    decision = ("only what the FIPS module offers: "
                + ("no ChaCha20-Poly1305" if CHACHA.case in gone else "ChaCha20-Poly1305 included"))
    return Point("FIPS", decision, because)
