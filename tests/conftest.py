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


@pytest.fixture(scope="session")
def e2e_env(tmp_path_factory):
    """A private cache shared by the end-to-end tests of one session, so the
    real OpenSSL they build is built once."""
    root = tmp_path_factory.mktemp("e2e")
    return {"SSLPERF_CACHE_DIR": str(root / "cache"), "SSLPERF_DATA_DIR": str(root / "data")}


@pytest.fixture(scope="session")
def built_openssl(e2e_env):
    """The name of an openssl-1.1.1w built from the crate (the quickest to
    build) in the e2e cache; use it inside `in_e2e_cache`."""
    result = run_cli("libs", "build", "openssl-1.1.1w", env=e2e_env, timeout=1800)
    assert result.returncode == 0, result.stderr + result.stdout
    return "openssl-1.1.1w"


@pytest.fixture(scope="session")
def built_openssl3(e2e_env):
    """An OpenSSL 3.6 built from the crate (it has ML-KEM, ML-DSA and the hybrid TLS group)."""
    result = run_cli("libs", "build", "openssl-3.6", env=e2e_env, timeout=1800)
    assert result.returncode == 0, result.stderr + result.stdout
    return "openssl-3.6"


@pytest.fixture
def in_e2e_cache(e2e_env, monkeypatch):
    for key, value in e2e_env.items():
        monkeypatch.setenv(key, value)
    return e2e_env


@pytest.fixture
def sslperf_here(sslperf_dirs, capsys):
    """The `sslperf` command run inside the test's process: for what ends
    before any work (option checks, refusals), without a new interpreter."""
    from sslperf.cli import main

    def invoke(*args) -> subprocess.CompletedProcess:
        with pytest.raises(SystemExit) as done:
            main([str(a) for a in args])
        captured = capsys.readouterr()
        return subprocess.CompletedProcess(args, done.value.code, captured.out, captured.err)
    return invoke
