"""Verdicts on a shared CPU (issue 50): samples that waited for their CPU are never the units of a wall-time verdict,
CPU time stands in where a case's work is all on the CPU, `?` where nothing does, and `?` with fewer than 3 worker
processes a side. The measurements are made by hand so that each test knows exactly which samples waited."""

import os
import re

import pytest
from rich.console import Console

from sslperf import figures
from sslperf.report import terminal
from sslperf.results import LibInfo, Measurement, Run
from sslperf.verdict import judge, waits

PROCESSES, ROUNDS = 5, 4
NS = 10_000_000       # a sample's CPU time: 10 ms


def measurement(lib: str, family: str = "cipher", waited_rounds: set[int] = frozenset(), wait_ns: int = 9 * NS,
                cpu_ns: int = NS, processes: int = PROCESSES, seed: int = 0) -> Measurement:
    """PROCESSES × ROUNDS samples of `cpu_ns` CPU each (jittered by under 0.5%); the rounds in `waited_rounds`
    waited `wait_ns` for the CPU, so their wall time is CPU + wait."""
    n = processes * ROUNDS
    cpu = [cpu_ns + (i * 7919 + seed * 104729) % (cpu_ns // 200) for i in range(n)]
    waits_ = [wait_ns if i in waited_rounds else 0 for i in range(n)]
    case = {"cipher": "cipher/aes-128-gcm/encrypt/16384", "tls-loopback": "tls/loopback/x"}[family]
    m = Measurement(case, family, "AEAD ciphers", "aes-128-gcm", "encrypt", 16384, "record", lib, "ok", None,
                    "bytes", 16384, [1000] * n, [c + w for c, w in zip(cpu, waits_)], cpu)
    m.figures = {figures.PROCESS: [100 + i // ROUNDS for i in range(n)], figures.ROUND: list(range(n)),
                 figures.WAIT: waits_, figures.SLICES: [10 if w else 0 for w in waits_]}
    return m


def alternating(lib_waits_on_even: bool) -> set[int]:
    """Half of every process's rounds: what a CPU-bound loop did to twins in issue 50 (one side's sample waited
    while the other's, a moment later, did not)."""
    return {i for i in range(PROCESSES * ROUNDS) if (i % 2 == 0) == lib_waits_on_even}


def test_twins_whose_samples_waited_in_turn_are_a_tie_on_cpu_time():
    a, b = measurement("a", waited_rounds=alternating(True)), measurement("b", waited_rounds=alternating(False), seed=1)
    change = judge(a, b, "wall", paired=True)
    assert change.verdict == "~", change
    assert change.basis == "cpu" and "20 of 40 samples waited" in change.waited
    assert abs(change.percent) < 1


def test_per_process_centre_is_the_median_of_logs_so_inverse_ratios_cancel():
    """Without the waits, wall time alone: rounds of ratio 10 and 0.1 in equal numbers are no change (the median of
    4 ratios taken linearly was (0.1 + 10) / 2 = 5, '+400%' with a tight interval). The waits are not recorded
    here (a run from before they were), so nothing is left out and wall time is what is judged."""
    a, b = measurement("a", waited_rounds=alternating(True)), measurement("b", waited_rounds=alternating(False))
    for m in (a, b):
        m.figures.pop(figures.WAIT)
    change = judge(a, b, "wall", paired=True)
    assert change.basis == "wall"
    assert change.verdict == "~" and abs(change.percent) < 5, change


def test_a_few_waited_samples_are_left_out_and_wall_time_stands():
    a, b = measurement("a", waited_rounds={3}), measurement("b", waited_rounds={8, 9}, seed=1)
    chosen = waits.basis([a, b], "wall")
    assert chosen.metric == "wall" and "left out" in chosen.reason
    assert chosen.keep[0][3] is False and chosen.keep[1][8] is False and sum(chosen.keep[1]) == 18
    change = judge(a, b, "wall", paired=True)
    assert change.basis == "wall" and change.verdict == "~" and abs(change.percent) < 1


def test_a_real_difference_is_still_called_on_cpu_time_under_load():
    a = measurement("a", waited_rounds=alternating(True))
    b = measurement("b", waited_rounds=alternating(False), cpu_ns=NS // 2)       # twice as fast
    change = judge(a, b, "wall", paired=True)
    assert change.basis == "cpu" and change.verdict == "faster" and 95 < change.percent < 105


def test_a_case_with_a_peer_whose_samples_waited_is_unknown_with_the_reason():
    a = measurement("a", "tls-loopback", waited_rounds=alternating(True))
    b = measurement("b", "tls-loopback", waited_rounds=alternating(False))
    change = judge(a, b, "wall", paired=True)
    assert change.verdict == "?" and "no stand-in" in change.why


def test_other_metrics_are_never_switched():
    a, b = measurement("a", waited_rounds=alternating(True)), measurement("b", waited_rounds=alternating(False))
    assert waits.basis([a, b], "cpu").metric == "cpu" and waits.basis([a, b], "cpu").reason is None
    assert judge(a, b, "cpu", paired=True).basis == "cpu"


@pytest.mark.parametrize("processes", [1, 2])
def test_fewer_than_three_worker_processes_a_side_is_unknown_never_a_sample_test(processes):
    """Issue 50 item 2: an interrupted run with one worker process per side got ▲ at p=0.029 from a test on its
    samples; the samples of one process are not independent."""
    a = measurement("a", processes=processes)
    b = measurement("b", processes=processes, cpu_ns=NS // 2)
    for paired in (True, False):
        change = judge(a, b, "wall", paired=paired)
        assert change.verdict == "?" and change.p is None, change
        assert f"{processes} and {processes} worker processes" in change.why


def printed(run: Run) -> str:
    console = Console(record=True, width=250, file=open(os.devnull, "w"))
    terminal.print_run(run, console)
    return console.export_text()


def two_libraries(*measurements: Measurement) -> Run:
    run = Run.new({}, {"cpus": 2})
    run.libs = [LibInfo(name, "openssl", "1", name, "default", "built") for name in ("a", "b")]
    run.measurements = list(measurements)
    return run


def test_the_terminal_table_shows_cpu_time_and_says_so_where_samples_waited():
    """The row's figures are CPU time like its change (1,000 × 16 KiB in 10 ms is 1.6 GB/s; in wall time, with
    the waits, half the samples would read 164 MB/s and the median would fall between), the change is marked cpu,
    and the caption says why."""
    text = printed(two_libraries(measurement("a", waited_rounds=alternating(True)),
                                 measurement("b", waited_rounds=alternating(False), cpu_ns=NS // 2)))
    assert re.search(r"│ 1\.6\d GB/s ±0\.\d% │ 3\.2\d GB/s ±0\.\d% ★ │ ▲ \+(99|100)\.\d% \[.*\] cpu │", text), text
    assert "20 of 40 samples" in " ".join(text.split()) and "CPU time, which leaves the waits out" in " ".join(
        text.split())


def test_the_change_column_gives_its_interval_as_low_high_and_names_the_paired_basis():
    """Issue 50 item 3: a change beside two medians reads as their ratio unless the table says otherwise; a ratio's
    interval is not symmetric, so `±` would misstate it."""
    text = " ".join(printed(two_libraries(measurement("a"), measurement("b", cpu_ns=NS * 2))).split())
    assert re.search(r"▼ -50\.\d% \[-50\.\d, -49\.\d\]", text), text
    assert "paired: each worker process's median of the round-by-round ratios" in text
    assert "not the ratio of the medians shown" in text


def test_a_small_change_on_cpu_time_is_not_called_in_a_table_row_either():
    """On CPU time beside another task the threshold is at least waits.CONTENDED (5%), in the tables too: they
    judge a pair on its row's basis (a third library whose samples waited puts the whole row on CPU time)."""
    a = measurement("a", waited_rounds=alternating(True))
    b = measurement("b", waited_rounds=alternating(False), cpu_ns=round(NS / 1.03), seed=1)     # 3% faster
    assert judge(a, b, "wall", paired=True).verdict == "~"
    c, d = measurement("c"), measurement("d", cpu_ns=round(NS / 1.03), seed=2)                   # no waits
    row = [c, d, measurement("e", waited_rounds=alternating(True), seed=3)]
    alone, in_row = judge(c, d, "wall", paired=True), judge(c, d, "wall", paired=True, row=row)
    assert alone.verdict == "faster" and alone.basis == "wall"
    assert in_row.verdict == "~" and in_row.basis == "cpu" and in_row.threshold == waits.CONTENDED
    text = printed(two_libraries(a, b))
    assert re.search(r"~ \+[23]\.\d% \[.*\] cpu", text), text


def test_a_loopback_round_that_waited_is_spread_over_its_requests():
    """A loopback round's wait (its client threads' and its server's) is spread over its GETs by their wall time, so
    a round that waited 20% of its loop flags every GET of it, and one that waited 0.1% none."""
    from sslperf.measure import servers

    def got(wait_ns: int) -> Measurement:
        m = measurement("a", "tls-loopback")
        m.wall_ns = [10_000_000] * 3
        return servers._waited(m, {"wait_ns": wait_ns, "loop_ns": 30_000_000}, server_waited=0)

    assert waits.waited(got(6_000_000)) == [True] * 3
    assert waits.waited(got(30_000)) == [False] * 3
    unsaid = measurement("a", "tls-loopback")
    unsaid.figures.pop(figures.WAIT)
    assert figures.WAIT not in servers._waited(unsaid, {"loop_ns": 1}, 0).figures     # a client that did not say
