"""End to end: build a real OpenSSL from the openssl-src crate (1.1.1w is the
quickest to build), check what it reports, its footprint, the cache hit, and
the minimal variant against the default. Minutes, not seconds."""

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import TEST_CACHE, private_cache, run_cli

from sslperf.libs import build_systems
from sslperf.libs.build_systems import BUILD_PREFIX

# In order, on one worker: the first test builds what the others read.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("e2e-build")]


@pytest.fixture(scope="module")
def env(e2e_env):
    return e2e_env


def cli_json(env, *args):
    result = run_cli(*args, "--json", env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_build_from_the_crate(env):
    result = run_cli("libs", "build", "openssl-1.1.1w", env=env, timeout=1800)
    assert result.returncode == 0, result.stderr + result.stdout
    # Built here, unless another e2e module's fixture built it first this session.
    assert "openssl-1.1.1w: built in" in result.stdout or "openssl-1.1.1w: cached build" in result.stdout
    [info] = cli_json(env, "libs", "info", "openssl-1.1.1w")
    assert info["version_string"].startswith("OpenSSL 1.1.1w ")
    assert info["origin"] == "built from crate openssl-src 111.28.2+1.1.1w"
    assert info["configure_options"][:2] == ["no-shared", "no-tests"]
    version = subprocess.run([Path(info["prefix"]) / "bin" / "openssl", "version"], capture_output=True,
                             text=True, timeout=30).stdout
    assert version.startswith("OpenSSL 1.1.1w ")
    figures = info["footprint"]["figures"]
    assert figures["libcrypto_bytes"] > 2_000_000 and figures["libssl_bytes"] > 300_000
    assert figures["libcrypto_code"] < figures["libcrypto_bytes"]
    assert figures["program_text"] > 500_000            # statically linked TLS client
    assert info["footprint"]["program_linkage"] == "static"
    assert set(info["phase_seconds"]) == {"fetch", "configure", "compile", "install"}
    # The progress bar counts compile commands in make's output: check it sees them.
    log = (Path(info["prefix"]).parent / "build.log").read_text()
    compiles = [line for line in log.splitlines() if build_systems.COMPILE_LINE.search(line)]
    assert len(compiles) > 500 and all(".o" in line for line in compiles)


def test_a_build_names_its_home_and_another_build_of_its_source_takes_every_object_from_ccache(env, tmp_path):
    """Every OpenSSL build is configured for one prefix and moved to its home (libs.relocation), so two builds of
    one source compile with the same lines: the second, at another home (a bisect's next commit, in another
    cache), finds its objects in ccache's depend mode without compiling or preprocessing them."""
    assert shutil.which("ccache"), "scripts/bootstrap.sh installs ccache"
    source = next((TEST_CACHE / "e2e" / "sources").glob("openssl-src-*+1.1.1w")) / "openssl"
    compiler_cache = os.environ.get("SSLPERF_CCACHE_DIR") or str(tmp_path / "ccache")     # the suite's, if it has one
    # The crate's build (test_build_from_the_crate) filled the suite's compiler cache for this prefix, unless it was
    # made before builds had one prefix: then a first build here fills it and the second is the one checked.
    [crate] = cli_json(env, "libs", "info", "openssl-1.1.1w")
    made = json.loads((Path(crate["prefix"]).parent / "build.json").read_text())
    filled = "SSLPERF_CCACHE_DIR" in os.environ and made.get("relocated", {}).get("from") == [str(BUILD_PREFIX)]
    homes = []
    for n in (2,) if filled else (1, 2):
        stats = tmp_path / f"ccache-{n}.log"
        own = {**env, "SSLPERF_CACHE_DIR": str(private_cache(tmp_path / f"cache-{n}")), "CCACHE_STATSLOG": str(stats),
               "SSLPERF_CCACHE_DIR": compiler_cache}
        result = run_cli("libs", "build", "--source-dir", source, "--name", f"openssl-1.1.1w-again{n}", env=own,
                         timeout=1800)
        assert result.returncode == 0, result.stderr + result.stdout
        [info] = cli_json(own, "libs", "info", f"openssl-1.1.1w-again{n}")
        homes.append(Path(info["prefix"]))
    outcomes = [line for line in stats.read_text().splitlines() if line and not line.startswith("#")]
    compiled = [o for o in outcomes if o in ("direct_cache_hit", "preprocessed_cache_hit", "cache_miss")]
    assert len(compiled) > 700 and compiled.count("direct_cache_hit") >= len(compiled) - 2, sorted(set(outcomes))
    # Each names its own home, though both were compiled for the same prefix.
    for home in homes:
        said = subprocess.run([home / "bin" / "openssl", "version", "-d"], capture_output=True, text=True,
                              timeout=30).stdout.strip()
        assert re.sub("/+", "/", said) == f'OPENSSLDIR: "{home}/ssl"', said
        moved = json.loads((home.parent / "build.json").read_text())["relocated"]
        assert {"prefix/lib/libcrypto.a", "prefix/bin/openssl"} <= set(moved["patched"]) and not moved["kept"]
        assert "prefix/lib/pkgconfig/libcrypto.pc" in moved["rewritten"]
        assert f"prefix={home}\n" in (home / "lib" / "pkgconfig" / "libcrypto.pc").read_text()
    crate_home = os.fsencode(crate["prefix"])
    assert all(crate_home not in (home / "lib" / "libcrypto.a").read_bytes() for home in homes)


def test_second_build_is_a_cache_hit(env):
    [before] = cli_json(env, "libs", "info", "openssl-1.1.1w")
    started = time.monotonic()
    result = run_cli("libs", "build", "openssl-1.1.1", env=env)      # short name, same release
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert "openssl-1.1.1w: cached build" in result.stdout
    [after] = cli_json(env, "libs", "info", "openssl-1.1.1w")
    assert after["built_at"] == before["built_at"]
    print(f"cache hit through the CLI took {elapsed:.2f} s")


def test_list_shows_system_and_built(env):
    names = [lib["name"] for lib in cli_json(env, "libs", "list")]
    assert names[0] == "system" and "openssl-1.1.1w" in names


def test_minimal_variant_is_smaller(env):
    result = run_cli("libs", "build", "openssl-1.1.1w+minimal", env=env, timeout=1800)
    assert result.returncode == 0, result.stderr + result.stdout
    assert "skipped: no-argon2 no-cmp no-http no-legacy no-quic no-siv" in result.stdout
    default, minimal = cli_json(env, "libs", "info", "openssl-1.1.1w", "openssl-1.1.1w+minimal")
    for key in ("libcrypto_bytes", "libssl_bytes", "libcrypto_code", "program_text"):
        assert minimal["footprint"]["figures"][key] < default["footprint"]["figures"][key], key
    assert "no-engine" in minimal["configure_options"] and "no-ocb" in minimal["configure_options"]
    table = run_cli("libs", "info", "openssl-1.1.1w", "openssl-1.1.1w+minimal", env=env).stdout
    assert "libcrypto file size" in table and "%)" in table


def test_real_configure_rejects_an_unknown_option(env):
    result = run_cli("libs", "build", "openssl-1.1.1w", "--configure-opt", "no-frobnicate", env=env)
    assert result.returncode == 3
    assert "rejects the configure option(s) no-frobnicate" in result.stderr
    assert "Traceback" not in result.stderr


def test_register_and_remove(env, tmp_path):
    [built] = cli_json(env, "libs", "info", "openssl-1.1.1w")
    added = run_cli("libs", "add", "my-1.1.1", "--prefix", built["prefix"], env=env)
    assert added.returncode == 0, added.stderr
    [mine] = cli_json(env, "libs", "info", "my-1.1.1")
    assert mine["kind"] == "registered" and mine["version_string"] == built["version_string"]
    # A build removed from a cache of its own (a copy): the shared cache keeps its builds for other tests.
    own = {**env, "SSLPERF_CACHE_DIR": str(tmp_path / "cache")}
    home = Path(built["prefix"]).parent
    shutil.copytree(home, tmp_path / "cache" / "libs" / home.name, symlinks=True)
    assert run_cli("libs", "remove", "my-1.1.1", "openssl-1.1.1w", env=own).returncode == 0
    names = [lib["name"] for lib in cli_json(own, "libs", "list")]
    assert "my-1.1.1" not in names and "openssl-1.1.1w" not in names
    assert not (tmp_path / "cache" / "libs" / home.name).exists() and home.exists()
