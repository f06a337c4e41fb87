"""Whether to offer X25519MLKEM768 first, weighed from two measured full TLS 1.3 handshakes (ECDSA P-256 certificate,
shared context): one that negotiates the hybrid, one that negotiates X25519. Each is weighed by its CPU per
handshake (server and client side, every change asked of the verdict rule) and by the bytes each side sent, as the
connection recorded them (Measurement.negotiated); and the X25519 handshake is what a client without post-quantum
support costs. Where the hybrid handshake was not measured (runs stored before it was a case) decide.py argues from
primitive costs instead, and says so."""

from __future__ import annotations

from dataclasses import dataclass, field

from sslperf import figures, negotiation
from sslperf.recommend.costs import Evidence, micros_text
from sslperf.recommend.weigh import Cost, Tie, Weigh, beside, interval, times

HYBRID = "X25519MLKEM768"
CLASSIC = "X25519"
TLS_PQ = "tls/handshake/tls1.3/x25519mlkem768/ecdsa-p256/shared"
TLS_X25519 = "tls/handshake/tls1.3/x25519/ecdsa-p256/shared"
HANDSHAKES = (TLS_PQ, TLS_X25519)
SIDES = (("server", figures.SERVER_CPU), ("client", figures.CLIENT_CPU))


@dataclass
class HandshakeChoice:
    """What the two handshakes say about offering X25519MLKEM768 first."""
    first: bool                    # the hybrid is offered first
    decision: str                  # said in the point's decision, with both costs
    because: list[str] = field(default_factory=list)
    ties: list[Tie] = field(default_factory=list)


def measured(evidence: Evidence) -> bool:
    """Whether the hybrid handshake was measured (ok, or n/a: the library cannot do it): else the evidence predates
    it, or its measurement failed (`failed`), and the group order rests on primitive costs."""
    return TLS_PQ in evidence.plain or evidence.missing_status.get(TLS_PQ) == "n/a"


def refused(evidence: Evidence) -> str | None:
    """Why the library cannot do the hybrid handshake (its n/a reason), or None where it can."""
    if evidence.missing_status.get(TLS_PQ) != "n/a":
        return None
    return f"its {HYBRID} handshake is n/a here: {evidence.missing_reason[TLS_PQ]}"


def failed(evidence: Evidence) -> str | None:
    """`the X25519MLKEM768 handshake failed (reason)`, where its measurement ended in an error."""
    if evidence.missing_status.get(TLS_PQ) != "error":
        return None
    return f"the {HYBRID} handshake failed ({evidence.missing_reason[TLS_PQ]})"


def choice(evidence: Evidence, weigh: Weigh, first: bool, why_not: str | None,
           classical: list[str]) -> HandshakeChoice:
    """The X25519MLKEM768 point: offered first (`first`) or not (`why_not`, "not offered: …" or "not first: …": the
    library lacks it, the floor or the library's check leaves it out), with both handshakes' CPU and bytes.
    `classical`: the classical groups offered, in order (their TLS names), for what a client without post-quantum
    support negotiates."""
    pq, x25519 = evidence.measurement(TLS_PQ), evidence.measurement(TLS_X25519)
    because: list[str] = []
    ties: list[Tie] = []
    server = None
    if pq is not None and x25519 is not None:
        for side, figure in SIDES:
            line, change, what = _cpu_line(evidence, weigh, side, figure)
            because.append(line)
            if side == "server":
                server = change
                if change is None or change.verdict not in ("faster", "slower"):
                    ties.append(Tie(f"{HYBRID} handshake ({what})", f"{CLASSIC} handshake ({what})", change,
                                    f"{HYBRID} is offered first all the same: the post-quantum protection is the "
                                    "reason, not the speed"))
    elif pq is not None:
        because.append(f"CPU per handshake: {HYBRID} {_cpu_figures(evidence, TLS_PQ)}; the {CLASSIC} handshake was "
                       "not measured, so the two are not weighed")
    else:
        because.append(f"CPU per handshake: {CLASSIC} {_cpu_figures(evidence, TLS_X25519)}"
                       if x25519 is not None else f"the {CLASSIC} handshake was not measured")
    because.append(_bytes_line(evidence, pq, x25519))
    because.append(_without_pq(evidence, classical))
    if first:
        decision = f"{HYBRID} first: post-quantum protection for {_cost_words(evidence, server, pq, x25519)}"
    else:
        decision = f"{HYBRID} {why_not}" + (
            f" (it would cost {_cost_words(evidence, server, pq, x25519)})" if pq is not None else "")
    return HandshakeChoice(first, decision, because, ties)


def _handshake_cost(case: str, label: str, figure: str | None) -> Cost:
    """One handshake's CPU on one side (`figure`; None: its wall time), labelled as the sentence of what the two
    connections negotiated names it."""
    return Cost(f"the {label} handshake", (case,), figure=figure)


def _side_of(figure: str) -> str:
    return next(side for side, f in SIDES if f == figure)


def _sides_measured(evidence: Evidence, figure: str) -> bool:
    return all(evidence.side_micros(case, _side_of(figure)) for case in HANDSHAKES)


def _cpu_line(evidence: Evidence, weigh: Weigh, side: str, figure: str):
    """(a line, the verdict's change, what was weighed): one side's CPU per handshake of each, and the rule's word
    on the two. Where the sides' CPU was not recorded, the wall time of a handshake (both sides) stands in."""
    use = figure if _sides_measured(evidence, figure) else None
    if use is None and side == "client":
        return "client CPU per handshake not recorded (the line above is the wall time of both sides)", None, None
    what = f"{side} CPU" if use else "CPU of both sides (wall time)"
    pq, x25519 = (_micros(evidence, case, use) for case in HANDSHAKES)
    change = weigh.versus(_handshake_cost(TLS_PQ, HYBRID, use), _handshake_cost(TLS_X25519, CLASSIC, use))
    said = (f"{what} per full TLS 1.3 handshake (ECDSA P-256 certificate): {HYBRID} {micros_text(pq)}, {CLASSIC} "
            f"{micros_text(x25519)}: {verdict_words(weigh, change, use)}")
    tie = change is None or change.verdict not in ("faster", "slower")      # a Tie's text says it already
    return said + ("" if tie else beside(change)), change, what


def verdict_words(weigh: Weigh, change, figure: str | None) -> str:
    """The rule's word on the hybrid against X25519 (`change`: X25519 as the cheaper, the ratio the hybrid's cost
    over X25519's)."""
    if change is not None and change.verdict == "faster":
        return f"the hybrid costs {times(change)} {interval(change)} as much ({change.percent:+.0f}%)"
    if change is not None and change.verdict == "slower":
        back = weigh.versus(_handshake_cost(TLS_X25519, CLASSIC, figure), _handshake_cost(TLS_PQ, HYBRID, figure))
        return f"the hybrid costs less: {CLASSIC} costs {times(back)} {interval(back)} as much"
    return Tie(HYBRID, CLASSIC, change, "no CPU cost to weigh against the post-quantum protection").text()


def _micros(evidence: Evidence, case: str, figure: str | None) -> float | None:
    return evidence.side_micros(case, _side_of(figure)) if figure else evidence.micros(case)


def _cpu_figures(evidence: Evidence, case: str) -> str:
    said = [f"{side} {micros_text(v)}" for side, _f in SIDES if (v := evidence.side_micros(case, side))]
    return ", ".join(said) if said else f"{micros_text(evidence.micros(case))} (both sides, wall time)"


def _cost_words(evidence: Evidence, server, pq, x25519) -> str:
    """`1.16× [1.14, 1.17] the server CPU of an X25519 handshake (520 µs against 450 µs) and 2,264 B more on the
    wire per handshake (3,908 B against 1,644 B)`: both costs, each from the measurements."""
    if x25519 is None:
        cpu = f"{_cpu_figures(evidence, TLS_PQ)} of CPU per handshake ({CLASSIC}'s not measured)"
    else:
        use = figures.SERVER_CPU if _sides_measured(evidence, figures.SERVER_CPU) else None
        what = "server CPU" if use else "CPU (wall time)"
        pq_us, x_us = (micros_text(_micros(evidence, case, use)) for case in HANDSHAKES)
        pair = f"{pq_us} against {x_us}"
        if server is not None and server.verdict == "faster":
            cpu = f"{times(server)} {interval(server)} the {what} of an {CLASSIC} handshake ({pair})"
        elif server is not None and server.verdict == "slower":
            cpu = f"less {what} than an {CLASSIC} handshake ({pair}: the rule calls the hybrid cheaper)"
        else:
            cpu = f"no {what} the verdict rule tells apart from an {CLASSIC} handshake ({pair}: a tie)"
    a, b = _wire(pq), _wire(x25519)
    if a is None or (x25519 is not None and b is None):
        return cpu + " (bytes not recorded)"
    if x25519 is None:
        return cpu + f" and {a.wire_bytes:,} B on the wire per handshake"
    more = a.wire_bytes - b.wire_bytes
    return (cpu + f" and {abs(more):,} B {'more' if more >= 0 else 'fewer'} on the wire per handshake "
            f"({a.wire_bytes:,} B against {b.wire_bytes:,} B)")


def _wire(m) -> negotiation.Negotiated | None:
    """The negotiation `m` recorded, where it counted both sides' bytes."""
    n = negotiation.of(m) if m is not None else None
    return n if n is not None and n.wire_bytes is not None else None


def _sent(evidence: Evidence, label: str, case: str, m) -> str:
    n = _wire(m)
    if m is None:
        return f"{label} {evidence.missing_status.get(case, 'not measured')}"
    if n is None:
        return f"{label} bytes not recorded"
    return (f"{label} {n.client_bytes:,} B from the client and {n.server_bytes:,} B from the server "
            f"({n.wire_bytes:,} B)")


def _bytes_line(evidence: Evidence, pq, x25519) -> str:
    """Each handshake's bytes on the wire, both sides, and the difference."""
    said = (f"bytes on the wire per handshake: {_sent(evidence, HYBRID, TLS_PQ, pq)}; "
            f"{_sent(evidence, CLASSIC, TLS_X25519, x25519)}")
    a, b = _wire(pq), _wire(x25519)
    if a is None or b is None:
        return said
    client, server = a.client_bytes - b.client_bytes, a.server_bytes - b.server_bytes
    return (said + f": the hybrid's key shares add {a.wire_bytes - b.wire_bytes:+,} B per handshake "
            f"({client:+,} B from the client, {server:+,} B from the server)")


def _without_pq(evidence: Evidence, classical: list[str]) -> str:
    """What a client without post-quantum support costs: the X25519 handshake, and whether it takes a round trip
    more (a HelloRetryRequest)."""
    lead = "a client without post-quantum support"
    if not classical:
        return f"{lead} finds no classical group in the list and cannot connect"
    if CLASSIC not in classical:
        return (f"{lead} negotiates {classical[0]} (no handshake of it measured here); one that sends only an "
                f"{CLASSIC} key share gets a HelloRetryRequest, one round trip more, since {CLASSIC} is not in the "
                "list")
    m = evidence.measurement(TLS_X25519)
    if m is None:
        return (f"{lead} negotiates {CLASSIC} (its handshake not measured), with no extra round trip while "
                f"{CLASSIC} stays in the server's list")
    n = negotiation.of(m)
    wire = f"{n.wire_bytes:,} B on the wire" if n is not None and n.wire_bytes is not None else "bytes not recorded"
    said = (f"{lead} negotiates {CLASSIC}, as the {CLASSIC} handshake measured here: "
            f"{_cpu_figures(evidence, TLS_X25519)} of CPU, {wire} per handshake; ")
    if n is not None and n.hello_retry:
        return said + ("this run recorded a HelloRetryRequest in it, one round trip more; and no post-quantum "
                       "protection")
    recorded = " (as recorded)" if n is not None and n.hello_retry is False else ""
    return said + (f"no extra round trip while {CLASSIC} stays in the server's list (its {CLASSIC} key share is "
                   f"taken as sent: no HelloRetryRequest{recorded}), and no post-quantum protection")
