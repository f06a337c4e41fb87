"""`sslperf offload scan` on this machine's real /proc/crypto."""

import json
from pathlib import Path

import pytest
from conftest import run_cli

from sslperf.offload import config, drivers

PROC = Path("/proc/crypto")


@pytest.mark.skipif(not PROC.exists(), reason="no /proc/crypto")
def test_parse_the_real_proc_crypto():
    found = drivers.parse(PROC.read_text())
    assert len(found) >= 10
    assert all(d.name and d.driver and d.type for d in found)
    picked = drivers.chosen(found)
    for d in picked:      # nothing with a higher priority for the same algorithm and type was passed over
        rivals = [o for o in found if (o.name, o.type) == (d.name, d.type) and not o.internal
                  and o.selftest in ("passed", "unknown", "")]
        assert d.priority == max(o.priority for o in rivals)


def test_chosen_takes_the_highest_priority_that_passed():
    text = "\n\n".join([
        "name : cbc(aes)\ndriver : cbc(aes-generic)\nmodule : kernel\npriority : 100\nselftest : passed\ntype : skcipher",
        "name : cbc(aes)\ndriver : cbc-aes-caam\nmodule : caamalg\npriority : 3000\nselftest : passed\ntype : skcipher\n"
        "async : yes",
        "name : cbc(aes)\ndriver : cbc-aes-aesni\nmodule : aesni_intel\npriority : 400\nselftest : passed\n"
        "type : skcipher",
        "name : cbc(aes)\ndriver : broken\nmodule : kernel\npriority : 9000\nselftest : failed\ntype : skcipher",
    ])
    found = drivers.parse(text)
    [best] = drivers.chosen(found)
    assert best.driver == "cbc-aes-caam" and best.kind == "hardware" and best.is_async
    kinds = {d.driver: d.kind for d in found}
    assert kinds["cbc-aes-aesni"] == "cpu-accelerated" and kinds["cbc(aes-generic)"] == "generic"


def test_scan_says_plainly_what_this_kernel_allows(sslperf_dirs):
    result = run_cli("offload", "scan")
    assert result.returncode == 0, result.stderr
    assert "AF_ALG:" in result.stdout and "hardware crypto drivers:" in result.stdout
    report = json.loads(run_cli("offload", "scan", "--json").stdout)
    assert report["available"] and report["chosen"]
    if not report["af_alg"]["available"]:
        assert "not available here" in result.stdout and report["af_alg"]["reason"]


def test_scan_a_saved_file(sslperf_dirs, tmp_path):
    saved = tmp_path / "crypto.txt"
    saved.write_text("name : sha256\ndriver : sha256-qat\nmodule : qat_4xxx\npriority : 4001\nselftest : passed\n"
                     "type : ahash\n")
    result = run_cli("offload", "scan", "--file", saved)
    assert result.returncode == 0 and "sha256-qat" in result.stdout and "hardware" in result.stdout
    missing = run_cli("offload", "scan", "--file", tmp_path / "nope.txt")
    assert missing.returncode == 2 and "Cannot read" in missing.stderr


DATA = Path(__file__).parent / "data" / "offload"


def test_crossover_logic():
    user = {16: 40.0, 1024: 46.0, 8192: 46.0}
    assert 1024 < config.crossover({16: 1.0, 1024: 44.0, 8192: 90.0}, user) < 8192
    assert config.crossover({16: 1.0, 1024: 20.0, 8192: 30.0}, user) is None          # never wins
    assert config.crossover({16: 50.0, 1024: 60.0, 8192: 90.0}, user) == 16           # always wins
    assert config.crossover({16: 50.0, 1024: 20.0, 8192: 90.0}, user) > 1024          # must win at every larger size


def test_clear_crossover_claims_only_clear_wins():
    """Per size 1 (the kernel clearly faster), -1 (clearly slower) or 0 (neither), with the medians."""
    kernel, user = {16: 1.0, 1024: 44.0, 8192: 90.0}, {16: 40.0, 1024: 46.0, 8192: 46.0}
    interpolated = config.clear_crossover({16: -1, 1024: -1, 8192: 1}, kernel, user)
    assert interpolated == config.crossover(kernel, user) and 1024 < interpolated < 8192   # a clear loss just below
    assert config.clear_crossover({16: -1, 1024: 0, 8192: 1}, kernel, user) == 8192        # unclear below: no less
    assert config.clear_crossover({16: -1, 1024: 1, 8192: 0}, kernel, user) is None        # unclear at the largest
    assert config.clear_crossover({16: 1, 1024: -1, 8192: 1}, kernel, user) > 1024         # a win at every larger size
    assert config.clear_crossover({16: 1, 1024: 1, 8192: 1}, kernel, user) == 16


def test_config_from_seed_004s_real_outputs(sslperf_dirs):
    """The AF_ALG engine write-up's own measurements (Marvell CESA, OpenSSL 1.1.1d):
    the kernel loses up to 1 KiB and doubles userspace from 8 KiB."""
    result = run_cli("offload", "config", DATA / "afalg-no-fallback.txt", DATA / "software.txt")
    assert result.returncode == 0, result.stderr
    [line] = [l for l in result.stdout.splitlines() if l.startswith("CIPHERS = ")]
    threshold = int(line.split(":")[1])
    assert 1024 < threshold < 8192 and threshold % 16 == 0
    assert "[afalg_section]" in result.stdout and "openssl_conf = openssl_init" in result.stdout
    devcrypto = run_cli("offload", "config", DATA / "afalg-no-fallback.txt", DATA / "software.txt",
                        "--engine", "devcrypto")
    assert "CIPHERS = NONE" in devcrypto.stdout and "cannot switch by size" in devcrypto.stdout
    # The engine's own fallback output (small requests in software) never loses: it wins from the start.
    fallback = run_cli("offload", "config", DATA / "afalg-with-fallback.txt", DATA / "software.txt")
    assert fallback.returncode == 0 and "CIPHERS = AES-256-CBC:" in fallback.stdout
