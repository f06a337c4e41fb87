"""The system OpenSSL, found and probed for real."""

import json
import shutil
import subprocess

import pytest
from conftest import run_cli

from sslperf.libs.system import find_system


@pytest.mark.skipif(not shutil.which("openssl"), reason="no openssl command to compare with")
def test_system_lib_reports_the_same_version_as_the_openssl_command():
    lib = find_system()
    assert lib is not None, "libssl-dev is installed by scripts/bootstrap.sh, so the system lib must be found"
    command = subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout
    assert lib.version_string in command
    assert lib.version in lib.version_string
    assert not lib.linkage.static
    assert any("libcrypto.so" in so for so in lib.info["shared_objects"])


def test_list_and_info_show_the_system_lib(sslperf_dirs):
    listed = json.loads(run_cli("libs", "list", "--json").stdout)
    assert listed[0]["name"] == "system" and listed[0]["kind"] == "system"
    info = json.loads(run_cli("libs", "info", "system", "--json").stdout)[0]
    figures = info["footprint"]["figures"]
    assert figures["libcrypto_bytes"] > 1_000_000 and figures["libssl_bytes"] > 100_000
    assert 0 < figures["program_text"] < 100_000          # dynamically linked: small
    assert info["footprint"]["kinds"] == {"libcrypto": "shared object", "libssl": "shared object"}
