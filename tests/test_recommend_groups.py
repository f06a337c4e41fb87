"""`recommend` weighs offering X25519MLKEM768 first from two measured handshakes (recommend/groups.py): the CPU per
handshake of each, judged by the verdict rule, and the bytes each side sent as the connection recorded them; and
what a client without post-quantum support costs. Measurements are synthetic (test_recommend_verdicts.py's, with
what each connection negotiated), so the verdicts are known."""

import re

from test_recommend_verdicts import LIB, NOISY, NOISY_OTHER, evidence, point, quiet, result

from sslperf.measure import suites
from sslperf.recommend import decide, groups
from sslperf.recommend.snippets import as_dict, text
from sslperf.results import Measurement

X25519, HYBRID, P256_SIG = 0x001D, 0x11EC, 0x0403


def negotiated(group: int, client: int | None, server: int | None, signature: int = P256_SIG) -> dict:
    sent = {} if client is None else {"client_bytes": client, "server_bytes": server}
    return {"version": 0x0304, "group": group, "suite": 0x1301, "signature": signature, "hello_retry": False, **sent}


def handshakes(pq_server=520.0, pq_client=610.0, pq_bytes=(1398, 2510), x_bytes=(222, 1422),
               pq_jitter=None, x_jitter=None) -> dict:
    """The two handshakes (X25519 as decide.TLS_FULL measures it: 450 µs server, 400 µs client)."""
    pq = result(groups.TLS_PQ, pq_server + pq_client, pq_jitter or quiet(7), client=pq_client, server=pq_server)
    x = result(groups.TLS_X25519, 850.0, x_jitter or quiet(1), client=400.0, server=450.0)
    pq.negotiated = negotiated(HYBRID, *pq_bytes)
    x.negotiated = negotiated(X25519, *x_bytes)
    return {groups.TLS_PQ: pq, groups.TLS_X25519: x}


def groups_point(advice):
    return point(advice, "key exchange groups")


def test_recommend_measures_both_handshakes():
    plain, _ = decide.needed_cases(128)
    assert groups.TLS_PQ in plain and groups.TLS_X25519 in plain
    assert suites.parse_case(groups.TLS_PQ).algorithm == "x25519mlkem768 ecdsa-p256"


def test_the_hybrid_goes_first_with_both_handshakes_cpu_and_bytes_and_the_classical_client_cost():
    advice = decide.decide(evidence(handshakes()), LIB, "openssl", "OpenSSL test")
    said = groups_point(advice)
    because = " ".join(said.because)
    assert [g.tls_name for g in advice.groups][0] == "X25519MLKEM768"
    # The decision states both costs: the verdict rule's ratio of server CPU with its CI, and the bytes.
    assert re.search(r"X25519MLKEM768 first: post-quantum protection for 1\.16× \[1\.1\d, 1\.1\d\] the server CPU "
                     r"of an X25519 handshake \(520\.0 µs against 450\.0 µs\) and 2,264 B more on the wire per "
                     r"handshake \(3,908 B against 1,644 B\); then cheapest for this server first", said.decision), \
        said.decision
    assert re.search(r"server CPU per full TLS 1\.3 handshake \(ECDSA P-256 certificate\): X25519MLKEM768 520\.0 µs, "
                     r"X25519 450\.0 µs: the hybrid costs 1\.16× \[1\.1\d, 1\.1\d\] as much \(\+16%\)", because)
    assert re.search(r"client CPU per full TLS 1\.3 handshake .*X25519MLKEM768 610\.0 µs, X25519 400\.0 µs: the "
                     r"hybrid costs 1\.53× \[1\.5\d, 1\.5\d\] as much \(\+53%\)", because)
    # Beside the comparison: the two connections negotiated different groups (Change.parameters).
    assert ("(the X25519 handshake negotiates X25519 where the X25519MLKEM768 handshake negotiates "
            "X25519MLKEM768 (1,644 B on the wire where 3,908 B))") in because
    assert ("bytes on the wire per handshake: X25519MLKEM768 1,398 B from the client and 2,510 B from the server "
            "(3,908 B); X25519 222 B from the client and 1,422 B from the server (1,644 B): the hybrid's key shares "
            "add +2,264 B per handshake (+1,176 B from the client, +1,088 B from the server)") in because
    assert ("a client without post-quantum support negotiates X25519, as the X25519 handshake measured here: server "
            "450.0 µs, client 400.0 µs of CPU, 1,644 B on the wire per handshake; no extra round trip while X25519 "
            "stays in the server's list (its X25519 key share is taken as sent: no HelloRetryRequest (as "
            "recorded)), and no post-quantum protection") in because
    assert "from primitive costs" not in because
    printed = " ".join(text(advice).split())          # the text output, its wrapping undone
    assert "X25519MLKEM768 first: post-quantum protection for 1.16×" in printed
    assert "the hybrid's key shares add +2,264 B per handshake" in printed
    data = as_dict(advice, evidence(handshakes()))
    assert data["negotiated"][groups.TLS_PQ]["client_bytes"] == 1398 and data["groups"][0] == "X25519MLKEM768"


def test_a_library_without_the_hybrid_gets_the_reason_and_the_x25519_handshake():
    why = "the client cannot be set up for group x25519mlkem768"
    lacking = {c: Measurement.of(suites.parse_case(c), LIB, "n/a", "OpenSSL 3.0 has no ML-KEM")
               for c in ("kem/ml-kem-768/encaps", "kem/ml-kem-1024/encaps")}
    lacking[groups.TLS_PQ] = Measurement.of(suites.parse_case(groups.TLS_PQ), LIB, "n/a", why)
    lacking[groups.TLS_X25519] = handshakes()[groups.TLS_X25519]
    advice = decide.decide(evidence(lacking), LIB, "openssl", "OpenSSL 3.0 test")
    said = groups_point(advice)
    assert not any(g.post_quantum for g in advice.groups)
    assert (f"X25519MLKEM768 not offered: this library cannot negotiate it (its X25519MLKEM768 handshake is n/a "
            f"here: {why}); cheapest for this server first") in said.decision
    because = " ".join(said.because)
    assert "CPU per handshake: X25519 server 450.0 µs, client 400.0 µs" in because
    assert "bytes on the wire per handshake: X25519MLKEM768 n/a; X25519 222 B from the client" in because
    assert "a client without post-quantum support negotiates X25519, as the X25519 handshake measured here" in because


def test_the_hybrid_refused_while_its_primitives_work_is_left_out_with_the_reason():
    """ML-KEM in the crypto library but no TLS group: the handshake's n/a decides, not the primitive costs."""
    gone = {groups.TLS_PQ: Measurement.of(suites.parse_case(groups.TLS_PQ), LIB, "n/a", "no such group in this libssl")}
    advice = decide.decide(evidence(gone), LIB, "openssl", "OpenSSL test", accepts=lambda k, v: "MLKEM1024" not in v)
    said = groups_point(advice)
    assert "X25519MLKEM768" not in [g.tls_name for g in advice.groups]
    assert "not offered: this library cannot negotiate it (its X25519MLKEM768 handshake is n/a here: no such group " \
           "in this libssl)" in said.decision


def test_a_tie_on_cpu_is_said_and_the_hybrid_still_goes_first():
    """The same server cost, ±30% in the same processes: the rule calls no difference, and says so."""
    tie = handshakes(pq_server=450.0, pq_client=400.0, pq_jitter=NOISY, x_jitter=NOISY_OTHER)
    tie[decide.TLS_FULL] = tie[groups.TLS_X25519]
    advice = decide.decide(evidence(tie), LIB, "openssl", "OpenSSL test")
    said = groups_point(advice)
    assert advice.groups[0].tls_name == "X25519MLKEM768"
    assert re.search(r"X25519MLKEM768 first: post-quantum protection for no server CPU the verdict rule tells apart "
                     r"from an X25519 handshake \(\d+\.\d µs against \d+\.\d µs: a tie\) and 2,264 B more",
                     said.decision), said.decision
    assert re.search(r"server CPU per full TLS 1\.3 handshake .*: X25519MLKEM768 and X25519 tie \(within noise, "
                     r"p=0\.\d\d\): no CPU cost to weigh against the post-quantum protection", " ".join(said.because))
    [tied] = [t for t in said.ties if t.first == "X25519MLKEM768 handshake (server CPU)"]
    assert tied.change.verdict == "~" and "post-quantum protection is the reason" in tied.rule
    exported = next(p for p in as_dict(advice, evidence(tie))["points"] if p["topic"] == "key exchange groups")
    [row] = [t for t in exported["ties"] if t["first"] == "X25519MLKEM768 handshake (server CPU)"]
    assert row["verdict"] == "~" and "negotiates X25519MLKEM768" in row["parameters"]


def test_bytes_not_recorded_are_said_so():
    advice = decide.decide(evidence(handshakes(pq_bytes=(None, None), x_bytes=(None, None))), LIB, "openssl", "t")
    said = groups_point(advice)
    assert said.decision.split(";")[0].endswith("(520.0 µs against 450.0 µs) (bytes not recorded)")
    assert "bytes on the wire per handshake: X25519MLKEM768 bytes not recorded; X25519 bytes not recorded" \
        in said.because
    assert any("450.0 µs, client 400.0 µs of CPU, bytes not recorded per handshake" in b for b in said.because)


def test_above_the_128_bit_floor_the_hybrid_is_left_out_with_both_costs_stated():
    advice = decide.decide(evidence(handshakes()), LIB, "openssl", "OpenSSL test", min_security=192)
    said = groups_point(advice)
    assert "X25519MLKEM768" not in [g.tls_name for g in advice.groups]
    assert re.search(r"X25519MLKEM768 not offered: its classical part is 128-bit, under the 192-bit floor \(it would "
                     r"cost 1\.16× \[1\.1\d, 1\.1\d\] the server CPU of an X25519 handshake .* and 2,264 B more",
                     said.decision), said.decision
    first_classical = next(g for g in advice.groups if not g.post_quantum)
    assert f"a client without post-quantum support negotiates {first_classical.tls_name} (no handshake of it " \
           "measured here); one that sends only an X25519 key share gets a HelloRetryRequest" in " ".join(said.because)


def test_older_evidence_without_the_handshakes_keeps_the_primitive_reasoning_said_as_such():
    advice = decide.decide(evidence(), LIB, "openssl", "OpenSSL test")
    said = groups_point(advice)
    assert advice.groups[0].tls_name == "X25519MLKEM768"
    assert "(the hybrid first, then cheapest for this server first)" in said.decision
    assert any("first because it protects today's traffic" in b and "from primitive costs: no X25519MLKEM768 "
               "handshake was measured in these runs" in b for b in said.because), said.because


def test_a_comparison_of_connections_that_negotiated_differently_says_so_beside_it():
    """The resumed handshake signs nothing: its comparison with the full one names that difference."""
    full = result(decide.TLS_FULL, 900.0, quiet(1), client=400.0, server=450.0)
    full.negotiated = negotiated(X25519, 222, 1422)
    resumed = result(decide.TLS_RESUMED, 300.0, quiet(3), client=120.0, server=110.0)
    resumed.negotiated = negotiated(X25519, 300, 500, signature=0)
    advice = decide.decide(evidence({decide.TLS_FULL: full, decide.TLS_RESUMED: resumed}), LIB, "openssl", "t")
    [line] = [b for b in point(advice, "session resumption").because if b.startswith("server CPU")]
    assert re.search(r"\(\d+% less \[\d+, \d+\]\) \(the resumed one negotiates signature none where the full "
                     r"handshake negotiates signature ecdsa_secp256r1_sha256 \(800 B on the wire where 1,644 B\)\)$",
                     line), line
    same = decide.decide(evidence(handshakes()), LIB, "openssl", "t")
    assert "negotiates" not in point(same, "client code").because[0]        # the same parameters: nothing said


def test_a_failed_hybrid_handshake_is_not_taken_for_a_missing_group():
    """An error is no n/a: the library may have the group; the order rests on primitive costs, and says why."""
    broken = {groups.TLS_PQ: Measurement.of(suites.parse_case(groups.TLS_PQ), LIB, "error", "the worker died")}
    advice = decide.decide(evidence(broken), LIB, "openssl", "OpenSSL test")
    said = groups_point(advice)
    assert advice.groups[0].tls_name == "X25519MLKEM768"
    assert any("(from primitive costs: the X25519MLKEM768 handshake failed (the worker died))" in b
               for b in said.because), said.because


def test_without_each_sides_cpu_the_wall_time_of_a_handshake_is_weighed():
    pq = result(groups.TLS_PQ, 1130.0, quiet(7))
    pq.negotiated = negotiated(HYBRID, 1398, 2510)
    x = result(groups.TLS_X25519, 850.0, quiet(1))
    x.negotiated = negotiated(X25519, 222, 1422)
    advice = decide.decide(evidence({groups.TLS_PQ: pq, groups.TLS_X25519: x}), LIB, "openssl", "OpenSSL test")
    said = groups_point(advice)
    assert re.search(r"CPU of both sides \(wall time\) per full TLS 1\.3 handshake .*: X25519MLKEM768 1\.13 ms, "
                     r"X25519 850\.0 µs: the hybrid costs 1\.33× \[1\.3\d, 1\.3\d\] as much", " ".join(said.because))
    assert "client CPU per handshake not recorded" in " ".join(said.because)
    assert "for 1.33× [" in said.decision and "the CPU (wall time) of an X25519 handshake" in said.decision
