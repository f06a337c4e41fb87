"""How long work shows progress, the one way for every verb: on a terminal a rich bar (what, done of total, time
so far); off a terminal (a pipe, a CI log) a plain line when a build enters a phase (fetch, configure, compile n/N,
install, check) and at least every OFF_TERMINAL_EVERY seconds otherwise, so a log never goes silent for minutes
and never floods."""

from __future__ import annotations

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

    def __enter__(self) -> Steps:
        self.bar.__enter__()
        self.task = self.bar.add_task(escape(self.first or "starting"), total=None)
        return self

    def __exit__(self, *exc) -> None:
        self.bar.__exit__(*exc)

    def update(self, what: str, done: int, total: int | None) -> None:
        """The measuring verbs' progress: `what` is being done, `done` of `total` steps."""
        self.done, self.total = done, total
        self.current = what
        self.bar.update(self.task, description=escape(what), completed=done, total=total)
        self._line()

    __call__ = update

    def phase(self, name: str, total: int | None = None) -> None:
        what = f"{self.label}: {name}" if self.label else name
        self.current, self.done, self.total = what, 0, total
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

    def _line(self, force: bool = False) -> None:
        """Off a terminal: the current step as a line, on a phase change or when the last is old enough."""
        now = time.monotonic()
        if self.on_terminal or not (force or self.said_at is None or now - self.said_at >= OFF_TERMINAL_EVERY):
            return
        self.said_at = now
        count = f" ({self.done}/{self.total})" if self.total else ""
        self.console.print(f"[dim]… {escape(self.current)}{count}[/dim]", soft_wrap=True)


def steps(console, label: str = "", prefix: bool = True) -> Steps:
    """Progress for a long job: `label` shown first, and (with `prefix`) before each build phase."""
    return Steps(console, label, prefix)
