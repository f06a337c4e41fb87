"""Importers of `openssl speed` and `bssl speed` output, on real outputs only:
the system `openssl` run here with short runs, and outputs captured from the
built OpenSSL 1.1.1w/3.0.8/3.6.3/4.0.3 and found in public reports (LibreSSL,
BoringSSL, AWS-LC), see tests/data/speed/README.md. Every sample, of every
format (bssl_bench and wolfCrypt's too, whose own tests are in
test_import_foreign.py), is detected and imported into the model here."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sslperf.errors import SslperfError
from sslperf.importers import FORMATS, detect_format, parse
from sslperf.cases import ids as case_ids
from sslperf.results import Run

DATA = Path(__file__).parent / "data" / "speed"
OPENSSL = shutil.which("openssl")
needs_openssl = pytest.mark.skipif(not OPENSSL, reason="no openssl command to run")

SAMPLES = {
    "openssl-1.1.1w-text.txt": "openssl-text",
    "openssl-1.1.1w-mr.txt": "openssl-mr",
    "openssl-3.0.8-text.txt": "openssl-text",
    "openssl-3.6.3-text-kem-sig.txt": "openssl-text",
    "openssl-3.6.3-text-rsa.txt": "openssl-text",
    "openssl-3.6.3-mr-kem-sig.txt": "openssl-mr",
    "openssl-4.0.3-text-kem-sig.txt": "openssl-text",
    "openssl-4.0.3-mr-kem-sig.txt": "openssl-mr",
    "openssl-3.0.19-text-hmac-shake128-zero.txt": "openssl-text",
    "libressl-3.3.6-rsa.txt": "libressl-text",
    "libressl-2.8.3-evp-aes-256-gcm.txt": "libressl-text",
    "libressl-2.6.4-md5-sha256.txt": "libressl-text",
    "bssl-boringssl-envoy-19037.txt": "bssl-text",
    "bssl-boringssl-oqs-profiling-28.txt": "bssl-text",
    "bssl-aws-lc-2283-aead.txt": "bssl-text",
    "bssl-aws-lc-pr957-rsa-keygen.txt": "bssl-text",
    "bssl-aws-lc-pr1024-evp-gcm.txt": "bssl-text",
    "bssl-aws-lc-graviton2-evp-gcm.txt": "bssl-text",
    "bssl-aws-lc-pr951-jitter.json": "bssl-json",
    "bssl-boringssl-5.0.2-aead.txt": "bssl-text",
    "bssl-boringssl-5.0.2-ecdsa.json": "bssl-json",
    "gbench-bssl_bench-5.4.0-threads-repetitions.json": "gbench-json",
    "gbench-bssl_bench-5.4.0-aggregates-input-size.json": "gbench-json",
    "gbench-sample-memcpy.json": "gbench-json",
    "wolfcrypt-5.9.4-text.txt": "wolfcrypt-text",
    "wolfcrypt-5.9.4-text-base10-64.txt": "wolfcrypt-text",
    "wolfcrypt-5.9.4-csv-16384.csv": "wolfcrypt-csv",
}
IMPORTABLE = [name for name in SAMPLES if "zero" not in name]


def sample(name: str) -> str:
    return (DATA / name).read_text()


def by_case(run: Run) -> dict:
    return {m.case: m for m in run.measurements}


def rate(run: Run, case: str) -> float:
    m = by_case(run)[case]
    assert len(m.reported_rates) == 1, m
    return m.reported_rates[0]


def table_value(text: str, row: str, column: int = 0) -> float:
    """A figure of the symmetric table read straight from the text: bytes/s."""
    line = next(line for line in text.splitlines() if line.lower().startswith(row.lower() + " "))
    figure = line.split()[len(row.split()) + column]
    return float(figure.rstrip("k")) * (1000 if figure.endswith("k") else 1)


def check_model(run: Run) -> None:
    """What every import must satisfy."""
    assert run.complete and run.finished and run.environment["imported"] is True
    assert len(run.libs) == 1 and run.libs[0].kind == "imported"
    ids = [m.case for m in run.measurements]
    assert len(ids) == len(set(ids))
    for m in run.measurements:
        assert m.status == "ok" and m.lib == run.libs[0].name
        assert not m.ops and not m.wall_ns and not m.cpu_ns
        assert m.reported_rates and all(r > 0 and math.isfinite(r) for r in m.reported_rates), m
        assert m.rates() == m.reported_rates and m.summary().median > 0
        assert m.case.split("/")[0] == m.family
        # a threads case's size is its thread count; its rate is op/s across the threads, as sslperf's own
        assert (m.unit, m.bytes_per_op) == (("bytes", m.size) if m.size and m.family != "threads" else ("ops", 0))
        # Every id reads by the harness's id templates (the names of other tools' algorithms as shapes
        # only), into the fields the importer gave it; one sslperf measures also falls into the same table.
        shape = case_ids.parse(m.case, strict=False)
        assert shape is not None, f"{m.case} fits no id template of the harness's catalog"
        # (a threads case's operation is its count as sslperf's own say it, "1 thread", "2 threads")
        assert (m.family, m.algorithm, m.size, m.workload) == \
            (shape.family, shape.algorithm, shape.size, shape.workload), m.case
        assert m.operation == shape.operation or m.family == "threads" and m.operation.split()[0] == str(m.size)
        measured = case_ids.parse(m.case)
        if measured is not None:
            assert m.group == measured.group, m.case
    Run.from_dict(run.to_dict())                      # serialises like any run


# ---- format detection -------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_detects_the_format_of_each_real_sample(name):
    assert detect_format(sample(name)) == SAMPLES[name]


@pytest.mark.parametrize("name", IMPORTABLE)
def test_every_real_sample_imports_into_the_model(name):
    run = parse(sample(name), source_name=name)
    check_model(run)
    source = {"bssl": "bssl speed", "gbench": "Google Benchmark", "wolfcrypt": "wolfCrypt benchmark"}.get(
        SAMPLES[name].split("-")[0], "openssl speed")
    assert run.settings == {"source": source, "format": SAMPLES[name], "file": name}


def test_text_that_is_not_speed_output_is_refused_with_a_clear_error():
    for text in ((DATA / "README.md").read_text(), "", "OpenSSL rocks\n"):
        with pytest.raises(SslperfError) as info:
            parse(text)
        assert "openssl speed" in str(info.value) and "bssl speed" in str(info.value)
    with pytest.raises(SslperfError, match="not an import format"):
        parse(sample("libressl-3.3.6-rsa.txt"), fmt="csv")
    with pytest.raises(SslperfError, match="LibreSSL 3.3.6"):
        parse(sample("libressl-3.3.6-rsa.txt"), fmt="openssl-text")


# ---- the system openssl, run now ------------------------------------------------

def run_openssl(*args: str) -> str:
    """stdout and stderr together, as `> file 2>&1` keeps them."""
    done = subprocess.run([OPENSSL, "speed", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout
    return done.stdout


@pytest.fixture(scope="module")
def system_runs():
    """Text and -mr output of the same short runs (about 12 s in all). -bytes
    stays out of the RSA run: with -bytes 16, 3.0.x cannot sign (its buffer
    is then too small for a 2048-bit signature)."""
    args = ("-seconds", "1", "-bytes", "16", "-evp", "aes-128-gcm", "ecdsap256", "ecdhx25519")
    return {"text": run_openssl(*args), "rsa": run_openssl("-seconds", "1", "rsa2048"),
            "mr": run_openssl("-mr", *args), "rsa-mr": run_openssl("-mr", "-seconds", "1", "rsa2048")}


@needs_openssl
def test_system_openssl_text_output(system_runs):
    text = system_runs["text"]
    assert detect_format(text) == "openssl-text"
    run = parse(text, source_name="speed.txt")
    check_model(run)
    version = subprocess.run([OPENSSL, "version"], capture_output=True, text=True).stdout.split()[1]
    assert run.libs[0].name == f"openssl-{version}" and run.libs[0].flavor == "openssl"
    assert run.libs[0].version == version
    env = run.environment
    assert env["compiler"] and env["built_on"] and env["options"]
    if "CPUINFO:" in text:                                  # 3.x and later
        assert env["cpuinfo"].startswith("OPENSSL_ia32cap=") and run.libs[0].ia32cap in env["cpuinfo"]
    gcm = by_case(run)["cipher/aes-128-gcm/encrypt/16/speed-compat"]
    assert (gcm.group, gcm.bytes_per_op) == ("AEAD ciphers", 16)
    assert gcm.reported_rates == [pytest.approx(table_value(text, "AES-128-GCM"))]
    assert rate(run, "sig/ecdsa-p256/sign") > 100 and rate(run, "sig/ecdsa-p256/verify") > 100
    assert rate(run, "kex/x25519/derive") > 100

    rsa = parse(system_runs["rsa"])
    check_model(rsa)
    row = next(line for line in system_runs["rsa"].splitlines() if line.startswith("rsa")).split()
    # `rsa 2048 bits s s sign/s verify/s`, or with encrypt/decrypt columns (later 3.x) four of each
    sign, verify = map(float, row[-2:] if len(row) == 7 else row[-4:-2])
    assert rate(rsa, "sig/rsa-2048/sign") == pytest.approx(sign, rel=2e-3)
    assert rate(rsa, "sig/rsa-2048/verify") == pytest.approx(verify, rel=2e-3)
    assert verify > sign > 10


@needs_openssl
def test_system_openssl_mr_output_matches_its_text_output(system_runs):
    text = parse(system_runs["text"])
    mr = parse(system_runs["mr"], lib_name=text.libs[0].name)        # -mr prints no version line
    check_model(mr)
    assert detect_format(system_runs["mr"]) == "openssl-mr"
    assert mr.libs[0].name == text.libs[0].name and mr.libs[0].version == text.libs[0].version
    assert set(by_case(mr)) == set(by_case(text))
    for case in by_case(text):
        # two runs of a second each: the same order of magnitude, not the same figure
        assert 0.5 < rate(mr, case) / rate(text, case) < 2, case
    plus_f = next(line for line in system_runs["mr"].splitlines() if line.startswith("+F:"))
    assert rate(mr, "cipher/aes-128-gcm/encrypt/16/speed-compat") == float(plus_f.split(":")[3])
    rsa_mr, rsa = parse(system_runs["rsa-mr"]), parse(system_runs["rsa"])
    assert 0.5 < rate(rsa_mr, "sig/rsa-2048/sign") / rate(rsa, "sig/rsa-2048/sign") < 2
    # standard output alone (no +R lines) is enough for these algorithms
    stdout_only = "\n".join(line for line in system_runs["mr"].splitlines() if line.startswith(("+H", "+F")))
    assert set(by_case(parse(stdout_only))) == set(by_case(mr))


# ---- captured from the built OpenSSLs -------------------------------------------

def test_openssl_1_1_1w_text_and_mr():
    text = sample("openssl-1.1.1w-text.txt")
    run = parse(text)
    lib = run.libs[0]
    assert (lib.name, lib.flavor, lib.version, lib.version_string) == \
        ("openssl-1.1.1w", "openssl", "1.1.1w", "OpenSSL 1.1.1w  11 Sep 2023")
    cases = by_case(run)
    assert rate(run, "cipher/aes-128-gcm/encrypt/1024/speed-compat") == 3391409.15e3
    # the non-EVP loop ("aes-128 cbc"), HMAC(MD5) and a digest
    assert rate(run, "cipher/aes-128-cbc/encrypt/1024/speed-compat") == 294954.41e3
    assert cases["cipher/aes-128-cbc/encrypt/1024/speed-compat"].group == "block ciphers (CBC, CTR)"
    assert rate(run, "mac/hmac-md5/1024") == 597188.61e3
    assert rate(run, "digest/sha256/1024/speed-compat") == 1640244.22e3
    assert (rate(run, "sig/rsa-2048/sign"), rate(run, "sig/rsa-2048/verify")) == (1669.0, 51192.9)
    assert (rate(run, "sig/dsa-2048/sign"), rate(run, "sig/dsa-2048/verify")) == (3767.0, 3963.0)
    assert rate(run, "kex/ecdh-p256/derive") == 20566.7 and rate(run, "kex/x25519/derive") == 28918.0
    assert (rate(run, "sig/ed25519/sign"), rate(run, "sig/ed25519/verify")) == (30420.0, 8483.0)

    mr = parse(sample("openssl-1.1.1w-mr.txt"), lib_name="openssl-1.1.1w")
    assert (mr.libs[0].name, mr.libs[0].version) == ("openssl-1.1.1w", "1.1.1w")
    assert rate(mr, "cipher/aes-128-gcm/encrypt/1024/speed-compat") == 2417403345.45
    assert rate(mr, "sig/rsa-2048/sign") == 1287.878788
    assert rate(mr, "kex/x25519/derive") == 26311.111111
    assert rate(mr, "sig/ed25519/verify") == 7531.0
    assert "inferred" in by_case(mr)["sig/ecdsa-p256/sign"].note       # +F4 gives only the bits
    for case in by_case(mr):
        assert 0.5 < rate(mr, case) / rate(run, case) < 2, case


def test_openssl_3_0_8_hmac_ffdh_and_six_sizes():
    text = sample("openssl-3.0.8-text.txt")
    run = parse(text)
    assert run.libs[0].name == "openssl-3.0.8" and run.libs[0].version_string == "OpenSSL 3.0.8"
    assert run.environment["cpuinfo"] == "OPENSSL_ia32cap=0xfffa3203078bffff:0x405fc6f1bf07ab"
    for i, size in enumerate((16, 64, 256, 1024, 8192, 16384)):
        assert rate(run, f"cipher/aes-128-gcm/encrypt/{size}/speed-compat") == \
            pytest.approx(table_value(text, "AES-128-GCM", i))
        assert rate(run, f"mac/hmac-sha256/{size}") == pytest.approx(table_value(text, "hmac(sha256)", i))
    assert rate(run, "cipher/aes-128-gcm/encrypt/16/speed-compat") == 455388.43e3
    assert rate(run, "kex/ffdh-2048/derive") == 3301.0


def test_openssl_3_6_3_kem_signature_and_four_column_rsa_tables():
    run = parse(sample("openssl-3.6.3-text-kem-sig.txt"))
    assert run.libs[0].name == "openssl-3.6.3"
    assert [rate(run, f"kem/ml-kem-768/{op}") for op in ("keygen", "encaps", "decaps")] == \
        [26563.6, 42028.6, 29429.3]
    assert rate(run, "keygen/ml-dsa-65") == 4363.6
    assert (rate(run, "sig/ml-dsa-65/sign"), rate(run, "sig/ml-dsa-65/verify")) == (758.2, 5179.0)
    # key generation: 0.042500 s per key is more precise than the 23.5 op/s printed beside it
    assert rate(run, "kem/rsa-2048/keygen") == pytest.approx(1 / 0.042500)
    assert rate(run, "sig/ed25519/sign") == 25856.6
    # the RSA table failed in that run (-bytes 16): openssl's error lines are kept as warnings
    assert any("invalid signature size" in w for w in run.warnings)

    rsa = parse(sample("openssl-3.6.3-text-rsa.txt"))
    assert [rate(rsa, c) for c in ("sig/rsa-2048/sign", "sig/rsa-2048/verify", "pke/rsa-2048/encrypt",
                                   "pke/rsa-2048/decrypt")] == [3489.8, 49827.3, 47281.6, 3318.4]
    assert by_case(rsa)["pke/rsa-2048/encrypt"].group == "public-key encryption"
    # the signature table measures RSA again through its own loop: kept apart, not mixed in
    assert rate(rsa, "sig/rsa-2048/sign/sig-table") == 3234.9
    tagged = by_case(rsa)["sig/rsa-2048/sign/sig-table"]       # the sig table's loop: a workload of its own
    assert (tagged.algorithm, tagged.workload, tagged.label) == ("rsa-2048", "sig-table", "rsa-2048 sign [sig-table]")
    assert rate(rsa, "keygen/rsa-2048") == pytest.approx(1 / 0.043529)


def test_openssl_3_6_3_mr_names_kem_and_signatures_from_the_plus_r_lines():
    text = sample("openssl-3.6.3-mr-kem-sig.txt")
    run = parse(text, lib_name="openssl-3.6.3")
    assert rate(run, "kem/ml-kem-768/encaps") == 39745.360825
    assert rate(run, "sig/ml-dsa-65/sign") == 784.848485 and rate(run, "keygen/ml-dsa-65") == 3976.0
    assert rate(run, "cipher/aes-128-gcm/encrypt/16/speed-compat") == 85146226.80
    # +F9/+F10 carry an index only: without standard error they cannot be named
    stdout_only = "\n".join(line for line in text.splitlines() if line.startswith(("+H", "+F")))
    with pytest.raises(SslperfError, match=r"line 5: .*KEM results by index only.*2>&1"):
        parse(stdout_only)


def test_openssl_4_0_3_text_and_mr():
    run = parse(sample("openssl-4.0.3-text-kem-sig.txt"))
    assert run.libs[0].name == "openssl-4.0.3"
    # 4.x prints ECDSA and EdDSA as "EC (curve)"
    assert (rate(run, "sig/ecdsa-p256/sign"), rate(run, "sig/ed25519/verify")) == (43905.5, 7832.2)
    assert rate(run, "kex/ecdh-p256/derive") == 16215.4 and rate(run, "kex/ffdh-2048/derive") == 2887.4
    assert rate(run, "kem/ml-kem-768/decaps") == 25822.4 and rate(run, "sig/ml-dsa-65/sign") == 934.0

    mr = parse(sample("openssl-4.0.3-mr-kem-sig.txt"), lib_name="openssl-4.0.3")
    cases = by_case(mr)
    # 4.x's +F8 is the KEM line and +F9 the signature line (3.x: +F9 and +F10); curves named by +R7/+R9
    assert rate(mr, "kem/ml-kem-768/keygen") == 22551.0 and rate(mr, "sig/ml-dsa-65/verify") == 5404.040404
    assert rate(mr, "sig/ecdsa-p256/sign") == 51068.686869 and cases["sig/ecdsa-p256/sign"].note is None
    assert rate(mr, "sig/ed25519/sign") == 30451.063830
    assert set(cases) <= set(by_case(run)) | {"kex/x25519/derive"}
    for case in cases:
        assert 0.5 < rate(mr, case) / rate(run, case) < 2, case


def test_a_failed_benchmark_printed_as_0_00_is_not_imported():
    # "hmac(shake128)        0.00 ": a figure without the k suffix is bytes/s; 0.00 is no rate at all
    with pytest.raises(SslperfError, match=r"no figure .* is a usable rate .*line 8: hmac\(shake128\)"):
        parse(sample("openssl-3.0.19-text-hmac-shake128-zero.txt"))


# ---- LibreSSL ------------------------------------------------------------------

def test_libressl_tables():
    rsa = parse(sample("libressl-3.3.6-rsa.txt"))
    lib = rsa.libs[0]
    assert (lib.name, lib.flavor, lib.version) == ("libressl-3.3.6", "libressl", "3.3.6")
    assert (rate(rsa, "sig/rsa-2048/sign"), rate(rsa, "sig/rsa-2048/verify")) == (534.0, 35268.8)
    assert rate(rsa, "sig/rsa-4096/verify") == 9415.3

    gcm = parse(sample("libressl-2.8.3-evp-aes-256-gcm.txt"))
    assert gcm.libs[0].name == "libressl-2.8.3" and gcm.environment["compiler"] == "information not available"
    assert [m.size for m in gcm.measurements] == [16, 64, 256, 1024, 8192]      # LibreSSL: no 16384
    assert rate(gcm, "cipher/aes-256-gcm/encrypt/8192/speed-compat") == 2122290.74e3

    digests = parse(sample("libressl-2.6.4-md5-sha256.txt"), lib_name="libressl-2.6.4-macos")
    assert digests.libs[0].name == "libressl-2.6.4-macos" and digests.libs[0].version == "2.6.4"
    assert rate(digests, "digest/md5/16/speed-compat") == 14319.70e3
    assert rate(digests, "digest/sha256/8192/speed-compat") == 23808.86e3
    assert all(m.lib == "libressl-2.6.4-macos" for m in digests.measurements)


# ---- bssl speed ---------------------------------------------------------------------

def test_boringssl_text():
    run = parse(sample("bssl-boringssl-envoy-19037.txt"))
    assert (run.libs[0].name, run.libs[0].flavor) == ("boringssl", "boringssl")
    m = by_case(run)["cipher/aes-256-gcm/encrypt/16/speed-compat"]
    # "Did 3932000 AES-256-GCM (16 bytes) seal operations in 1000050us (3931803.4 ops/sec): 62.9 MB/s"
    assert m.reported_rates == [pytest.approx(3932000 * 16 / 1000050 * 1e6)]
    assert m.reported_rates[0] / 1e6 == pytest.approx(62.9, abs=0.05)
    assert (m.group, m.workload, m.bytes_per_op) == ("AEAD ciphers", "speed-compat", 16)
    assert rate(run, "sig/ecdsa-p256/sign") == pytest.approx(38935.0, abs=0.05)
    assert rate(run, "kex/x25519/derive") == pytest.approx(2578.3, abs=0.05)
    assert rate(run, "keygen/ed25519") == pytest.approx(6438.3, abs=0.05)
    assert rate(run, "kem/hrss/encaps") == pytest.approx(24787.8, abs=0.05)
    assert "other/scrypt-n-1024-r-8-p-16/speed-compat" in by_case(run)

    rsa = parse(sample("bssl-boringssl-oqs-profiling-28.txt"), lib_name="boringssl-2020")
    assert rate(rsa, "sig/rsa-2048/sign") == pytest.approx(1406.7, abs=0.05)
    assert rate(rsa, "sig/rsa-2048/verify") == pytest.approx(39735.4, abs=0.05)
    assert rate(rsa, "sig/rsa-2048/verify-fresh-key") == pytest.approx(29552.8, abs=0.05)
    assert rsa.libs[0].flavor == "boringssl"


def test_boringssl_bssl_speed_built_here_text_and_json():
    """`bssl speed` of boring-sys 5.0.2, built and run here (tests/data/speed/README.md)."""
    run = parse(sample("bssl-boringssl-5.0.2-aead.txt"))
    assert (run.libs[0].name, run.libs[0].flavor) == ("boringssl", "boringssl")
    # "Did 1487000 AES-128-GCM (16384 bytes) seal operations in 1000220us (1486672.9 ops/sec): 24357.6 MB/s"
    assert rate(run, "cipher/aes-128-gcm/encrypt/16384/speed-compat") == pytest.approx(1487000 * 16384 / 1.000220)
    assert rate(run, "cipher/aes-128-gcm-siv/decrypt/16/speed-compat") == pytest.approx(8833000 * 16 / 1.000053)
    json_run = parse(sample("bssl-boringssl-5.0.2-ecdsa.json"), lib_name="boringssl-5.0.2")
    assert rate(json_run, "sig/ecdsa-p256/sign") == pytest.approx(82000 / 1.004114)
    assert rate(json_run, "sig/ecdsa-p256/verify") == pytest.approx(32000 / 1.002491)


def test_aws_lc_text_and_json():
    run = parse(sample("bssl-aws-lc-2283-aead.txt"))
    assert (run.libs[0].name, run.libs[0].flavor) == ("aws-lc", "aws-lc")
    assert rate(run, "cipher/aes-128-gcm/decrypt/1350/speed-compat") == \
        pytest.approx(24261000 * 1350 / 10000112 * 1e6)
    assert rate(run, "cipher/aes-128-gcm/encrypt/16384/speed-compat") / 1e6 == pytest.approx(4658.7, abs=0.05)
    assert rate(run, "other/aead-aes-128-gcm-seal-init/speed-compat") == pytest.approx(8835079.7, abs=0.05)

    evp = parse(sample("bssl-aws-lc-graviton2-evp-gcm.txt"))
    m = by_case(evp)["cipher/aes-128-gcm/encrypt/16/bssl-evp"]
    assert m.workload == "bssl-evp" and m.reported_rates[0] / 1e6 == pytest.approx(118.4, abs=0.05)
    assert parse(sample("bssl-aws-lc-pr1024-evp-gcm.txt")).libs[0].flavor == "aws-lc"

    keygen = parse(sample("bssl-aws-lc-pr957-rsa-keygen.txt"), lib_name="aws-lc")
    assert keygen.libs[0].flavor == "aws-lc" and not keygen.warnings
    assert rate(keygen, "keygen/rsa-2048") == pytest.approx(142 / 30.056840)
    assert by_case(keygen)["keygen/rsa-2048"].note == "per key: min 42058 us, median 187583 us, max 653532 us"
    assert "recorded as BoringSSL" in parse(sample("bssl-aws-lc-pr957-rsa-keygen.txt")).warnings[0]

    jitter = parse(sample("bssl-aws-lc-pr951-jitter.json"))
    assert (jitter.libs[0].flavor, [m.size for m in jitter.measurements]) == ("aws-lc", [10, 20, 40, 80, 160])
    assert rate(jitter, "other/jitter/10/speed-compat") == pytest.approx(195 * 10 / 1036469 * 1e6)


# ---- damaged input: the line is named, nothing is imported ------------------------------

def damaged(name: str, find: str, replace: str) -> str:
    text = sample(name)
    assert find in text
    return text.replace(find, replace, 1)


@pytest.mark.parametrize("name,find,replace,line", [
    # a line cut short
    ("openssl-3.0.8-text.txt", "2048 bits ffdh   0.0003s   3301.0", "2048 bits ffdh   0.0003s   33", 35),
    ("openssl-1.1.1w-text.txt", " 253 bits EdDSA (Ed25519)   0.0000s   0.0001s  30420.0   8483.0",
     " 253 bits EdDSA (Ed25519)   0.0000s   0.0001s  30420.0", 35),
    ("openssl-3.0.8-text.txt", "3355776.00k  3840204.80k  4361682.94k", "3355776.00", 27),
    ("openssl-3.6.3-text-rsa.txt", "3318.4", "33", 17),
    ("openssl-4.0.3-text-kem-sig.txt", "0.000179s    4682.8     934.0    5581.6", "0.000179s    4682.8     934.0    55",
     34),
    ("bssl-boringssl-envoy-19037.txt", "(598.2 ops/sec)", "(598.2 ops/se", 16),
    ("bssl-aws-lc-pr951-jitter.json", '"bytesPerCall": 160}\n]', '"bytesPerCall": 160}\n', 6),
    # something pasted into the middle of a table
    ("openssl-4.0.3-text-kem-sig.txt", " 253 bits EC (Ed25519)", "hello world\n 253 bits EC (Ed25519)", 25),
    ("libressl-3.3.6-rsa.txt", "rsa 2048 bits", "rsa 2048 bits 0.001873s garbage\nrsa 2048 bits", 5),
    ("openssl-4.0.3-mr-kem-sig.txt", "+F5:24:253:", "some text\n+F5:24:253:", 29),
    ("bssl-boringssl-envoy-19037.txt", "Did 836 ECDSA", "not a bssl line\nDid 836 ECDSA", 17),
    # a figure changed: the line no longer agrees with itself
    ("openssl-1.1.1w-mr.txt", "+F4:3:256:", "+F4:3:256:42827.83", 20),
    ("openssl-1.1.1w-text.txt", "1669.0  51192.9", "1669.0  5119.9", 26),
    ("bssl-aws-lc-2283-aead.txt", "(2476637.4 ops/sec)", "(2476637.9 ops/sec)", 4),
    ("bssl-aws-lc-pr951-jitter.json", '"numCalls": 99,', '"numCalls": 99,,', 4),
])
def test_damaged_input_names_the_line(name, find, replace, line):
    text = damaged(name, find, replace)
    with pytest.raises(SslperfError) as info:
        parse(text, source_name=name)
    message = str(info.value)
    assert f"{name}, line {line}:" in message, message
    bad_line = text.splitlines()[line - 1].strip() if line <= len(text.splitlines()) else ""
    assert bad_line[:40] in message and "Nothing was imported" in message


def test_a_bssl_text_pasted_without_the_line_ends_is_refused():
    text = sample("bssl-boringssl-oqs-profiling-28.txt").replace("\n", " ", 1)
    with pytest.raises(SslperfError, match=r"line 1: "):
        parse(text)


def test_formats_listed():
    assert FORMATS == ("openssl-text", "openssl-mr", "libressl-text", "bssl-text", "bssl-json", "gbench-json",
                       "wolfcrypt-text", "wolfcrypt-csv")
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{6}", parse(sample("libressl-3.3.6-rsa.txt")).id)
