"""What bisect says beside its steps: the --bad end measured faster (the search then finds a speed-up), and a
step's verdict printed beside its explanation, both per operation, with their disagreement in direction named
(issue 38: a step called "faster" on 2 counted operations whose own profile said "cost ×1.014")."""

from types import SimpleNamespace

from sslperf.bisect.render import bad_faster_lines, explained_line
from sslperf import figures
from sslperf.measure import suites
from sslperf.verdict import Change, decide_exact
from sslperf.results import Measurement


def label(index: int) -> str:
    return f"openssl-3.0.{index}"


def bisect(total_verdict: str, good: int = 0, bad: int = 8, counts=(989_252, 979_089), ops: int = 16):
    libs = {0: SimpleNamespace(name="openssl-3.0.5"), 1: SimpleNamespace(name="openssl-3.0.7")}
    measurements = []
    for lib, count in zip(libs.values(), counts):
        m = Measurement.of(suites.parse_case("api/ssl-ctx/new"), lib.name, unit="op", ops=[ops])
        m.figures = {figures.INSTRUCTIONS: [count]}
        measurements.append(m)
    return SimpleNamespace(outcome=SimpleNamespace(total=SimpleNamespace(verdict=total_verdict)),
                           space=SimpleNamespace(good=good, bad=bad), probe=SimpleNamespace(libs=libs),
                           run=SimpleNamespace(measurements=measurements), case="api/ssl-ctx/new",
                           judge=SimpleNamespace(metric="instructions"))


def test_a_bad_end_that_measured_faster_is_said_and_what_it_means():
    [line] = bad_faster_lines(bisect("faster"), label)
    assert "the --bad end (openssl-3.0.8) measured faster than --good (openssl-3.0.0)" in line
    assert "find where it got faster, not slower" in line and "swap" in line
    assert bad_faster_lines(bisect("slower"), label) == []
    assert bad_faster_lines(bisect("slower", good=8, bad=0), label) != []     # good is the newer: a fix searched


def test_a_steps_verdict_is_printed_beside_the_profile_and_a_disagreement_is_named():
    result = bisect("slower")
    ratio = 989_252 / 979_089                                          # fewer instructions: a higher rate
    step = SimpleNamespace(before=0, after=1, change=Change(ratio, None, decide_exact(ratio, 0.01), method="exact"))
    profiles = (SimpleNamespace(cost_per_op=1.00e6, ops=4096), SimpleNamespace(cost_per_op=1.014e6, ops=4096))
    text = explained_line(result, step, profiles)
    assert "from 16 counted operations each: 61,828 → 61,193 instructions per operation" in text, text
    assert "cost ×1.014" in text and "the profile and the verdict disagree in direction" in text
    agreeing = (SimpleNamespace(cost_per_op=1.00e6, ops=4096), SimpleNamespace(cost_per_op=0.99e6, ops=4096))
    assert "disagree" not in explained_line(result, step, agreeing)
