"""End to end: build a real OpenSSL from the openssl-src crate (1.1.1w is the
quickest to build), check what it reports, its footprint, the cache hit, and
the minimal variant against the real Configure. Minutes, not seconds."""

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import TEST_CACHE, private_cache, run_cli

from sslperf.libs import build_systems, variants
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


def makefile_objects(source: Path, build: Path, options: list[str]) -> set[str]:
    """The library objects the Makefile of OpenSSL's own Configure (run as a build runs it) would compile."""
    build.mkdir()
    done = subprocess.run(["perl", source / "Configure", build_systems._openssl_target(), "no-shared", "no-tests",
                           *options], cwd=build, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return set(re.findall(r"^((?:crypto|ssl)/\S+\.o):", (build / "Makefile").read_text(), re.M))


def test_the_minimal_variant_is_what_the_real_configure_takes_and_leaves_out_what_it_disables(env, tmp_path):
    """The minimal variant as a build of it starts: its options against 1.1.1w's own Configure (the ones this
    version does not know skipped by name, the rest accepted), and the Makefile Configure writes compiles fewer
    library objects, without the features the variant disables. (Its whole build, 66 CPU-s, is not made here.)"""
    source = next(Path(env["SSLPERF_CACHE_DIR"], "sources").glob("openssl-src-*+1.1.1w")) / "openssl"
    minimal = variants.plan(variants.lookup(("minimal",), "openssl"), variants.known_features(source / "Configure"),
                            [], [])
    assert " ".join(minimal.skipped) == "no-argon2 no-cmp no-http no-legacy no-quic no-siv"
    assert "no-engine" in minimal.options and "no-ocb" in minimal.options
    default = makefile_objects(source, tmp_path / "default", [])
    smaller = makefile_objects(source, tmp_path / "minimal", minimal.options)
    assert smaller < default and len(smaller) < 0.85 * len(default), (len(smaller), len(default))
    # (no-ocb and the like only compile a file empty; these take whole directories out)
    for left_out in ("crypto/engine/eng_lib.o", "crypto/dh/dh_lib.o", "crypto/cms/cms_lib.o",
                     "crypto/whrlpool/wp_dgst.o"):
        assert left_out in default and left_out not in smaller, left_out


def test_two_builds_are_set_side_by_side_with_their_footprints(env, built_openssl3):
    table = run_cli("libs", "info", "openssl-1.1.1w", built_openssl3, env=env).stdout
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
