import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture
def sslperf_dirs(tmp_path, monkeypatch):
    """A private cache and data dir, so tests never touch the user's."""
    cache, data = tmp_path / "cache", tmp_path / "data"
    monkeypatch.setenv("SSLPERF_CACHE_DIR", str(cache))
    monkeypatch.setenv("SSLPERF_DATA_DIR", str(data))
    return cache, data


@pytest.fixture
def recorded_index(sslperf_dirs):
    """The crates.io index of openssl-src as recorded from the real index
    (a subset of its lines), installed as a fresh cached copy: no network."""
    cache, _ = sslperf_dirs
    (cache / "crates-index").mkdir(parents=True)
    shutil.copy(DATA / "openssl-src.index.jsonl", cache / "crates-index" / "openssl-src.jsonl")
    return cache


def run_cli(*args, env=None, timeout=1200):
    """Run the real `sslperf` command in a subprocess."""
    merged = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "sslperf", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=merged)
