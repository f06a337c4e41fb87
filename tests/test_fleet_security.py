"""A fleet no stranger can use: `sslperf fleet scheduler` and `fleet worker`, started as the fleet guide says, talk
TLS with the fleet's own CA and refuse any peer without a certificate it signed (a plain client, a client of
another fleet, a worker of another fleet); they listen on the address they were given, never on every interface;
plain tcp:// is refused unless asked, and off loopback unless asked twice."""

import asyncio
import os
import signal
import stat
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from conftest import free_port, run_cli

from sslperf.errors import SslperfError
from sslperf.cases import catalog
from sslperf.fleet import credentials, endpoint

pytestmark = pytest.mark.xdist_group("fleet")


def _sslperf(*args, config: Path, log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "sslperf", *args], stdout=open(log, "w"), stderr=subprocess.STDOUT,
                            env={**os.environ, "SSLPERF_CONFIG_DIR": str(config)}, start_new_session=True)


def _stop(*processes) -> None:
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def _listening(pid: int) -> list[str]:
    """The addresses `pid` listens on (TCP, v4 and v6), read from /proc as `ss -ltn` reads them."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:          # 0A: LISTEN
                address, port = fields[1].split(":")
                raw = bytes.fromhex(address)
                # /proc prints each 32-bit word in host (little-endian) order.
                words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
                host = ".".join(map(str, words)) if width == 8 else words.hex()
                found.append(f"{host}:{int(port, 16)}")
    return found


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """A scheduler and a worker started as docs/guides/fleet.md says, on loopback, with their first credentials."""
    root = tmp_path_factory.mktemp("fleet-tls")
    config, port = root / "config", free_port()
    scheduler = _sslperf("fleet", "scheduler", "--port", str(port), "--http-port", str(free_port()),
                         config=config, log=root / "scheduler.log")
    address = f"tls://127.0.0.1:{port}"
    workers = []
    try:
        _wait(lambda: credentials.present("worker", config / "fleet") and "scheduler at" in
              (root / "scheduler.log").read_text(), root / "scheduler.log")
        workers.append(_sslperf("fleet", "worker", "--scheduler", address, "--tag", "lab-a", config=config,
                                log=root / "worker.log"))
        _wait(lambda: " lab-a " in run_cli("fleet", "machines", "--scheduler", address,
                                            env={"SSLPERF_CONFIG_DIR": str(config)}).stdout, root / "worker.log")
        yield {"root": root, "config": config, "address": address, "scheduler": scheduler, "worker": workers[0]}
    finally:
        _stop(*workers, scheduler)


def _wait(ready, log: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.3)
    raise AssertionError(f"not ready after {seconds} s: " + log.read_text()[-3000:])


def _other_fleet(tmp_path: Path) -> Path:
    """Credentials of another fleet (another CA), as a stranger could make them."""
    other = tmp_path / "other"
    credentials.make([], other / "fleet")
    return other


def test_the_scheduler_made_private_credentials_on_its_first_start(fleet):
    where = fleet["config"] / "fleet"
    assert stat.S_IMODE(where.stat().st_mode) == 0o700
    for path in where.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_a_client_with_the_fleets_certificate_sees_the_worker(fleet):
    listed = run_cli("fleet", "machines", "--scheduler", fleet["address"], env={"SSLPERF_CONFIG_DIR":
                                                                                 str(fleet["config"])})
    assert listed.returncode == 0 and " lab-a " in listed.stdout, listed.stderr


def test_a_client_of_another_fleet_is_refused_in_one_paragraph(fleet, tmp_path):
    other = _other_fleet(tmp_path)
    refused = run_cli("fleet", "machines", "--scheduler", fleet["address"], env={"SSLPERF_CONFIG_DIR": str(other)})
    assert refused.returncode == 2 and "lab-a" not in refused.stdout, refused.stdout
    assert refused.stderr.startswith("error: ") and "Traceback" not in refused.stderr
    assert refused.stderr.strip().count("\n") == 0 and "fleet credentials" in refused.stderr


def test_plain_and_foreign_dask_clients_reach_neither_scheduler_nor_worker(fleet, tmp_path):
    """What a stranger would use: Dask itself, without TLS or with a certificate of its own making; refused by the
    scheduler, and by the worker, which listens too and would run what it is sent."""
    from distributed import Client, Security
    from distributed.comm import connect

    listed = run_cli("fleet", "machines", "--scheduler", fleet["address"], env={"SSLPERF_CONFIG_DIR":
                                                                                 str(fleet["config"])})
    assert listed.returncode == 0
    with Client(fleet["address"], security=credentials.security("client", fleet["config"] / "fleet"),
                timeout=20) as trusted:
        worker = next(iter(trusted.scheduler_info()["workers"]))
    assert worker.startswith("tls://127.0.0.1:")
    plain = fleet["address"].replace("tls://", "tcp://")
    with pytest.raises((OSError, TimeoutError)):
        Client(plain, timeout=5)
    foreign = Security.temporary()
    with pytest.raises((OSError, TimeoutError)):
        Client(fleet["address"], security=foreign, timeout=5)
    stranger = credentials.security("client", _other_fleet(tmp_path) / "fleet")

    async def call(address, security):
        comm = await connect(address, timeout=5, **security.get_connection_args("client"))
        await comm.write({"op": "identity"})
        return await comm.read()

    for address in (fleet["address"], worker):
        for security in (foreign, stranger):
            with pytest.raises((OSError, TimeoutError)):
                asyncio.run(call(address, security))
    assert asyncio.run(call(worker, credentials.security("client", fleet["config"] / "fleet")))["type"] == "Worker"


def test_a_worker_of_another_fleet_cannot_join(fleet, tmp_path):
    other = _other_fleet(tmp_path)
    intruder = _sslperf("fleet", "worker", "--scheduler", fleet["address"], "--tag", "lab-x", config=other,
                        log=tmp_path / "intruder.log")
    try:
        intruder.wait(timeout=90)       # it gives up (death timeout) rather than joining
    finally:
        _stop(intruder)
    assert intruder.returncode != 0
    listed = run_cli("fleet", "machines", "--scheduler", fleet["address"], env={"SSLPERF_CONFIG_DIR":
                                                                                 str(fleet["config"])})
    assert " lab-x " not in listed.stdout and " lab-a " in listed.stdout


def test_nothing_listens_on_every_interface(fleet):
    scheduler, worker = _listening(fleet["scheduler"].pid), _listening(fleet["worker"].pid)
    assert len(scheduler) == 2 and worker, (scheduler, worker)       # the scheduler and its HTTP port; the worker
    assert all(a.startswith("127.0.0.1:") for a in scheduler + worker), (scheduler, worker)


def test_the_schedulers_http_server_answers_health_and_nothing_else(fleet):
    import urllib.error
    import urllib.request

    http = next(a for a in _listening(fleet["scheduler"].pid) if not fleet["address"].endswith(a.split(":")[1]))
    assert urllib.request.urlopen(f"http://{http}/health", timeout=10).read() == b"ok"
    for page in ("/info/main/workers.html", "/json/identity.json", "/metrics"):
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://{http}{page}", timeout=10)
        assert missing.value.code == 404, page


@pytest.mark.parametrize("address, insecure, said", [
    ("tcp://127.0.0.1:8786", 0, "add --insecure"),
    ("tcp://10.0.0.5:8786", 1, "--insecure --insecure"),
    ("tls://10.0.0.5:8786", 1, "--insecure is for a tcp://"),
    ("http://10.0.0.5:8786", 0, "not a scheduler address"),
    ("tls://10.0.0.5:port", 0, "not a scheduler address"),
])
def test_plain_tcp_needs_insecure_and_off_loopback_twice(address, insecure, said):
    with pytest.raises(SslperfError, match=said.replace("-", r"\-")):
        endpoint.parse(address, insecure)


def test_what_tcp_and_tls_addresses_become():
    assert endpoint.parse("tcp://127.0.0.1:9", 1).address == "tcp://127.0.0.1:9"
    assert endpoint.parse("tcp://10.0.0.5:9", 2).address == "tcp://10.0.0.5:9"
    assert endpoint.parse("10.0.0.5").address == "tls://10.0.0.5:8786"       # TLS unless told otherwise
    assert endpoint.parse("tls://[::1]:9").reaching() == "::1"


def test_a_tls_scheduler_without_credentials_is_one_paragraph(tmp_path):
    result = run_cli("fleet", "machines", "--scheduler", "tls://127.0.0.1:9",
                     env={"SSLPERF_CONFIG_DIR": str(tmp_path / "none")})
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip().count("\n") == 0 and "sslperf fleet credentials" in result.stderr


def test_a_scheduler_on_another_address_over_tcp_must_be_insisted_on(tmp_path):
    result = run_cli("fleet", "scheduler", "--host", "10.255.255.1", "--insecure",
                     env={"SSLPERF_CONFIG_DIR": str(tmp_path)})
    assert result.returncode == 2 and "--insecure --insecure" in result.stderr, result.stderr
    assert not (tmp_path / "fleet").exists()


def test_a_bundle_carries_one_role_and_never_the_cas_key(tmp_path):
    made, here = tmp_path / "made", tmp_path / "here"
    credentials.make(["10.0.0.5"], made)
    bundle = credentials.export("worker", tmp_path / "w.tgz", made)
    assert stat.S_IMODE(bundle.stat().st_mode) == 0o600
    with tarfile.open(bundle) as tar:
        assert sorted(tar.getnames()) == ["ca.pem", "worker-key.pem", "worker.pem"]
    role, written = credentials.install(bundle, here)
    assert role == "worker" and credentials.present("worker", here) and not credentials.present("client", here)
    assert not (here / credentials.CA_KEY).exists()
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in written)


def test_a_bundle_with_anything_else_is_refused(tmp_path):
    evil = tmp_path / "evil.tgz"
    with tarfile.open(evil, "w:gz") as tar:
        for name in ("ca.pem", "../outside.pem"):
            info = tarfile.TarInfo(name)
            tar.addfile(info)
    with pytest.raises(SslperfError, match="not a fleet credentials bundle"):
        credentials.install(evil, tmp_path / "here")
    assert not (tmp_path / "outside.pem").exists() and not (tmp_path / "here").exists()


def test_the_stores_password_comes_from_its_file_and_is_never_shown(tmp_path, monkeypatch):
    from sslperf.store import connect

    held = tmp_path / "password"
    held.write_text("s3cr:et@x\n")
    monkeypatch.setenv(connect.PASSWORD_FILE, str(held))
    engine = connect.open_engine("postgresql+psycopg://sslperf@127.0.0.1:9/sslperf", 5)
    assert engine.url.password == "s3cr:et@x" and "s3cr" not in str(engine.url)
    named = connect.open_engine("postgresql+psycopg://sslperf:given@127.0.0.1:9/sslperf", 5)
    assert named.url.password == "given"                 # a URL's own password stands


def test_an_unreadable_password_file_is_one_paragraph(tmp_path):
    result = run_cli("--db", "postgresql+psycopg://sslperf@127.0.0.1:9/sslperf", "runs", "list",
                     env={"SSLPERF_DB_PASSWORD_FILE": str(tmp_path / "missing")})
    assert result.returncode == 2 and "SSLPERF_DB_PASSWORD_FILE" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and result.stderr.strip().count("\n") == 0


def test_a_workers_measuring_child_gets_the_store_in_its_environment_and_a_cpu_of_its_machine(monkeypatch):
    """/proc/PID/cmdline is readable by every user of the machine; /proc/PID/environ by this one only."""
    from sslperf.fleet import tasks
    from sslperf.measure.request import Request
    from sslperf.measure.settings import Settings

    seen = {}

    class Child:
        returncode = 0

        def __init__(self, argv, env, **kwargs):
            seen.update(argv=argv, env=env, request=Path(argv[-1]).read_text())

        def communicate(self, timeout=None):
            return "", None

    catalog.load()      # before Popen is faked: checking the request reads the catalog (a first read builds a harness)
    monkeypatch.setattr(tasks.subprocess, "Popen", Child)
    # The client pinned to a CPU of its own machine that this one lacks: the machine chooses its own.
    request = Request("sslperf speed", ["system"], ["digest/sha256/64"], Settings(10, 3, cpu=4095))
    db = "postgresql+psycopg://sslperf:s3cret@db.example/sslperf"
    assert tasks.measure(request.to_json(), db, "fleet-1:lab-a", 60)["returncode"] == 0
    assert not any("s3cret" in part for part in seen["argv"]) and seen["env"]["SSLPERF_DB"] == db
    from sslperf import pinning

    assert Request.from_json(seen["request"]).settings.cpu == pinning.choose(None)


def test_a_worker_on_plain_tcp_listens_off_loopback_only_when_insisted_on(tmp_path):
    result = run_cli("fleet", "worker", "--scheduler", "tcp://127.0.0.1:9", "--insecure", "--tag", "lab-a",
                     "--host", "10.255.255.1", env={"SSLPERF_CONFIG_DIR": str(tmp_path)})
    assert result.returncode == 2 and "--insecure --insecure" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("host", ["", "::1"])
def test_a_scheduler_needs_an_address_it_can_listen_on_as_given(tmp_path, host):
    result = run_cli("fleet", "scheduler", "--host", host, "--port", str(free_port()),
                     env={"SSLPERF_CONFIG_DIR": str(tmp_path)})
    assert result.returncode == 2 and "--host" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip().count("\n") == 0


def _bundle(path: Path, files: dict[str, bytes]) -> Path:
    import io

    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_a_bundle_must_check_out_and_never_lands_where_the_ca_key_is(tmp_path):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    credentials.make([], ours)
    credentials.make([], theirs)
    ca, cert, key = ((ours / n).read_bytes() for n in ("ca.pem", "worker.pem", "worker-key.pem"))
    cases = {"no key": {"ca.pem": ca, "worker.pem": cert},
             "another fleet's certificate": {"ca.pem": ca, "worker.pem": (theirs / "worker.pem").read_bytes(),
                                             "worker-key.pem": (theirs / "worker-key.pem").read_bytes()},
             "another certificate's key": {"ca.pem": ca, "worker.pem": cert,
                                           "worker-key.pem": (ours / "client-key.pem").read_bytes()}}
    for name, files in cases.items():
        with pytest.raises(SslperfError):
            credentials.install(_bundle(tmp_path / f"{name}.tgz", files), tmp_path / "here")
        assert not (tmp_path / "here" / "worker.pem").exists(), name
    good = _bundle(tmp_path / "good.tgz", {"ca.pem": ca, "worker.pem": cert, "worker-key.pem": key})
    assert credentials.install(good, tmp_path / "here")[0] == "worker"
    with pytest.raises(SslperfError, match="holds the CA's key"):
        credentials.install(good, theirs)
    assert (theirs / "ca.pem").read_bytes() != ca


def test_an_export_never_replaces_a_file_unasked_nor_follows_a_link(tmp_path):
    made = tmp_path / "made"
    credentials.make([], made)
    out = tmp_path / "w.tgz"
    out.write_text("mine")
    with pytest.raises(SslperfError, match="exists"):
        credentials.export("worker", out, made)
    assert out.read_text() == "mine"
    credentials.export("worker", out, made, force=True)
    link = tmp_path / "link.tgz"
    link.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(SslperfError, match="exists"):
        credentials.export("worker", link, made, force=True)
    assert not (tmp_path / "elsewhere").exists()
