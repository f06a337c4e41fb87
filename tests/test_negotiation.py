"""What a connection negotiated: the typed record (negotiation.Negotiated), the one sentence every comparing output
prints when two measurements negotiated differently, and the split of a deployed change into the library's own
and the default's — on constructed measurements, so each assertion rests on known figures."""

from __future__ import annotations

import pytest

from sslperf import figures, negotiation
from sslperf.bisect import render as bisect_render
from sslperf.compare import Column, compare, split_lines, splits
from sslperf.compare.deployed import pinned_case
from sslperf.recommend import weigh
from sslperf.report import summary, terminal, verdict_tables
from sslperf.results import LibInfo, Measurement, Run
from sslperf.store import Store
from sslperf.verdict import judge

DEFAULT = "tls/handshake/tls1.3/default/ecdsa-p256/shared"
PINNED = "tls/handshake/tls1.3/x25519/ecdsa-p256/shared"
X25519 = {"version": 0x0304, "group": 0x001D, "suite": 0x1301, "signature": 0x0403, "hello_retry": False,
          "client_bytes": 296, "server_bytes": 1027}
HYBRID = {**X25519, "group": 0x11EC, "client_bytes": 1480, "server_bytes": 2115}
SENTENCE = "openssl-3.6.3 negotiates X25519MLKEM768 where openssl-3.0.8 negotiates X25519"


def measured(case: str, lib: str, rate: float, negotiated: dict | None, processes: int = 5) -> Measurement:
    """`processes` worker processes of 2 samples each at about `rate` handshakes/s (a small spread per sample)."""
    rates = [rate * (1 + 0.002 * ((i * 7) % 5 - 2)) for i in range(processes * 2)]
    ops = [1000] * len(rates)
    return Measurement(case, "tls", "TLS handshakes (in memory)", "tls1.3 x25519 ecdsa-p256", "handshake-shared",
                       None, "record", lib, "ok", None, "ops", 0, ops, [int(1000 * 1e9 / r) for r in rates],
                       [int(1000 * 1e9 / r) for r in rates],
                       figures={figures.PROCESS: [i // 2 for i in range(len(rates))],
                                figures.ROUND: [i % 2 for i in range(len(rates))]},
                       negotiated=negotiated)


def upgrade_run() -> Run:
    """3.0.8 and 3.6.3 in one run: as deployed 3.6.3 negotiates the hybrid and is slower; pinned to X25519 it is
    faster; its hybrid costs it more than the whole change."""
    run = Run.new({}, {})
    run.libs = [LibInfo(name, "openssl", name[8:], name, "default", "built") for name in ("openssl-3.0.8",
                                                                                         "openssl-3.6.3")]
    run.measurements = [measured(DEFAULT, "openssl-3.0.8", 1000, X25519),
                        measured(DEFAULT, "openssl-3.6.3", 800, HYBRID),
                        measured(PINNED, "openssl-3.0.8", 1000, X25519),
                        measured(PINNED, "openssl-3.6.3", 1200, X25519)]
    return run


def test_a_record_is_typed_named_and_checked():
    n = negotiation.Negotiated.from_dict({**HYBRID, "hello_retry": 1})
    assert (n.version_name, n.group_name, n.suite_name, n.signature_name) == (
        "TLS 1.3", "X25519MLKEM768", "TLS_AES_128_GCM_SHA256", "ecdsa_secp256r1_sha256")
    assert n.hello_retry is True and n.wire_bytes == 1480 + 2115 and n.short() == "X25519MLKEM768 +HRR"
    assert negotiation.Negotiated.from_dict({"group": 0}).group_name == "none"      # a resumption by PSK alone
    assert negotiation.Negotiated.from_dict({"group": 0x9999}).group_name == "0x9999"
    for bad in ({"group": 70000}, {"group": "x25519"}, {"client_bytes": -1}, {"colour": 1}, {"hello_retry": 2}):
        with pytest.raises(negotiation.BadNegotiation):
            negotiation.Negotiated.from_dict(bad)
    assert negotiation.recorded({"negotiated": {"group": "bad"}}) is None
    assert negotiation.recorded({"negotiated": {**X25519, "hello_retry": 0}})["hello_retry"] is False


def test_the_same_parameters_say_nothing_and_unknown_ones_are_not_a_difference():
    a, b = measured(PINNED, "openssl-3.0.8", 1000, X25519), measured(PINNED, "openssl-3.6.3", 1000, X25519)
    assert negotiation.difference(a, b) is None and judge(a, b, "wall").parameters is None
    unknown = measured(PINNED, "rustls", 1000, {"version": 0x0304, "group": 0x001D})     # no signature reported
    assert negotiation.difference(a, unknown) is None
    assert negotiation.difference(a, measured(PINNED, "x", 1, None)) is None


def test_every_comparing_output_names_a_negotiation_difference(tmp_path):
    run = upgrade_run()
    base, other = (next(m for m in run.measurements if m.case == DEFAULT and m.lib == lib)
                   for lib in ("openssl-3.0.8", "openssl-3.6.3"))
    change = judge(base, other, "wall", paired=True)
    assert change.parameters == SENTENCE + " (3,595 B on the wire where 1,323 B)"
    columns = [Column("openssl-3.0.8", run.id, "openssl-3.0.8"), Column("openssl-3.6.3", run.id, "openssl-3.6.3")]
    comparison = compare(columns, {run.id: run})
    said = {
        "compare (table notes)": "\n".join(comparison.parameters()),
        "compare (markdown)": verdict_tables.to_markdown(comparison),
        "compare (json)": str(comparison.to_dict()),
        "report (summary)": summary.render(run, comparison, "wall"),
        "terminal tables": "\n".join(str(getattr(t, "caption", "") or "") for t in terminal.tables(run)),
        "bisect": bisect_render.short(change),
        "recommend": weigh.Tie("openssl-3.0.8", "openssl-3.6.3", change, "the usual order").text(),
    }
    quiet = [where for where, text in said.items() if SENTENCE not in text]
    assert quiet == [], f"these outputs do not say what was negotiated differently: {quiet}"
    pinned_only = [m for m in run.measurements if m.case == PINNED]
    run.measurements = pinned_only
    assert compare(columns, {run.id: run}).parameters() == []


def test_the_deployed_change_is_split_into_the_library_and_the_default():
    run = upgrade_run()
    [split] = splits(run.measurements, "openssl-3.0.8", "openssl-3.6.3")
    assert (split.case, split.pinned) == (DEFAULT, PINNED) and split.parameters.startswith(SENTENCE)
    assert split.deployed.verdict == "slower" and abs(split.deployed.ratio - 0.8) < 0.02
    assert split.library.verdict == "faster" and abs(split.library.ratio - 1.2) < 0.02
    assert split.default_cost.verdict == "slower" and abs(split.default_cost.ratio - 800 / 1200) < 0.02
    text = "\n".join(split.lines())
    assert "as deployed" in text and "equal parameters" in text and "default's own cost" in text
    comparison = compare([Column("a", run.id, "openssl-3.0.8"), Column("b", run.id, "openssl-3.6.3")], {run.id: run})
    assert split_lines(comparison, {run.id: run})[1:] == split.lines()
    # Without the pinned case in the run, the split says what is missing instead of inventing it.
    run.measurements = [m for m in run.measurements if m.case == DEFAULT]
    [alone] = splits(run.measurements, "openssl-3.0.8", "openssl-3.6.3")
    assert alone.library is None and alone.default_cost is None and "not measured" in "\n".join(alone.lines())


def test_a_pinned_case_is_made_from_what_the_baseline_negotiated():
    at = negotiation.Negotiated.from_dict(X25519)
    assert pinned_case(DEFAULT, at) == PINNED
    assert pinned_case(PINNED, at) is None                       # nothing left to pin
    assert pinned_case(DEFAULT, negotiation.Negotiated.from_dict({"group": 0x001E})) is None   # X448: no such case
    assert pinned_case("tls/transfer/tls1.3/default/16384", at) == "tls/transfer/tls1.3/aes-128-gcm/16384"


def test_the_run_json_and_the_store_keep_the_record(tmp_path):
    run = upgrade_run()
    again = Run.from_dict(run.to_dict())
    assert [m.negotiated for m in again.measurements] == [m.negotiated for m in run.measurements]
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    store.begin(run)
    for m in run.measurements:
        store.add(run.id, m)
    run.complete, run.finished = True, "2026-11-28T00:00:00+00:00"
    store.finish(run)
    loaded = store.load(run.id)
    assert [m.negotiated for m in loaded.measurements] == [X25519, HYBRID, X25519, X25519]
    assert negotiation.of(loaded.measurements[1]).group_name == "X25519MLKEM768"
