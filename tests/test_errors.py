"""Bad input and broken environments give one clear paragraph, never a
traceback, and a failed build leaves nothing installed."""

import shutil
from pathlib import Path

import pytest
from conftest import run_cli

from sslperf.errors import MissingTool
from sslperf.proc import require_tool

# A source tree whose Configure is a real Perl script that fails the way
# OpenSSL's does: an "Unsupported options" line for unknown no-* options,
# otherwise a long error.
BROKEN_CONFIGURE = r'''
my @disablables = ( "tests", "asm", "ocb" );
my @unknown = grep { /^(no|enable)-/ && !/^(no|enable)-(tests|shared|asm|ocb)$/ } @ARGV;
if (@unknown) { print "\n***** Unsupported options: @unknown\n"; exit 1; }
print "configure line $_\n" for 1..40;
print "error: this source tree is broken on purpose\n";
exit 1;
'''


@pytest.fixture
def broken_tree(tmp_path):
    root = tmp_path / "openssl-3.9.9"
    root.mkdir()
    (root / "VERSION.dat").write_text('MAJOR=3\nMINOR=9\nPATCH=9\nPRE_RELEASE_TAG=\n')
    (root / "Configure").write_text(BROKEN_CONFIGURE)
    return root


def assert_one_paragraph_error(result, *needles):
    assert result.returncode != 0
    assert "Traceback" not in result.stderr + result.stdout
    assert result.stderr.startswith("error: ")
    for needle in needles:
        assert needle in result.stderr, result.stderr


def test_unknown_version_lists_known_ones(recorded_index):
    result = run_cli("libs", "build", "openssl-3.9")
    assert result.returncode == 2
    assert_one_paragraph_error(result, "No OpenSSL version matches `3.9`", "1.1.1w", "3.6.3", "4.0.3")


def test_unknown_variant(recorded_index):
    assert_one_paragraph_error(run_cli("libs", "build", "openssl-3.6+turbo"), "`turbo` is not a build variant")


def test_info_of_a_library_not_built(recorded_index):      # on offer (the index says so): build it
    assert_one_paragraph_error(run_cli("libs", "info", "openssl-3.6"), "No built or registered library",
                               "sslperf libs build openssl-3.6")


def test_missing_tool_names_its_package(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(MissingTool, match="apt-get install ninja-build"):
        require_tool("ninja")


def test_missing_compiler_through_the_cli(recorded_index, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    result = run_cli("libs", "build", "openssl-3.3", env={"PATH": str(empty)})
    assert_one_paragraph_error(result, "`cc` is not installed", "apt-get install gcc")


def test_failed_build_shows_the_log_tail_and_keeps_the_log(sslperf_dirs, broken_tree):
    cache, _ = sslperf_dirs
    result = run_cli("libs", "build", "--source-dir", broken_tree)
    assert result.returncode == 3
    assert_one_paragraph_error(result, "configure step of the build `openssl-3.9.9` failed",
                               "broken on purpose", "The full log is at")
    log = Path(result.stderr.split("The full log is at ")[1].split()[0].rstrip("."))
    assert log.exists() and "configure line 1" in log.read_text()
    assert not any((cache / "libs").iterdir()), "a failed build must install nothing"
    assert not any((cache / "tmp").iterdir()), "a failed build must clean its work dir"


def test_rejected_option_is_named(sslperf_dirs, broken_tree):
    result = run_cli("libs", "build", "--source-dir", broken_tree, "--configure-opt", "no-frobnicate")
    assert_one_paragraph_error(result, "rejects the configure option(s) no-frobnicate")


@pytest.mark.parametrize("args, needle", [
    (["libs", "build", "--tarball", "x.tar.gz"], "--tarball needs --sha256"),
    (["libs", "build", "--tarball", "x.tar.gz", "--sha256", "abc"], "is not a sha256"),
    (["libs", "build", "--git", "https://example.invalid/x.git"], "--git and --tag go together"),
    (["libs", "build"], "Name the libraries to build"),
    (["libs", "remove", "system"], "cannot remove it"),
    (["libs", "add", "mine", "--prefix", "/"], "does not look like an installed"),
])
def test_usage_errors(sslperf_dirs, args, needle):
    assert_one_paragraph_error(run_cli(*args), needle)


def test_tarball_with_wrong_checksum_builds_nothing(sslperf_dirs, broken_tree, tmp_path):
    tarball = tmp_path / "openssl-3.9.9.tar.gz"
    shutil.make_archive(str(tarball).removesuffix(".tar.gz"), "gztar", broken_tree.parent, broken_tree.name)
    result = run_cli("libs", "build", "--tarball", tarball, "--sha256", "0" * 64)
    assert_one_paragraph_error(result, "has sha256", "not the " + "0" * 64)


# ---- errors that lead somewhere (issue 38): did-you-mean, and never a hint that fails in turn --------------------

def assert_exit_2_paragraph(result, *needles, absent=()):
    """Exit 2, one paragraph starting `error: `, every needle in it and nothing of `absent`."""
    assert_one_paragraph_error(result, *needles)
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stderr.strip().count("\n") == 0, f"not one paragraph: {result.stderr!r}"
    for needle in absent:
        assert needle not in result.stderr, result.stderr


def test_a_mistyped_library_gets_the_name_on_offer_and_never_a_build_of_the_typo(recorded_index):
    assert_exit_2_paragraph(run_cli("speed", "--lib", "opensll-3.6"), "Did you mean `openssl-3.6`",
                            "sslperf libs build openssl-3.6`", absent=["libs build opensll"])


def test_a_version_not_on_offer_is_not_offered_to_build(recorded_index):
    assert_exit_2_paragraph(run_cli("speed", "--lib", "openssl-3.6.9"), "Did you mean `openssl-3.6.3`",
                            "is not on offer", absent=["libs build openssl-3.6.9"])


def test_a_mistyped_variant_gets_the_close_variant(recorded_index):
    assert_exit_2_paragraph(run_cli("libs", "build", "openssl-3.6+minmal"), "Did you mean `minimal`?")
    assert_exit_2_paragraph(run_cli("speed", "--lib", "openssl-3.6+minmal"), "Did you mean `openssl-3.6+minimal`",
                            absent=["libs build openssl-3.6+minmal"])


@pytest.mark.slow
def test_a_mistyped_library_in_hand_gets_its_name(built_openssl3, e2e_env):
    assert_exit_2_paragraph(run_cli("speed", "--lib", "opensll-3.6", env=e2e_env), "Did you mean `openssl-3.6`",
                            absent=["libs build opensll"])


def test_a_mistyped_verb_gets_the_close_one(sslperf_dirs):
    assert_exit_2_paragraph(run_cli("spede", "--lib", "system"), "`sslperf` has no command `spede`",
                            "Did you mean `speed`?")


def test_a_mistyped_tls_subcommand_gets_the_close_one(sslperf_dirs):
    assert_exit_2_paragraph(run_cli("tls", "handshak"), "`sslperf tls` has no command `handshak`",
                            "Did you mean `handshake`?")


def _stored_run(run_id: str, started: str, libs: tuple[str, ...], cases: tuple[str, ...]) -> str:
    """A complete run of the user's (as `sslperf speed` stores one) with `cases` measured on each of `libs`."""
    from sslperf.results import LibInfo, Measurement, Run
    from sslperf.store import Store

    run = Run(run_id, started, {"target_ms": 20, "samples": 3}, {"host": "h", "cpu_model": "test cpu"},
              finished=started, complete=True, state="complete")
    run.libs = [LibInfo(name, "openssl", "3.0.0", f"OpenSSL {name}", "default", "built") for name in libs]
    for case in cases:
        family, algorithm, operation = case.split("/")
        run.measurements += [Measurement(case, family, "key exchange", algorithm, operation, None, "record", lib,
                                         "ok", ops=[1000] * 3, wall_ns=[1_000_000, 1_010_000, 990_000],
                                         cpu_ns=[1_000_000] * 3) for lib in libs]
    Store().save(run, "sslperf speed")
    return run_id


def test_a_missing_run_id_is_called_a_run_with_the_close_ids(sslperf_dirs):
    mine = _stored_run("20261125-101500-a1b2c3", "2026-11-25T10:15:00+00:00", ("openssl-a",), ("kex/x25519/derive",))
    assert_exit_2_paragraph(run_cli("compare", mine, "20261125-999999"), "No run `20261125-999999` in the store",
                            absent=["sslperf speed --lib", "measured `20261125"])
    assert_exit_2_paragraph(run_cli("compare", mine, "20261125-101550-a1b2c3"), "No run `20261125-101550-a1b2c3`",
                            f"Did you mean `{mine}`?")
    assert_exit_2_paragraph(run_cli("runs", "show", "20261125-101550"), f"Did you mean `{mine}`?")


def test_an_unknown_tls_case_points_at_its_own_list_with_the_close_id(sslperf_dirs):
    result = run_cli("tls", "handshake", "--case", "tls/handshake/tls1.3/x25519/ecdsa-p256/shard")
    assert_exit_2_paragraph(result, "Did you mean `tls/handshake/tls1.3/x25519/ecdsa-p256/shared`?",
                            "`sslperf tls handshake --list`", absent=["speed --list", "cipher/"])
    result = run_cli("speed", "--case", "cipher/aes-128-gmc/encrypt/16384")
    assert_exit_2_paragraph(result, "Did you mean `cipher/aes-128-gcm/encrypt/16384`?", "`sslperf speed --list`")


FULL = ("kex/x25519/derive", "kex/ecdh-p256/derive", "sig/ed25519/sign")


def test_compare_of_libraries_picks_the_runs_sharing_most_cases_and_says_so(sslperf_dirs):
    both = _stored_run("20261120-100000-000001", "2026-11-20T10:00:00+00:00", ("openssl-a", "openssl-b"), FULL)
    only_b = _stored_run("20261121-100000-000002", "2026-11-21T10:00:00+00:00", ("openssl-b",), FULL)
    one_case = _stored_run("20261122-100000-000003", "2026-11-22T10:00:00+00:00", ("openssl-a",), FULL[:1])
    result = run_cli("compare", "openssl-a", "openssl-b", env={"COLUMNS": "300"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    line_a = next(line for line in lines if line.startswith("openssl-a: run "))
    line_b = next(line for line in lines if line.startswith("openssl-b: run "))
    assert line_a.startswith(f"openssl-a: run {both} "), result.stdout
    assert "the most cases in common with the others: 3 of its 3 cases" in line_a, line_a
    assert f"its newest run, {one_case}, has 1" in line_a, line_a
    assert line_b.startswith(f"openssl-b: run {only_b} ") and "3 of its 3 cases" in line_b, result.stdout


def test_compare_says_for_each_library_why_its_run_was_picked(sslperf_dirs):
    both = _stored_run("20261120-100000-000001", "2026-11-20T10:00:00+00:00", ("openssl-a", "openssl-b"), FULL)
    result = run_cli("compare", "openssl-a", "openssl-b", env={"COLUMNS": "300"})
    assert result.returncode == 0, result.stderr
    line_b = next(line for line in result.stdout.splitlines() if line.startswith("openssl-b: run "))
    assert line_b.startswith(f"openssl-b: run {both} ") and "openssl-a" not in line_b, line_b
