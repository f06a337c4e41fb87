"""sslperf's private (0700) temporary directories, and the sweep of those a
killed sslperf left behind (test keys, half-unpacked bundles of hundreds of
MB).

Each is made by mkdtemp, in TMPDIR as `sslperf-KIND-XXXXXXXX`, or in the
cache's tmp/ as `KIND-XXXXXXXX` (beside libs/ and sources/: one rename away),
and holds an owner mark, `.sslperf-owner`, which the process that made it
keeps flock()ed for the directory's life. The kernel drops that lock when
the process ends, however it ends (kill -9 included), and a lock is not
fooled by a reused PID: a mark that another process can lock belongs to a
sslperf that is gone, and `sweep`, run at the start of every command, removes
its directory. A directory whose mark is held is a live sslperf's and is left
alone; so is one without a mark (made by something else, or by a sslperf
this very instant), one of another user and anything that is not a plain
directory.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sslperf import paths

OWNER = ".sslperf-owner"
TMP_PREFIX = "sslperf-"         # in TMPDIR, which others share; the cache's tmp/ is sslperf's alone
_SIGNATURE = b"sslperf "        # a mark's first bytes, written once it is locked

_held: dict[Path, int] = {}     # each directory this process made and has not removed: its mark's descriptor


def make(kind: str, *, cache: bool = False) -> Path:
    """A new private directory owned by this process until `remove`: in TMPDIR, or in the cache's tmp/
    (`cache`: for what is renamed into the cache, or is too large for a RAM-backed /tmp)."""
    parent = paths.subdir("tmp") if cache else None
    path = Path(tempfile.mkdtemp(prefix=f"{kind}-" if cache else f"{TMP_PREFIX}{kind}-", dir=parent))
    try:
        mark = os.open(path / OWNER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        shutil.rmtree(path, ignore_errors=True)
        raise
    try:
        fcntl.flock(mark, fcntl.LOCK_EX)     # waits only while a sweep looks at the mark, still empty
        os.write(mark, _SIGNATURE + f"{os.getpid()}: this directory's owner, while it holds a lock here\n".encode())
    except OSError:
        os.close(mark)
        shutil.rmtree(path, ignore_errors=True)
        raise
    _held[path] = mark
    return path


def remove(path: Path) -> None:
    """`path` (from `make`) removed, its mark last, and its lock let go."""
    mark = _held.pop(path, None)
    _delete(path)
    if mark is not None:
        os.close(mark)


@contextmanager
def private_dir(kind: str, *, cache: bool = False) -> Iterator[Path]:
    """A directory from `make`, removed when the block ends."""
    path = make(kind, cache=cache)
    try:
        yield path
    finally:
        remove(path)


def sweep() -> None:
    """Remove the directories whose sslperf is gone. A listing of TMPDIR and of the cache's tmp/, and a lock
    tried on each of sslperf's: milliseconds. Never fails: what cannot be looked at is left as it is."""
    for parent, prefix in ((tempfile.gettempdir, TMP_PREFIX), (lambda: paths.cache_path() / "tmp", "")):
        try:
            with os.scandir(parent()) as entries:
                found = [e.path for e in entries if e.name.startswith(prefix) and e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for path in found:
            try:
                _sweep_one(path)
            except OSError:
                pass


def _sweep_one(path: str) -> None:
    uid = os.getuid()
    directory = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if os.fstat(directory).st_uid != uid:
            return
        try:        # O_NONBLOCK: a FIFO by that name must not stop the command
            mark = os.open(OWNER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=directory)
        except FileNotFoundError:
            return
    finally:
        os.close(directory)
    try:
        found = os.fstat(mark)
        if not stat.S_ISREG(found.st_mode) or found.st_uid != uid:
            return
        try:
            fcntl.flock(mark, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return      # its sslperf is alive
        if os.read(mark, len(_SIGNATURE)) == _SIGNATURE:     # empty: a sslperf is making it this very instant
            _delete(Path(path))
    finally:
        os.close(mark)


def _delete(path: Path) -> None:
    """Everything in `path` but the mark, then the mark and `path`: one stopped half-way is still swept."""
    try:
        with os.scandir(path) as entries:
            inside = [(e.path, e.is_dir(follow_symlinks=False)) for e in entries if e.name != OWNER]
    except OSError:
        inside = []
    for entry, is_dir in inside:
        try:
            shutil.rmtree(entry) if is_dir else os.unlink(entry)
        except OSError:
            pass
    shutil.rmtree(path, ignore_errors=True)
