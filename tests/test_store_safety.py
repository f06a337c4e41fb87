"""What the store must not do to a user's runs, through the real command: delete a run still being measured,
say a run is stored when its rows are not, fail to read a store it may not write, or blame a database
server for a damaged SQLite file."""

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap

import pytest
from conftest import DATA, run_cli

from sslperf import importers
from sslperf.errors import SslperfError
from sslperf.store import Store

SPEED = DATA / "speed" / "openssl-3.0.8-text.txt"


def one_paragraph_error(result) -> str:
    """The command's error: one paragraph, the last thing on stderr (after any progress lines), no traceback."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0] and "Traceback" not in result.stderr, result.stderr
    return errors[0]


def imported_run(lib: str = "openssl-3.0.8"):
    return importers.parse(SPEED.read_text(), None, lib, SPEED.name)


def ids(url: str) -> list[str]:
    listed = run_cli("--db", url, "runs", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return [row["id"] for row in json.loads(listed.stdout)]


# ---- item 6: `runs rm` and a run being measured ----------------------------------------------------------

MEASURING = textwrap.dedent("""
    import sys
    from sslperf import importers
    from sslperf.store import Store
    run = importers.parse(open(sys.argv[2]).read(), None, "openssl-3.0.8", "speed.txt")
    Store(sys.argv[1]).begin(run)           # as a measurement starts: the run is "running", this process its owner
    print(run.id, flush=True)
    sys.stdin.read()                        # measuring, until the test ends it
""")


def test_runs_rm_refuses_a_run_still_being_measured_and_deletes_it_once_its_process_is_gone(sslperf_dirs, tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    measuring = subprocess.Popen([sys.executable, "-c", MEASURING, url, str(SPEED)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
    try:
        run_id = measuring.stdout.readline().strip()
        for force in ([], ["--force"]):        # --force is for another machine's runs, never a live one here
            refused = run_cli("--db", url, "runs", "rm", *force, run_id)
            assert refused.returncode == 2, refused.stdout
            said = one_paragraph_error(refused)
            assert f"Run {run_id} is still being measured" in said and f"process {measuring.pid}" in said
            assert f"kill {measuring.pid}" in said and "nothing was deleted" in said
        assert ids(url) == [run_id]
    finally:
        measuring.kill()                       # killed: the run stays "running", its owner gone
        measuring.wait()
    removed = run_cli("--db", url, "runs", "rm", run_id)
    assert removed.returncode == 0 and f"deleted {run_id}" in removed.stdout, removed.stderr
    assert ids(url) == []


def test_a_run_marked_running_on_another_machine_needs_force(sslperf_dirs, tmp_path):
    path = tmp_path / "runs.db"
    url = f"sqlite:///{path}"
    store = Store(url)
    elsewhere, before_owners = imported_run("openssl-a"), imported_run("openssl-b")
    store.begin(elsewhere)
    store.begin(before_owners)
    store.engine.dispose()
    db = sqlite3.connect(path)
    db.execute("UPDATE runs SET owner = json_set(owner, '$.host', 'far-away-host') WHERE id = ?", (elsewhere.id,))
    db.execute("UPDATE runs SET owner = NULL WHERE id = ?", (before_owners.id,))       # as an older sslperf's
    db.commit()
    db.close()
    refused = run_cli("--db", url, "runs", "rm", elsewhere.id, before_owners.id)
    assert refused.returncode == 2
    said = one_paragraph_error(refused)
    assert "far-away-host, which this machine cannot check; nothing was deleted" in said
    assert f"sslperf runs rm --force {elsewhere.id}" in said
    assert sorted(ids(url)) == sorted([elsewhere.id, before_owners.id])      # all checked before any is deleted
    assert run_cli("--db", url, "runs", "rm", before_owners.id).returncode == 0
    assert run_cli("--db", url, "runs", "rm", "--force", elsewhere.id).returncode == 0
    assert ids(url) == []


def test_a_run_deleted_while_it_was_measured_is_not_held(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    store, other = Store(url), Store(url)
    run = imported_run()
    store.begin(run)
    for m in run.measurements:
        store.add(run.id, m)
    other.delete(run.id)                       # as `runs rm` did while the run was measured
    run.complete, run.state = True, "complete"
    with pytest.raises(SslperfError, match="no longer there"):
        store.finish(run)
    assert not store.holds(run.id) and "no longer there" in store.lost(run.id)
    kept = imported_run()
    store.save(kept, "openssl speed")
    assert store.holds(kept.id)


# The real command, with a store that refuses every result it is given (as a value out of range).
REFUSING_STORE = textwrap.dedent("""
    import sys
    from sslperf import store
    def refused(conn, run_id, m, replace):
        raise OverflowError("a figure beyond what this store holds")
    store._insert_measurement = refused
    from sslperf.cli import main
    main(sys.argv[1:])
""")


@pytest.mark.parametrize("as_json", [False, True], ids=["tables", "json"])
def test_a_run_the_store_could_not_keep_is_never_said_to_be_stored(sslperf_dirs, as_json):
    result = subprocess.run([sys.executable, "-c", REFUSING_STORE, "speed", "--case", "digest/sha256/64", "--time",
                             "2", "--samples", "3", "--processes", "1", *(["--json"] if as_json else [])],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "stored as run" not in result.stdout + result.stderr
    said = one_paragraph_error(result)
    assert "does not hold all of it" in said and "keep it with --out or --json" in said
    assert "a figure beyond what this store holds" in said           # why, though the verb shows no warnings
    if as_json:                                # every figure is still delivered, the store's failure with it
        run = json.loads(result.stdout)
        assert run["measurements"] and any("does not hold all of this run" in w for w in run["warnings"])
    else:
        assert "does not hold all of this run" in result.stdout and "digest/sha256" in result.stdout


# ---- item 7: a store on a read-only file system, and a damaged file ---------------------------------------

def as_reader() -> list[str]:
    """What to run a command under so that a 0444 file in a 0555 directory cannot be written: nothing for a
    user, and for root (whom chmod does not stop) root without the capabilities that override permissions."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: chmod cannot make a file read-only for root")
    return ["setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("schema", ["current", "older"])
def test_a_read_only_store_is_read_and_never_written(sslperf_dirs, tmp_path, schema):
    folder = tmp_path / "archive"
    folder.mkdir()
    path = folder / "runs.db"
    store = Store(f"sqlite:///{path}")
    run = imported_run()
    store.save(run, "openssl speed")
    store.engine.dispose()                     # checkpointed: no -wal file is left
    if schema == "older":                      # from before owners and noise floors: nothing may migrate it
        db = sqlite3.connect(path)
        db.execute("ALTER TABLE runs DROP COLUMN owner")
        db.execute("DROP TABLE noise_floors")
        db.commit()
        db.close()                             # checkpointed again
    before = digest(path)
    path.chmod(0o444)
    folder.chmod(0o555)
    reader, url = as_reader(), f"sqlite:///{path}"
    try:
        def sslperf(*args):
            return subprocess.run([*reader, sys.executable, "-m", "sslperf", "--db", url, *map(str, args)],
                                  capture_output=True, text=True, timeout=600)

        listed = sslperf("runs", "list", "--json")
        assert listed.returncode == 0 and run.id in listed.stdout, listed.stderr
        shown = sslperf("runs", "show", run.id)
        assert shown.returncode == 0 and "x25519" in shown.stdout, shown.stderr
        report = sslperf("report", run.id, "--format", "html", "--out", tmp_path / "out")
        assert report.returncode == 0 and (tmp_path / "out" / "report.html").exists(), report.stderr
        refused = sslperf("runs", "rm", run.id)
        assert refused.returncode == 2
        said = one_paragraph_error(refused)
        assert f"Could not delete run {run.id}" in said and "is read-only for this user" in said
    finally:
        folder.chmod(0o755)
    assert digest(path) == before and sorted(p.name for p in folder.iterdir()) == ["runs.db"]


def damaged_files(tmp_path):
    random_bytes = tmp_path / "random.db"
    random_bytes.write_bytes(os.urandom(100))
    whole = tmp_path / "whole.db"
    store = Store(f"sqlite:///{whole}")
    for _ in range(3):
        store.save(imported_run(), "openssl speed")
    store.engine.dispose()
    halved = tmp_path / "halved.db"
    halved.write_bytes(whole.read_bytes()[:whole.stat().st_size // 2])
    return {"100 random bytes": random_bytes, "a store cut to half": halved}


def test_a_damaged_sqlite_file_is_named_as_such(sslperf_dirs, tmp_path):
    for what, path in damaged_files(tmp_path).items():
        for args in (["runs", "list"], ["runs", "show", "20261128-000000"], ["report", "latest", "--out",
                                                                           tmp_path / "out"]):
            result = run_cli("--db", f"sqlite:///{path}", *args)
            assert result.returncode == 2, (what, args, result.stdout)
            said = one_paragraph_error(result)
            assert f"the SQLite file {path} is not a SQLite database or is damaged" in said, (what, said)
            assert "Restore it from a backup, or point --db" in said and "server" not in said, (what, said)


def test_an_owner_of_the_same_name_on_a_clone_or_in_a_container_is_elsewhere():
    """A cloned machine keeps the host name (its machine id differs); a container on this kernel has its own
    process ids (its pid namespace differs): neither's process can be checked from here, so neither is 'gone'."""
    from sslperf.store import owner

    mine = owner.mark()
    assert owner.status(mine) == owner.ALIVE
    for key in ("machine", "pidns"):
        if mine[key] is None:
            continue
        other = {**mine, key: "another " + key, "pid": 2 ** 22 + 7, "boot": "another boot"}
        assert owner.status(other) == owner.ELSEWHERE, key
    assert owner.status({**mine, "pid": 2 ** 22 + 7}) == owner.GONE


def test_an_interrupted_run_the_store_could_not_finish_is_not_said_to_be_kept():
    from sslperf.measure.recording import interrupted_run, recorded
    from sslperf.results import Run

    class Refusing:
        def begin(self, run, source=None):
            pass

        def finish(self, run):
            raise SslperfError("the server went away")

    run = Run.new({}, {})
    with pytest.raises(KeyboardInterrupt) as stopped:
        with recorded(run, Refusing(), "test"):
            raise KeyboardInterrupt
    assert interrupted_run(stopped.value) == (run, False)
