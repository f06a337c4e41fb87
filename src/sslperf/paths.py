"""Where sslperf keeps things: a cache (sources, builds) and a data dir.

Both can be moved with SSLPERF_CACHE_DIR / SSLPERF_DATA_DIR, which the tests
use to stay out of the user's real cache.
"""

import os
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
