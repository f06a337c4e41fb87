"""How long work shows progress, the one way for every verb: on a terminal a rich bar (what, done of total, time
so far); off a terminal (a pipe, a CI log) a plain line when a build enters a phase (fetch, configure, compile n/N,
install, check) and at least every OFF_TERMINAL_EVERY seconds otherwise, so a log never goes silent for minutes
and never floods."""

from __future__ import annotations

import threading
import time

from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

OFF_TERMINAL_EVERY = 30.0       # seconds between lines off a terminal while one step goes on


class Steps:
    """What a long job reports: `update(what, done, total)` (the measuring steps) and, for builds,
    `phase(name, total)` / `advance()` (libs.build's progress protocol)."""

    def __init__(self, console, label: str = "", prefix: bool = True):
        self.console, self.label = console, label if prefix else ""
        self.first = label
        self.on_terminal = console.is_terminal
        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=console, transient=True, disable=not self.on_terminal)
        self.task = None
        self.current, self.said_at, self.done, self.total = "", None, 0, None
        self.step_at = time.monotonic()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.heartbeat: threading.Thread | None = None

    def __enter__(self) -> Steps:
        self.bar.__enter__()
        self.task = self.bar.add_task(escape(self.first or "starting"), total=None)
        if not self.on_terminal:
            # A step can last minutes (a build's compile, a round of GETs): a timer says it is still going.
            self.heartbeat = threading.Thread(target=self._beat, name="sslperf-progress", daemon=True)
            self.heartbeat.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        if self.heartbeat is not None:
            self.heartbeat.join(timeout=5)
        self.bar.__exit__(*exc)

    def _beat(self) -> None:
        while not self.stop.wait(min(1.0, OFF_TERMINAL_EVERY / 4)):
            with self.lock:
                due = self.said_at is not None and time.monotonic() - self.said_at >= OFF_TERMINAL_EVERY
            if due:
                self._line(still=True)

    def update(self, what: str, done: int, total: int | None) -> None:
        """The measuring verbs' progress: `what` is being done, `done` of `total` steps."""
        if what != self.current:
            self.step_at = time.monotonic()
        self.done, self.total = done, total
        self.current = what
        self.bar.update(self.task, description=escape(what), completed=done, total=total)
        self._line()

    __call__ = update

    def phase(self, name: str, total: int | None = None) -> None:
        what = f"{self.label}: {name}" if self.label else name
        self.current, self.done, self.total, self.step_at = what, 0, total, time.monotonic()
        self.bar.update(self.task, description=escape(what), total=total, completed=0)
        self._line(force=True)

    def advance(self, steps: int = 1) -> None:
        self.done += steps
        self.bar.advance(self.task, steps)
        self._line()

    def building(self, label: str) -> Steps:
        """A build's progress inside this job (its phases shown under `label`)."""
        self.label = label
        return self

    def _line(self, force: bool = False, still: bool = False) -> None:
        """Off a terminal: the current step as a line, on a phase change or when the last is old enough (the
        heartbeat's lines say how long the step has gone on)."""
        with self.lock:
            now = time.monotonic()
            if self.on_terminal or not (force or self.said_at is None or now - self.said_at >= OFF_TERMINAL_EVERY):
                return
            self.said_at = now
            count = f" ({self.done}/{self.total})" if self.total else ""
            age = now - self.step_at
            going = f", still going after {age:.0f} s" if still and age >= OFF_TERMINAL_EVERY / 2 else ""
            self.console.print(f"[dim]… {escape(self.current)}{count}{going}[/dim]", soft_wrap=True)


def steps(console, label: str = "", prefix: bool = True) -> Steps:
    """Progress for a long job: `label` shown first, and (with `prefix`) before each build phase."""
    return Steps(console, label, prefix)
