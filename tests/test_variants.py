import shutil

import pytest

from sslperf.errors import SslperfError
from sslperf.libs import crates, releases, variants

CONFIGURE_EXCERPT = '''
my @disablables = (
    "afalgeng",
    "asm",
    "ec_nistp_64_gcc_128",
    "engine",
    "tests",
    "ocb",
    "dh",
);
my @disablables_int = ("crmf");
'''


def test_known_features_reads_the_disablables_table(tmp_path):
    script = tmp_path / "Configure"
    script.write_text(CONFIGURE_EXCERPT)
    assert variants.known_features(script) == {"afalgeng", "asm", "ec_nistp_64_gcc_128", "engine", "tests",
                                               "ocb", "dh"}


def test_known_features_rejects_a_non_openssl_script(tmp_path):
    script = tmp_path / "Configure"
    script.write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(SslperfError, match="@disablables"):
        variants.known_features(script)


def test_minimal_keeps_what_the_version_knows_and_records_the_rest():
    features = {"ocb", "dh", "engine", "asm", "ec_nistp_64_gcc_128"}
    plan = variants.plan(variants.lookup(("minimal",), "openssl"), features, [], [])
    assert plan.options == ["no-dh", "no-engine", "no-ocb"]
    assert "no-quic" in plan.skipped and "no-argon2" in plan.skipped
    assert not set(plan.options) & set(plan.skipped)


def test_a_required_option_the_version_lacks_is_an_error():
    with pytest.raises(SslperfError, match="rejects `enable-ec_nistp_64_gcc_128`"):
        variants.plan(variants.lookup(("nistp",), "openssl"), {"asm"}, [], [])


def test_variants_combine_in_a_canonical_order():
    assert variants.canonical_names(("Os", "minimal", "default", "nistp", "Os")) == ("minimal", "Os", "nistp")
    plan = variants.plan(variants.lookup(("nistp", "minimal", "Os"), "openssl"),
                         set(variants.MINIMAL_DISABLE) | {"ec_nistp_64_gcc_128"}, ["no-ssl3"], ["-march=x86-64"])
    assert plan.options[0] == "enable-ec_nistp_64_gcc_128"
    assert plan.options[-1] == "no-ssl3"
    assert plan.cflags == ["-Os", "-march=x86-64"]


@pytest.mark.parametrize("names, message", [
    (("fast",), "`fast` is not a build variant"),
    (("Os", "O2"), "both set the optimisation level"),
])
def test_variant_errors(names, message):
    with pytest.raises(SslperfError, match=message):
        variants.lookup(names, "openssl")


def test_openssl_only_variants_are_refused_for_cmake_flavors():
    with pytest.raises(SslperfError, match="does not apply to aws-lc"):
        variants.lookup(("minimal",), "aws-lc")
    no_asm = variants.plan(variants.lookup(("no-asm",), "boringssl"), None, [], [])
    assert no_asm.cmake == ["-DOPENSSL_NO_ASM=1"]


def test_shared_is_a_variant_of_the_c_libraries_with_a_loader_not_of_wolfssl_or_rustls():
    for flavor in ("openssl", "boringssl", "aws-lc", "libressl"):
        assert [v.name for v in variants.lookup(("shared",), flavor)] == ["shared"]
    with pytest.raises(SslperfError, match="does not apply to wolfssl"):
        variants.lookup(("shared",), "wolfssl")
    with pytest.raises(SslperfError, match="does not apply to rustls"):
        variants.lookup(("shared",), "rustls")


@pytest.mark.parametrize("version, skipped", [
    ("1.1.1w", {"no-argon2", "no-cmp", "no-http", "no-legacy", "no-quic", "no-siv"}),
    ("3.0.8", {"no-argon2", "no-http", "no-quic"}),
    ("4.0.3", {"no-engine"}),          # 4.0 removed engines
])
def test_minimal_per_real_version(sslperf_dirs, version, skipped):
    """The real Configure of each version, fetched from crates.io with cargo."""
    release = releases.resolve(releases.parse_name(f"openssl-{version}"))
    source = crates.fetch(release.crate) / "openssl"
    features = variants.known_features(source / "Configure")
    plan = variants.plan(variants.lookup(("minimal", "nistp"), "openssl"), features, [], [])
    assert set(plan.skipped) == skipped
    assert "enable-ec_nistp_64_gcc_128" in plan.options
    assert "tests" in features     # the crates carry no test tree, so builds pass no-tests


def test_the_other_libraries_names_resolve_to_their_flavors():
    assert releases.parse_name("rustls-0.15+ring") == releases.LibName("rustls", "0.15", ("ring",))
    assert releases.parse_name("wolfssl+no-asm") == releases.LibName("wolfssl", None, ("no-asm",))
    assert releases.parse_name("boringssl-fips-5.4") == releases.LibName("boringssl-fips", "5.4", ())
    assert releases.FLAVORS["wolfssl"].build_system == "autotools"
    assert releases.FLAVORS["rustls"].build_system == "cargo"


def test_boringssl_fips_is_built_by_clang_with_its_module_and_says_so_without_clang(monkeypatch, tmp_path):
    from sslperf.libs import build, build_systems

    assert build_systems._flavor_settings("boringssl-fips", tmp_path) == ["-DFIPS=1"]
    assert variants.compilers([], "boringssl-fips") == {"cc": "clang", "cxx": "clang++"}
    # the clang variant builds any C library by clang, so a FIPS module can be set beside the same compiler's build
    assert variants.compilers(variants.lookup(("clang",), "boringssl"), "boringssl") == {"cc": "clang", "cxx": "clang++"}
    assert variants.compilers(variants.lookup(("clang",), "wolfssl"), "wolfssl")["cc"] == "clang"
    assert variants.compilers([], "boringssl") == {}
    assert "CC" not in variants.wolfssl_configure(variants.lookup(("clang",), "wolfssl"))
    with pytest.raises(SslperfError, match="does not apply to rustls"):
        variants.lookup(("clang",), "rustls")
    # the cache key holds the compiler that builds it, so a clang build is never taken for a gcc one
    if shutil.which("clang"):
        assert "clang" in build.compiler_identity(True, variants.compilers([], "boringssl-fips"))["cc"]
    # its go.mod asks for a newer Go than Debian's: Go may fetch that toolchain; AWS-LC FIPS stays offline
    assert build_systems._go_env("boringssl-fips")["GOTOOLCHAIN"] == "auto"
    assert build_systems._go_env("aws-lc-fips") == {"GOPROXY": "off", "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod"}
    monkeypatch.setenv("PATH", str(tmp_path))           # no clang here
    with pytest.raises(SslperfError, match="apt-get install clang"):
        build.compiler_identity(True, variants.compilers([], "boringssl-fips"))
