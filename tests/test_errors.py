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


def test_info_of_a_library_not_built(sslperf_dirs):
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
