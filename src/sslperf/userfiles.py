"""The user's files: what sslperf reads from a path the user names (at most a
cap, whatever the path is) and writes to one (never a file it did not write).

Writing rule: a file that exists is replaced only when sslperf wrote it (the
ledger in the data directory has its path and the sha256 of what was written,
and the file still holds exactly that) or when the user says --force. A
symbolic link is never written through; a device or pipe (/dev/null,
/dev/stdout) is a stream and is written to, not replaced. A file is written
whole to a private temporary name beside the target and renamed over it, so a
failure leaves the old file, never half a new one.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import stat
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from sslperf import paths
from sslperf.errors import SslperfError

LEDGER = "written-files.json"         # in the data dir: {absolute path: {"sha256": …, "size": …}}
LEDGER_ENTRIES = 5000                 # the newest are kept; an older output is then the user's again
NOTHING_DONE = "This was checked before any work, so nothing was done yet."


class Refused(SslperfError):
    """A path sslperf will not write to, with the reason and the way out."""


# ---- reading ------------------------------------------------------------------

def read(name: str | Path, cap: int, what: str) -> bytes:
    """The bytes of a file, device or pipe the user named (`-`: standard
    input), reading at most `cap` + 1 bytes: /dev/zero or an endless stream
    is refused at the cap instead of filling memory."""
    where = "standard input" if str(name) == "-" else str(name)
    try:
        if str(name) == "-":
            data = sys.stdin.buffer.read(cap + 1)
        else:
            with open(name, "rb") as source:
                data = source.read(cap + 1)
    except OSError as exc:
        raise SslperfError(f"Cannot read {where}: {why(exc, Path(str(name)))}.",
                           hint=f"Give the {what} as a file this user can read.") from None
    if len(data) > cap:
        raise SslperfError(f"{where} holds more than {cap:,} bytes, far more than any {what} (or it never ends, "
                           "as a device or an endless stream does); nothing was read from it.",
                           hint=f"Give the {what} as it was written, one per file.")
    return data


# ---- the ledger of sslperf's own outputs ------------------------------------------

def _key(path: Path) -> str:
    """The ledger's name of `path`: absolute, its directories resolved, the file name itself not followed."""
    path = Path(os.path.abspath(path))
    return str(path.parent.resolve() / path.name)


def _ledger_path() -> Path:
    return paths.data_dir() / LEDGER


def _load(ledger: Path) -> dict:
    try:
        data = json.loads(ledger.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@contextlib.contextmanager
def _locked_ledger():
    """The ledger for reading and updating, under an exclusive lock (two sslperf processes at once)."""
    ledger = _ledger_path()
    with open(ledger.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        entries = _load(ledger)
        yield entries
        while len(entries) > LEDGER_ENTRIES:          # dicts keep insertion order: the oldest go first
            entries.pop(next(iter(entries)))
        tmp = ledger.with_name(f".{ledger.name}.{os.getpid()}")
        tmp.write_text(json.dumps(entries))
        tmp.replace(ledger)


def _record(path: Path, digest: str, size: int) -> None:
    key = _key(path)
    try:
        with _locked_ledger() as entries:
            entries.pop(key, None)                    # re-inserted: newest last
            entries[key] = {"sha256": digest, "size": size}
    except OSError:             # the file is written; only the right to replace it later without --force is lost
        pass


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def wrote(path: Path) -> bool:
    """Whether `path` is a regular file sslperf wrote and nobody changed since."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode):
        return False
    entry = _load(_ledger_path()).get(_key(path))
    if not isinstance(entry, dict) or entry.get("size") != info.st_size:
        return False
    try:
        return _sha256(path) == entry.get("sha256")
    except OSError:
        return False


# ---- the writing rule ---------------------------------------------------------------

def check(path: Path, force: bool = False, what: str | None = None) -> None:
    """Refused unless sslperf may write the file `path` (see the module's rule)."""
    what = what or str(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise Refused(f"Cannot use {what}: {why(exc, path)}.", hint="Give another path.") from None
    if stat.S_ISLNK(info.st_mode):
        if _is_stream(path):
            return
        raise Refused(f"{what} is a symbolic link (to {os.readlink(path)}); sslperf does not write through links, "
                      "nor replace them.", hint="Give the path of the file itself, or another name.")
    if stat.S_ISDIR(info.st_mode):
        raise Refused(f"Cannot use {what}: it is a directory; give a file name.")
    if not stat.S_ISREG(info.st_mode):
        return                                        # a device or a pipe: written to, never replaced
    if force or wrote(path):
        return
    raise Refused(f"{what} exists and sslperf did not write it (or it was changed since); it was left as it is.",
                  hint="Give another name, or add --force to replace it.")


def _is_stream(path: Path) -> bool:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def write(path: Path, data: bytes | str, force: bool = False, what: str | None = None) -> None:
    """Write `data` to `path` under the rule (checked again now: the file may
    have appeared since the check before the work)."""
    if isinstance(data, str):
        data = data.encode()
    check(path, force, what)
    if os.path.exists(path) and _is_stream(path):
        with open(path, "wb") as stream:
            stream.write(data)
        return
    handle, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=f".{Path(path).name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            os.fchmod(out.fileno(), 0o666 & ~_umask())
        os.replace(tmp, path)                         # replaces a name, never follows one
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _record(Path(path), hashlib.sha256(data).hexdigest(), len(data))


def place(staged: Path, path: Path, force: bool = False) -> None:
    """Move a file a tool wrote into a private directory to `path` under the rule."""
    check(path, force)
    os.replace(staged, path)
    _record(Path(path), _sha256(path), path.stat().st_size)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@dataclass
class Batch:
    """Several files of one output directory (a report's pages and figures),
    all checked before the first is written, so a refusal leaves nothing half
    replaced."""
    directory: Path
    force: bool = False
    files: dict[str, bytes] = field(default_factory=dict)

    def add(self, name: str, data: bytes | str) -> Path:
        self.files[name] = data.encode() if isinstance(data, str) else data
        return self.directory / name

    def mine(self, name: str) -> bool:
        """Whether `name` in the directory is to be written by this batch or is an earlier output of sslperf's."""
        return name in self.files or wrote(self.directory / name)

    def commit(self) -> list[Path]:
        refused = []
        for name in self.files:
            try:
                check(self.directory / name, self.force)
            except Refused as exc:
                refused.append((name, exc))
        if refused:
            name, first = refused[0]
            others = f" (and {len(refused) - 1} more of its {len(self.files)} files)" if len(refused) > 1 else ""
            raise Refused(f"{first.message.rstrip('.')}{others}; nothing was written to {self.directory}.",
                          hint=first.hint)
        self.directory.mkdir(parents=True, exist_ok=True)
        written = []
        for name, data in self.files.items():
            write(self.directory / name, data, self.force)
            written.append(self.directory / name)
        return written


# ---- the checks before any work ----------------------------------------------------

def writable_dir(path: Path, what: str) -> None:
    """`path` made if missing, then really written to (a probe file, removed
    at once): permissions, read-only mounts and pseudo-filesystems such as
    /proc all show up here rather than after a long run."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise Refused(f"Cannot use {what}: {_nearest_file(path)} is a file, so no directory can be made "
                      "under it.", hint=NOTHING_DONE) from None
    except OSError as exc:
        raise Refused(f"Cannot use {what}: cannot make the directory {path} ({why(exc, path)}).",
                      hint=NOTHING_DONE) from None
    try:
        with tempfile.TemporaryFile(dir=path, prefix=".sslperf-probe-"):
            pass
    except OSError as exc:
        raise Refused(f"Cannot use {what}: the directory {path} cannot be written ({why(exc, path)}).",
                      hint=NOTHING_DONE) from None


def check_file_target(path: Path, force: bool, what: str) -> None:
    """Before any work: `path` may be written (the rule) and its directory can be."""
    try:
        check(path, force, what)
    except Refused as exc:
        raise Refused(exc.message, hint=f"{exc.hint} {NOTHING_DONE}" if exc.hint else NOTHING_DONE) from None
    if _is_stream(path):
        if not os.access(path, os.W_OK):
            raise Refused(f"Cannot use {what}: it cannot be written by this user.", hint=NOTHING_DONE)
        return
    writable_dir(Path(os.path.abspath(path)).parent, what)
    if path.exists() and not os.access(path, os.W_OK):
        raise Refused(f"Cannot use {what}: the file exists and cannot be written by this user.", hint=NOTHING_DONE)


def _nearest_file(path: Path) -> Path:
    """The first part of `path` that exists and is not a directory (the reason no directory can be made)."""
    for parent in [path, *path.parents]:
        if parent.exists():
            return parent
    return path


def why(exc: OSError, path: Path) -> str:
    if exc.errno == errno.ENOTDIR:
        return f"{_nearest_file(path)} is a file, not a directory"
    if exc.errno == errno.EROFS:
        return "a read-only file system"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EISDIR:
        return "it is a directory"
    if exc.errno == errno.ENOENT and str(path).startswith(("/proc", "/sys")):
        return "a kernel pseudo-filesystem, which holds no files of yours"
    return exc.strerror or str(exc)
