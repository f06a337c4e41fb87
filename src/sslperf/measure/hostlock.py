"""One measurement at a time on a host that serves a fleet: a fleet worker marks the host for as long as it runs
(a shared lock on WORKER_MARK), and while it is marked every run — the fleet's and a user's own — holds HOST_LOCK
for its whole measurement, so none competes with another for the CPUs. On a host without a fleet worker runs are
not serialised (a user may mean to compare two things at once). Both are flock(2) locks: the kernel lets them go
when their process dies, so a killed run or worker never leaves the host locked."""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

HOST_LOCK = Path(tempfile.gettempdir()) / "sslperf-measuring.lock"
WORKER_MARK = Path(tempfile.gettempdir()) / "sslperf-fleet-worker.lock"


def _open(path: Path, create: bool = True) -> int:
    return os.open(path, os.O_RDWR | (os.O_CREAT if create else 0) | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)


@contextlib.contextmanager
def serving() -> Iterator[None]:
    """A fleet worker's mark on this host, held while it serves (shared: several workers may run here)."""
    fd = _open(WORKER_MARK)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)


def fleet_worker_here() -> bool:
    """Whether a fleet worker serves this host now (its mark is held by a live process)."""
    try:
        fd = _open(WORKER_MARK, create=False)          # no mark made where no worker ever ran
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


@contextlib.contextmanager
def measuring(waiting: Callable[[], None] = lambda: None, always: bool = False) -> Iterator[None]:
    """Hold this host's measuring lock while a run measures, when a fleet worker serves the host (or `always`);
    `waiting` is told when another measurement holds it first."""
    if not always and not fleet_worker_here():
        yield
        return
    fd = _open(HOST_LOCK)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            waiting()
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
