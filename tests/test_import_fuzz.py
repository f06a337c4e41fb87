"""The importers under fuzzing: a fixed-seed stream of mutated real outputs
(the mutators of bench/fuzz_importers.py, which runs the long version and
gives the figure in docs/benchmarks.md). Every input ends as a Run or as
ImportFailed, never as another exception, and every Run survives a real
SQLite store and the CSV and JSON exports with finite numbers only."""

from __future__ import annotations

import math
import random

import pytest
from fakes import bench_module

from sslperf.importers import ImportFailed, parse
from sslperf.store import Store

COUNT = 2000          # bench/fuzz_importers.py runs 300,000
SEED = 20261121


fuzzer = bench_module("fuzz_importers")


def test_fuzzed_real_outputs_give_a_run_or_import_failed(tmp_path):
    pool = fuzzer.samples()
    assert len(pool) >= 19
    store = Store(f"sqlite:///{tmp_path / 'fuzz.db'}")
    outcomes: dict[str, int] = {}
    crashes: list[str] = []
    checked: set = set()               # runs already saved, loaded and exported (by content)
    for index in range(COUNT):
        rng = random.Random(f"{SEED}:{index}")
        outcome, why, detail, _ = fuzzer.fuzz_one(rng, pool, store, index, checked)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if why and len(crashes) < 5:
            crashes.append(f"{why}\n{detail}")
    assert not crashes, "\n\n".join(crashes)
    # the stream exercises both outcomes: a fuzzer that only ever got rejections would prove little
    assert outcomes["accepted"] > COUNT // 10 and outcomes["rejected"] > COUNT // 10, outcomes
    assert len(checked) > COUNT // 20


def test_the_fuzz_stream_is_fixed_by_its_seed():
    pool = fuzzer.samples()
    first = [fuzzer.make_input(random.Random(f"{SEED}:{i}"), pool) for i in range(20)]
    again = [fuzzer.make_input(random.Random(f"{SEED}:{i}"), pool) for i in range(20)]
    assert first == again


# ---- the causes the fuzzer found, one by one ---------------------------------------------

def sample(name: str) -> str:
    return (fuzzer.DATA / name).read_text()


def refused(text, match: str, **options) -> str:
    with pytest.raises(ImportFailed, match=match) as info:
        parse(text, **options)
    message = str(info.value)
    assert "\n" not in message and len(message) < 1000, message
    return message


@pytest.mark.parametrize("name,find,replace,match", [
    # 1. integers of thousands of digits: counted, never handed to int() (whose limit is 4300 digits)
    ("bssl-boringssl-envoy-19037.txt", "Did 3188000 ", "Did " + "9" * 4000 + " ", r"line 1: a call count of 99"),
    ("openssl-1.1.1w-mr.txt", "+H:1024", "+H:" + "9" * 4000, r"block size of 99.*4000 characters"),
    ("openssl-3.0.8-text.txt", "type             16 bytes", "type " + "1" * 4000 + " bytes",
     r"block size of 11"),
    ("bssl-aws-lc-2283-aead.txt", "(16 bytes)", "(" + "7" * 3900 + " bytes)", r"block size of 77"),
    # ... and a line longer than any real one is refused before any pattern reads it
    ("bssl-boringssl-envoy-19037.txt", "Did 3188000 ", "Did " + "9" * 5000 + " ",
     r"line 1: 5,0\d\d characters long"),
    ("openssl-1.1.1w-mr.txt", "+H:1024", "+H:" + "9" * 5000, r"line 17: 5,0\d\d characters long"),
    ("bssl-aws-lc-pr951-jitter.json", '"numCalls": 195', '"numCalls": ' + "9" * 5000, r"line 2: the JSON number"),
    # 2. integer division too large for a float (bssl text and JSON)
    ("bssl-aws-lc-pr951-jitter.json", '"numCalls": 195', '"numCalls": ' + "9" * 400, r"line 2: .*JSON number"),
    ("bssl-aws-lc-2283-aead.txt", "Did 96643500 ", "Did " + "9" * 400 + " ", r"line 2: a call count of 99"),
    # 3. ops ** 2 of a 200-digit figure on a sign/verify line
    ("openssl-1.1.1w-text.txt", "1669.0  51192.9", "1" * 200 + ".0  51192.9", r"line 26: the figure 11"),
    # 4. deep JSON
    ("bssl-aws-lc-pr951-jitter.json", "[\n", "[" * 1001 + "\n", r"line 1: JSON nested more than 8 levels"),
    ("bssl-aws-lc-pr951-jitter.json", '"bytesPerCall": 10}', '"bytesPerCall": 10, "x": ' + "[" * 1001 + "]" * 1001
     + "}", r"line 2: JSON nested"),
    # 5. values the store could not keep
    ("bssl-aws-lc-pr951-jitter.json", '"bytesPerCall": 10}', '"bytesPerCall": 9223372036854775808}',
     r"line 2: bytesPerCall 9223372036854775808 is outside"),
    ("bssl-aws-lc-pr951-jitter.json", '"bytesPerCall": 10}', '"bytesPerCall": 2147483648}', r"bytesPerCall"),
    ("bssl-aws-lc-pr951-jitter.json", '"bytesPerCall": 10}', '"bytesPerCall": true}', r"whole numbers"),
    ("bssl-aws-lc-pr951-jitter.json", '"Jitter", "numCalls": 195', '"Jit\\u0000ter", "numCalls": 195',
     r"control characters"),
    ("bssl-aws-lc-pr951-jitter.json", '"Jitter", "numCalls": 195', '"Jit\\ud800ter", "numCalls": 195',
     r"control characters"),
    # accepted before, wrong later: block size 0, absurd rates
    ("openssl-3.0.8-text.txt", "type             16 bytes", "type              0 bytes", r"block size of 0"),
    ("openssl-1.1.1w-mr.txt", "+H:1024", "+H:0", r"line 17: a block size of 0"),
    ("bssl-aws-lc-pr951-jitter.json", '"bytesPerCall": 10}', '"bytesPerCall": 0}', r"bytesPerCall 0 is outside"),
    ("bssl-aws-lc-2283-aead.txt", "(16 bytes)", "(0 bytes)", r"block size of 0"),
    ("openssl-1.1.1w-mr.txt", "+F:22:aes-128-gcm:2417403345.45", "+F:22:aes-128-gcm:" + "1" * 20 + ".00",
     r"outside what any real measurement gives"),
    ("openssl-3.6.3-text-rsa.txt", "version: 3.6.3", "version: 3.6.3" + "x" * 300, r"line 11: the version"),
])
def test_each_cause_is_refused_with_one_paragraph(name, find, replace, match):
    text = sample(name)
    assert find in text
    refused(text.replace(find, replace, 1), match, source_name=name)


def test_a_rate_of_1e200_is_refused_not_exported_as_infinity():
    # bssl: 10^15-1 calls in 1 us is 10^21 op/s; nothing real is that fast
    text = "Did 999999999999999 AES-128-GCM (16 bytes) seal operations in 1us (999999999999999000000.0 ops/sec)\n"
    refused(text, r"outside what any real measurement gives")
    refused(text.replace("999999999999999 ", "9" * 16 + " "), r"a call count of 9")


def test_standard_input_that_is_not_utf8_reads_as_the_same_file_would(tmp_path):
    data = (fuzzer.DATA / "openssl-3.0.8-text.txt").read_bytes().replace(b"built on:", b"built on: \xff\xfe", 1)
    via_stdin = parse(data.decode("utf-8", "surrogateescape"))        # sys.stdin.read() under C.UTF-8
    via_file = parse(data.decode("utf-8", "replace"), source_name="speed.txt")
    via_bytes = parse(data)
    assert via_stdin.environment["built_on"] == via_file.environment["built_on"] == \
        via_bytes.environment["built_on"]
    assert "\ufffd" in via_stdin.environment["built_on"]
    assert any("not UTF-8" in w for w in via_stdin.warnings)
    store = Store(f"sqlite:///{tmp_path / 's.db'}")
    store.save(via_stdin, "openssl speed")                             # was UnicodeEncodeError
    assert store.load(via_stdin.id).environment["built_on"] == via_stdin.environment["built_on"]
    # a figure with a byte that is not UTF-8 is a damaged line, named
    bad = (fuzzer.DATA / "openssl-3.0.8-text.txt").read_bytes().replace(b"3301.0", b"33\xff1.0", 1)
    refused(bad.decode("utf-8", "surrogateescape"), r"standard input, line 35")


def test_binary_and_oversized_input_and_bad_names_are_refused():
    refused("OpenSSL 3.0.8\x00\n", r"line 1: .*NUL characters")
    refused(sample("libressl-3.3.6-rsa.txt"), r"library name", lib_name="x" * 300)
    refused(sample("libressl-3.3.6-rsa.txt"), r"control characters", lib_name="a\x00b")
    refused(" " * (8 * 1024 * 1024 + 1), r"far longer than any")


def test_accepted_values_stay_inside_the_bounds():
    # the largest figures real outputs could print are still accepted
    # (10^13 calls of 16 bytes in a second: 1.6e14 bytes/s, under the 1e15 ceiling)
    text = "Did 9999999999999 AES-128-GCM (16 bytes) seal operations in 1000000us (9999999999999.0 ops/sec)\n"
    run = parse(text)
    [m] = run.measurements
    assert m.size == 16 and m.reported_rates == [pytest.approx(16 * 9999999999999)]
    assert all(math.isfinite(r) for r in m.reported_rates)
