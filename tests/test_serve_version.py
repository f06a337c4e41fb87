"""`serve-load --server-version` names a version Debian's suites do not offer:
refused before anything is built or measured (exit 2, the versions on offer
named, no run stored), not a run of n/a rows. The suites are a small local
archive read by the real apt (a `file:` mirror, `trusted=yes` as it is
unsigned), so no network is needed."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from conftest import run_cli

from sslperf.serve_load import debian

pytestmark = pytest.mark.skipif(not all(shutil.which(t) for t in ("apt-get", "apt-cache", "dpkg")),
                                reason="needs apt and dpkg")

OFFERED = {"nginx": ["1.22.1-9+deb12u2", "1.22.1-9"], "haproxy": ["2.6.12-1+deb12u1"]}


def local_archive(root: Path) -> Path:
    """A suite `bookworm` whose source index lists OFFERED (index entries only: nothing here is fetched)."""
    stanzas = []
    for package, versions in OFFERED.items():
        for version in versions:
            stanzas.append(f"Package: {package}\nBinary: {package}\nVersion: {version}\nMaintainer: nobody "
                           f"<nobody@example.org>\nArchitecture: any\nFormat: 3.0 (quilt)\nDirectory: "
                           f"pool/main/{package[0]}/{package}\nFiles:\n {'0' * 32} 1 {package}_{version}.dsc\n")
    index = "\n".join(stanzas).encode()
    suite = root / "dists" / "bookworm"
    (suite / "main" / "source").mkdir(parents=True)
    (suite / "main" / "source" / "Sources").write_bytes(index)
    (suite / "Release").write_text(
        "Origin: sslperf-test\nSuite: bookworm\nCodename: bookworm\nDate: Sat, 10 Jun 2023 09:00:00 UTC\n"
        f"Components: main\nArchitectures: source\nSHA256:\n {hashlib.sha256(index).hexdigest()} {len(index)} "
        "main/source/Sources\n")
    return root


@pytest.fixture
def local_suites(sslperf_dirs, tmp_path, monkeypatch):
    mirror = local_archive(tmp_path / "mirror")
    monkeypatch.setenv("SSLPERF_DEBIAN_MIRROR", f"[trusted=yes] file:{mirror}")
    monkeypatch.setenv("SSLPERF_DEBIAN_SUITES", "bookworm")
    return sslperf_dirs


def test_a_server_version_debian_does_not_offer_is_refused_before_anything_runs(local_suites):
    cache, _ = local_suites
    result = run_cli("serve-load", "--server-version", "9.99", "--scenario", "new", "--seconds", "1", "--rounds", "3")
    assert result.returncode == 2 and result.stderr.startswith("error: "), (result.stdout, result.stderr)
    assert "No nginx matching `9.99`" in result.stderr and "On offer: 1.22.1 (1.22.1-9+deb12u2)" in result.stderr
    assert "Traceback" not in result.stderr and "n/a" not in result.stdout
    assert json.loads(run_cli("runs", "list", "--json").stdout) == []
    assert not (cache / "servers").exists() and not (cache / "sources").exists()
    # One server of two lacking it refuses the whole run: the version is the input that is wrong.
    both = run_cli("serve-load", "--server", "nginx", "--server", "haproxy", "--server-version", "1.22",
                   "--scenario", "new", "--seconds", "1", "--rounds", "3")
    assert both.returncode == 2 and "No haproxy matching `1.22`" in both.stderr and "2.6.12" in both.stderr


def test_the_version_on_offer_is_chosen_as_before(local_suites):
    assert debian.choose("nginx") == "1.22.1-9+deb12u2"          # the newest
    assert debian.choose("nginx", "1.22") == debian.choose("nginx", "1.22.1") == "1.22.1-9+deb12u2"
    assert debian.choose("haproxy", "2.6") == "2.6.12-1+deb12u1"
