"""Where sslperf keeps things: a cache (sources, builds) and a data dir.

Both can be moved with SSLPERF_CACHE_DIR / SSLPERF_DATA_DIR, which the tests
use to stay out of the user's real cache.
"""

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import platformdirs


def cache_dir() -> Path:
    override = os.environ.get("SSLPERF_CACHE_DIR")
    path = Path(override) if override else Path(platformdirs.user_cache_dir("sslperf"))
    _make(path, "cache directory", "SSLPERF_CACHE_DIR")
    return path


def data_dir() -> Path:
    override = os.environ.get("SSLPERF_DATA_DIR")
    path = Path(override) if override else Path(platformdirs.user_data_dir("sslperf"))
    _make(path, "data directory", "SSLPERF_DATA_DIR")
    return path


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
