"""Where sslperf keeps things: a cache (sources, builds) and a data dir.

Both can be moved with SSLPERF_CACHE_DIR / SSLPERF_DATA_DIR, which the tests
use to stay out of the user's real cache.
"""

import fcntl
import os
import tarfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import platformdirs


def cache_dir() -> Path:
    path = cache_path()
    _make(path, "cache directory", "SSLPERF_CACHE_DIR")
    return path


def cache_path() -> Path:
    """Where the cache is, made or not (for a look that must not make it)."""
    override = os.environ.get("SSLPERF_CACHE_DIR")
    return Path(override) if override else Path(platformdirs.user_cache_dir("sslperf"))


def data_dir() -> Path:
    override = os.environ.get("SSLPERF_DATA_DIR")
    path = Path(override) if override else Path(platformdirs.user_data_dir("sslperf"))
    _make(path, "data directory", "SSLPERF_DATA_DIR")
    return path


def config_path() -> Path:
    """Where sslperf keeps what configures it (the fleet's credentials), made or not: SSLPERF_CONFIG_DIR, else the
    user's config dir."""
    override = os.environ.get("SSLPERF_CONFIG_DIR")
    return Path(override) if override else Path(platformdirs.user_config_dir("sslperf"))


@contextmanager
def locked(name: str, waiting: Callable[[], None] | None = None) -> Iterator[None]:
    """An exclusive lock `name` among the sslperf processes sharing this cache
    (two builds of one library, two unpackings of one source); `waiting` is
    called first when another process holds it."""
    with open(subdir("locks") / f"{name}.lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting:
                waiting()
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def subdir(name: str) -> Path:
    """A named directory under the cache (libs, sources, crates, tmp)."""
    path = cache_dir() / name
    _make(path, "cache directory", "SSLPERF_CACHE_DIR")
    return path


def _make(path: Path, what: str, variable: str) -> None:
    """`path` made if missing; a place that cannot be made is one paragraph naming the variable that moves it."""
    from sslperf.errors import SslperfError

    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SslperfError(f"Cannot make sslperf's {what} {path}: {exc.strerror or exc}.",
                           hint=f"Set {variable} to a directory you can write to.") from None


def unpack(tar: tarfile.TarFile, dest: Path) -> None:
    """Extract a source archive into `dest`, refusing members that would land
    outside it, links leading out, and devices: tarfile's `data` filter where
    this Python has it (3.11.4+), the same checks by hand before that (Debian
    12 ships 3.11.2)."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter="data")
        return
    root = dest.resolve()
    for member in tar.getmembers():
        target = (root / member.name).resolve()
        linked = (target.parent / member.linkname).resolve() if member.issym() else (
            (root / member.linkname).resolve() if member.islnk() else target)
        if (member.isdev() or not target.is_relative_to(root) or not linked.is_relative_to(root)
                or os.path.isabs(member.name)):
            raise tarfile.TarError(f"member {member.name!r} would be written outside the directory or is a device")
    tar.extractall(dest)
