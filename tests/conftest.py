"""What the tests share. Each test gets a private cache and data directory
(never the user's), but what depends only on its inputs is made once and
kept across runs under TEST_CACHE (SSLPERF_TEST_CACHE, default .test-cache
in the checkout): the harness compiled against a library (keyed by the
library and the harness source) and the libraries the end-to-end tests build
(keyed by sslperf's own build cache key). scripts/test.sh starts those
builds before the tests, runs the tests that do not time anything in two
workers, each on a CPU of its own, and then the `timing` tests alone."""

import glob
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
TEST_CACHE = Path(os.environ.get("SSLPERF_TEST_CACHE") or Path(__file__).parent.parent / ".test-cache")
E2E_LIBS = tuple(line for line in (Path(__file__).parent / "e2e-libs.txt").read_text().splitlines()
                 if line and not line.startswith("#"))
FIPS_LIB = "openssl-3.0.8+fips"           # the validated 3.0.8 with its FIPS module; its library is 3.0.8's
assert FIPS_LIB in E2E_LIBS
RUSTLS_LIB = "rustls-0.15+ring"
assert RUSTLS_LIB in E2E_LIBS
WOLFSSL_LIB = "wolfssl"
assert WOLFSSL_LIB in E2E_LIBS
SHARED_LIB = "openssl-1.1.1w+minimal+shared"   # shared objects for `sslperf exec` to give a program
assert SHARED_LIB in E2E_LIBS
ARM_LIB = "openssl-1.1.1w+minimal+aarch64"     # cross-compiled: measured only by a probe (under qemu-user here)
assert ARM_LIB in E2E_LIBS
WINDOWS_LIB = "openssl-1.1.1w+minimal+mingw"   # openssl.exe for a Windows probe (run under Wine here)
assert WINDOWS_LIB in E2E_LIBS


def pytest_configure(config):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if worker:      # xdist sets COLUMNS=80 in its workers; sslperf's output in a pipe is as wide as its content
        os.environ.pop("COLUMNS", None)
        os.environ.pop("LINES", None)
    allowed = sorted(os.sched_getaffinity(0))
    if worker.startswith("gw") and len(allowed) > 1:
        # A worker and all it starts (harness workers, builds) on one CPU: two workers never share one.
        os.sched_setaffinity(0, {allowed[int(worker[2:]) % len(allowed)]})


def pytest_collection_modifyitems(config, items):
    """The tests that need a built library last (stable otherwise): by the
    time the workers reach them, the builds started with the run are done,
    so no worker sits waiting for one while other tests could run."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is not None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """With SSLPERF_TEST_TIMELINE=FILE, each test's worker, start and end
    (seconds since the epoch), and the CPU seconds its worker and the
    worker's ended children spent, appended to FILE: where a run's wall and
    CPU time go, and whether a worker sat idle at the end."""
    timeline = os.environ.get("SSLPERF_TEST_TIMELINE")
    started, cpu = time.time(), _cpu_seconds()
    yield
    if timeline:
        own, children = (after - before for after, before in zip(_cpu_seconds(), cpu))
        with open(timeline, "a") as out:
            out.write(f"{os.environ.get('PYTEST_XDIST_WORKER', '-')} {started:.1f} {time.time():.1f} {own:.2f} "
                      f"{children:.2f} {item.nodeid}\n")


def _cpu_seconds() -> tuple[float, float]:
    """CPU seconds (user + system) of this process, and of its children that have ended."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def private_cache(path: Path) -> Path:
    """A new cache directory at `path` whose compiled harnesses are the ones
    every test shares (they depend only on the library and the harness source)."""
    path.mkdir(parents=True)
    (TEST_CACHE / "harness").mkdir(parents=True, exist_ok=True)
    (path / "harness").symlink_to(TEST_CACHE / "harness", target_is_directory=True)
    return path


@pytest.fixture
def sslperf_dirs(tmp_path, monkeypatch):
    """A private cache and data dir, so tests never touch the user's (the
    compiled harnesses shared, see private_cache)."""
    cache, data = private_cache(tmp_path / "cache"), tmp_path / "data"
    monkeypatch.setenv("SSLPERF_CACHE_DIR", str(cache))
    monkeypatch.setenv("SSLPERF_DATA_DIR", str(data))
    monkeypatch.setenv("SSLPERF_CONFIG_DIR", str(tmp_path / "config"))     # the fleet's credentials
    return cache, data


@pytest.fixture
def cold_dirs(tmp_path, monkeypatch):
    """A private cache and data dir with nothing in them, not even a harness."""
    cache, data = tmp_path / "cold-cache", tmp_path / "cold-data"
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


# `recommend` has no option for how much it measures: every case at the quick depth, 10 samples of 20 ms in each of
# 5 worker processes. A test whose assertions depend on none of that amount (the FIPS advice: what the module
# refuses, what that costs, said at all) runs the real command with the Settings recommend measures with cut to 3
# samples of 5 ms in 3 processes, the fewest the verdict rule still tests. The tests that check the advice's order
# against its own figures measure as recommend does: with so few samples, on a machine busy with builds, the
# per-process verdict and the medians can disagree (a fresh run saw it).
_RECOMMEND_MEASURING_LESS = """
import sys
from sslperf.measure.settings import Settings
from sslperf.recommend import evidence
assert evidence.Settings is Settings, "recommend no longer measures with evidence.Settings: update conftest.py"
evidence.Settings = lambda target_ms, samples, mask=None: Settings(5, 3, mask, processes=3)
from sslperf.cli import main
main(sys.argv[1:])
"""


def run_recommend_measuring_less(*args, env=None, timeout=600):
    """`sslperf recommend ARGS`, the real command in a subprocess, measuring less (see above)."""
    return subprocess.run([sys.executable, "-c", _RECOMMEND_MEASURING_LESS, "recommend", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})


@pytest.fixture(scope="session")
def e2e_env(tmp_path_factory):
    """The cache of the end-to-end tests: the real libraries they build are
    built once (scripts/test.sh starts the builds before the tests; a build
    in progress is waited for, not repeated) and kept for the next run; the
    data directory (store, registrations) is this session's own."""
    return {"SSLPERF_CACHE_DIR": str(TEST_CACHE / "e2e"),
            "SSLPERF_DATA_DIR": str(tmp_path_factory.mktemp("e2e") / "data")}


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


@pytest.fixture(scope="session")
def built_rustls(e2e_env):
    """rustls through rustls-ffi with the ring provider (the quicker of its two to build), by cargo."""
    result = run_cli("libs", "build", RUSTLS_LIB, env=e2e_env, timeout=1800)
    assert result.returncode == 0, result.stderr + result.stdout
    return RUSTLS_LIB


@pytest.fixture(scope="session")
def built_wolfssl(e2e_env):
    """wolfSSL from the wolfssl-sys crate's source, configured by sslperf (autotools), its assembly on."""
    result = run_cli("libs", "build", WOLFSSL_LIB, env=e2e_env, timeout=1800)
    assert result.returncode == 0, result.stderr + result.stdout
    return WOLFSSL_LIB


@pytest.fixture(scope="session")
def built_fips(e2e_env):
    """OpenSSL 3.0.8 built with its FIPS module (self-tested at build); as a
    library it is 3.0.8 itself, so it also stands for OpenSSL 3.0."""
    result = run_cli("libs", "build", FIPS_LIB, env=e2e_env, timeout=1800)
    assert result.returncode == 0, result.stderr + result.stdout
    return FIPS_LIB


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def postgres_url():
    """A private PostgreSQL server on loopback for the session (per xdist worker)."""
    binaries = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    if not binaries:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is not installed; scripts/bootstrap.sh should have installed it")
        pytest.skip("PostgreSQL is not installed")
    bindir = binaries[-1]
    datadir = tempfile.mkdtemp(prefix="sslperf-pg-", dir="/tmp")
    as_postgres = []
    if os.geteuid() == 0:       # initdb refuses root: run the server as the postgres user
        shutil.chown(datadir, "postgres")
        as_postgres = ["runuser", "-u", "postgres", "--"]
    port = free_port()
    subprocess.run([*as_postgres, f"{bindir}/initdb", "-D", datadir, "-A", "trust", "-U", "sslperf"], check=True,
                   capture_output=True, timeout=120)
    options = f"-p {port} -k {datadir} -c listen_addresses=127.0.0.1"
    subprocess.run([*as_postgres, f"{bindir}/pg_ctl", "-D", datadir, "-o", options, "-l", f"{datadir}/log", "-w",
                    "start"], check=True, capture_output=True, timeout=120)
    try:
        yield f"postgresql+psycopg://sslperf@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_postgres, f"{bindir}/pg_ctl", "-D", datadir, "-m", "fast", "stop"], capture_output=True,
                       timeout=120)
        shutil.rmtree(datadir, ignore_errors=True)


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
