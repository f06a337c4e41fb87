"""The store on SQLite and on a real PostgreSQL server (started by the
test from the postgresql package that .ci/run installs)."""

import dataclasses
import datetime as dt
import json
import multiprocessing
import sqlite3
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import run_cli

from sslperf import importers
from sslperf.errors import SslperfError
from sslperf.measure.recording import recorded
from sslperf.results import LibInfo, Measurement, Run
from sslperf.store import Store
from sslperf.store.latest import describe_state

SPEED = Path(__file__).parent / "data" / "speed"
# Every real sample the importers read (the one whose only figure is 0.00 has nothing to import).
SAMPLES = sorted(p.name for p in SPEED.iterdir() if p.suffix in (".txt", ".json") and "zero" not in p.name)

# One PostgreSQL server for the module: its tests go to one worker.
pytestmark = pytest.mark.xdist_group("postgres")


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


def test_list_since_gives_only_the_runs_started_from_then_with_their_own_counts(store):
    old, new = make_run(), make_run(libs=("openssl-c",))
    old.started, new.started = "2026-11-20T10:00:00+00:00", "2026-11-23T10:00:00+00:00"
    for run in (old, new):
        store.save(run, "sslperf speed")
    rows = store.list("2026-11-23T09:55:00+00:00")
    assert [(r["id"], r["libs"], r["measurements"]) for r in rows] == [(new.id, ["openssl-c"], 2)]
    assert {r["id"] for r in store.list()} == {old.id, new.id}


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
    first.complete = second.complete = True          # `latest` is the newest *complete* run of the user's
    store.save(first, "sslperf speed")
    store.save(second, "sslperf speed")
    assert store.resolve("latest") == second.id
    assert store.resolve(first.id) == first.id
    with pytest.raises(SslperfError, match="No run `nope`"):
        store.resolve("nope")
    assert store.latest_run_with("openssl-b") == second.id and store.latest_run_with("zzz") is None
    store.delete(first.id)
    assert [r["id"] for r in store.list()] == [second.id]


def _processes():
    """A context whose processes are forked from one server process that imported this module (and so sqlalchemy
    and sslperf) once: separate processes all the same, each without the second or so a spawned one spends on its
    imports. The server is single-threaded, so forking it is safe where forking this process (pytest's and
    xdist's threads) would not be."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


def _writer(url: str, index: int) -> None:
    store = Store(url)
    run = make_run(libs=(f"lib-{index}",), cases=tuple(f"digest/sha256/{n}" for n in range(1, 41)))
    store.begin(run)
    for m in run.measurements:
        store.add(run.id, m)


def test_two_runs_writing_at_once_lose_nothing(store):
    ctx = _processes()
    workers = [ctx.Process(target=_writer, args=(store.url, i)) for i in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    rows = store.list()
    assert sorted(r["measurements"] for r in rows) == [40, 40]




@pytest.fixture
def new_pg_url(postgres_url):
    """A new, empty database on the test server."""
    name = f"sslperf_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    yield f"{postgres_url.rsplit('/', 1)[0]}/{name}"
    with admin.connect() as conn:
        conn.exec_driver_sql(f'DROP DATABASE "{name}" WITH (FORCE)')
    admin.dispose()


def test_every_real_sample_is_found():
    assert len(SAMPLES) >= 18
    assert {"openssl-3.6.3-text-kem-sig.txt", "openssl-3.6.3-text-rsa.txt", "openssl-4.0.3-text-kem-sig.txt",
            "openssl-4.0.3-mr-kem-sig.txt", "bssl-aws-lc-pr951-jitter.json"} <= set(SAMPLES)


@pytest.mark.parametrize("name", SAMPLES)
def test_real_samples_round_trip(store, name):
    """What `sslperf import` stores is what it loads, field by field (the
    OpenSSL 3.6/4.x text files carry a 94-character OPENSSL_ia32cap)."""
    text = (SPEED / name).read_text(errors="replace")         # as `sslperf import` reads it
    run = importers.parse(text, None, None, name)
    store.save(run, run.settings.get("source", "import"))
    loaded = store.load(run.id)
    assert (loaded.id, loaded.started, loaded.finished, loaded.complete, loaded.warnings) == \
           (run.id, run.started, run.finished, run.complete, run.warnings)
    assert loaded.state == "complete"
    assert loaded.settings == run.settings and loaded.environment == run.environment
    assert [vars(lib) for lib in loaded.libs] == [vars(lib) for lib in run.libs]
    assert len(loaded.measurements) == len(run.measurements) > 0
    for got, want in zip(loaded.measurements, run.measurements):
        assert dataclasses.asdict(got) == dataclasses.asdict(want)


def test_the_long_ia32cap_is_in_the_samples():
    caps = [lib.ia32cap for name in SAMPLES if "text" in name and name.startswith("openssl-")
            for lib in importers.parse((SPEED / name).read_text(), None, None, name).libs if lib.ia32cap]
    assert max(map(len, caps)) > 80


def _opener(url: str, barrier, results, index: int) -> None:
    try:
        barrier.wait(120)
        store = Store(url)
        store.save(make_run(libs=(f"lib-{index}",)), "sslperf speed")
        results.put("ok")
    except BaseException as exc:        # noqa: BLE001 - reported to the test
        results.put(f"{type(exc).__name__}: {exc}")


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_many_processes_opening_a_new_store_at_once(backend, tmp_path, request):
    url = f"sqlite:///{tmp_path / 'new.db'}" if backend == "sqlite" else request.getfixturevalue("new_pg_url")
    ctx = _processes()
    count = 8
    barrier, results = ctx.Barrier(count), ctx.Queue()
    workers = [ctx.Process(target=_opener, args=(url, barrier, results, i)) for i in range(count)]
    for w in workers:
        w.start()
    outcomes = [results.get(timeout=180) for _ in workers]
    for w in workers:
        w.join(60)
    assert outcomes == ["ok"] * count
    assert [w.exitcode for w in workers] == [0] * count
    assert len(Store(url).list()) == count


def test_a_locked_sqlite_store_is_one_clear_error_and_a_run_loses_nothing(tmp_path):
    path = tmp_path / "runs.db"
    store = Store(f"sqlite:///{path}", timeout=1)
    holder = sqlite3.connect(path, isolation_level=None)       # another process in the middle of a write
    holder.execute("BEGIN IMMEDIATE")
    run = make_run()
    with pytest.raises(SslperfError) as caught:
        store.begin(run)
    message = str(caught.value)
    assert "locked" in message and str(path) in message and "another sslperf may be writing" in message
    assert f"run {run.id}" in message and "\n" not in message
    holder.execute("ROLLBACK")

    store.begin(run)
    holder.execute("BEGIN IMMEDIATE")
    tried, write = [], store._write

    def counted_write(what):
        tried.append(what)
        return write(what)

    store._write = counted_write
    for m in run.measurements:            # refused: kept for `finish`, and only the first one waits for the lock
        store.add(run.id, m)
    store.replace(run.id, run.measurements[0])
    assert len(tried) == 1 and len(run.measurements) > 1, tried
    del store._write
    holder.execute("ROLLBACK")
    run.complete, run.state = True, "complete"
    store.finish(run)
    loaded = store.load(run.id)
    assert loaded.state == "complete" and loaded.complete
    assert [(m.case, m.lib) for m in loaded.measurements] == [(m.case, m.lib) for m in run.measurements]


def test_a_store_failing_at_the_end_of_a_run_keeps_the_run(tmp_path):
    path = tmp_path / "runs.db"
    store = Store(f"sqlite:///{path}", timeout=0.3)
    holder = sqlite3.connect(path, isolation_level=None)
    run = make_run()
    measured, run.measurements = run.measurements, []
    with recorded(run, store, "sslperf speed") as keep:
        for m in measured:
            keep(m)
        holder.execute("BEGIN IMMEDIATE")        # the store is taken until after the run
        keep(Measurement("kex/x448/derive", "kex", "key exchange", "x448", "derive", None, "record", "openssl-a",
                         "ok", ops=[1], wall_ns=[1000], cpu_ns=[1000]))
        run.complete = True
    holder.execute("ROLLBACK")
    assert run.state == "complete" and len(run.measurements) == len(measured) + 1
    [warning] = run.warnings
    assert "does not hold all of this run" in warning and "locked" in warning
    assert "1 result is not in the store" in warning
    [row] = store.list()
    assert row["state"] == "running" and row["measurements"] == len(measured)


def test_a_locked_postgres_table_is_one_clear_error(postgres_url):
    store = Store(postgres_url, timeout=0.5)
    holder = sa.create_engine(postgres_url)
    with holder.connect() as conn:
        conn.exec_driver_sql("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE")
        with pytest.raises(SslperfError) as caught:
            store.begin(make_run())
        conn.rollback()
    holder.dispose()
    assert "lock" in str(caught.value) and "more than 0.5 s" in str(caught.value)


def test_sizes_beyond_32_bits_and_long_strings_round_trip(store):
    run = make_run()
    run.measurements[0].size = run.measurements[0].bytes_per_op = 2 ** 40
    run.measurements[0].ops = [2 ** 70]
    run.libs[0].ia32cap = "0x" + "f" * 300
    run.libs[0].version_string = "OpenSSL " + "x" * 5000
    store.save(run, "openssl speed")
    loaded = store.load(run.id)
    assert loaded.measurements[0].size == loaded.measurements[0].bytes_per_op == 2 ** 40
    assert loaded.measurements[0].ops == [2 ** 70]
    assert vars(loaded.libs[0]) == vars(run.libs[0])


@pytest.mark.parametrize("spoil, needle", [
    (lambda m: setattr(m, "size", 2 ** 70), "beyond the 64-bit integers"),
    (lambda m: setattr(m, "reported_rates", [float("nan")]), "NaN or infinity"),
])
def test_a_value_out_of_range_is_refused_clearly(store, spoil, needle):
    run = make_run()
    spoil(run.measurements[-1])
    with pytest.raises(SslperfError) as caught:
        store.save(run, "openssl speed")
    message = str(caught.value)
    assert "out of range" in message and needle in message and f"import run {run.id}" in message
    assert store.list() == []                     # all or nothing


def test_a_run_keeps_the_results_the_store_can_hold(store):
    run = make_run()
    store.begin(run)
    run.measurements[1].size = 2 ** 70
    for m in run.measurements:                    # the bad one is kept, the others are stored
        store.add(run.id, m)
    run.complete, run.state = True, "complete"
    with pytest.raises(SslperfError, match="1 result is not in the store"):
        store.finish(run)
    loaded = store.load(run.id)
    assert len(loaded.measurements) == len(run.measurements) - 1
    assert loaded.state == "complete" and not loaded.complete and "64-bit" in loaded.warnings[-1]


def test_nul_characters_are_stored_as_a_visible_symbol(store):
    run = make_run(libs=("openssl\x00evil",))
    run.complete = True                               # so that it is the library's latest run
    run.environment["cpu_model"] = "cpu\x00model"
    run.measurements[0].note = "a\x00b"
    store.save(run, "openssl speed")
    loaded = store.load(run.id)
    assert loaded.libs[0].name == "openssl\u2400evil"
    assert {m.lib for m in loaded.measurements} == {"openssl\u2400evil"}
    assert loaded.measurements[0].note == "a\u2400b"
    assert loaded.environment["cpu_model"] == "cpu\x00model"          # JSON keeps it exactly
    assert store.latest_run_with("openssl\x00evil") == run.id


def test_run_states(store):
    begun = make_run()
    store.begin(begun)

    def measure(raising):
        run = make_run()
        measured, run.measurements = run.measurements, []
        runs.append(run)
        with recorded(run, store, "sslperf speed") as keep:
            keep(measured[0])
            if raising:
                raise raising
            run.complete = True

    runs: list[Run] = []
    measure(None)
    with pytest.raises(KeyboardInterrupt):
        measure(KeyboardInterrupt())
    with pytest.raises(RuntimeError):
        measure(RuntimeError("boom"))
    complete, interrupted, crashed = runs
    assert [r.state for r in runs] == ["complete", "interrupted", "crashed"]
    rows = {row["id"]: row for row in store.list()}
    assert {rid: rows[rid]["state"] for rid in rows} == {
        begun.id: "running", complete.id: "complete", interrupted.id: "interrupted", crashed.id: "crashed"}
    assert rows[begun.id]["finished"] is None
    assert all(rows[r.id]["finished"] for r in runs)
    assert [rows[r.id]["complete"] for r in runs] == [True, False, False]
    assert all(rows[r.id]["measurements"] == 1 for r in runs)
    assert store.load(interrupted.id).state == "interrupted"


def test_an_old_sqlite_store_gains_states(tmp_path):
    path = tmp_path / "old.db"
    Store(f"sqlite:///{path}").engine.dispose()
    con = sqlite3.connect(path)                  # as a store from before run states
    con.execute("ALTER TABLE runs DROP COLUMN state")
    for rid, complete in (("old-incomplete", 0), ("old-complete", 1)):
        con.execute("INSERT INTO runs (id, started, finished, complete, source, host, settings, environment, "
                    "warnings) VALUES (?, '2020-01-01T00:00:00+00:00', NULL, ?, 'sslperf speed', 'h', '{}', "
                    "'{}', '[]')", (rid, complete))
    con.commit()
    con.close()
    store = Store(f"sqlite:///{path}")
    run = make_run()
    store.begin(run)
    assert {r["id"]: r["state"] for r in store.list()} == {
        "old-incomplete": "incomplete", "old-complete": "complete", run.id: "running"}


def test_an_old_postgres_store_is_migrated(new_pg_url):
    Store(new_pg_url).engine.dispose()
    engine = sa.create_engine(new_pg_url)
    with engine.begin() as conn:                 # as the schema was: VARCHAR(80), INTEGER, no state
        conn.exec_driver_sql("ALTER TABLE run_libs ALTER COLUMN ia32cap TYPE varchar(80)")
        conn.exec_driver_sql("ALTER TABLE measurements ALTER COLUMN size TYPE integer")
        conn.exec_driver_sql("ALTER TABLE runs DROP COLUMN state")
    store = Store(new_pg_url)
    name = "openssl-3.6.3-text-kem-sig.txt"
    run = importers.parse((SPEED / name).read_text(), None, None, name)
    assert len(run.libs[0].ia32cap) > 80
    run.measurements[0].size = 2 ** 40
    store.save(run, "openssl speed")
    loaded = store.load(run.id)
    assert loaded.libs[0].ia32cap == run.libs[0].ia32cap and loaded.measurements[0].size == 2 ** 40
    assert loaded.state == "complete"
    engine.dispose()


@pytest.mark.parametrize("url, needles", [
    ("notaurl", ["`notaurl` is not a database URL", "sqlite:///"]),
    ("postgres://someone:secret@localhost/db", ["postgresql://", "***"]),
    ("sqlite:////nonexistent-sslperf-dir/x/runs.db", ["Cannot open the results store", "unable to open"]),
    ("postgresql+psycopg://nobody@127.0.0.1:1/none", ["Cannot open the results store", "down or unreachable"]),
])
def test_a_bad_url_is_one_clear_error(url, needles):
    with pytest.raises(SslperfError) as caught:
        Store(url)
    message = str(caught.value)
    assert all(needle in message for needle in needles), message
    assert "secret" not in message


def test_the_cli_says_what_is_wrong_with_the_url(sslperf_dirs):
    result = run_cli("--db", "notaurl", "runs", "list")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "is not a database URL" in result.stderr


def test_runs_list_shows_states(sslperf_dirs, tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    store = Store(url)
    killed = make_run()
    killed.started = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=3)).isoformat(timespec="seconds")
    store.begin(killed)
    result = run_cli("--db", url, "runs", "list", "--json")
    assert result.returncode == 0, result.stderr
    [row] = json.loads(result.stdout)
    assert row["state"] == "running"
    result = run_cli("--db", url, "runs", "list", env={"COLUMNS": "200"})
    assert result.returncode == 0 and "killed?" in result.stdout, result.stdout + result.stderr


def test_describe_state():
    now = dt.datetime(2026, 11, 22, 12, tzinfo=dt.timezone.utc)
    assert describe_state("running", "2026-11-22T10:00:00+00:00", now) == "running"
    assert describe_state("running", "2026-11-19T10:00:00+00:00", now) == "running? (started 3 d ago; killed?)"
    assert describe_state("interrupted", "2026-11-19T10:00:00+00:00", now) == "interrupted"
