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
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_dir() -> Path:
    override = os.environ.get("SSLPERF_DATA_DIR")
    path = Path(override) if override else Path(platformdirs.user_data_dir("sslperf"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def subdir(name: str) -> Path:
    """A named directory under the cache (libs, sources, crates, tmp)."""
    path = cache_dir() / name
    path.mkdir(parents=True, exist_ok=True)
    return path
