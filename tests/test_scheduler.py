"""The one scheduler, against fake modes that log every call: libraries interleaved A B / B A in every mode,
rounds spread over passes, each sample's round, start and process recorded, a library that lacks a mode n/a
before anything runs, a failed round ending that library's result, and the cases of several modes in one run.
(The in-memory mode's worker protocol is tested with fake workers in test_runner.py; every real mode against
real libraries in the end-to-end tests.)"""

from dataclasses import dataclass, field

import pytest
from fakes import FakeLib

from sslperf import figures
from sslperf.errors import SslperfError
from sslperf.measure import scheduler
from sslperf.cases.ids import Case
from sslperf.measure.modes import base, registry
from sslperf.measure.settings import Settings
from sslperf.results import Measurement


@dataclass
class Log:
    calls: list = field(default_factory=list)        # (mode, what, case, lib) in order
    fail: set = field(default_factory=set)           # (case id, lib, round) to fail


def fake_mode(name: str, prefix: str, log: Log, passes: int, rounds: int, backends=base.ALL_BACKENDS,
              samples_per_round: int = 2):
    class FakeSession(base.Session):
        def __init__(self, mode, ctx, cases):
            super().__init__(mode, ctx, cases)
            self.passes, self.taken = passes, {}

        def open_pass(self, number):
            log.calls.append((name, "pass", number, None))

        def prepare(self, case, libs):
            log.calls.append((name, "prepare", case.id, tuple(lib.name for lib in libs)))
            return base.Prepared({lib.name: Measurement.of(case, lib.name) for lib in libs}, rounds)

        def reprepare(self, case, libs):
            log.calls.append((name, "reprepare", case.id, tuple(lib.name for lib in libs)))
            return {}

        def finish(self, results):
            log.calls.append((name, "finish", None, None))
            return []

        def take(self, case, lib):
            n = self.taken[(case.id, lib.name)] = self.taken.get((case.id, lib.name), 0) + 1
            log.calls.append((name, "take", case.id, lib.name))
            if (case.id, lib.name, n) in log.fail:
                return Measurement.of(case, lib.name, "error", f"round {n} failed")
            return Measurement.of(case, lib.name, ops=[1] * samples_per_round, wall_ns=[1000] * samples_per_round,
                               cpu_ns=[900] * samples_per_round,
                               figures={figures.CLIENT_CPU: [5] * samples_per_round})

    return base.Mode(name, f"the {name} mode", (prefix,), backends, (figures.CLIENT_CPU,), base.WALL_ONLY,
                     FakeSession)


@pytest.fixture
def log(monkeypatch):
    log = Log()
    a = fake_mode("a-mode", "kex", log, passes=2, rounds=4)
    b = fake_mode("b-mode", "sig", log, passes=3, rounds=3, backends=("openssl",))
    monkeypatch.setattr(registry, "MODES", (a, b))
    monkeypatch.setattr(scheduler, "new_run", lambda libs, settings, mask=None: _run(libs, settings))
    monkeypatch.setattr(scheduler.environment, "capture", lambda mask=None: {"cpus": 2, "loadavg": [0, 0, 0]})
    monkeypatch.setattr(scheduler.pinning, "busy_cpus", lambda cpus: {})
    return log


def _run(libs, settings):
    from sslperf.results import Run

    return Run.new(settings, {"cpus": 2, "loadavg": [0, 0, 0]})


KEX = Case("kex/x25519/derive", "kex", "x25519", "derive")
SIG = Case("sig/ed25519/sign", "sig", "ed25519", "sign")


def measure(cases, libs=("a", "b"), **kwargs):
    return scheduler.measure_libs([FakeLib(n) if isinstance(n, str) else n for n in libs], cases,
                             Settings(target_ms=1, samples=1, cpu=None), None, "test", **kwargs)


def takes(log, case_id=None):
    return [lib for mode, what, case, lib in log.calls if what == "take" and case_id in (None, case)]


def test_libraries_alternate_a_b_then_b_a_in_every_round(log):
    measure([KEX])
    # 4 rounds over 2 passes; the second pass starts with the other library
    assert takes(log) == ["a", "b", "b", "a", "b", "a", "a", "b"]


def test_each_later_pass_prepares_its_libraries_in_the_other_order(log):
    measure([KEX], libs=("a", "b", "c"))
    assert [libs for mode, what, case, libs in log.calls if what in ("prepare", "reprepare")] == \
        [("a", "b", "c"), ("c", "b", "a")]
    assert [base.pass_order(list("abc"), n) for n in range(3)] == [list("abc"), list("cba"), list("abc")]


def test_rounds_are_spread_over_the_passes_and_cases_interleave_within_a_pass(log):
    second = Case("kex/x448/derive", "kex", "x448", "derive")
    measure([KEX, second], libs=("a",))
    order = [case for mode, what, case, lib in log.calls if what == "take"]
    # pass 1: two rounds of each case, then pass 2: two more of each — never all of one case first
    assert order == [KEX.id] * 2 + [second.id] * 2 + [KEX.id] * 2 + [second.id] * 2
    assert [number for mode, what, number, lib in log.calls if what == "pass"] == [0, 1]


def test_every_sample_records_its_round_its_start_and_its_process(log):
    run = measure([KEX])
    for m in run.measurements:
        f = m.figures
        assert f[figures.ROUND] == [0, 0, 1, 1, 2, 2, 3, 3]             # two samples a round, four rounds
        assert f[figures.PROCESS] == [0, 0, 0, 0, 1, 1, 1, 1]           # rounds 0-1 in pass 0, 2-3 in pass 1
        assert f[figures.CLIENT_CPU] == [5] * 8 and len(m.ops) == 8
        assert f[figures.START] == sorted(f[figures.START])
    a, b = (next(m for m in run.measurements if m.lib == name) for name in "ab")
    starts = sorted([(s, "a") for s in a.figures[figures.START][::2]] + [(s, "b") for s in b.figures[figures.START][::2]])
    assert [lib for _, lib in starts] == ["a", "b", "b", "a", "b", "a", "a", "b"]     # the run JSON shows the order


def test_a_library_without_the_mode_is_na_before_anything_runs_and_never_taken(log):
    other = FakeLib("w", flavor="wolfssl")
    run = measure([SIG], libs=("a", other))
    result = next(m for m in run.measurements if m.lib == "w")
    assert result.status == "n/a" and "the b-mode mode" in result.reason and "wolfssl" in result.reason
    assert "w" not in takes(log) and ("b-mode", "prepare", SIG.id, ("a",)) in log.calls


def test_a_mode_no_library_has_is_refused_before_anything_runs(log):
    with pytest.raises(SslperfError, match="the b-mode mode"):
        measure([SIG], libs=(FakeLib("w", flavor="wolfssl"),))
    assert not log.calls


def test_a_failed_round_ends_that_librarys_result_and_the_others_go_on(log):
    log.fail.add((KEX.id, "b", 2))
    run = measure([KEX])
    b = next(m for m in run.measurements if m.lib == "b")
    assert b.status == "error" and b.reason == "round 2 failed" and len(b.ops) == 2      # the first round kept
    assert takes(log).count("b") == 2 and takes(log).count("a") == 4


def test_cases_of_several_modes_in_one_run_each_take_their_own_passes(log):
    run = measure([KEX, SIG])
    assert {m.case for m in run.measurements} == {KEX.id, SIG.id}
    assert takes(log, SIG.id) == ["a", "b", "b", "a", "a", "b"]        # 3 rounds, one per pass, over 3 passes
    assert takes(log, KEX.id) == ["a", "b", "b", "a", "b", "a", "a", "b"]
    assert sorted(run.settings["modes"]) == ["a-mode", "b-mode"]


def test_every_real_mode_has_a_session_and_declared_figures():
    for mode in registry.MODES:
        assert not figures.unknown(mode.figures), mode.name
        assert mode.metrics and set(mode.metrics) <= {"wall", "cpu", "instructions"}
        assert issubclass(mode.session, base.Session) if isinstance(mode.session, type) else callable(mode.session)


def test_the_progress_line_names_a_modes_finishing_work_while_it_runs(log, monkeypatch):
    """Issue 50 item 4: `scale`'s progress line stayed on the last case while the contention was explained."""
    shown = []
    monkeypatch.setattr(base.Session, "finishing", "explaining the largest count")

    def progress(what, done, total):
        shown.append(what)
        log.calls.append(("progress", what, None, None))

    measure([KEX], progress=progress)
    said = [what for mode, what, _, _ in log.calls if mode == "progress" or what == "finish"]
    assert said.index("explaining the largest count") < said.index("finish") < said.index("done")
