"""`sslperf libs export` / `libs import`: a built library moved to another
cache (another machine's, in effect) through one bundle file. The refusals
are checked on bundles that differ from a good one only in what is refused;
the end-to-end tests move the session's real OpenSSL 1.1.1w and measure with
it at its new place."""

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest
from conftest import private_cache, run_cli

from sslperf.libs import build, bundle, installed
from sslperf.libs.build_systems import BUILD_PREFIX
from sslperf.libs.installed import lib_from_manifest
from sslperf.libs.model import Lib

FOREIGN = "aarch64" if bundle.machine() != "aarch64" else "x86_64"


def fake_home(libs_dir: Path, name: str = "fake-1.0") -> Path:
    """A small built library as build.py leaves one: build.json, headers, an
    archive and a pkg-config file that name its prefix, a tool, an empty
    directory and a link."""
    key = hashlib.sha256(name.encode()).hexdigest()
    home = libs_dir / f"{name}-{key[:12]}"
    prefix = home / "prefix"
    for sub in ("include/openssl", "lib/pkgconfig", "lib/engines-3", "bin"):
        (prefix / sub).mkdir(parents=True)
    (home / "build.json").write_text(json.dumps({
        "name": name, "flavor": "openssl", "version": "1.0.0", "variants": [], "key": key, "recipe": 2,
        "source_digest": "0" * 64, "configure_options": ["no-shared"], "cflags": [], "build_seconds": 42.0,
        "compiler": {"cc": "/usr/bin/gcc | gcc (Debian 12.2.0-14) 12.2.0 | x86_64-linux-gnu"}}))
    (prefix / "include/openssl/ssl.h").write_text("/* fake */\n")
    (prefix / "lib/libcrypto.a").write_bytes(b"!<arch>\n\0\x01head\0OPENSSLDIR: \"" + bytes(prefix / "ssl") + b"\"\0"
                                             + bytes(prefix / "lib/ossl-modules") + b"\0tail\xff" * 100)
    (prefix / "lib/libssl.a").write_bytes(b"!<arch>\n\0ssl" * 50)
    (prefix / "lib/pkgconfig/libcrypto.pc").write_text(f"prefix={prefix}\nlibdir=${{prefix}}/lib\n")
    (prefix / "bin/tool").write_text("#!/bin/sh\necho tool\n")
    (prefix / "bin/tool").chmod(0o755)
    (prefix / "lib/libcrypto-alias.a").symlink_to("libcrypto.a")
    return home


def exported(home: Path) -> bytes:
    out = io.BytesIO()
    bundle.export([lib_from_manifest(home)], out)
    return out.getvalue()


def retar(data: bytes, index=None, member=None, extra=(), drop=()) -> bytes:
    """The bundle `data` again with bundle.json passed through `index`, each
    file's bytes through `member(name, bytes)`, `extra` (TarInfo, bytes) members
    added and `drop` left out; everything else as it was (gzip'd at level 1: quick, and any level reads the
    same)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as src, \
            tarfile.open(fileobj=out, mode="w:gz", format=tarfile.PAX_FORMAT, compresslevel=1) as dst:
        for info in src.getmembers():
            if info.name in drop:
                continue
            body = src.extractfile(info).read() if info.isreg() else None
            if info.name == "bundle.json" and index:
                body = json.dumps(index(json.loads(body))).encode()
            elif body is not None and member:
                body = member(info.name, body)
            if body is not None:
                info.size = len(body)
            dst.addfile(info, io.BytesIO(body) if body is not None else None)
        for info, body in extra:
            info.size = len(body or b"")
            dst.addfile(info, io.BytesIO(body) if body is not None else None)
    return out.getvalue()


def member(name: str, kind=tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, 0o644
    return info


def cache_state(cache: Path) -> tuple[list, list]:
    """What an import could have left: the libs and the temporary directories."""
    return (sorted(p.name for p in (cache / "libs").iterdir()) if (cache / "libs").exists() else [],
            sorted(p.name for p in (cache / "tmp").iterdir()) if (cache / "tmp").exists() else [])


# ---- quick: synthetic libraries ------------------------------------------------------------------------

def test_export_import_round_trip_relocates_what_names_the_old_place(sslperf_dirs, tmp_path):
    cache, _ = sslperf_dirs
    # Built under a longer path than the new cache's, so the archive's paths can be overwritten in place.
    home = fake_home(tmp_path / "a-builder-machine-with-a-long-cache-path" / "libs")
    old = str(home / "prefix")
    [lib] = bundle.install(io.BytesIO(exported(home)))
    assert not bundle.was_in_hand(lib) and lib.home == cache / "libs" / home.name
    new = str(lib.home / "prefix")
    assert (lib.home / "prefix/lib/pkgconfig/libcrypto.pc").read_text().startswith(f"prefix={new}\n")
    archive, original = (lib.home / "prefix/lib/libcrypto.a").read_bytes(), (home / "prefix/lib/libcrypto.a").read_bytes()
    assert len(archive) == len(original) and old.encode() not in archive
    padded = re.findall(rb'OPENSSLDIR: "([^"]+)"', archive)[0].decode()
    assert len(padded) == len(old) + len("/ssl") and re.sub("/+", "/", padded) == f"{new}/ssl"
    # Every byte but the path's is where it was: the strings after it, and the rest.
    assert archive.replace(padded.encode()[:-4], old.encode()) == original
    assert os.readlink(lib.home / "prefix/lib/libcrypto-alias.a") == "libcrypto.a"
    assert os.access(lib.home / "prefix/bin/tool", os.X_OK) and (lib.home / "prefix/lib/engines-3").is_dir()
    moved = lib.info["relocated"]
    assert moved["to"] == new and old in moved["from"]
    assert moved["rewritten"] == ["prefix/lib/pkgconfig/libcrypto.pc"] and moved["patched"] == ["prefix/lib/libcrypto.a"]
    assert lib.info["machine"] == bundle.machine() and lib.info["libc"] == bundle.libc()
    assert [x.name for x in installed.built_libs()] == ["fake-1.0"]


def test_a_build_moved_from_its_build_prefix_is_patched_again_where_it_is_imported(sslperf_dirs, tmp_path):
    """A build is configured for BUILD_PREFIX and moved to its home, its binaries padded: imported where the path
    is longer than its home's but shorter than the padded spelling, the binaries are patched again, none kept."""
    home = fake_home(tmp_path / "s" / "libs")
    for rel in ("lib/libcrypto.a", "lib/pkgconfig/libcrypto.pc"):
        path = home / "prefix" / rel
        path.write_bytes(path.read_bytes().replace(os.fsencode(home / "prefix"), os.fsencode(BUILD_PREFIX)))
    manifest = json.loads((home / "build.json").read_text())
    manifest["relocated"] = build._move(home, BUILD_PREFIX, home / "prefix")
    (home / "build.json").write_text(json.dumps(manifest))
    assert manifest["relocated"]["patched"] == ["prefix/lib/libcrypto.a"] and not manifest["relocated"]["kept"]
    [lib] = bundle.install(io.BytesIO(exported(home)))
    assert len(str(lib.home)) > len(str(home))
    moved = lib.info["relocated"]
    assert moved["patched"] == ["prefix/lib/libcrypto.a"] and moved["kept"] == []
    said = re.findall(rb'OPENSSLDIR: "([^"]+)"', (lib.home / "prefix/lib/libcrypto.a").read_bytes())[0].decode()
    assert re.sub("/+", "/", said) == f"{lib.home}/prefix/ssl"


def test_a_longer_new_path_is_kept_in_binaries_and_recorded(sslperf_dirs, tmp_path):
    home = fake_home(tmp_path / "s" / "libs")                  # shorter than the cache's .../cache/libs
    [lib] = bundle.install(io.BytesIO(exported(home)))
    assert lib.info["relocated"]["kept"] == ["prefix/lib/libcrypto.a"]
    assert (lib.home / "prefix/lib/libcrypto.a").read_bytes() == (home / "prefix/lib/libcrypto.a").read_bytes()
    assert str(lib.home / "prefix") in (lib.home / "prefix/lib/pkgconfig/libcrypto.pc").read_text()
    # Exported again from here, the bundle still names the path the archive keeps.
    again = json.loads(tarfile.open(fileobj=io.BytesIO(exported(lib.home))).extractfile("bundle.json").read())
    assert str(home / "prefix") in again["libs"][0]["paths"]


@pytest.mark.parametrize("case", ["parent", "dotdot-inside", "absolute", "link-out", "link-through-link",
                                  "unlisted", "device", "hardlink", "missing", "home-name", "too-big", "libc",
                                  "format"])
def test_a_bad_bundle_is_refused_and_leaves_nothing(sslperf_dirs, tmp_path, case):
    cache, _ = sslperf_dirs
    home = fake_home(tmp_path / "builder" / "libs")
    good, h = exported(home), home.name

    def edit(change):
        def index(data):
            change(data["libs"][0])
            return data
        return index

    libc = bundle.libc()
    bad, needle = {
        "parent": (lambda: retar(good, extra=[(member("../evil"), b"x")]), "'../evil'"),
        "dotdot-inside": (lambda: retar(good, extra=[(member(f"{h}/prefix/../../../evil"), b"x")]), "/../../../evil"),
        "absolute": (lambda: retar(good, extra=[(member("/tmp/sslperf-evil"), b"x")]), "/tmp/sslperf-evil"),
        "link-out": (lambda: retar(good, index=edit(lambda e: e["links"].update({"prefix/etc": "../../../../etc"})),
                                   extra=[(member(f"{h}/prefix/etc", tarfile.SYMTYPE, "../../../../etc"), None)]),
                     "leads out"),
        # prefix/lib/up → .. is prefix; prefix/b → lib/up/../.. stays in prefix by its letters, but through
        # the link it climbs from prefix, out of the home.
        "link-through-link": (lambda: retar(good, index=edit(lambda e: e["links"].update(
            {"prefix/lib/up": "..", "prefix/b": "lib/up/../.."}))), "leads out"),
        "unlisted": (lambda: retar(good, extra=[(member(f"{h}/prefix/lib/extra.a"), b"x")]), "extra.a"),
        "device": (lambda: retar(good, extra=[(member(f"{h}/prefix/null", tarfile.CHRTYPE), None)]), "a device"),
        "hardlink": (lambda: retar(good, extra=[(member(f"{h}/prefix/pw", tarfile.LNKTYPE, "/etc/passwd"), None)]),
                     "a hard link"),
        "missing": (lambda: retar(good, drop=[f"{h}/prefix/lib/libssl.a"]), "lacks 1 listed member"),
        "home-name": (lambda: retar(good, index=edit(lambda e: e.update(home="../../libs-elsewhere"))), "names its home"),
        "too-big": (lambda: retar(good, index=edit(lambda e: e["files"]["prefix/lib/libssl.a"].update(size=5 << 30))),
                    "more than 4 GiB"),
        "libc": (lambda: retar(good, index=edit(lambda e: e.update(libc={**libc, "version": "99.0"}))),
                 f"needs {libc['name']} 99.0 or later"),
        "format": (lambda: retar(good, index=lambda data: {**data, "version": 2}), "('sslperf-bundle', 2)"),
    }[case]
    with pytest.raises(bundle.BundleRefused) as refused:
        bundle.install(io.BytesIO(bad()))
    assert needle in str(refused.value) and "Nothing was installed" in str(refused.value), str(refused.value)
    assert cache_state(cache) == ([], []) and not (tmp_path / "evil").exists() and not Path("/tmp/sslperf-evil").exists()
    # The same bundle unedited goes in: what was refused is the edit.
    [lib] = bundle.install(io.BytesIO(good))
    assert lib.name == "fake-1.0"


def test_export_refuses_the_system_and_registered_libraries(sslperf_dirs, tmp_path):
    for lib in (Lib("system", "system", "openssl", "3.0.19"),
                Lib("distro-3.0", "registered", "openssl", "3.0.2", prefix=Path("/opt/openssl-3.0"))):
        with pytest.raises(bundle.BundleRefused, match=f"`{lib.name}` \\({lib.kind}\\)"):
            bundle.export([lib], tmp_path / "x.tar.gz")
    assert not (tmp_path / "x.tar.gz").exists()
    result = run_cli("libs", "export", "system", "--out", tmp_path / "x.tar.gz")
    assert result.returncode == 2 and result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert "system" in result.stderr and not (tmp_path / "x.tar.gz").exists(), result.stderr


def test_export_never_replaces_a_users_file_without_force(sslperf_dirs, tmp_path):
    cache, _ = sslperf_dirs
    fake_home(cache / "libs")
    out = tmp_path / "mine.tar.gz"
    out.write_text("the user's own file")
    refused = run_cli("libs", "export", "fake-1.0", "--out", out)
    assert refused.returncode == 2 and "exists and sslperf did not write it" in refused.stderr, refused.stderr
    assert out.read_text() == "the user's own file"
    for extra in (["--force"], []):               # forced once; then it is sslperf's own file, replaced freely
        done = run_cli("libs", "export", "fake-1.0", "--out", out, *extra)
        assert done.returncode == 0 and "fake-1.0" in done.stdout, done.stderr
    assert tarfile.open(out).getnames()[0] == "bundle.json"


def test_import_of_a_file_that_is_no_bundle_is_one_paragraph(sslperf_dirs):
    for path, needle in (("/etc/passwd", "not a whole, readable sslperf bundle"), ("/nonexistent.tar.gz", "Cannot read")):
        result = run_cli("libs", "import", path)
        assert result.returncode == 2 and result.stderr.startswith("error: ") and needle in result.stderr, result.stderr
        assert "Traceback" not in result.stderr


# ---- slow: the session's real OpenSSL 1.1.1w ------------------------------------------------------------

@pytest.fixture(scope="module")
def real_bundle(built_openssl, e2e_env, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "openssl-1.1.1w.tar.gz"
    result = run_cli("libs", "export", built_openssl, "--out", out, env=e2e_env)
    assert result.returncode == 0 and "openssl-1.1.1w" in result.stdout, result.stderr
    return out


def fresh(root: Path) -> dict:
    return {"SSLPERF_CACHE_DIR": str(root / "c"), "SSLPERF_DATA_DIR": str(root / "d")}


def bundled_home(path: Path) -> str:
    with tarfile.open(path) as tar:
        return json.loads(tar.extractfile("bundle.json").read())["libs"][0]["home"]


@pytest.mark.slow
def test_an_imported_build_measures_at_its_new_place(real_bundle, e2e_env):
    old_home = Path(e2e_env["SSLPERF_CACHE_DIR"]) / "libs" / bundled_home(real_bundle)
    # A short path (the common case: another machine's ~/.cache) and a cache with no harness compiled: the
    # harness is compiled and linked here, against the moved prefix.
    root = Path(tempfile.mkdtemp(prefix="sb", dir="/tmp"))
    try:
        env = fresh(root)
        result = run_cli("libs", "import", real_bundle, env=env)
        assert result.returncode == 0 and "openssl-1.1.1w: installed" in result.stdout, result.stderr
        home = root / "c" / "libs" / old_home.name
        manifest = json.loads((home / "build.json").read_text())
        moved = manifest["relocated"]
        assert moved["to"] == str(home / "prefix") and manifest["key"] == \
            json.loads((old_home / "build.json").read_text())["key"]
        assert "prefix/lib/pkgconfig/libcrypto.pc" in moved["rewritten"]
        for rel in moved["rewritten"] + moved["patched"]:
            assert str(old_home / "prefix").encode() not in (home / rel).read_bytes(), rel
        said = subprocess.run([home / "prefix/bin/openssl", "version", "-d"], capture_output=True, text=True).stdout
        if len(str(home)) <= len(str(old_home)):      # as here, unless SSLPERF_TEST_CACHE is shorter than /tmp/sbXXXXXXXX
            assert {"prefix/lib/libcrypto.a", "prefix/bin/openssl"} <= set(moved["patched"]) and not moved["kept"]
            assert re.sub("/+", "/", said.strip()) == f'OPENSSLDIR: "{home}/prefix/ssl"', said
        else:
            assert {"prefix/lib/libcrypto.a", "prefix/bin/openssl"} <= set(moved["kept"])

        run = run_cli("speed", "--lib", "openssl-1.1.1w", "--case", "digest/sha256/1024", "--time", "1",
                      "--samples", "1", "--processes", "1", "--no-store", "--json", env=env)
        assert run.returncode == 0, run.stderr
        [measured] = json.loads(run.stdout)["measurements"]
        assert measured["lib"] == "openssl-1.1.1w" and measured["status"] == "ok", measured
        assert any((root / "c" / "harness").glob("openssl-1.1.1w-*/sslperf-harness"))
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.slow
def test_a_second_import_keeps_what_is_in_hand(real_bundle, tmp_path):
    env = fresh(tmp_path)
    assert run_cli("libs", "import", real_bundle, env=env).returncode == 0
    [home] = (tmp_path / "c" / "libs").iterdir()
    before = (home / "build.json").stat().st_mtime_ns
    again = run_cli("libs", "import", real_bundle, env=env)
    assert again.returncode == 0 and "openssl-1.1.1w: already in hand" in again.stdout, again.stderr
    assert [p.name for p in (tmp_path / "c" / "libs").iterdir()] == [home.name]
    assert (home / "build.json").stat().st_mtime_ns == before and cache_state(tmp_path / "c")[1] == []


@pytest.mark.slow
def test_a_flipped_byte_refuses_the_whole_bundle(in_e2e_cache, built_openssl, tmp_path, monkeypatch):
    # The real library first, a small one after it whose archive has one byte flipped: the real one is
    # unpacked and verified before the damage is met, and still nothing of either is installed.
    fake = fake_home(tmp_path / "builder" / "libs")
    out = io.BytesIO()
    bundle.export([installed.find(built_openssl), lib_from_manifest(fake)], out)

    def flip(name, body):
        if name == f"{fake.name}/prefix/lib/libssl.a":
            body = body[:100] + bytes([body[100] ^ 0x01]) + body[101:]
        return body
    damaged = retar(out.getvalue(), member=flip)
    cache = private_cache(tmp_path / "target")
    monkeypatch.setenv("SSLPERF_CACHE_DIR", str(cache))
    monkeypatch.setenv("SSLPERF_DATA_DIR", str(tmp_path / "data"))
    with pytest.raises(bundle.BundleRefused, match=f"{fake.name}/prefix/lib/libssl.a does not have the sha256"):
        bundle.install(io.BytesIO(damaged))
    assert cache_state(cache) == ([], [])
    assert sorted(lib.name for lib in bundle.install(io.BytesIO(out.getvalue()))) == ["fake-1.0", "openssl-1.1.1w"]


@pytest.mark.slow
def test_a_bundle_for_another_architecture_is_refused_by_its_manifest(real_bundle, tmp_path, monkeypatch):
    monkeypatch.setenv("SSLPERF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SSLPERF_DATA_DIR", str(tmp_path / "data"))
    data = real_bundle.read_bytes()

    def built_for(arch):
        def index(data):
            for entry in data["libs"]:
                entry["machine"] = arch
            return data
        return index
    with pytest.raises(bundle.BundleRefused) as refused:
        bundle.install(io.BytesIO(retar(data, index=built_for(FOREIGN))))
    assert f"openssl-1.1.1w was built for {FOREIGN}, this machine is {bundle.machine()}" in str(refused.value)
    assert "sha256" not in str(refused.value) and cache_state(tmp_path / "cache") == ([], [])
    # Re-tarred the same way with this machine's architecture, it is installed: only the architecture differed.
    [lib] = bundle.install(io.BytesIO(retar(data, index=built_for(bundle.machine()))))
    assert lib.name == "openssl-1.1.1w" and not bundle.was_in_hand(lib)


@pytest.mark.slow
def test_an_imported_fips_build_self_tests_and_measures_at_its_new_place(built_fips, e2e_env):
    root = Path(tempfile.mkdtemp(prefix="sb", dir="/tmp"))
    try:
        out = root / "fips.tar.gz"
        assert run_cli("libs", "export", built_fips, "--out", out, env=e2e_env).returncode == 0
        old_home = Path(e2e_env["SSLPERF_CACHE_DIR"]) / "libs" / bundled_home(out)
        env = fresh(root)
        result = run_cli("libs", "import", out, env=env)
        assert result.returncode == 0 and f"{built_fips}: installed" in result.stdout, result.stderr
        home = root / "c" / "libs" / old_home.name
        # The module and its configuration as they were: its MAC covers the module's bytes, and the
        # configuration names no path (the harness gives it the module's directory at run time).
        for rel in ("prefix/lib/ossl-modules/fips.so", "prefix/ssl/fipsmodule.cnf"):
            assert (home / rel).read_bytes() == (old_home / rel).read_bytes(), rel
        said = subprocess.run([home / "prefix/bin/openssl", "version", "-m"], capture_output=True, text=True).stdout
        if len(str(home)) <= len(str(old_home)):
            assert re.sub("/+", "/", said.strip()) == f'MODULESDIR: "{home}/prefix/lib/ossl-modules"', said
        run = run_cli("speed", "--lib", f"{built_fips}:fips", "--case", "cipher/aes-128-gcm/encrypt/1024",
                      "--time", "1", "--samples", "1", "--processes", "1", "--no-store", "--json", env=env)
        assert run.returncode == 0, run.stderr
        data = json.loads(run.stdout)
        [measured] = data["measurements"]
        assert measured["lib"] == f"{built_fips}:fips-3.0.8" and measured["status"] == "ok", measured
        assert data["environment"]["providers"][measured["lib"]]["version"] == "3.0.8"
    finally:
        shutil.rmtree(root, ignore_errors=True)
