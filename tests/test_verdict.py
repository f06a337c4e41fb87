"""One verdict rule, one answer: the same pair of measurements given to every output that says faster, slower or
tie — compare's table and its gate, the terminal's change column and its ★, the report's ranking and charts, the
history page, a bisect step, offload's kernel-versus-library call — gets the same verdict from each. Three pairs
tell the outputs apart from a hand-made rule: a clear change, a tie, and a change that is significant but smaller
than the threshold (a comparison of medians would call it; the rule does not)."""

import math

import pytest

from sslperf import figures
from sslperf.bisect import probe
from sslperf.compare import Column, compare
from sslperf.report import charts, ranking, terminal
from sslperf.results import LibInfo, Measurement, Run
from sslperf.verdict import Policy, decide, judge

PROCESSES, PER_PROCESS = 5, 4
# (name, B's rate against A's, the relative spread of each side's samples, the verdict the rule must give)
PAIRS = [("clear", 1.30, 0.01, "faster"), ("tie", 1.01, 0.08, "~"), ("small", 1.01, 0.0005, "~"),
         ("slower", 0.80, 0.01, "slower")]


def measurement(case: str, lib: str, rate: float, spread: float, seed: int) -> Measurement:
    """Samples of `rate` op/s from PROCESSES worker processes, each sample off by up to `spread`, deterministic."""
    rates = [rate * (1 + spread * math.sin(seed * 7.1 + i * 1.3)) for i in range(PROCESSES * PER_PROCESS)]
    pids = [1000 * seed + i // PER_PROCESS for i in range(len(rates))]
    m = Measurement(case, "kex", "key exchange", case.split("/")[1], "derive", None, "record", lib, "ok", None,
                    "ops", 0, [1_000] * len(rates), [round(1e12 / r) for r in rates], [round(1e12 / r) for r in rates])
    m.figures = {figures.PROCESS: pids}
    return m


@pytest.fixture(scope="module")
def run() -> Run:
    """One interleaved run of two libraries over the four pairs' cases (the same worker processes, paired)."""
    made = Run.new({}, {"cpus": 2})
    made.libs = [LibInfo(name, "openssl", "1", name, "default", "built") for name in ("a", "b")]
    for index, (name, ratio, spread, _) in enumerate(PAIRS):
        case = f"kex/{name}/derive"
        made.measurements += [measurement(case, "a", 10_000, spread, 1), measurement(case, "b", 10_000 * ratio,
                                                                                      spread, 1)]
    return made


def pair(run: Run, name: str) -> tuple[Measurement, Measurement]:
    return tuple(m for m in run.measurements if m.case == f"kex/{name}/derive")


@pytest.mark.parametrize("name, ratio, spread, expected", PAIRS, ids=[p[0] for p in PAIRS])
def test_every_output_gives_the_rules_verdict(run, name, ratio, spread, expected):
    a, b = pair(run, name)
    rule = judge(a, b, "wall", Policy(), paired=True)
    assert rule.verdict == expected, rule

    # compare's table, and its gate (a regression is exactly a slower verdict beyond the gate)
    table = compare([Column("a", run.id, "a"), Column("b", run.id, "b")], {run.id: run})
    row = next(r for r in table.rows if r.case == a.case)
    assert row.changes[1].verdict == expected
    assert bool(table.regressions(0.0) and any(r.case == a.case for r, _, _ in table.regressions(0.0))) == \
        (expected == "slower")

    # the terminal's change column, in the run's own table
    change = terminal._Layout(run, ["a", "b"], "wall", True).change(a, b)
    assert change.verdict == expected and terminal.change_text(change).plain.startswith(change.symbol)

    # the ranking behind ★ and the report's "first places": a tie shares a place
    places = ranking.rank_case([a, b], "wall", lambda lib: run.id)
    assert (len(places) == 1) == (expected == "~")

    # the report's relative charts and the history view's points
    point = charts.ratio_point(judge(a, b, "wall", Policy(charts.THRESHOLD, charts.ALPHA), paired=True))
    assert point["verdict"] == expected

    # a bisect step (newer against older, paired)
    assert probe.Judge("wall", 0.02, 0.05).change(a, b).verdict == expected


def test_a_significant_change_under_the_threshold_is_a_tie_though_its_median_moved(run):
    a, b = pair(run, "small")
    found = judge(a, b, "wall", Policy(), paired=True)
    assert found.p < 0.05 and 1.005 < found.ratio < 1.02 and found.verdict == "~"
    assert a.summary().median < b.summary().median            # what a comparison of medians would call faster


def test_the_kernel_of_the_rule():
    assert decide(1.3, 0.001, 0.02, 0.05) == "faster" and decide(0.7, 0.001, 0.02, 0.05) == "slower"
    assert decide(1.3, 0.2, 0.02, 0.05) == "~" and decide(1.01, 0.001, 0.02, 0.05) == "~"
    assert decide(1.3, None, 0.02, 0.05) == "?"


def test_between_runs_that_recorded_noise_the_threshold_widens_by_what_they_recorded(run):
    """Two runs of the same library, the second flagged (a busy CPU) with a 12% spread between its processes:
    an 8% change is not called between them, and the verdict says why."""
    a, b = pair(run, "clear")
    b_slower = measurement(a.case, "a", 10_000 * 0.92, 0.01, 2)
    policy = Policy(run_noise={"one": {"flags": [], "spread": 0.02}, "two": {"flags": ["CPU 0 100% busy"],
                                                                             "spread": 0.12}})
    noisy = judge(a, b_slower, "wall", policy, runs=("one", "two"))
    assert noisy.verdict == "~" and noisy.noisy == "CPU 0 100% busy" and noisy.threshold >= 0.12
    quiet = judge(a, b_slower, "wall", Policy(run_noise={"one": {"flags": [], "spread": 0.02},
                                                          "two": {"flags": [], "spread": 0.02}}), runs=("one", "two"))
    assert quiet.verdict == "slower" and quiet.noisy is None
