"""The bisect's search on synthetic histories: real Measurements with
per-process samples, read by compare's paired test, so the verdicts are the
ones a real bisect would reach on such figures."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from sslperf.bisect.probe import Judge
from sslperf.bisect.search import EndUnusable, Search, classify
from sslperf.compare import Change
from sslperf import figures
from sslperf.results import Measurement, Run

PROCESSES = 5
SAMPLES = 4


class FakeProbe:
    """Point i runs at `rates[i]` operations per second, with 0.3% noise."""

    def __init__(self, rates, fails=(), not_available=(), threshold=0.02):
        self.rates = rates
        self.fails = set(fails)
        self.not_available = set(not_available)
        self.built: list[int] = []
        self.measured: list[tuple[list[int], bool]] = []
        self.judge = Judge("wall", threshold, 0.05)
        self.rng = np.random.default_rng(7)

    def build(self, index):
        if index in self.fails:
            return "the build failed: make: *** [Makefile] Error 1"
        if index not in self.built:
            self.built.append(index)
        return None

    def measure(self, indexes, longer):
        self.measured.append((indexes, longer))
        run = Run.new({}, {})
        for index in indexes:
            m = Measurement("digest/sha256/16", "digest", "digest", "sha256", "hash", 16, "record", f"p{index}",
                            "n/a" if index in self.not_available else "ok", reason="not in this version")
            if index not in self.not_available:
                processes = PROCESSES * (2 if longer else 1)
                for pid in range(processes):
                    for _ in range(SAMPLES):
                        rate = self.rates[index] * (1 + self.rng.normal(0, 0.003))
                        m.ops.append(1000)
                        m.wall_ns.append(int(1000 * 1e9 / rate))
                        m.cpu_ns.append(int(1000 * 1e9 / rate))
                        m.figures = m.figures or {figures.PROCESS: []}
                        m.figures[figures.PROCESS].append(pid)
            run.measurements.append(m)
        return run

    def _cell(self, run, index):
        return next(m for m in run.measurements if m.lib == f"p{index}")

    def unusable(self, run, index):
        cell = self._cell(run, index)
        return None if cell.status == "ok" else cell.reason

    def change(self, run, older, newer):
        a, b = self._cell(run, older), self._cell(run, newer)
        return self.judge.change(a, b) if a.status == b.status == "ok" else None


def search(rates, **kw):
    probe = FakeProbe(rates, **kw)
    return Search(len(rates), probe).run(), probe


def found(outcome):
    return [(b.before, b.after) for b in outcome.boundaries if b.kind == "step"]


@pytest.mark.parametrize("size", [2, 3, 4, 5, 8, 13, 22])
def test_one_step_is_found_wherever_it_is_with_at_most_log2_plus_two_builds(size):
    for step in range(1, size):
        rates = [100.0] * step + [80.0] * (size - step)
        outcome, probe = search(rates)
        assert outcome.status == "found"
        assert found(outcome) == [(step - 1, step)]
        assert len(probe.built) <= math.ceil(math.log2(size)) + 2
        assert outcome.boundaries[0].change.verdict == "slower"
        assert outcome.boundaries[0].share == pytest.approx(1.0, abs=0.02)


def test_a_fix_is_found_as_well_as_a_regression():
    outcome, _ = search([50.0, 50.0, 50.0, 50.0, 75.0, 75.0])
    assert found(outcome) == [(3, 4)]
    assert outcome.total.verdict == "faster"


def test_a_change_in_two_steps_reports_both_with_their_shares_largest_first():
    rates = [100.0, 100.0, 90.0, 90.0, 90.0, 72.0, 72.0, 72.0]
    outcome, probe = search(rates)
    assert outcome.status == "found"
    assert found(outcome) == [(4, 5), (1, 2)]          # -20% before -10%
    shares = [b.share for b in outcome.boundaries]
    assert shares[0] == pytest.approx(math.log(0.8) / math.log(0.72), abs=0.03)
    assert shares[1] == pytest.approx(math.log(0.9) / math.log(0.72), abs=0.03)
    assert "between" in [s.verdict for s in outcome.steps]


def test_ends_that_do_not_differ_give_nothing_to_bisect_after_one_step():
    outcome, probe = search([100.0, 99.8, 100.1, 100.0, 100.2])
    assert outcome.status == "nothing"
    assert outcome.total.verdict == "~"
    assert len(outcome.steps) == 1 and outcome.boundaries == []


def test_a_change_that_came_and_went_is_shown_not_bisected():
    outcome, _ = search([100.0, 100.0, 60.0, 100.0, 80.0])     # midpoint 2 is slower than both ends
    assert outcome.status == "not-monotonic"
    assert outcome.contradictions and outcome.contradictions[0].mid == 2
    # every step is still reported, each with its sign: -40%, +67%, -20%
    steps = {(b.before, b.after): b.change.ratio for b in outcome.boundaries if b.kind == "step"}
    assert set(steps) == {(1, 2), (2, 3), (3, 4)}
    assert steps[(1, 2)] == pytest.approx(0.6, rel=0.02) and steps[(2, 3)] == pytest.approx(1.667, rel=0.02)
    assert [b.share < 0 for b in outcome.boundaries if (b.before, b.after) == (2, 3)] == [True]


def test_ends_alike_with_a_midpoint_apart_are_not_monotonic_not_nothing():
    outcome, _ = search([100.0, 100.0, 70.0, 100.0, 100.0])
    assert outcome.status == "not-monotonic"    # not "nothing": the midpoint measured apart from both ends
    assert outcome.steps[0].verdict == "contradicts"
    assert sorted(found(outcome)) == [(1, 2), (2, 3)]
    assert all(b.share is None for b in outcome.boundaries)     # no whole change to take a share of


def test_an_unclear_midpoint_is_measured_longer_once_then_reported_unclear():
    # -3% in all, the midpoint 1.5% from each end: below the 2% threshold on both sides
    outcome, probe = search([100.0, 98.5, 97.0])
    assert outcome.status == "unclear"
    assert [s.longer for s in outcome.steps] == [False, True]
    assert probe.measured[-1] == ([0, 1, 2], True)
    assert outcome.boundaries[0].kind == "unclear"


def test_a_midpoint_that_does_not_build_is_skipped_like_git_bisect_skip():
    outcome, probe = search([100.0, 100.0, 100.0, 80.0, 80.0, 80.0, 80.0], fails={3})
    assert 3 in outcome.skipped and "build failed" in outcome.skipped[3]
    # the change is right at the skipped point: the answer is the range around it
    assert outcome.status == "untestable"
    assert [(b.before, b.after, b.kind) for b in outcome.boundaries] == [(2, 4, "untestable")]


def test_a_midpoint_without_the_case_is_skipped_and_the_search_goes_on():
    outcome, _ = search([100.0, 100.0, 100.0, 100.0, 80.0, 80.0, 80.0], not_available={3})
    assert outcome.skipped == {3: "not in this version"}
    assert [(b.before, b.after, b.kind) for b in outcome.boundaries] == [(2, 4, "untestable")]


def test_an_end_that_does_not_build_is_an_error_naming_it():
    with pytest.raises(EndUnusable) as caught:
        search([100.0, 90.0, 80.0], fails={2})
    assert caught.value.index == 2 and "build failed" in caught.value.problem


def _c(ratio: float, verdict: str) -> Change:
    return Change(ratio, 0.01 if verdict != "~" else 0.5, verdict)


@pytest.mark.parametrize("total,to_mid,from_mid,expected", [
    (_c(0.8, "slower"), _c(1.0, "~"), _c(0.8, "slower"), "older"),
    (_c(0.8, "slower"), _c(0.8, "slower"), _c(1.0, "~"), "newer"),
    (_c(0.8, "slower"), _c(0.9, "slower"), _c(0.89, "slower"), "between"),
    (_c(0.8, "slower"), _c(0.6, "slower"), _c(1.33, "faster"), "contradicts"),
    (_c(1.0, "~"), _c(0.6, "slower"), _c(1.66, "faster"), "contradicts"),
    (_c(0.97, "slower"), _c(0.985, "~"), _c(0.985, "~"), "unclear"),
    (_c(1.25, "faster"), _c(1.25, "faster"), _c(1.0, "~"), "newer"),
])
def test_classify(total, to_mid, from_mid, expected):
    assert classify(total, to_mid, from_mid) == expected


def test_time_sets_a_threads_cases_round_and_the_probe_hands_it_to_the_scheduler(monkeypatch):
    from sslperf.bisect import probe
    from sslperf.measure import plan, scheduler
    from sslperf.measure.modes import threads
    from sslperf.measure.suites import parse_case

    case = parse_case("threads/own/002/digest/sha256/16")
    assert probe.mode_options(case, None) == {}                    # the mode's own 2 s rounds
    assert probe.mode_options(case, 700) == {"threads": threads.Options(milliseconds=700)}
    assert probe.mode_options(parse_case("digest/sha256/16"), 700) == {}   # --time is the sample's own there
    seen = []
    monkeypatch.setattr(scheduler, "measure", lambda request, store, *rest, **kwargs:
                        seen.append((request.libs, request.cases, request.options)) or Run("r", "t", {}, {}))

    class Events:
        def measuring(self, labels, longer): ...
        def measured(self, what, done, total): ...

    real = probe.RealProbe(None, case, plan.settings(30, 3, None, True, 3), Judge("wall", 0.02, 0.05), Events(),
                           None, probe.mode_options(case, 700))
    real.libs = {0: SimpleNamespace(name="a", spec=None), 1: SimpleNamespace(name="b", spec=None)}
    real.space = type("Space", (), {"points": [type("P", (), {"label": l}) for l in "ab"]})()
    real.measure([0, 1], longer=False)
    assert seen == [(["a", "b"], [case.id], {"threads": threads.Options(milliseconds=700)})]   # one Request


def test_an_interrupted_bisect_keeps_its_record_and_the_interrupt_says_so(monkeypatch):
    """Ctrl-C (or a timeout's SIGTERM) in the middle of a step: the steps measured before are stored as the bisect's
    record, and the message names that record, not the unstored run of the step it stopped."""
    from sslperf.bisect import probe
    from sslperf.bisect.space import Point, Space
    from sslperf.cli import interrupted_message
    from sslperf.measure import plan
    from sslperf.measure.suites import parse_case

    step_run = Run("20261129-000000-aaaaaa", "t", {"suite": "bisect"}, {})
    step_run.libs, step_run.measurements = [], []

    def stopped(self):
        self.probe.runs.append(step_run)
        raise KeyboardInterrupt

    saved = []
    monkeypatch.setattr(Search, "run", stopped)
    store = SimpleNamespace(save=lambda record, who: saved.append((record, who)))
    space = Space([Point("openssl-3.0.8", "openssl-3.0.8"), Point("openssl-3.1.0", "openssl-3.1.0")], 0, "releases")
    with pytest.raises(KeyboardInterrupt) as interrupt:
        probe.bisect(space, parse_case("digest/sha256/16"), plan.settings(30, 3, None, True, 3),
                     Judge("wall", 0.02, 0.05), probe.Events(), store)
    ((record, who),) = saved
    assert who == "sslperf bisect" and record.state == "interrupted" and record.id != step_run.id
    assert interrupted_message(interrupt.value).startswith(f"interrupted: run {record.id} is kept in the store")
