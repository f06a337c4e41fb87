"""`sslperf fleet` on a real Dask cluster on this machine: a scheduler on
loopback and `sslperf fleet worker` processes tagged lab-a and lab-b (lab-b
with AES-NI hidden by the CPU mask, so the two machine types really differ),
measuring into one real PostgreSQL server."""

import asyncio
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import free_port, private_cache, run_cli
from test_report import page_data

from sslperf.store import Store

pytestmark = pytest.mark.xdist_group("fleet")

AES_GCM = "cipher/aes-128-gcm/encrypt/16384"
SHA256 = "digest/sha256/16384"
SUITE = ["--lib", "system", "--case", AES_GCM, "--case", SHA256, "--time", "5", "--samples", "5"]


class Cluster:
    def __init__(self, root, db):
        self.root, self.db, self.workers = root, db, {}
        # One machine: the scheduler, the workers and the client share the fleet's credentials, made by the
        # scheduler's first start as the fleet guide says.
        self.config = root / "config"
        self.client_env = {"SSLPERF_DATA_DIR": str(root / "client"), "SSLPERF_CONFIG_DIR": str(self.config),
                           "SSLPERF_CACHE_DIR": str(private_cache(root / "client-cache"))}
        port = free_port()
        self.address = f"tls://127.0.0.1:{port}"
        self.scheduler = self._start("scheduler", [sys.executable, "-m", "sslperf", "fleet", "scheduler", "--port",
                                                   str(port), "--http-port", str(free_port())], {})
        deadline = time.monotonic() + 60
        while "scheduler at" not in (self.root / "scheduler.log").read_text() and time.monotonic() < deadline:
            time.sleep(0.2)

    def _start(self, name, argv, env):
        log = open(self.root / f"{name}.log", "w")
        return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, "SSLPERF_CONFIG_DIR": str(self.config), **env},
                                start_new_session=True)

    def worker(self, tag, *extra, cache=None, wait=True):
        env = {"SSLPERF_CACHE_DIR": str(cache or private_cache(self.root / f"cache-{tag}")),
               "SSLPERF_DATA_DIR": str(self.root / f"data-{tag}")}
        self.workers[tag] = self._start(f"worker-{tag}", [sys.executable, "-m", "sslperf", "fleet", "worker",
                                                          "--scheduler", self.address, "--tag", tag, *extra], env)
        if wait:            # else the caller waits for it (workers started together join together)
            self.wait_for(tag)
        return self.workers[tag]

    def wait_for(self, tag, seconds=60):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            listed = self.cli("fleet", "machines", "--scheduler", self.address, timeout=60)
            if listed.returncode == 0 and f" {tag} " in listed.stdout:
                return
            time.sleep(0.2)
        raise AssertionError(f"worker {tag} never joined: " + (self.root / f"worker-{tag}.log").read_text())

    def cli(self, *args, timeout=900):
        return run_cli("--db", self.db, *args, env=self.client_env, timeout=timeout)

    def stop(self):
        for process in [*self.workers.values(), self.scheduler]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in [*self.workers.values(), self.scheduler]:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, postgres_url):
    store = Store(postgres_url)
    for row in store.list():
        store.delete(row["id"])
    made = Cluster(tmp_path_factory.mktemp("fleet"), postgres_url)
    try:
        made.worker("lab-a")
        made.worker("lab-b", "--cpu-mask", "no-aesni")
        yield made
    finally:
        made.stop()


class RefreshedClient:
    """A Dask client as distributed 2026.8 behaves in a race a fresh test run met: `scheduler_info(n_workers=-1)`
    fetches every worker into the client's cached identity and returns that cache, which the client's periodic
    refresh (cluster totals only) has replaced by then; the scheduler itself, asked, has the worker."""

    def __init__(self, workers: dict):
        self.workers = workers
        self.scheduler = self

    async def identity(self, n_workers=0):
        return {"workers": self.workers if n_workers == -1 else {}}

    def scheduler_info(self, n_workers=-1):
        return {"workers": {}}                  # the refresh came between the fetch and the read

    def sync(self, function, *args, **kwargs):
        return asyncio.run(function(*args, **kwargs))


def test_the_machines_are_asked_of_the_scheduler_not_read_from_a_cache_a_refresh_empties():
    from sslperf.fleet import cluster

    client = RefreshedClient({"tcp://127.0.0.1:40001": {"resources": {f"{cluster.MACHINE}lab-b": 1}, "name": "w-b",
                                                        "host": "127.0.0.1"}})
    assert cluster.machines(client) == [cluster.Machine("tcp://127.0.0.1:40001", "lab-b", "w-b", "127.0.0.1")]


@pytest.fixture(scope="module")
def suite_run(cluster):
    """One suite sent to both machine types."""
    result = cluster.cli("fleet", "speed", "--scheduler", cluster.address, *SUITE)
    runs = {row["host"]: row for row in Store(cluster.db).list()
            if (row["environment"] or {}).get("fleet", "").endswith((":lab-a", ":lab-b"))}
    return result, runs


def test_a_suite_runs_on_every_machine_type_into_one_store(suite_run):
    result, runs = suite_run
    assert result.returncode == 0, result.stdout + result.stderr
    assert set(runs) == {"lab-a", "lab-b"}
    assert {row["state"] for row in runs.values()} == {"complete"} and all(r["measurements"] == 2 for r in runs.values())
    assert runs["lab-b"]["environment"]["mask"] == "no-aesni" and runs["lab-a"]["environment"]["mask"] is None
    assert "aes" not in runs["lab-b"]["environment"]["cpu_flags"]
    assert runs["lab-a"]["id"] in result.stdout and runs["lab-b"]["id"] in result.stdout


def test_two_workers_on_one_host_never_measure_at_once(suite_run):
    _, runs = suite_run
    a, b = runs.values()
    # The stamps are whole seconds: of two runs that began in the same second, either may have gone first.
    assert a["finished"] <= b["started"] or b["finished"] <= a["started"], (a, b)


def test_the_hosts_page_shows_both_machine_types_and_the_aes_gcm_gap(cluster, suite_run, tmp_path):
    made = cluster.cli("report", "--hosts", "--out", tmp_path)
    assert made.returncode == 0, made.stderr
    charts = page_data(tmp_path / "hosts.html")["charts"]
    legends = {s["key"]: s["legend"] for c in charts for s in c["series"]}
    assert set(legends) == {"lab-a", "lab-b"}
    assert "−aes" in legends["lab-b"] and "−aes" not in legends["lab-a"]

    def rate(case, host):       # per CPU second: the two runs are minutes apart, beside builds and other tests
        chart = next(c for c in charts if case in c["x"])
        return chart["absolute"]["cpu"][host][chart["x"].index(case)]["y"]

    # AES-GCM without AES-NI is several times slower; SHA-256 does not use AES-NI.
    assert rate(AES_GCM, "lab-a") > 2.5 * rate(AES_GCM, "lab-b")
    assert 0.5 < rate(SHA256, "lab-a") / rate(SHA256, "lab-b") < 2


@pytest.mark.parametrize("how", ["killed", "stopped"])
def test_a_worker_lost_mid_suite_loses_only_its_unfinished_case(cluster, how):
    """Killed: SIGKILL to the worker's whole process group (a machine lost).
    Stopped: SIGTERM to the worker alone (a pod evicted), which must end its
    measurement, keeping the run as interrupted, and exit at once."""
    tag = f"lab-{how}"
    worker = cluster.worker(tag)
    cases = [a for size in (16, 64, 256, 1024, 8192, 16384) for a in ("--case", f"digest/sha256/{size}")]
    client = subprocess.Popen([sys.executable, "-m", "sslperf", "--db", cluster.db, "fleet", "speed", "--scheduler",
                               cluster.address, "--machine", tag, "--lib", "system", *cases, "--time", "100",
                               "--samples", "20"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, **cluster.client_env})
    store = Store(cluster.db)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        runs = [r for r in store.list() if r["host"] == tag]
        if runs and runs[0]["measurements"] >= 2:     # a pass has measured two cases; ~10 s of the run are left
            break
        time.sleep(0.5)
    else:
        client.kill()
        pytest.fail(f"{tag} never stored two results")
    if how == "killed":
        os.killpg(worker.pid, signal.SIGKILL)
    else:
        os.kill(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)         # not after the suite: at once, its measurement ended
    out, err = client.communicate(timeout=300)
    assert client.returncode == 1, out + err
    assert f"{tag} failed:" in err and "left the cluster mid-suite" in err, err
    run = next(r for r in store.list() if r["host"] == tag)
    assert f"its run {run['id']} keeps {run['measurements']} results" in " ".join(err.split())
    assert 2 <= run["measurements"] <= 6         # each case measured so far, with the samples it had
    assert (run["state"] == "interrupted" if how == "stopped" else run["state"] in ("interrupted", "crashed")), (run, err)
    kept = store.load(run["id"])
    assert all(m.status == "ok" and len(m.wall_ns) > 0 for m in kept.measurements)


def test_a_fleet_needs_a_store_every_machine_reaches(cluster, tmp_path):
    result = run_cli("--db", f"sqlite:///{tmp_path / 'x.db'}", "fleet", "speed", "--scheduler", cluster.address,
                     *SUITE)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "PostgreSQL" in result.stderr


def test_options_that_make_no_sense_on_a_fleet_are_refused_before_anything_runs(cluster, tmp_path):
    result = cluster.cli("fleet", "speed", "--scheduler", cluster.address, *SUITE, "--out", tmp_path / "x.json")
    assert result.returncode == 2 and "--out" in result.stderr and not (tmp_path / "x.json").exists()
    bad = cluster.cli("fleet", "speed", "--scheduler", cluster.address, "--samples", "zero")
    assert bad.returncode == 2 and "--samples" in bad.stderr


def test_a_library_one_machine_lacks_is_named_before_anything_runs(cluster):
    result = cluster.cli("fleet", "speed", "--scheduler", cluster.address, "--lib", "openssl-1.1.1w", "--case", SHA256)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "openssl-1.1.1w on lab-a" in result.stderr and "sslperf fleet build" in result.stderr


@pytest.mark.slow
def test_a_build_one_machine_has_is_copied_to_the_others_and_measures_there(cluster, built_openssl, e2e_env):
    cluster.worker("lab-src", cache=e2e_env["SSLPERF_CACHE_DIR"], wait=False)
    cluster.worker("lab-dst", wait=False)
    cluster.wait_for("lab-src")
    cluster.wait_for("lab-dst")
    made = cluster.cli("fleet", "build", "--scheduler", cluster.address, "--machine", "lab-src", "--machine",
                       "lab-dst", built_openssl)
    assert made.returncode == 0, made.stdout + made.stderr
    row = next(line for line in made.stdout.splitlines() if built_openssl in line)
    assert "in hand" in row and "lab-dst" in row           # taken from lab-src, built nowhere, copied to lab-dst
    assert list((cluster.root / "cache-lab-dst" / "libs").iterdir())
    measured = cluster.cli("fleet", "speed", "--scheduler", cluster.address, "--machine", "lab-dst", "--lib",
                           built_openssl, "--case", SHA256, "--time", "3", "--samples", "3", "--processes", "1")
    assert measured.returncode == 0, measured.stdout + measured.stderr
    run = next(r for r in Store(cluster.db).list() if r["host"] == "lab-dst")
    assert run["libs"] == [built_openssl] and run["measurements"] == 1 and run["state"] == "complete"


def test_fleet_api_runs_the_request_api_makes_on_both_machine_types_masked_and_not(cluster):
    """`fleet api` sends the request `api` would run: lab-b's type is made by a CPU mask, which applies to its
    API cases too (api has no --cpu-mask of its own), lab-a runs unmasked."""
    before = {row["id"] for row in Store(cluster.db).list()}
    result = cluster.cli("fleet", "api", "--scheduler", cluster.address, "--lib", "system", "--filter",
                         "api/digest/sha256/implicit-fetch/64", "--time", "5", "--samples", "3", "--processes", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    runs = {row["host"]: row for row in Store(cluster.db).list() if row["id"] not in before}
    assert set(runs) == {"lab-a", "lab-b"} and all(r["state"] == "complete" for r in runs.values())
    assert runs["lab-b"]["environment"]["mask"] == "no-aesni" and runs["lab-a"]["environment"]["mask"] is None
    for row in runs.values():
        run = Store(cluster.db).load(row["id"])
        assert [m.case for m in run.measurements] == ["api/digest/sha256/implicit-fetch/64"]
        assert run.settings["source"] == "sslperf api" and run.settings["suite"] == "api"


def test_fleet_tls_sends_a_subcommands_request(cluster):
    before = {row["id"] for row in Store(cluster.db).list()}
    result = cluster.cli("fleet", "tls", "--scheduler", cluster.address, "--machine", "lab-a", "memory", "--lib",
                         "system", "--connections", "5", "--case", "tls/handshake/tls1.3/x25519/ecdsa-p256/shared")
    assert result.returncode == 0, result.stdout + result.stderr
    [row] = [row for row in Store(cluster.db).list() if row["id"] not in before]
    run = Store(cluster.db).load(row["id"])
    assert [m.case for m in run.measurements] == ["tls/memory/tls1.3/x25519/ecdsa-p256"]
    assert run.measurements[0].status == "ok" and run.measurements[0].figures["connections"] == [5]


def test_a_users_own_run_on_a_fleet_host_waits_for_the_hosts_measuring_lock(cluster, tmp_path):
    """A fleet worker serves this host, so a user's own `speed` takes the host's lock too: while something else
    holds it, the run waits (and says so) before it starts."""
    import fcntl

    from sslperf.measure import hostlock

    fd = os.open(hostlock.HOST_LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    fcntl.flock(fd, fcntl.LOCK_EX)
    out_file, err_file = tmp_path / "stdout.txt", tmp_path / "stderr.txt"

    def said() -> str:
        return out_file.read_text() + err_file.read_text()

    try:
        with open(out_file, "w") as out, open(err_file, "w") as err:
            own = subprocess.Popen([sys.executable, "-m", "sslperf", "speed", "--case", SHA256, "--time", "2",
                                    "--samples", "3", "--processes", "1", "--no-store"], stdout=out, stderr=err,
                                   text=True, env={**os.environ, **cluster.client_env})
        # held until the run says it waits (or 60 s), then for a moment more: it must not have gone on regardless
        deadline = time.monotonic() + 60
        while "waiting for another measurement" not in said() and own.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1)
        assert own.poll() is None                       # still waiting for the lock
    finally:
        os.close(fd)
    own.wait(timeout=300)
    out, err = out_file.read_text(), err_file.read_text()
    assert own.returncode == 0, out + err
    assert "waiting for another measurement on this host" in out + err


def test_fleet_noise_runs_the_aa_experiment_as_one_request_and_keeps_the_floors_per_machine(cluster):
    """Issue 53: `fleet noise` sends the request `noise` makes (the library and its twin, `--runs` as its repeat);
    the machine runs it back to back into the one store and keeps its own floors, under its own host."""
    store = Store(cluster.db)
    before = {row["id"] for row in store.list()}
    result = cluster.cli("fleet", "noise", "--scheduler", cluster.address, "--machine", "lab-a", "--lib", "system",
                         "--runs", "2", "--filter", "digest/sha256", "--processes", "3")
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [row for row in store.list() if row["id"] not in before]
    assert len(rows) == 2 and {row["host"] for row in rows} == {"lab-a"}, rows
    assert "(and 1 more)" in result.stdout
    for row in rows:
        run = store.load(row["id"])
        assert run.settings["source"] == "sslperf noise" and run.settings["threshold"] == 0.02
        assert sorted(lib.name for lib in run.libs) == ["system", "system#2"]
        assert run.measurements and all(m.case.startswith("digest/sha256/") for m in run.measurements)
    floors = store.floors("lab-a")
    assert ("within", "digest") in floors and ("across", "digest") in floors, floors
