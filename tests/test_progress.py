"""Progress off a terminal (a pipe, a CI log): a line when a step starts, and while one step goes on a line at
least every OFF_TERMINAL_EVERY seconds, from a timer — a step of minutes never leaves the log silent."""

import io
import time

from rich.console import Console

from sslperf.cli import progress


def piped() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=200), out


def lines_of(out: io.StringIO) -> list[str]:
    return [line for line in out.getvalue().splitlines() if line.startswith("…")]


def test_one_long_step_keeps_saying_it_is_still_going(monkeypatch):
    monkeypatch.setattr(progress, "OFF_TERMINAL_EVERY", 0.2)
    console, out = piped()
    with progress.steps(console, "measuring") as steps:
        steps.update("tls/loopback/tls1.3/x25519/ecdsa-p256/new (pass 1 of 3)", 0, 12)
        deadline = time.monotonic() + 30
        while len(lines_of(out)) < 3 and time.monotonic() < deadline:     # no update: only the timer can print
            time.sleep(0.05)
    said = lines_of(out)
    assert len(said) >= 3, said
    assert said[0] == "… tls/loopback/tls1.3/x25519/ecdsa-p256/new (pass 1 of 3) (0/12)"
    assert all(line.startswith(said[0] + ", still going after ") for line in said[1:]), said


def test_the_timer_stops_with_the_job_and_says_nothing_on_a_terminal(monkeypatch):
    monkeypatch.setattr(progress, "OFF_TERMINAL_EVERY", 0.2)
    console, out = piped()
    with progress.steps(console, "measuring") as steps:
        steps.update("a step", 1, 2)
    after = len(lines_of(out))
    time.sleep(0.6)
    assert len(lines_of(out)) == after == 1 and not steps.heartbeat.is_alive()
    terminal = Console(file=io.StringIO(), force_terminal=True, width=100)
    with progress.steps(terminal, "measuring") as steps:
        steps.update("a step", 1, 2)
    assert steps.heartbeat is None
