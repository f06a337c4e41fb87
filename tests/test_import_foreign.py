"""Importers of BoringSSL's bssl_bench (Google Benchmark JSON) and wolfSSL's
wolfCrypt benchmark (text and -csv), on their real outputs: both tools were
built here from the sources of the crates sslperf builds these libraries
from (boring-sys 5.4.0, wolfssl-sys 5.3.0) and run on this machine; see
tests/data/speed/README.md and scripts/capture-import-samples.sh. Each figure
is checked against the raw output, read independently of the importer."""

from __future__ import annotations

import csv
import io
import json
import re
import statistics
from pathlib import Path

import pytest

from conftest import run_cli
from sslperf.importers import ImportFailed, parse
from sslperf.scale.efficiency import efficiency
from sslperf import figures

DATA = Path(__file__).parent / "data" / "speed"
REPS = "gbench-bssl_bench-5.4.0-threads-repetitions.json"
AGGREGATES = "gbench-bssl_bench-5.4.0-aggregates-input-size.json"
GENERIC = "gbench-sample-memcpy.json"
WOLF_TEXT = "wolfcrypt-5.9.4-text.txt"
WOLF_BASE10 = "wolfcrypt-5.9.4-text-base10-64.txt"
WOLF_CSV = "wolfcrypt-5.9.4-csv-16384.csv"
MIB = 1024 ** 2


def sample(name: str) -> str:
    return (DATA / name).read_text()


def imported(name: str):
    run = parse(sample(name), source_name=name)
    return run, {m.case: m for m in run.measurements}


def raw_rows(name: str) -> list[dict]:
    """The benchmark rows of a Google Benchmark JSON file, read by json alone (the notices before it skipped)."""
    text = sample(name)
    return json.loads(text[text.index("{"):])["benchmarks"]


# ---- bssl_bench ------------------------------------------------------------------

def test_bssl_bench_benchmarks_become_sslperf_cases_with_every_repetition_a_sample():
    run, cases = imported(REPS)
    assert run.libs[0].name == "boringssl" and run.libs[0].flavor == "boringssl"
    assert any("does not name the library" in w for w in run.warnings)
    expected = {  # case id: the bssl_bench run it comes from
        "cipher/aes-128-gcm/encrypt/16/speed-compat": "BM_SpeedAEAD/seal_aes_128_gcm/InputSize:16",
        "cipher/aes-128-gcm/decrypt/16384/speed-compat": "BM_SpeedAEAD/open_aes_128_gcm/InputSize:16384",
        "cipher/chacha20-poly1305/encrypt/16/speed-compat": "BM_SpeedAEAD/seal_chacha20_poly1305/InputSize:16",
        "cipher/aes-128-gcm/encrypt/16384/iovec-1456-1456":
            "BM_SpeedAEAD/seal_aes_128_gcm/InputSize:16384/IOVecFirst:1456/IOVecOthers:1456",
        "digest/sha256/16384/speed-compat": "BM_SpeedHash/sha256/InputSize:16384/threads:1",
        "sig/ecdsa-p256/sign": "BM_SpeedECDSASign/p256/threads:1",
        "sig/rsa-2048/verify": "BM_SpeedRSAVerify/2048/threads:1",
        "sig/ed25519/sign": "BM_SpeedEd25519Sign/threads:1",
        "sig/ml-dsa-65/verify": "BM_SpeedMLDSAVerify/ml_dsa_65/threads:1",
        "kem/ml-kem-768/encaps": "BM_SpeedMLKEM768EncapOnly/threads:1",
        "kem/ml-kem-768/keygen": "BM_SpeedMLKEM768KeyGenOnly/threads:1",
        "kex/x25519/derive": "BM_SpeedCurve25519ArbitraryPointMultiply/threads:1",
        "keygen/x25519": "BM_SpeedCurve25519BasePointMultiply/threads:1",
        "kex/ecdh-p256/keygen-derive": "BM_SpeedECDHEphemeral/p256/threads:1",
        "keygen/rsa-2048": "BM_SpeedRSAKeyGen/2048",
        "threads/own/002/sig/ecdsa-p256/sign": "BM_SpeedECDSASign/p256/threads:2",
        "threads/own/002/digest/sha256/16/speed-compat": "BM_SpeedHash/sha256/InputSize:16/threads:2",
        "other/speedx509": "BM_SpeedX509/threads:1",
    }
    rows = raw_rows(REPS)
    for case, run_name in expected.items():
        m = cases[case]
        reps = [r for r in rows if r["run_name"] == run_name and r["run_type"] == "iteration"]
        assert len(reps) == 3 and len(m.reported_rates) == 3, case
        # the rate: every thread ran `iterations` at once, each in real_time ns; bytes/s for a sized case
        per_call = m.bytes_per_op if m.unit == "bytes" else 1
        assert m.reported_rates == pytest.approx([r["threads"] * per_call * 1e9 / r["real_time"] for r in reps])
        # ... and Google Benchmark's own median over the repetitions is the median sslperf finds
        median = next(r for r in rows if r["run_name"] == run_name and r.get("aggregate_name") == "median")
        assert m.summary().median == pytest.approx(median["threads"] * per_call * 1e9 / median["real_time"])
    assert cases["cipher/aes-128-gcm/encrypt/16/speed-compat"].unit == "bytes"
    assert cases["threads/own/002/sig/ecdsa-p256/sign"].unit == "ops"
    assert "keygen-derive" in cases["kex/ecdh-p256/keygen-derive"].case and \
        "fresh key pair" in cases["kex/ecdh-p256/keygen-derive"].note


def test_bssl_bench_thread_counts_fill_the_threads_table_as_sslperfs_own_do():
    run, cases = imported(REPS)
    one, two = cases["threads/own/001/sig/ecdsa-p256/sign"], cases["threads/own/002/sig/ecdsa-p256/sign"]
    assert one.reported_rates == cases["sig/ecdsa-p256/sign"].reported_rates    # the 1-thread run, in both tables
    assert (one.size, two.size, one.note, two.note) == (1, 2, "own", "own")
    scaling = efficiency([m for m in run.measurements if m.family == "threads"])
    # two threads on this machine's two CPUs: near twice the work of one
    assert 0.8 < scaling[(two.case, "boringssl")] < 1.1, scaling[(two.case, "boringssl")]
    # the AEADs are not run across threads by bssl_bench: no threads rows for them
    assert not any(c.startswith("threads/") and "cipher/" in c for c in cases)


def test_bssl_bench_output_of_aggregates_only_gives_the_median_and_its_input_sizes():
    run, cases = imported(AGGREGATES)
    rows = raw_rows(AGGREGATES)
    m = cases["cipher/aes-128-gcm/encrypt/1024/speed-compat"]
    median = next(r for r in rows if r["name"] == "BM_SpeedAEAD/seal_aes_128_gcm/InputSize:1024_median")
    assert m.reported_rates == pytest.approx([1024e9 / median["real_time"]])
    assert "median of 3 repetitions" in m.note
    assert {"digest/sha256/64/speed-compat", "digest/sha256/1024/speed-compat"} <= set(cases)
    # benchmarks sslperf has no case for stay rows of their own; Google Benchmark's bytes counter gives the size
    assert cases["other/speedbase64/1272"].unit == "bytes"
    assert cases["other/speedspake2"].unit == "ops"
    assert cases["mac/siphash-2-4/16"].reported_rates[0] > 0


def test_any_google_benchmark_program_gives_rows_of_its_own():
    """scripts/gbench-sample.cc, a Google Benchmark program that is not bssl_bench, built and run here."""
    run, cases = imported(GENERIC)
    assert (run.libs[0].name, run.libs[0].flavor) == ("gbench", "unknown")
    assert run.environment["tool"] == "bm_memcpy"
    rows = raw_rows(GENERIC)
    reps = [r for r in rows if r["run_name"] == "BM_memcpy/64/threads:1" and r["run_type"] == "iteration"]
    memcpy = cases["other/memcpy-64/64"]             # bytes per call from Google Benchmark's bytes counter
    assert (memcpy.unit, memcpy.bytes_per_op) == ("bytes", 64)
    assert memcpy.reported_rates == pytest.approx([64e9 / r["real_time"] for r in reps])
    two = cases["threads/own/002/other/memcpy-64/64"]
    on_two = [r for r in rows if r["run_name"] == "BM_memcpy/64/threads:2" and r["run_type"] == "iteration"]
    assert two.reported_rates == pytest.approx([2e9 / r["real_time"] for r in on_two])
    assert (cases["other/vector-push-back"].unit, len(cases["other/vector-push-back"].reported_rates)) == ("ops", 2)
    assert len(cases) == 7                            # 3 plain rows and 4 threads rows; no aggregate imported


# ---- wolfCrypt -------------------------------------------------------------------------

def test_wolfcrypt_text_rates_sizes_and_cycles():
    run, cases = imported(WOLF_TEXT)
    assert (run.libs[0].name, run.libs[0].flavor, run.libs[0].version) == ("wolfssl-5.9.4", "wolfssl", "5.9.4")
    gcm = cases["cipher/aes-128-gcm/encrypt/1048576/wolfcrypt-bench"]
    assert gcm.reported_rates == pytest.approx([25285.280 * MIB]) and gcm.bytes_per_op == 1048576
    assert gcm.cycles_per_byte() == pytest.approx(0.10)
    rsa = cases["pke/rsa-2048/encrypt"]                       # `RSA 2048 public`: wolfCrypt's default RSA loop
    assert rsa.reported_rates == [87992.448] and rsa.cycles_per_op() == 29504.0
    assert cases["pke/rsa-2048/decrypt"].figures[figures.REPORTED_CYCLES] == [955812.8]
    assert {"kem/ml-kem-768/keygen", "kem/ml-kem-768/encaps", "kem/ml-kem-768/decaps", "kex/ecdh-p256/derive",
            "sig/ecdsa-p256/sign", "kex/x25519/derive", "sig/ed25519/verify", "keygen/ml-dsa-65",
            "sig/ml-dsa-65/sign", "digest/sha256/1048576/wolfcrypt-bench", "digest/sha3-256/1048576/wolfcrypt-bench",
            "mac/hmac-sha256/1048576/wolfcrypt-bench", "cipher/chacha20-poly1305/decrypt/1048576/wolfcrypt-bench",
            "other/gmac-table-4-bit/1048576", "other/cha-poly-stream/1048576"} <= set(cases)
    assert "rdtsc" in gcm.note


def test_wolfcrypt_base10_units_and_rsa_sign():
    _, cases = imported(WOLF_BASE10)
    assert cases["cipher/aes-128-gcm/encrypt/64/wolfcrypt-bench"].reported_rates == pytest.approx([1195.214e6])
    assert cases["sig/rsa-2048/sign"].reported_rates == [2650.370]         # -rsa_sign: sign/verify, not public
    assert cases["sig/rsa-2048/verify"].cycles_per_op() == 26312.9


def test_wolfcrypt_csv_reads_as_its_text_does():
    run, cases = imported(WOLF_CSV)
    text_cases = {c.replace("/1048576", "/16384") for c in imported(WOLF_TEXT)[1]}
    assert set(cases) == text_cases                     # the same algorithms, run with -csv and a 16 KiB block
    rows = {r[0]: r for r in csv.reader(io.StringIO(sample(WOLF_CSV))) if r and r[0] == "AES-128-GCM-enc"}
    gcm = cases["cipher/aes-128-gcm/encrypt/16384/wolfcrypt-bench"]
    assert gcm.reported_rates == pytest.approx([float(rows["AES-128-GCM-enc"][1]) * MIB])
    assert gcm.cycles_per_byte() == pytest.approx(float(rows["AES-128-GCM-enc"][2]))
    assert cases["pke/rsa-2048/decrypt"].reported_rates == [2716.045] and cases["pke/rsa-2048/decrypt"].figures is None
    assert any("2^20" in w for w in run.warnings)


def test_cycles_per_byte_reach_the_table_and_the_csv_export(sslperf_dirs, tmp_path):
    path = tmp_path / WOLF_CSV
    path.write_text(sample(WOLF_CSV))
    shown = run_cli("import", str(path), "--show", env={"COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"aes-128-gcm encrypt 16384 B \[wolfcrypt-bench\].*0\.11 cycles/B", shown.stdout), shown.stdout
    exported = run_cli("runs", "export", "latest", "--format", "csv")
    rows = {r["case"]: r for r in csv.DictReader(io.StringIO(exported.stdout))}
    assert float(rows["cipher/aes-128-gcm/encrypt/16384/wolfcrypt-bench"]["cycles_per_byte"]) == \
        pytest.approx(0.109195)
    assert rows["sig/ecdsa-p256/sign"]["cycles_per_op"] == ""          # -csv prints no cycles for these


# ---- damaged outputs ------------------------------------------------------------------

@pytest.mark.parametrize("name,find,replace,match", [
    # Google Benchmark: a counter that no longer agrees with the size, a field of the wrong kind or value
    (REPS, '"bytes_per_second": 2.5720807316219857e+08', '"bytes_per_second": 3.5720807316219857e+08',
     r"bytes_per_second .* not the 16 bytes its name gives"),
    (REPS, '"run_type": "iteration"', '"run_type": "iterate"', r"run_type 'iterate' is neither"),
    (REPS, '"threads": 1,', '"threads": 0,', r"threads 0 is not a count"),
    (REPS, '"time_unit": "ns"', '"time_unit": "ps"', r"time_unit 'ps' is not one of"),
    (REPS, '"real_time": 6.1409230998833664e+07', '"real_time": NaN', r"NaN"),
    (REPS, '"iterations": 1,', '"iterations": -1,', r"iterations -1 is not a positive"),
    (REPS, '"context": {', '"context": {"x": ' + "[" * 20 + "]" * 20 + ",", r"line 2: JSON nested more than 8"),
    # wolfCrypt: a rate, a cycle count, a CSV figure changed; a line pasted in
    (WOLF_TEXT, "25285.280 MiB/s", "2528.280 MiB/s", r"line 9: .*25290 MiB in 1.000 seconds is not"),
    (WOLF_TEXT, "29504.0 Cycles/op", "39504.0 Cycles/op", r"line 24: .*cycles over 88000 ops is not"),
    (WOLF_TEXT, "SHA-256 ", "hello world\nSHA-256 ", r"line 21: unknown line"),
    (WOLF_CSV, "0.109195", "0.209195", r"line 14: .*a clock of 4974 MHz, the other rows 2596"),
    (WOLF_CSV, "0.368,2716.045", "0.268,2716.045", r"is not the average of 0.268 ms"),
])
def test_damaged_outputs_are_refused_in_one_paragraph(name, find, replace, match):
    text = sample(name)
    assert find in text, find
    with pytest.raises(ImportFailed, match=match) as info:
        parse(text.replace(find, replace, 1), source_name=name)
    message = str(info.value)
    assert "\n" not in message and len(message) < 1000 and "Nothing was imported" in message, message


def test_a_cut_short_output_is_refused_and_names_where():
    text = sample(REPS)
    with pytest.raises(ImportFailed, match=rf"{REPS}, line \d+: not valid JSON"):
        parse(text[: len(text) // 2], source_name=REPS)
    # only bssl_bench's own notices may come before the JSON (captured with 2>&1)
    other = sample(AGGREGATES).replace("./bssl-build/bssl_bench: use input size 64 bytes.", "some other text")
    with pytest.raises(ImportFailed, match="no Google Benchmark JSON object"):
        parse(other)
    with pytest.raises(ImportFailed, match="has other text before it"):
        parse(other, fmt="gbench-json")
    wolf = sample(WOLF_TEXT).replace("wolfCrypt Benchmark (block bytes", "wolfCrypt bench (block bytes")
    with pytest.raises(ImportFailed, match="not output of"):
        parse(wolf)


def test_the_median_of_repetitions_is_robust_to_one_slow_repetition():
    """Google Benchmark's repetitions are samples: sslperf's CI and median come from them, as from its own."""
    _, cases = imported(REPS)
    keygen = cases["keygen/rsa-2048"]                   # RSA key generation varies a lot between repetitions
    assert keygen.summary().median == pytest.approx(statistics.median(keygen.reported_rates))
    assert keygen.summary().ci_half_width > 0.05
