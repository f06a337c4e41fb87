"""The FIPS provider for real: an OpenSSL 3.0.8 built with the fips variant
(its module self-tested by `openssl fipsinstall` at build time), loaded by
its own library and by an OpenSSL 3.6 library. The library itself must say
that an approved algorithm came from the provider named "fips", refuse a
non-approved one, and refuse to run at all when the module's integrity
check fails."""

import json
import re
from pathlib import Path

import pytest
from conftest import FIPS_LIB as MODULE_LIB
from conftest import run_cli, run_recommend_measuring_less


def _lib(name):
    from sslperf.libs import installed

    return installed.find(name)


@pytest.mark.slow
def test_the_fips_build_self_tests_its_module(built_fips, in_e2e_cache):
    from sslperf.libs import fips

    lib = _lib(built_fips)
    assert fips.has_module(lib)
    log = (lib.home / "build.log").read_text()
    assert "INSTALL PASSED" in log                       # fipsinstall ran the module's self-tests
    assert log.count(": Pass") >= 10, log[-3000:]                  # each known-answer test, as it reports itself
    manifest = json.loads((lib.home / "build.json").read_text())
    assert "enable-fips" in manifest["configure_options"] and "no-module" not in manifest["configure_options"]


@pytest.mark.slow
@pytest.mark.parametrize("library", [MODULE_LIB, "openssl-3.6"])
def test_an_approved_algorithm_runs_in_the_fips_module_and_chacha_is_refused(built_fips, built_openssl3, library,
                                                                            in_e2e_cache):
    from sslperf.libs import fips
    from sslperf.measure.harness_client import call

    view = fips.with_module(_lib(library), _lib(built_fips))
    info = call(view, "info", timeout=120).lines[0]
    assert info["provider"]["version"] == "3.0.8" and info["provider"]["self_tests_passed"] >= 1
    sha = call(view, "fetch", "digest", "SHA256", timeout=60).lines[0]
    assert sha == {"type": "fetched", "kind": "digest", "name": "SHA256", "provider": "fips"}
    gcm = call(view, "fetch", "cipher", "AES-128-GCM", timeout=60).lines[0]
    assert gcm["provider"] == "fips"
    chacha = call(view, "fetch", "cipher", "ChaCha20-Poly1305", timeout=60).lines[0]
    assert chacha["type"] == "refused"
    plain = call(_lib(library), "fetch", "digest", "SHA256", timeout=60).lines[0]
    assert plain["provider"] == "default"                 # without the view, the default provider serves it


@pytest.mark.slow
def test_a_module_whose_integrity_check_fails_is_refused_not_replaced(built_fips, built_openssl3, in_e2e_cache,
                                                                    tmp_path):
    from sslperf.libs import fips
    from sslperf.measure.harness_client import call

    module_lib = _lib(built_fips)
    view = fips.with_module(_lib("openssl-3.6"), module_lib)
    tampered = tmp_path / "fipsmodule.cnf"
    text = (module_lib.prefix / fips.MODULE_CONFIG).read_text()
    mac = re.search(r"module-mac = ([0-9A-F:]+)", text).group(1)
    tampered.write_text(text.replace(mac, ("00:" * (mac.count(":") + 1))[:-1]))
    config = Path(view.env["SSLPERF_FIPS_CONFIG"])
    config.write_text(config.read_text().replace(str(module_lib.prefix / fips.MODULE_CONFIG), str(tampered)))
    out = call(view, "fetch", "digest", "SHA256", timeout=60, ok_codes=None)
    assert out.returncode == 3
    assert out.lines == [{"type": "error", "reason": out.lines[0]["reason"]}]
    assert "FIPS provider did not come up" in out.lines[0]["reason"] or "did not load" in out.lines[0]["reason"]


@pytest.mark.slow
def test_speed_under_both_providers_names_each_column_and_says_why_chacha_is_na(built_fips, built_openssl3,
                                                                              in_e2e_cache):
    result = run_cli("speed", "--lib", "openssl-3.6", "--provider", "default", "--provider", "fips",
                     "--fips-module", built_fips, "--case", "cipher/aes-128-gcm/encrypt/1024",
                     "--case", "cipher/chacha20-poly1305/encrypt/1024", "--time", "1", "--samples", "1",
                     "--processes", "1", "--json")
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    assert [lib["name"] for lib in run["libs"]] == ["openssl-3.6.3", "openssl-3.6.3:fips-3.0.8"]
    assert run["environment"]["providers"]["openssl-3.6.3:fips-3.0.8"]["version"] == "3.0.8"
    cells = {(m["lib"], m["case"]): m for m in run["measurements"]}
    chacha = cells[("openssl-3.6.3:fips-3.0.8", "cipher/chacha20-poly1305/encrypt/1024")]
    assert chacha["status"] == "n/a" and chacha["reason"].startswith("not offered by the FIPS provider")
    assert cells[("openssl-3.6.3", "cipher/chacha20-poly1305/encrypt/1024")]["status"] == "ok"
    assert cells[("openssl-3.6.3:fips-3.0.8", "cipher/aes-128-gcm/encrypt/1024")]["status"] == "ok"
    shown = run_cli("runs", "show", run["id"])
    assert "FIPS module 3.0.8 (OpenSSL FIPS Provider" in shown.stdout


@pytest.mark.slow
def test_a_run_whose_fips_module_fails_its_self_test_exits_1_and_says_so_last(built_fips, built_openssl3,
                                                                            in_e2e_cache, tmp_path):
    import shutil

    from sslperf.libs import fips

    copy = tmp_path / "tampered"
    shutil.copytree(_lib(built_fips).prefix, copy, symlinks=True)
    config = copy / fips.MODULE_CONFIG
    mac = re.search(r"module-mac = ([0-9A-F:]+)", config.read_text()).group(1)
    config.write_text(config.read_text().replace(mac, ("00:" * (mac.count(":") + 1))[:-1]))
    assert run_cli("libs", "add", "tampered-fips", "--prefix", copy).returncode == 0
    result = run_cli("speed", "--lib", "openssl-3.6:fips=tampered-fips", "--case", "cipher/aes-128-gcm/encrypt/1024",
                     "--case", "digest/sha256/1024", "--time", "3", "--samples", "3", "--processes", "3")
    assert result.returncode == 1, result.stdout + result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: Nothing was measured: every one of its 2 results failed"), result.stderr
    assert "runs show" in last                       # the failed run is kept, with each case's reason
    run_id = re.search(r"kept as (\S+) ", last).group(1)
    assert run_cli("runs", "show", run_id).returncode == 0

    # The same whatever the timing: a worker already gone when the command is sent answers with its reason.
    from sslperf.measure.harness_client import Worker

    with Worker(fips.columns(("openssl-3.6:fips=tampered-fips",), (), ())[0]) as worker:
        assert worker.proc.wait(timeout=60) == 3
        reply = worker.request("info", timeout=60)
    assert reply.type == "error" and "self-test" in reply.data["reason"], reply


def test_fips_variant_refuses_a_version_without_providers_and_a_stripped_tree(tmp_path):
    from sslperf.errors import SslperfError
    from sslperf.libs import fips

    with pytest.raises(SslperfError, match="needs OpenSSL 3.0 or later"):
        fips.check_source(tmp_path, "1.1.1w")
    with pytest.raises(SslperfError, match="lacks util/mkdef.pl, util/mk-fipsmodule-cnf.pl, util/providers.num"):
        fips.check_source(tmp_path, "3.6.3")


def test_fips_module_without_provider_fips_is_a_clear_error(sslperf_dirs):
    result = run_cli("speed", "--provider", "default", "--fips-module", "openssl-3.0.8+fips", "--case",
                     "digest/sha256/64")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "--fips-module applies to --provider fips" in result.stderr


def test_provider_fips_on_a_library_without_a_fips_module_is_a_clear_error(sslperf_dirs):
    result = run_cli("speed", "--lib", "system", "--provider", "fips", "--case", "digest/sha256/64")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "has no FIPS module" in result.stderr


@pytest.mark.slow
def test_recommend_fips_leaves_out_what_the_module_refuses_and_says_the_cost(built_fips, built_openssl3,
                                                                             in_e2e_cache):
    # measuring less than recommend does: nothing asserted depends on the amount (conftest.py says why)
    result = run_recommend_measuring_less("--lib", "openssl-3.6", "--fips", "--fips-module", built_fips,
                                          "--no-store", timeout=1200)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "FIPS: only what the FIPS module offers: no ChaCha20-Poly1305" in out
    assert "CHACHA20" not in out.split("settings:")[1]              # never in the settings printed
    assert re.search(r"without ChaCha20 such clients pay \d+\.\d× the record cost", out)
    assert "openssl-3.6.3:fips-3.0.8" in out


def test_recommend_fips_module_without_fips_is_a_clear_error(sslperf_dirs):
    result = run_cli("recommend", "--fips-module", "openssl-3.0.8+fips")
    assert result.returncode == 2 and "--fips-module applies to --fips" in result.stderr
