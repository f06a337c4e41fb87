"""The store on SQLite and on a real PostgreSQL server (started by the
test from the postgresql package that .ci/run installs)."""

import glob
import multiprocessing
import os
import shutil
import socket
import subprocess
import tempfile

import pytest

from sslperf.errors import SslperfError
from sslperf.results import LibInfo, Measurement, Run
from sslperf.store import Store


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def postgres_url():
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
    port = _free_port()
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


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    if request.param == "sqlite":
        return Store(f"sqlite:///{tmp_path / 'runs.db'}")
    url = request.getfixturevalue("postgres_url")
    store = Store(url)
    for row in store.list():          # one server for the session: start each test empty
        store.delete(row["id"])
    return store


def make_run(libs=("openssl-a", "openssl-b"), cases=("cipher/aes-128-gcm/encrypt/16", "kex/x25519/derive")) -> Run:
    run = Run.new({"target_ms": 20, "samples": 3}, {"host": "h", "cpu_model": "test cpu"})
    run.libs = [LibInfo(name, "openssl", "3.0.0", f"OpenSSL {name}", "default", "built", None) for name in libs]
    for case in cases:
        family, alg = case.split("/")[:2]
        for lib in libs:
            run.measurements.append(Measurement(
                case, family, "AEAD ciphers" if family == "cipher" else "key exchange", alg, case.split("/")[2],
                16 if family == "cipher" else None, "record", lib, "ok", None,
                "bytes" if family == "cipher" else "ops", 16 if family == "cipher" else 0,
                [1000, 1000, 1000], [1_000_000, 1_010_000, 990_000], [1_000_000, 1_000_000, 1_000_000]))
    return run


def test_round_trip_keeps_every_sample(store):
    run = make_run()
    store.begin(run)
    for m in run.measurements:
        store.add(run.id, m)
    run.complete, run.finished, run.warnings = True, "2026-11-21T00:00:00+00:00", ["noisy"]
    store.finish(run)
    loaded = store.load(run.id[:10])
    assert loaded.complete and loaded.warnings == ["noisy"]
    assert [lib.name for lib in loaded.libs] == ["openssl-a", "openssl-b"]
    assert [(m.case, m.lib, m.wall_ns) for m in loaded.measurements] == \
           [(m.case, m.lib, m.wall_ns) for m in run.measurements]
    assert loaded.measurements[0].summary().median == run.measurements[0].summary().median


def test_an_interrupted_run_keeps_what_it_measured(store):
    run = make_run()
    store.begin(run)
    store.add(run.id, run.measurements[0])          # then the process dies
    [row] = store.list()
    assert row["complete"] is False and row["measurements"] == 1
    assert len(store.load(run.id).measurements) == 1


def test_a_whole_import_or_nothing(store):
    run = make_run()
    run.measurements.append(run.measurements[0])    # a duplicate breaks the unique key mid-way
    with pytest.raises(Exception):
        store.save(run, "openssl speed")
    assert store.list() == []


def test_resolve_latest_prefix_and_errors(store):
    first, second = make_run(), make_run()
    second.started = "9999-01-01T00:00:00+00:00"
    store.save(first, "sslperf speed")
    store.save(second, "sslperf speed")
    assert store.resolve("latest") == second.id
    assert store.resolve(first.id) == first.id
    with pytest.raises(SslperfError, match="No run `nope`"):
        store.resolve("nope")
    assert store.latest_run_with("openssl-b") == second.id and store.latest_run_with("zzz") is None
    store.delete(first.id)
    assert [r["id"] for r in store.list()] == [second.id]


def _writer(url: str, index: int) -> None:
    store = Store(url)
    run = make_run(libs=(f"lib-{index}",), cases=tuple(f"digest/sha256/{n}" for n in range(1, 41)))
    store.begin(run)
    for m in run.measurements:
        store.add(run.id, m)


def test_two_runs_writing_at_once_lose_nothing(store):
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_writer, args=(store.url, i)) for i in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    rows = store.list()
    assert sorted(r["measurements"] for r in rows) == [40, 40]


def test_a_bad_url_is_one_clear_error(tmp_path):
    with pytest.raises(SslperfError, match="Cannot open the results store"):
        Store("postgresql+psycopg://nobody@127.0.0.1:1/none")
