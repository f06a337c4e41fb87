"""Cache keys and the cache-hit path, without compiling anything."""

import json

import pytest

from sslperf.libs import build
from sslperf.libs.sources import Source

COMPILER = {"cc": "/usr/bin/gcc-12 | gcc (Debian 12.2.0-14) 12.2.0 | x86_64-linux-gnu"}


def never_fetch():
    raise AssertionError("a cached build must not fetch its source")


def request(**changes):
    source = Source("openssl", "3.3.2", "a" * 64, "crate openssl-src 300.3.2+3.3.2", never_fetch)
    fields = {"source": source, "variants": (), "configure_options": [], "cflags": [], "jobs": 2}
    fields.update(changes)
    return build.BuildRequest(**fields)


def test_key_is_stable_and_ignores_variant_order_and_jobs():
    a = build.cache_key(request(variants=("minimal", "Os")), COMPILER)
    b = build.cache_key(request(variants=("Os", "minimal", "default"), jobs=8), COMPILER)
    assert a == b and len(a) == 64


@pytest.mark.parametrize("change", [
    {"variants": ("minimal",)},
    {"configure_options": ["no-ocb"]},
    {"cflags": ["-march=native"]},
    {"source": Source("openssl", "3.3.2", "b" * 64, "directory /src", never_fetch)},
    {"source": Source("openssl", "3.3.1", "a" * 64, "crate", never_fetch)},
])
def test_key_changes_with_what_changes_the_build(change):
    assert build.cache_key(request(**change), COMPILER) != build.cache_key(request(), COMPILER)


def test_key_changes_with_the_compiler():
    other = {"cc": "/usr/bin/clang-14 | Debian clang version 14.0.6 | x86_64-pc-linux-gnu"}
    assert build.cache_key(request(), other) != build.cache_key(request(), COMPILER)


def test_names_say_what_was_built():
    assert build.lib_name(request()) == "openssl-3.3.2"
    assert build.lib_name(request(variants=("Os", "nistp", "minimal"))) == "openssl-3.3.2+minimal+Os+nistp"
    custom = build.lib_name(request(configure_options=["no-ocb"]))
    assert custom.startswith("openssl-3.3.2+custom-") and len(custom) == len("openssl-3.3.2+custom-") + 6
    assert build.lib_name(request(name="mine")) == "mine"


def test_cache_hit_returns_without_fetching(sslperf_dirs, monkeypatch):
    def no_build(*args, **kwargs):
        raise AssertionError("a cached build was fetched and built again")

    monkeypatch.setattr(build, "_build", no_build)
    req = request(variants=("minimal",))
    key = build.cache_key(req, build.compiler_identity(cmake=False))
    home = build.home_for(req, key)
    home.mkdir(parents=True)
    (home / "build.json").write_text(json.dumps({"name": "openssl-3.3.2+minimal", "flavor": "openssl",
                                                 "version": "3.3.2", "variants": ["minimal"]}))
    outcome = build.build(req)
    assert outcome.cache_hit
    assert outcome.lib.name == "openssl-3.3.2+minimal"


def test_unknown_variant_is_refused_before_anything_runs():
    with pytest.raises(Exception, match="`tiny` is not a build variant"):
        request(variants=("tiny",))


def test_a_wolfssl_key_holds_sslperfs_own_configure_of_it(monkeypatch):
    from sslperf.libs import variants

    wolfssl = request(source=Source("wolfssl", "5.3.0", "c" * 64, "crate wolfssl-sys 5.3.0", never_fetch))
    before = build.cache_key(wolfssl, COMPILER)
    monkeypatch.setattr(variants, "WOLFSSL_CONFIGURE", (*variants.WOLFSSL_CONFIGURE, "--enable-another"))
    assert build.cache_key(wolfssl, COMPILER) != before
    assert build.cache_key(request(), COMPILER) == build.cache_key(request(), COMPILER)
