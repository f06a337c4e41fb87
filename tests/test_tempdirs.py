"""sslperf's private temporary directories after a kill -9: the test keys of
`tls --loopback`, serve-load's configuration, a half-unpacked `libs import`.
Each is owned by its process through a lock the kernel drops when the process
dies; the next sslperf removes those whose owner is gone, and never one of a
live sslperf, one of another naming, or a link."""

import json
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import pytest
from conftest import run_cli
from test_bundle import exported, fake_home

from sslperf import tempdirs

CASE = "tls/handshake/tls1.3/x25519/ecdsa-p256/shared"


def start(*args, env: dict, **popen) -> subprocess.Popen:
    """The real `sslperf` in its own session, so that what it leaves running can be found (`end_session`); its
    stderr in a file (a pipe nobody reads could stop it), `.said`."""
    said = tempfile.TemporaryFile()
    process = subprocess.Popen([sys.executable, "-m", "sslperf", *map(str, args)], env={**os.environ, **env},
                               stdout=subprocess.DEVNULL, stderr=said, start_new_session=True, **popen)
    process.said = said
    return process


def end_session(leader: int) -> None:
    """SIGKILL whatever is left of the session `leader` started (the harness's servers outlive a killed sslperf)."""
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[3]) == leader:
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            pass


def wait_for(what, process: subprocess.Popen, timeout: float = 600):
    """The first non-empty value of `what()`, while `process` is still running."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        if process.poll() is not None:
            process.said.seek(0)
            pytest.fail(f"sslperf ended (exit {process.returncode}) first: {process.said.read().decode()[-2000:]}")
        time.sleep(0.05)
    pytest.fail("timed out")


def certs_dirs(tmp: Path) -> list[Path]:
    return sorted(p for p in tmp.glob("sslperf-certs-*") if (p / "key.pem").exists())


@pytest.fixture
def own_tmp(tmp_path, monkeypatch) -> Path:
    """A TMPDIR of the test's own, for this process's sweeps and for the sslperf it starts."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def test_a_killed_tls_loopback_leaves_its_keys_and_the_next_sslperf_removes_them(sslperf_dirs, own_tmp):
    env = {"TMPDIR": str(own_tmp)}
    killed = start("tls", "--loopback", "--lib", "system", "--requests", "10000", "--case", CASE, "--no-store",
                   env=env)
    try:
        [certs] = wait_for(lambda: certs_dirs(own_tmp), killed)
        assert certs.stat().st_mode & 0o777 == 0o700
        # While that sslperf runs, another one leaves its directory alone.
        assert run_cli("runs", "list", env=env).returncode == 0
        assert certs_dirs(own_tmp) == [certs] and killed.poll() is None
        killed.send_signal(signal.SIGKILL)
        assert killed.wait(timeout=60) == -signal.SIGKILL
        assert certs_dirs(own_tmp) == [certs]          # the kill leaves the key behind
        assert run_cli("runs", "list", env=env).returncode == 0
        assert list(own_tmp.iterdir()) == []           # the next sslperf removed it
    finally:
        killed.kill()
        end_session(killed.pid)


def kill_an_import(data: bytes, home: str, root: Path) -> int:
    """`libs import -` of half of the bundle `data` (its library's home `home`), the rest never coming, killed
    with SIGKILL once the home is being unpacked; what the kill left in the cache's tmp/, in bytes, after
    checking that the next sslperf removed it."""
    importer = {"SSLPERF_CACHE_DIR": str(root / "c"), "SSLPERF_DATA_DIR": str(root / "d")}
    killed = start("libs", "import", "-", env=importer, stdin=subprocess.PIPE)
    try:
        killed.stdin.write(data[:len(data) // 2])
        killed.stdin.flush()
        [prefix] = wait_for(lambda: list((root / "c" / "tmp").glob(f"import-*/{home}/prefix")), killed)
        killed.send_signal(signal.SIGKILL)
        assert killed.wait(timeout=60) == -signal.SIGKILL
        work = prefix.parent.parent
        left = sum(f.stat().st_size for f in work.rglob("*") if f.is_file() and not f.is_symlink())
        assert left and not (root / "c" / "libs").exists()
        assert run_cli("runs", "list", env=importer).returncode == 0
        assert list((root / "c" / "tmp").iterdir()) == []         # the next sslperf removed it
        return left
    finally:
        killed.kill()
        killed.stdin.close()


def test_a_killed_libs_import_leaves_its_partial_unpacking_and_the_next_sslperf_removes_it(tmp_path, monkeypatch):
    monkeypatch.setenv("SSLPERF_CACHE_DIR", str(tmp_path / "exporter"))
    home = fake_home(tmp_path / "exporter" / "libs")
    (home / "prefix" / "lib" / "libbulk.a").write_bytes(os.urandom(4 << 20))     # what gzip cannot shrink
    kill_an_import(exported(home), home.name, tmp_path)


@pytest.mark.slow
def test_a_killed_import_of_a_real_bundle_is_removed_too(built_openssl, e2e_env, tmp_path):
    bundle = tmp_path / "openssl.tar.gz"
    assert run_cli("libs", "export", built_openssl, "--out", bundle, env=e2e_env).returncode == 0
    with tarfile.open(bundle) as tar:
        home = json.loads(tar.extractfile("bundle.json").read())["libs"][0]["home"]
    assert kill_an_import(bundle.read_bytes(), home, tmp_path) > 1 << 20


@pytest.mark.slow
def test_a_killed_serve_load_leaves_its_keys_and_configuration_and_the_next_sslperf_removes_them(
        built_openssl3, in_e2e_cache, own_tmp):
    from sslperf.libs import installed
    from sslperf.serve_load import build

    build.build("nginx", installed.find(built_openssl3))      # built before, so the run starts serving at once
    env = {**in_e2e_cache, "TMPDIR": str(own_tmp)}
    killed = start("serve-load", "--lib", built_openssl3, "--server", "nginx", "--seconds", "60", "--no-store",
                   env=env)
    try:
        wait_for(lambda: certs_dirs(own_tmp) and list(own_tmp.glob("sslperf-serve-*/nginx.conf")), killed, 300)
        killed.send_signal(signal.SIGKILL)
        assert killed.wait(timeout=60) == -signal.SIGKILL
        assert sorted(p.name.rsplit("-", 1)[0] for p in own_tmp.iterdir()) == ["sslperf-certs", "sslperf-serve"]
        assert run_cli("runs", "list", env=env).returncode == 0
        assert list(own_tmp.iterdir()) == []
    finally:
        killed.kill()
        end_session(killed.pid)


OWNER_PROCESS = """
import sys
from sslperf import tempdirs
from sslperf.serve_load import load
made = [load.run_dir(), tempdirs.make("certs"), tempdirs.make("import", cache=True)]
print("\\n".join(map(str, made)), flush=True)
sys.stdin.read()
"""


def test_a_live_owners_dirs_survive_a_sweep_and_a_dead_ones_go(sslperf_dirs, own_tmp):
    """serve-load's, the certificates' and an import's directories, made by their own code in another process."""
    owner = subprocess.Popen([sys.executable, "-c", OWNER_PROCESS], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    try:
        made = [Path(owner.stdout.readline().strip()) for _ in range(3)]
        serve, certs, work = made
        assert serve.parent == certs.parent == own_tmp and work.parent == sslperf_dirs[0] / "tmp"
        assert serve.name.startswith("sslperf-serve-") and certs.name.startswith("sslperf-certs-")
        assert work.name.startswith("import-")
        assert all(p.stat().st_mode & 0o777 == 0o700 for p in made)
        mine = tempdirs.make("certs")                  # and one of this very process
        tempdirs.sweep()
        assert all(p.is_dir() for p in [*made, mine])
        owner.kill()
        owner.wait(timeout=60)
        tempdirs.sweep()
        assert not any(p.exists() for p in made) and mine.is_dir()
        tempdirs.remove(mine)
        assert not mine.exists()
    finally:
        owner.kill()
        owner.stdin.close()


def dead_dir(path: Path, mark: bytes = b"sslperf 1\n") -> Path:
    """A directory as a killed sslperf leaves one: its mark written, no process holding it."""
    path.mkdir(mode=0o700)
    (path / tempdirs.OWNER).write_bytes(mark)
    (path / "key.pem").write_text("a key\n")
    return path


def test_the_sweep_removes_only_sslperfs_own_directories(own_tmp, tmp_path, monkeypatch):
    monkeypatch.setenv("SSLPERF_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache" / "tmp").mkdir(parents=True)
    dead, dead_in_cache = dead_dir(own_tmp / "sslperf-certs-dead"), dead_dir(tmp_path / "cache" / "tmp" / "import-dead")
    kept = [
        dead_dir(own_tmp / "other-certs-dead"),                 # not sslperf's naming
        dead_dir(own_tmp / "sslperf-certs-starting", b""),      # its sslperf is writing the mark this instant
        dead_dir(tmp_path / "elsewhere"),
    ]
    (own_tmp / "sslperf-certs-link").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    unmarked = own_tmp / "sslperf-certs-unmarked"              # not made by tempdirs (a pre-fix sslperf's, or not ours)
    unmarked.mkdir()
    linked_mark = own_tmp / "sslperf-certs-linked-mark"
    linked_mark.mkdir()
    (linked_mark / tempdirs.OWNER).symlink_to(tmp_path / "elsewhere" / tempdirs.OWNER)
    fifo_mark = own_tmp / "sslperf-certs-fifo"
    fifo_mark.mkdir()
    os.mkfifo(fifo_mark / tempdirs.OWNER)                    # must not make the sweep wait
    tempdirs.sweep()
    assert not dead.exists() and not dead_in_cache.exists()
    for path in [*kept, unmarked, linked_mark, fifo_mark]:
        assert path.is_dir(), path
    assert (tmp_path / "elsewhere" / "key.pem").exists() and (own_tmp / "sslperf-certs-link").is_symlink()


@pytest.mark.skipif(os.geteuid() != 0, reason="making a directory another user owns needs root")
def test_the_sweep_leaves_another_users_directories(own_tmp):
    theirs = dead_dir(own_tmp / "sslperf-certs-theirs")
    os.chown(theirs, 65534, 65534)
    os.chown(theirs / tempdirs.OWNER, 65534, 65534)
    tempdirs.sweep()
    assert (theirs / "key.pem").exists()


def test_a_sweep_that_cannot_look_does_nothing(monkeypatch, tmp_path):
    """No TMPDIR, no cache: every command still starts."""
    monkeypatch.setenv("SSLPERF_CACHE_DIR", str(tmp_path / "missing" / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing" / "tmp"))
    tempdirs.sweep()
    assert not (tmp_path / "missing").exists()


def test_the_sweep_at_start_loads_nothing_heavy():
    """It runs before every command, `sslperf --help` included."""
    code = ("import sys; import sslperf.cli, sslperf.tempdirs; sslperf.tempdirs.sweep(); "
            "print(sorted({'numpy', 'scipy', 'sqlalchemy', 'matplotlib'} & set(sys.modules)))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60).stdout.strip() == "[]"


def test_removal_leaves_the_mark_last(own_tmp, monkeypatch):
    """A remove stopped half-way (kill -9 during a large rmtree) still leaves a directory the sweep knows."""
    path = tempdirs.make("import")
    (path / "big").mkdir()
    (path / "big" / "part").write_bytes(b"x" * 1000)
    seen = []
    real_rmtree = tempdirs.shutil.rmtree
    monkeypatch.setattr(tempdirs.shutil, "rmtree",
                        lambda p, **kw: (seen.append((Path(p).name, (path / tempdirs.OWNER).exists())),
                                         real_rmtree(p, **kw)))
    tempdirs.remove(path)
    assert seen == [("big", True), (path.name, True)] and not path.exists()


def session_members(leader: int) -> list[str]:
    """The command lines of the processes still in the session `leader` started (zombies excluded)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if entry.name.isdigit() and int(stat[3]) == leader and stat[0] != "Z":
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, ValueError, IndexError):
            pass
    return found


def test_a_killed_sslperf_takes_its_harness_servers_and_clients_with_it(sslperf_dirs, own_tmp):
    """SIGKILL to sslperf alone (not its session): the harness's server and client get SIGTERM from the kernel
    (their parent-death signal), so nothing of the run keeps running."""
    killed = start("tls", "loopback", "--lib", "system", "--requests", "10000", "--rounds", "1", "--case", CASE,
                   "--no-store", env={"TMPDIR": str(own_tmp)})
    try:
        wait_for(lambda: [c for c in session_members(killed.pid) if "https-get" in c], killed)
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=60)
        deadline = time.monotonic() + 5      # a server left alone would wait out its idle timeout (30 s)
        while session_members(killed.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert session_members(killed.pid) == []
    finally:
        end_session(killed.pid)
