"""A bundle whose build.json or bundle.json holds a field of the wrong type, or
lacks one every reader takes for granted, is refused whole by `libs import`
(one paragraph, exit 2, nothing installed); and a damaged build already in
libs/ (as an import before this check could leave one) is reported and
skipped, never what stops `libs list`, `speed`, `libs import` or `libs remove`.
The bundles are built as tests/test_bundle.py builds them: a good one, edited
in the one place the case is about."""

import hashlib
import io
import json

import pytest
from conftest import run_cli
from test_bundle import cache_state, exported, fake_home, retar

from sslperf.libs import bundle, installed


def with_manifest(good: bytes, change) -> bytes:
    """`good` with its library's build.json passed through `change`, and bundle.json's
    sha256 and size of it made to match: only the content is wrong, as a builder would send it."""
    edited = {}

    def member(name, body):
        if name.endswith("/build.json"):
            manifest = json.loads(body)
            change(manifest)
            body = edited["body"] = json.dumps(manifest).encode()
        return body

    def index(data):
        data["libs"][0]["files"]["build.json"].update(sha256=hashlib.sha256(edited["body"]).hexdigest(),
                                                      size=len(edited["body"]))
        return data
    return retar(retar(good, member=member), index=index)


def with_index(good: bytes, change) -> bytes:
    def index(data):
        change(data["libs"][0])
        return data
    return retar(good, index=index)


CASES = {
    # build.json: what lib_from_manifest once met after the rename into libs/ (KeyError, TypeError)
    "no-flavor": (lambda g: with_manifest(g, lambda m: m.pop("flavor")), "build.json has no `flavor`"),
    "no-version": (lambda g: with_manifest(g, lambda m: m.pop("version")), "build.json has no `version`"),
    "variants-5": (lambda g: with_manifest(g, lambda m: m.update(variants=5)),
                   "build.json gives `variants` as 5, not a list"),
    "nested": (lambda g: with_manifest(g, lambda m: m.update(
        footprint={"libcrypto": {"path": "x", "bytes": "1", "text": 1, "data": 1}})),
               "build.json gives `footprint.libcrypto.bytes` as \"1\", not a whole number"),
    # bundle.json: what bundle._compiler_refusal met (AttributeError, TypeError)
    "compiler-gcc": (lambda g: with_index(g, lambda e: e["build"].update(compiler="gcc")),
                     "gives `build.compiler` as \"gcc\", not an object"),
    "cflags-5": (lambda g: with_index(g, lambda e: e["build"].update(cflags=5)),
                 "gives `build.cflags` as 5, not a list"),
    "libc-version-number": (lambda g: with_index(g, lambda e: e["libc"].update(version=2.36)),
                            "gives `libc.version` as 2.36, not text"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_malformed_manifest_is_refused_whole_before_anything_is_placed(sslperf_dirs, tmp_path, case):
    cache, _ = sslperf_dirs
    good = exported(fake_home(tmp_path / "builder" / "libs"))
    make, needle = CASES[case]
    bad = tmp_path / f"{case}.tar.gz"
    bad.write_bytes(make(good))
    result = run_cli("libs", "import", bad)
    assert result.returncode == 2 and result.stderr.startswith("error: "), result.stderr
    assert needle in result.stderr and "Nothing was installed" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert cache_state(cache) == ([], [])
    # Nothing half-installed: every verb still answers, and the unedited bundle goes in.
    assert run_cli("libs", "list").returncode == 0
    [lib] = bundle.install(io.BytesIO(good))
    assert lib.name == "fake-1.0" and not bundle.was_in_hand(lib)


def damage(home, how: str) -> None:
    path = home / "build.json"
    if how == "not-json":
        path.write_text('{"name": "fake-1.0", "flavor": ')
        return
    manifest = json.loads(path.read_text())
    {"no-flavor": lambda: manifest.pop("flavor"), "variants-5": lambda: manifest.update(variants=5)}[how]()
    path.write_text(json.dumps(manifest))


@pytest.mark.parametrize("how", ["no-flavor", "variants-5", "not-json"])
def test_a_damaged_build_in_hand_is_reported_and_skipped_and_removable(sslperf_dirs, tmp_path, how):
    cache, _ = sslperf_dirs
    good = tmp_path / "good.tar.gz"
    good.write_bytes(exported(fake_home(tmp_path / "builder" / "libs")))
    other = tmp_path / "other.tar.gz"
    other.write_bytes(exported(fake_home(tmp_path / "builder" / "libs", "other-2.0")))
    [lib] = bundle.install(good)
    damage(lib.home, how)       # what an import before the schema check left, or a hand edit

    listed = run_cli("libs", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "fake-1.0" not in [x["name"] for x in json.loads(listed.stdout)]
    assert f"{lib.home} is damaged" in listed.stderr, listed.stderr
    assert "`sslperf libs remove fake-1.0`" in listed.stderr, listed.stderr
    assert run_cli("speed", "--quick", "--lib", "system", "--list").returncode == 0
    named = run_cli("speed", "--lib", "fake-1.0", "--case", "digest/sha256/1024", "--no-store")
    assert named.returncode == 2 and "is damaged" in named.stderr and "Traceback" not in named.stderr, named.stderr
    # Another library goes in; the damaged one's own bundle is refused with the remedy, nothing moved.
    assert run_cli("libs", "import", other).returncode == 0
    again = run_cli("libs", "import", good)
    assert again.returncode == 2 and "holds a damaged build" in again.stderr, again.stderr
    assert "`sslperf libs remove fake-1.0`" in again.stderr and cache_state(cache)[1] == []
    removed = run_cli("libs", "remove", "fake-1.0")
    assert removed.returncode == 0 and "removed fake-1.0" in removed.stdout, removed.stderr
    assert not lib.home.exists() and installed.damaged_builds() == []
    assert run_cli("libs", "import", good).returncode == 0
    assert sorted(x.name for x in installed.built_libs()) == ["fake-1.0", "other-2.0"]


def test_a_damaged_build_is_named_by_its_directory_when_its_name_is_taken(sslperf_dirs, tmp_path):
    # Two homes that say `fake-1.0`, one damaged: `libs remove fake-1.0` would mean the good one.
    cache, _ = sslperf_dirs
    good = fake_home(cache / "libs")
    broken = cache / "libs" / "fake-1.0-000000000000"
    broken.mkdir()
    (broken / "build.json").write_text(json.dumps({"name": "fake-1.0", "version": "1.0.0"}))
    [entry] = installed.damaged_builds()
    assert entry.name == broken.name and "`flavor`" in entry.reason
    assert run_cli("libs", "remove", broken.name).returncode == 0
    assert not broken.exists() and good.exists()
