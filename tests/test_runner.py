"""The in-memory mode under the one scheduler, against fake harness workers that log every request: libraries
interleaved A B / B A, samples from several worker processes (a fresh one per pass), each process's warm-up round
thrown away, the samples of a slow case bounded, and the calibrated batch size used for sampling. (The scheduler
itself, with fake modes, is tested in test_scheduler.py; the real harness in test_harness.py.)"""

from dataclasses import dataclass, field

import pytest
from fakes import FakeLib

from sslperf.measure import scheduler
from sslperf.measure.harness_client import Reply
from sslperf.measure.modes import in_memory
from sslperf.measure.settings import Settings
from sslperf.measure.suites import Case
from sslperf.results import Run

CASE = Case("kex/x25519/derive", "kex", "x25519", "derive")
WARMUP_CPU_NS = 999_999_999           # a CPU time only the warm-up sample reports


@dataclass
class Log:
    requests: list = field(default_factory=list)      # (lib, line) in the order the runner sent them
    started: int = 0                                  # worker processes started
    sample_ns: int = 10_000_000                       # wall time each sample reports
    iters: int = 4321                                 # what calibration answers


def fake_worker_class(log: Log):
    class FakeWorker:
        def __init__(self, lib, env=None, cpu=None, binary=None, fixed_layout=False):
            self.lib, self.samples = lib, 0
            log.started += 1
            self.pid = log.started

        def request(self, line: str, timeout: float) -> Reply:
            log.requests.append((self.lib.name, line))
            cmd, *args = line.split()
            if cmd == "info":
                return Reply("info", {"type": "info", "flavor": "openssl", "version_string": f"fake {self.lib.name}"})
            if cmd == "prepare":
                return Reply("prepared", {"type": "prepared", "unit": "ops", "bytes_per_op": 0})
            if cmd == "calibrate":
                return Reply("calibrated", {"type": "calibrated", "iters": log.iters})
            if cmd == "sample":
                self.samples += 1
                cpu = WARMUP_CPU_NS if self.samples == 1 else log.sample_ns
                return Reply("samples", {"type": "samples", "ops": [int(args[1])], "wall_ns": [log.sample_ns],
                                         "cpu_ns": [cpu]})
            return Reply("released", {"type": "released"})

        def restart(self):
            pass

        def close(self):
            pass

    return FakeWorker


@pytest.fixture
def log(monkeypatch):
    log = Log()
    monkeypatch.setattr(in_memory, "Worker", fake_worker_class(log))
    monkeypatch.setattr(in_memory, "harness_binary", lambda lib: None)
    monkeypatch.setattr(scheduler, "new_run", lambda libs, settings, mask=None: Run.new(settings, {"cpus": 2}))
    monkeypatch.setattr(scheduler.environment, "capture", lambda mask=None: {"cpus": 2, "loadavg": [0, 0, 0]})
    monkeypatch.setattr(scheduler.pinning, "busy_cpus", lambda cpus: {})
    return log


def run(settings: Settings, libs=("a", "b"), cases=(CASE,)):
    return scheduler.measure_libs([FakeLib(name) for name in libs], list(cases), settings, None, "test")


def sample_order(log: Log) -> list[str]:
    return [lib for lib, line in log.requests if line.startswith("sample")]


def test_libraries_alternate_in_rounds_across_processes(log):
    run(Settings(target_ms=10, samples=4, warmup_samples=1, processes=2))
    # per process: a warm-up round a b, then rounds that alternate: a b | b a; the second pass (fresh processes)
    # warms up and starts with the other library: b a, b a | a b
    assert sample_order(log) == ["a", "b", "a", "b", "b", "a"] + ["b", "a", "b", "a", "a", "b"]


def test_a_cases_processes_are_spread_over_the_run(log):
    second = Case("kex/x448/derive", "kex", "x448", "derive")
    run(Settings(target_ms=10, samples=4, processes=2), libs=("a",), cases=(CASE, second))
    cases = [line.split()[1] for _, line in log.requests if line.startswith("sample")]
    # pass 1 (warm-up + 2 rounds of each case), then pass 2 in fresh workers: never all of one case first
    assert cases == [CASE.id] * 3 + [second.id] * 3 + [CASE.id] * 3 + [second.id] * 3
    assert log.started == 2              # one worker per pass


def test_samples_come_from_several_worker_processes(log):
    result = run(Settings(target_ms=10, samples=6, processes=3))
    for m in result.measurements:
        pids = m.figures["process"]
        assert len(pids) == 6 and len(set(pids)) == 3 and all(pids.count(p) == 2 for p in set(pids))
    assert len({p for m in result.measurements for p in m.figures["process"]}) == 6     # none shared by a and b


def test_each_process_warmup_sample_is_not_kept(log):
    result = run(Settings(target_ms=10, samples=4, warmup_samples=1, processes=2))
    for m in result.measurements:
        assert len(m.cpu_ns) == 4
        assert WARMUP_CPU_NS not in m.cpu_ns


def test_calibration_asks_for_the_target_and_samples_use_its_answer(log):
    log.iters = 777
    result = run(Settings(target_ms=25, samples=3))
    calibrations = [line for _, line in log.requests if line.startswith("calibrate")]
    assert calibrations == [f"calibrate {CASE.id} 25000000"] * 2       # once per library, not per process
    samples = [line for _, line in log.requests if line.startswith("sample")]
    assert all(line == f"sample {CASE.id} 777 1" for line in samples)
    assert all(m.ops == [777] * 3 for m in result.measurements)


def test_a_slow_case_gets_fewer_samples(log):
    # 10 s per sample: 15 s per library allows one round at most, but never fewer than MIN_SAMPLES.
    log.sample_ns = 10_000_000_000
    result = run(Settings(target_ms=10, samples=20))
    assert all(len(m.wall_ns) == in_memory.MIN_SAMPLES for m in result.measurements)
    log.requests.clear()
    log.sample_ns = 1_000_000_000          # 1 s per sample: 15 samples fit in the bound
    result = run(Settings(target_ms=10, samples=20))
    assert all(len(m.wall_ns) == 15 for m in result.measurements)
