"""`sslperf offload bench`: the real harness (its library half runs
everywhere, its AF_ALG half where the kernel allows it) and the threshold
logic on a recording derived from the real `openssl speed` outputs of the
AF_ALG engine write-up (Marvell CESA, OpenSSL 1.1.1d; tests/data/offload)."""

import errno
import json
import socket
from pathlib import Path

import pytest

from conftest import run_cli
from sslperf.libs import installed
from sslperf.measure import harness_client
from sslperf.offload import bench as offload_bench

DATA = Path(__file__).parent / "data" / "offload"
RECORDING = DATA / "afalg-bench-seed004.jsonl"


def af_alg_errno() -> int:
    """0 if this kernel lets us open an AF_ALG socket, else why not."""
    try:
        socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0).close()
        return 0
    except OSError as exc:
        return exc.errno or errno.EINVAL


NO_AF_ALG = af_alg_errno()


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One private cache for the module, so the harness is compiled once."""
    path = tmp_path_factory.mktemp("afalg-cache")
    mp = pytest.MonkeyPatch()
    mp.setenv("SSLPERF_CACHE_DIR", str(path))
    mp.setenv("SSLPERF_DATA_DIR", str(tmp_path_factory.mktemp("afalg-data")))
    try:
        yield path
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def harness(cache):
    """The system library, its harness compiled in the module's cache."""
    lib = installed.find("system")
    harness_client.harness_binary(lib)
    return lib


def run_harness(lib, *args):
    done = harness_client.call(lib, "afalg-bench", *args, timeout=300, ok_codes=None)
    assert done.other == [], done.other          # nothing but JSON lines on stdout
    return done.returncode, done.lines


# ---- the real harness ----------------------------------------------------------

def test_harness_says_whether_af_alg_works_with_the_errno(harness):
    code, lines = run_harness(harness, "--seconds", "0.01", "--sizes", "64", "sha256")
    header = lines[0]
    assert header["type"] == "afalg-bench" and header["side"] == "both" and header["library"]
    if NO_AF_ALG:
        assert code == 3 and len(lines) == 1                # nothing to compare: stops after saying why
        assert header["af_alg"] is False and header["errno"] == NO_AF_ALG and header["reason"]
    else:
        assert code == 0 and header["af_alg"] is True
        assert {(l["side"], l["size"]) for l in lines[1:] if l["type"] == "afalg-result"} == {("kernel", 64),
                                                                                              ("user", 64)}


def test_harness_times_the_library_side_for_real(harness):
    code, lines = run_harness(harness, "--side", "user", "--seconds", "0.02", "--sizes", "16,100,4096")
    assert code == 0, lines
    results = [l for l in lines if l["type"] == "afalg-result"]
    assert {l["alg"] for l in results} == set(offload_bench.algorithm_names())
    for l in results:
        assert l["side"] == "user" and l["ops"] > 0 and l["wall_ns"] >= 20_000_000 and l["cpu_ns"] > 0
        assert 1e6 < l["size"] * l["ops"] * 1e9 / l["wall_ns"] < 1e12      # between 1 MB/s and 1 TB/s
    # CBC without padding cannot take 100 bytes; that size alone is n/a
    na = {(l["alg"], l["size"]) for l in lines if l["type"] == "afalg-na"}
    assert na == {("aes-128-cbc", 100), ("aes-256-cbc", 100)}


def test_harness_rejects_bad_arguments(harness):
    for args in (["--sizes", "0"], ["--sizes", "70000"], ["--side", "kernel"], ["rc4"]):
        code, lines = run_harness(harness, *args)
        assert code == 2 and lines == []


def test_cli_user_only_runs_here_and_the_json_reads_back(cache, tmp_path):
    result = run_cli("offload", "bench", "--user-only", "--seconds", "0.02", "--sizes", "64,4096",
                     "--alg", "aes-128-ctr", "--alg", "sha512", "--json")
    assert result.returncode == 0, result.stderr
    recording = tmp_path / "user.jsonl"
    recording.write_text(result.stdout)
    bench = offload_bench.parse_lines(recording.read_text())
    assert set(bench.algorithms) == {"aes-128-ctr", "sha512"} and not bench.measured_kernel
    assert all(set(a.user) == {64, 4096} for a in bench.algorithms.values())
    assert bench.rounds == 5 and all(x.n == 5 for a in bench.algorithms.values() for x in a.user.values())
    shown = run_cli("offload", "bench", "--from", recording)
    assert shown.returncode == 0 and "library side only" in shown.stdout
    no_config = run_cli("offload", "bench", "--from", recording, "--config-out", tmp_path / "x.cnf")
    assert no_config.returncode == 2 and "no thresholds" in no_config.stderr


def test_cli_rounds_are_fresh_runs_each_a_sample(cache, tmp_path):
    """--rounds 3: three harness runs of --seconds / 3 each, every line tagged
    with its round; per size three samples, shown as a median with its CI."""
    result = run_cli("offload", "bench", "--user-only", "--seconds", "0.09", "--rounds", "3", "--sizes", "64,4096",
                     "--alg", "aes-128-ctr", "--alg", "sha256", "--json")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(l) for l in result.stdout.splitlines()]
    headers = [l for l in lines if l["type"] == "afalg-bench"]
    assert [h["round"] for h in headers] == [1, 2, 3] and all(h["seconds"] == 0.03 for h in headers)
    results = [l for l in lines if l["type"] == "afalg-result"]
    # each round times the algorithms in the same order, and only its share of the time
    orders = [[(l["alg"], l["size"]) for l in results if l["round"] == r] for r in (1, 2, 3)]
    assert orders[0] == orders[1] == orders[2] and len(orders[0]) == 4
    assert all(l["wall_ns"] >= 30_000_000 for l in results)
    recording = tmp_path / "rounds.jsonl"
    recording.write_text(result.stdout)
    bench = offload_bench.parse_lines(recording.read_text())
    assert bench.rounds == 3 and bench.seconds == 0.03
    for alg in bench.algorithms.values():
        for samples in alg.user.values():
            assert sorted(t.round for t in samples.timings) == [1, 2, 3]
            wall = samples.wall
            assert wall.n == 3 and wall.ci_low == min(t.wall_rate for t in samples.timings) <= wall.median
            assert wall.median <= wall.ci_high == max(t.wall_rate for t in samples.timings)
    analysis = lines[-1]
    assert analysis["type"] == "afalg-analysis" and analysis["rounds"] == 3
    size = analysis["algorithms"][0]["sizes"][0]
    assert size["user_rounds"] == 3 and size["user_wall_ci"][0] <= size["user_wall_Bps"] <= size["user_wall_ci"][1]
    shown = run_cli("offload", "bench", "--from", recording)
    assert shown.returncode == 0, shown.stderr
    out = " ".join(shown.stdout.split())
    assert "median ±95% CI over 3 rounds" in out and out.count("±") >= 8
    assert "3 rounds of 0.03 s" in out and "[min, max]" in out and "75% confidence" in out
    # read back and written out again, the rounds stay
    again = run_cli("offload", "bench", "--from", recording, "--json")
    assert again.stdout.count('"round": 3') == 5 and again.stdout.count('"afalg-analysis"') == 1


def test_the_first_round_without_af_alg_is_the_last(harness):
    if NO_AF_ALG == 0:
        pytest.skip("AF_ALG works here")
    lines = [json.loads(l) for l in offload_bench.run_harness(harness, ["sha256"], [64], 0.03, rounds=3).splitlines()]
    assert [l["round"] for l in lines if l["type"] == "afalg-bench"] == [1]


def test_bad_rounds_are_refused(sslperf_dirs):
    for args in (["--rounds", "0"], ["--rounds", "-2"], ["--rounds", "x"],
                 ["--seconds", "0.01", "--rounds", "20"], ["--from", RECORDING, "--rounds", "3"]):
        result = run_cli("offload", "bench", *args)
        assert result.returncode == 2 and "--rounds" in result.stderr and "Traceback" not in result.stderr, args


@pytest.mark.skipif(NO_AF_ALG == 0, reason="AF_ALG works here; the unavailable path cannot be seen")
def test_cli_says_plainly_that_af_alg_is_missing(cache):
    result = run_cli("offload", "bench", "--seconds", "0.01")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    message = " ".join(result.stderr.split())
    assert "AF_ALG is not available here" in message and errno.errorcode[NO_AF_ALG] in message
    assert "containers and VMs" in message and "offload scan" in message and "--from" in message


# ---- a real AF_ALG socket ---------------------------------------------------------

@pytest.mark.skipif(NO_AF_ALG != 0, reason=f"socket(AF_ALG) fails here ({errno.errorcode.get(NO_AF_ALG)}): "
                                           "this kernel or sandbox offers no AF_ALG")
def test_real_af_alg_bench(cache, tmp_path):
    config = tmp_path / "afalg.cnf"
    result = run_cli("offload", "bench", "--seconds", "0.05", "--sizes", "64,4096", "--json", "--config-out", config)
    assert result.returncode == 0, result.stderr
    bench = offload_bench.parse_lines(result.stdout)
    # every algorithm the kernel offers gave the library's bytes (checked before timing) and was timed
    assert not [a for a in bench.algorithms.values() if a.status == "error"]
    measured = [a for a in bench.algorithms.values() if a.status == "ok"]
    assert measured and all(set(a.kernel) == set(a.user) == {64, 4096} for a in measured)
    assert all(x.n == 5 for a in measured for x in [*a.kernel.values(), *a.user.values()])   # --rounds 5
    assert all(t.sys_ns is not None and t.cpu_ns > 0 for a in measured for x in a.kernel.values() for t in x.timings)
    assert "CIPHERS = " in config.read_text()


# ---- the logic, on the AF_ALG engine write-up's real measurements -------------------

def test_recording_is_derived_from_seed_004s_tables():
    def table(name):
        rows = (DATA / name).read_text().splitlines()
        return dict(zip(map(int, rows[2].split()[1::2]), (float(v.rstrip("k")) for v in rows[3].split()[1:])))

    printed = {"kernel": table("afalg-no-fallback.txt"), "user": table("software.txt")}
    lines = [json.loads(l) for l in RECORDING.read_text().splitlines()]
    results = [l for l in lines if l["type"] == "afalg-result"]
    assert len(results) == 12
    for l in results:
        assert l["wall_ns"] == 3_000_000_000 and l["cpu_ns"] is None
        assert l["ops"] == round(printed[l["side"]][l["size"]] * 1000 * 3 / l["size"])


def test_bench_from_the_recording_agrees_with_offload_config(sslperf_dirs, tmp_path):
    config = tmp_path / "afalg.cnf"
    result = run_cli("offload", "bench", "--from", RECORDING, "--config-out", config)
    assert result.returncode == 0, result.stderr
    assert "the kernel wins from 1120 bytes" in result.stdout and "mv-cbc-aes" in result.stdout
    written = config.read_text()
    from_speed = run_cli("offload", "config", DATA / "afalg-no-fallback.txt", DATA / "software.txt").stdout
    [threshold] = [l for l in written.splitlines() if l.startswith("CIPHERS = ")]
    assert threshold == "CIPHERS = AES-256-CBC:1120" and threshold in from_speed
    assert "[afalg_section]" in written and "OpenSSL 1.1.1d" in written
    devcrypto = run_cli("offload", "bench", "--from", RECORDING, "--engine", "devcrypto", "--config-out", "-")
    assert "CIPHERS = NONE" in devcrypto.stdout and "cannot switch by size" in devcrypto.stdout
    as_json = run_cli("offload", "bench", "--from", RECORDING, "--json")
    analysis = json.loads(as_json.stdout.splitlines()[-1])
    [alg] = analysis["algorithms"]
    assert alg["wall_threshold"] == 1120 and alg["cpu_threshold"] is None and alg["driver"] == "mv-cbc-aes"


def seed004_in_rounds(factor, rounds=5):
    """Seed 004's recording as `rounds` rounds, each figure scaled by
    factor(round, side, size) (constructed, for the logic only): each round
    its header, its result lines, a "round" field on each."""
    lines = [json.loads(l) for l in RECORDING.read_text().splitlines()]
    out = [l for l in lines if l["type"] == "afalg-driver"]
    for r in range(1, rounds + 1):
        for l in lines:
            if l["type"] == "afalg-bench":
                out.append({**l, "round": r})
            elif l["type"] == "afalg-result":
                out.append({**l, "round": r, "ops": round(l["ops"] * factor(r, l["side"], l["size"]))})
    return "".join(json.dumps(l) + "\n" for l in out)


# per round, a few percent either way; round 3 is the recording itself, so the medians are seed 004's figures
TIGHT = {1: 0.99, 2: 1.005, 3: 1.0, 4: 0.995, 5: 1.01}
WIDE = {1: 0.97, 2: 1.015, 3: 1.0, 4: 0.985, 5: 1.03}


def test_rounds_with_tight_cis_give_seed_004s_threshold(sslperf_dirs, tmp_path):
    """At 1 KiB the kernel is 2.8 % slower; with ±1 % between rounds the CIs
    are apart there, so the threshold is interpolated as with one round."""
    recording = tmp_path / "tight.jsonl"
    recording.write_text(seed004_in_rounds(lambda r, side, size: TIGHT[r] if side == "kernel" else TIGHT[6 - r]))
    bench = offload_bench.parse_lines(recording.read_text())
    [alg] = bench.algorithms.values()
    assert bench.rounds == 5 and all(x.n == 5 for x in alg.kernel.values())
    assert alg.wall_threshold == alg.wall_median_threshold == 1120 and alg.wall_overlap == []
    result = run_cli("offload", "bench", "--from", recording, "--config-out", "-")
    assert result.returncode == 0, result.stderr
    assert "the kernel wins from 1120 bytes" in result.stdout and "CIPHERS = AES-256-CBC:1120" in result.stdout
    assert "5 rounds of 3 s per size and side" in result.stdout and "94% confidence" in " ".join(result.stdout.split())
    assert "≈" not in result.stdout


def test_overlapping_cis_at_the_boundary_are_not_clearly_a_win(sslperf_dirs, tmp_path):
    """±3 % between rounds: at 1 KiB the CIs overlap (the kernel's
    [43.4, 46.1] MB/s, the library's [44.7, 47.4]), so the kernel is not
    clearly slower there and nothing below 8 KiB, where it clearly wins,
    is claimed; the medians alone would say 1120."""
    recording = tmp_path / "wide.jsonl"
    recording.write_text(seed004_in_rounds(lambda r, side, size: WIDE[r] if side == "kernel" else WIDE[6 - r]))
    bench = offload_bench.parse_lines(recording.read_text())
    [alg] = bench.algorithms.values()
    assert alg.wall_overlap == [1024] and alg.wall_median_threshold == 1120 and alg.wall_threshold == 8192
    assert offload_bench.verdict(alg) == ("the kernel wins from 8192 bytes (the medians cross at 1120 bytes, but the "
                                          "95% CIs overlap at 1024 bytes: not clearly below 8192)")
    result = run_cli("offload", "bench", "--from", recording, "--config-out", "-")
    assert result.returncode == 0, result.stderr
    assert "CIPHERS = AES-256-CBC:8192" in result.stdout and "0.97x ≈" in result.stdout
    analysis = json.loads(run_cli("offload", "bench", "--from", recording, "--json").stdout.splitlines()[-1])
    [row] = [s for s in analysis["algorithms"][0]["sizes"] if s["size"] == 1024]
    assert row["wall_faster"] == "not clearly" and row["kernel_rounds"] == row["user_rounds"] == 5

    # the kernel 3 % ahead at 8 and 16 KiB, ±3 % between rounds: ahead on the medians, never clearly
    def close(r, side, size):
        if side == "user":
            return WIDE[6 - r] * (89.817088 / 46.257493 / 1.03 if size == 8192 else
                                  96.234155 / 46.273877 / 1.03 if size == 16384 else 1)
        return WIDE[r]
    recording.write_text(seed004_in_rounds(close))
    [alg] = offload_bench.parse_lines(recording.read_text()).algorithms.values()
    assert alg.wall_threshold is None and alg.wall_median_threshold is not None and 8192 in alg.wall_overlap
    assert offload_bench.verdict(alg).startswith(f"the medians cross at {alg.wall_median_threshold} bytes, but")
    assert "not clearly; left to the library" in offload_bench.verdict(alg)
    config = run_cli("offload", "bench", "--from", recording, "--config-out", "-").stdout
    assert "CIPHERS = NONE" in config and "# AES-256-CBC: the medians cross" in config


def test_nine_rounds_give_an_order_statistic_ci(sslperf_dirs):
    """From 9 rounds the interval is no longer [min, max]: one outlying
    round at 1 KiB does not decide the verdict."""
    factors = {1: 0.99, 2: 1.0, 3: 1.01, 4: 0.995, 5: 1.005, 6: 0.998, 7: 1.002, 8: 1.004, 9: 0.996}
    def scale(r, side, size):
        if side == "kernel" and size == 1024 and r == 9:
            return 1.06                                      # one round where the kernel looks faster at 1 KiB
        return factors[r] if side == "kernel" else factors[10 - r]
    [alg] = offload_bench.parse_lines(seed004_in_rounds(scale, rounds=9)).algorithms.values()
    wall = alg.kernel[1024].wall
    assert wall.n == 9 and wall.ci_high < wall.max           # the outlier is outside the interval
    assert alg.wall_threshold == 1120 and alg.wall_overlap == []


def lines_for(alg, kind, kernel_name, kernel, user, cpu=None):
    """Constructed afalg-result lines (for the logic only, not measurements):
    `kernel`/`user` map size -> bytes/s over one second; `cpu` maps size ->
    the kernel's CPU seconds in that second."""
    out = []
    for size in kernel:
        for side, rates in (("kernel", kernel), ("user", user)):
            cpu_ns = int((cpu or {}).get(size, 1.0) * 1e9) if side == "kernel" else 1_000_000_000
            out.append({"type": "afalg-result", "alg": alg, "kernel_name": kernel_name, "kind": kind, "side": side,
                        "size": size, "ops": int(rates[size] / size), "wall_ns": 1_000_000_000, "cpu_ns": cpu_ns,
                        "user_ns": cpu_ns // 10, "sys_ns": cpu_ns - cpu_ns // 10})
    return out


def test_thresholds_verdicts_and_config_on_constructed_lines():
    header = {"type": "afalg-bench", "library": "constructed", "side": "both", "seconds": 1, "af_alg": True}
    lines = [header, {"type": "afalg-driver", "kernel_name": "ctr(aes)", "driver": "ctr-aes-hw", "kind": "hardware",
                      "async": True}]
    lines += lines_for("aes-128-cbc", "skcipher", "cbc(aes)", {64: 1e6, 4096: 2e8}, {64: 1e8, 4096: 1e8})
    lines += lines_for("aes-256-cbc", "skcipher", "cbc(aes)", {64: 1e6, 4096: 5e7}, {64: 1e8, 4096: 1e8})
    # slower on the clock, but the process sleeps while the async engine works: 0.1 CPU s per second at 4 KiB
    lines += lines_for("aes-128-ctr", "skcipher", "ctr(aes)", {64: 1e6, 4096: 5e7}, {64: 1e8, 4096: 1e8},
                       cpu={64: 1.0, 4096: 0.1})
    lines += lines_for("aes-128-gcm", "aead", "gcm(aes)", {64: 2e8, 4096: 3e8}, {64: 1e8, 4096: 1e8})
    lines += lines_for("sha256", "hash", "sha256", {64: 2e8, 4096: 3e8}, {64: 1e8, 4096: 1e8})
    lines += lines_for("sha1", "hash", "sha1", {64: 1e6, 4096: 3e8}, {64: 1e8, 4096: 1e8})
    lines.append({"type": "afalg-na", "alg": "sha512", "kernel_name": "sha512", "side": "kernel", "errno": 2,
                  "reason": "the kernel offers no hash sha512 (bind: No such file or directory)"})
    lines.append({"type": "afalg-error", "alg": "aes-256-ctr", "kernel_name": "ctr(aes)", "side": "kernel",
                  "size": 64, "reason": "the kernel's output differs from the library's"})
    bench = offload_bench.parse_lines("\n".join(json.dumps(l) for l in lines))
    algs = bench.algorithms
    assert 64 < algs["aes-128-cbc"].wall_threshold <= 4096
    assert algs["aes-256-cbc"].wall_threshold is None and algs["aes-256-cbc"].cpu_threshold is None
    ctr = algs["aes-128-ctr"]
    assert ctr.wall_threshold is None and 64 < ctr.cpu_threshold <= 4096
    assert "only on CPU freed" in offload_bench.verdict(ctr) and "asynchronous" in offload_bench.verdict(ctr)
    assert algs["sha256"].wall_threshold == 64 and 64 < algs["sha1"].wall_threshold <= 4096
    assert algs["sha512"].status == "na" and offload_bench.verdict(algs["sha512"]).startswith("n/a")
    assert algs["aes-256-ctr"].status == "error"

    config = offload_bench.engine_section(bench, "afalg")
    settings = dict(l.split(" = ", 1) for l in config.splitlines() if " = " in l and not l.startswith("#"))
    assert settings["CIPHERS"] == f"AES-128-CBC:{algs['aes-128-cbc'].wall_threshold}"   # nothing for the losers
    assert settings["DIGESTS"] == "SHA256"               # SHA1 wins only from a size; digests have no threshold
    assert settings["default_algorithms"] == "CIPHERS, DIGESTS"
    assert "# AES-256-CBC: the kernel driver never wins" in config
    assert "# AES-128-CTR: frees CPU from" in config and "neither engine offloads AEADs" in config
    assert "SHA1: wins only from" in config and "SHA512" not in config and "AES-256-CTR" not in config


def test_a_bad_recording_is_named(sslperf_dirs, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(RECORDING.read_text().splitlines()[0] + "\nnot json\n")
    result = run_cli("offload", "bench", "--from", bad)
    assert result.returncode == 2 and "Line 2" in result.stderr and "Traceback" not in result.stderr
    headless = tmp_path / "headless.jsonl"
    headless.write_text("\n".join(RECORDING.read_text().splitlines()[2:]))
    result = run_cli("offload", "bench", "--from", headless)
    assert result.returncode == 2 and "no afalg-bench header" in result.stderr
    unavailable = tmp_path / "unavailable.jsonl"
    unavailable.write_text('{"type":"afalg-bench","library":"x","side":"both","af_alg":false,"errno":97,'
                           '"reason":"Address family not supported by protocol"}\n')
    result = run_cli("offload", "bench", "--from", unavailable)
    assert result.returncode == 2 and "EAFNOSUPPORT" in result.stderr
    lines = RECORDING.read_text().splitlines()
    for name, text, said in (
            ("twice", "\n".join([*lines, lines[2]]), "a second kernel result for aes-256-cbc at 16 bytes in round 1"),
            ("round0", "\n".join([lines[0], lines[2][:-1] + ', "round": 0}']), "round must be a whole number"),
            ("mixed", "\n".join([*lines, lines[0].replace("1.1.1d", "3.0.0")[:-1] + ', "round": 2}']),
             "round 2 is of")):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(text)
        result = run_cli("offload", "bench", "--from", path)
        message = " ".join(result.stderr.split())
        assert result.returncode == 2 and said in message and "Line " in message, (name, message)
        assert "Traceback" not in result.stderr
