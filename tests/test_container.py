"""The container image, for real: a Debian base image made here without a
registry (scripts/base-image.sh), the sslperf image built FROM it with
podman (scripts/build-image.sh; scripts/test.sh starts that build in the
background before the tests, and a build already running is waited for, not
repeated), then sslperf run in a container as its non-root user, measuring
the system OpenSSL into a PostgreSQL store outside the container (the test
session's private server on loopback, reached with --network=host); the
test opens that store and finds the run under the machine name the
container was given."""

import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from conftest import TEST_CACHE

from sslperf.store import Store

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("container")]

ROOT = Path(__file__).parent.parent
IMAGE = "localhost/sslperf:test"      # scripts/test.sh builds this tag in the background
PODMAN = ["bash", str(ROOT / "scripts" / "podman.sh")]
CASES = ("cipher/aes-128-gcm/encrypt/1350", "kex/x25519/derive")


def podman(*args, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([*PODMAN, *map(str, args)], capture_output=True, text=True, timeout=timeout, check=False)


def run_in_image(*args, entrypoint: str | None = None, env: dict | None = None, timeout=300):
    options = ["run", "--rm", "--network=host"]
    if entrypoint:
        options += ["--entrypoint", entrypoint]
    for key, value in (env or {}).items():
        options += ["--env", f"{key}={value}"]
    return podman(*options, IMAGE, *args, timeout=timeout)


@pytest.fixture(scope="module")
def image():
    if shutil.which("podman") is None:
        if os.environ.get("CI"):
            pytest.fail("podman is not installed; EXTRAS=test scripts/bootstrap.sh should have installed it")
        pytest.skip("podman is not installed (EXTRAS=test bash scripts/bootstrap.sh installs it)")
    probe = podman("info", "--format", "{{.Host.OCIRuntime.Name}}", timeout=120)
    if probe.returncode != 0:
        pytest.skip(f"podman cannot run here: {probe.stderr.strip()[:300]}")
    TEST_CACHE.mkdir(parents=True, exist_ok=True)
    log = TEST_CACHE / "image-build-test.log"
    with open(log, "w") as out:   # waits for scripts/test.sh's background build, then finds every layer cached
        built = subprocess.run(["bash", str(ROOT / "scripts" / "build-image.sh"), IMAGE], stdout=out,
                               stderr=subprocess.STDOUT, timeout=3900, check=False)
    assert built.returncode == 0, f"the image build failed; its log: {log}\n" + log.read_text()[-3000:]
    return IMAGE


def test_the_container_runs_as_its_own_user_not_root(image):
    who = run_in_image("-c", "id -u; id -un; echo $HOME; ls $HOME/.cache/sslperf/harness", entrypoint="sh",
                       timeout=120)
    assert who.returncode == 0, who.stderr
    uid, name, home, *harness = who.stdout.split()
    assert uid != "0" and name == "sslperf" and home == "/home/sslperf"
    # The harness was compiled against the system OpenSSL at build time; the case catalog is the package's own
    # data (sslperf/cases/catalog.json), so no catalog is read from a harness into the cache.
    assert any(entry.startswith("system-") for entry in harness), harness
    assert not any(entry.startswith("catalog-") for entry in harness), harness


def test_the_entrypoint_is_sslperf_with_the_fleet_extra(image):
    version = run_in_image("--version", timeout=120)
    assert version.returncode == 0 and "sslperf" in version.stdout, version.stdout + version.stderr
    made = run_in_image("fleet", "credentials", env={"SSLPERF_CONFIG_DIR": "/tmp/fleet-config"}, timeout=120)
    assert made.returncode == 0 and "made the fleet's credentials" in made.stdout, made.stdout + made.stderr


def test_a_run_in_the_container_lands_in_the_store_outside(image, postgres_url):
    host = f"container-{uuid.uuid4().hex[:8]}"
    args = ["speed", "--quick", "--lib", "system", "--processes", "2"]
    for case in CASES:
        args += ["--case", case]
    result = run_in_image(*args, env={"SSLPERF_DB": postgres_url, "SSLPERF_HOST": host}, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "stored as run" in result.stdout, result.stdout

    store = Store(postgres_url)
    mine = [row for row in store.list() if row["libs"] == ["system"] and row["measurements"] == len(CASES)]
    runs = [store.load(row["id"]) for row in mine]
    [run] = [run for run in runs if run.environment.get("host") == host]
    assert run.state == "complete" and run.complete
    assert [lib.name for lib in run.libs] == ["system"] and run.libs[0].kind == "system"
    assert sorted(m.case for m in run.measurements) == sorted(CASES)
    for m in run.measurements:
        assert m.status == "ok", (m.case, m.reason)
        assert len(m.wall_ns) >= 10 and all(ns > 0 for ns in m.wall_ns)
        assert all(ops > 0 for ops in m.ops)
        assert m.summary().median > 0


BASE = os.environ.get("SSLPERF_BASE_IMAGE", "localhost/sslperf-base:bookworm")     # Debian with no Python


def test_a_probe_runs_in_a_container_with_no_python_and_its_results_import(image, built_openssl, built_openssl3,
                                                                           in_e2e_cache, tmp_path):
    from conftest import run_cli

    probe = tmp_path / "probe.tar.gz"
    made = run_cli("probe", "build", "--lib", built_openssl, "--lib", built_openssl3, "--case", CASES[0],
                   "--samples", "4", "--processes", "2", "--time", "5", "-o", probe, timeout=900)
    assert made.returncode == 0, made.stderr
    # The base image the sslperf image is built on: Debian's essential packages, no Python; no network either.
    script = ("if command -v python3 || command -v python; then exit 9; fi; cd /probe && tar xzf probe.tar.gz && "
              "sh sslperf-probe-*/run.sh /probe/results")
    ran = podman("run", "--rm", "--network=none", "--hostname", "probe-target", "-v", f"{tmp_path}:/probe:Z", BASE,
                 "sh", "-c", script, timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    imported = run_cli("import", tmp_path / "results.tar.gz", "--show")
    assert imported.returncode == 0, imported.stderr
    assert "on host probe-target" in imported.stdout, imported.stdout
    assert "aes-128-gcm encrypt 1350 B" in imported.stdout and "openssl-3.6.3" in imported.stdout, imported.stdout
