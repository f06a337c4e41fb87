"""Comparison logic on constructed samples, and `sslperf compare` end to end
on real runs: with and without AES-NI is a real, significant difference."""

import json

import jsonschema
import pytest
from conftest import DATA, run_cli

from sslperf.compare import Column, compare
from sslperf.results import LibInfo, Measurement, Run


def run_with(lib: str, rates_by_case: dict[str, list[float]]) -> Run:
    run = Run.new({}, {})
    run.libs = [LibInfo(lib, "openssl", "1", lib, "default", "built")]
    for case, rates in rates_by_case.items():
        # ops per 1e9 ns = rate: one sample per rate
        run.measurements.append(Measurement(case, "kex", "key exchange", case.split("/")[1], "derive", None,
                                            "record", lib, "ok", None, "ops", 0, [int(r) for r in rates],
                                            [1_000_000_000] * len(rates), [1_000_000_000] * len(rates)))
    return run


def test_verdicts_need_significance_and_size():
    base = run_with("a", {"kex/x25519/derive": [1000, 1010, 990, 1005, 995],
                          "kex/x448/derive": [1000, 1010, 990, 1005, 995],
                          "kex/ecdh-p256/derive": [1000, 1010, 990, 1005, 995]})
    other = run_with("b", {"kex/x25519/derive": [800, 805, 795, 802, 798],      # 20% slower, clear
                           "kex/x448/derive": [1001, 1011, 991, 1006, 996],     # 0.1%: noise
                           "kex/ecdh-p256/derive": [1200, 1210, 1190, 1205, 1195]})
    result = compare([Column("a", base.id, "a"), Column("b", other.id, "b")], {base.id: base, other.id: other})
    verdicts = {row.case: row.changes[1].verdict for row in result.rows}
    assert verdicts == {"kex/x25519/derive": "slower", "kex/x448/derive": "~", "kex/ecdh-p256/derive": "faster"}
    assert [r.case for r, _, _ in result.regressions(5)] == ["kex/x25519/derive"]
    assert result.regressions(25) == []
    [geo] = [g for g in result.geomeans(result.rows)[1:]]
    assert abs(geo - (0.8 * 1.001 * 1.2) ** (1 / 3)) < 0.01


def test_single_reported_figures_get_no_verdict():
    base, other = run_with("a", {"kex/x25519/derive": [1000]}), run_with("b", {"kex/x25519/derive": [500]})
    result = compare([Column("a", base.id, "a"), Column("b", other.id, "b")], {base.id: base, other.id: other})
    assert result.rows[0].changes[1].verdict == "?" and result.regressions(5) == []


@pytest.mark.timing
def test_compare_cli_with_and_without_aesni(sslperf_dirs):
    args = ["speed", "--case", "cipher/aes-128-gcm/encrypt/16384", "--case", "kex/x25519/derive", "--time", "5",
            "--samples", "7", "--json"]
    plain = json.loads(run_cli(*args).stdout)
    masked = json.loads(run_cli(*args, "--cpu-mask", "no-aesni").stdout)
    assert masked["environment"]["mask"] == "no-aesni"
    result = run_cli("compare", plain["id"], masked["id"], "--threshold", "15", "--format", "json")
    assert result.returncode == 0, result.stderr
    rows = {r["case"]: r for r in json.loads(result.stdout)["rows"]}
    gcm = rows["cipher/aes-128-gcm/encrypt/16384"]["changes"][1]
    assert gcm["verdict"] == "slower" and gcm["percent"] < -40
    # X25519 uses no AES: the mask leaves it alone, so whatever drift separates the two
    # runs (this VM's can exceed 30%), GCM falls far more than X25519 does.
    assert gcm["ratio"] < 0.5 * rows["kex/x25519/derive"]["changes"][1]["ratio"]
    table = run_cli("compare", plain["id"], masked["id"], "--threshold", "15")
    assert "geomean" in table.stdout and "aes-128-gcm" in table.stdout
    gate = run_cli("compare", plain["id"], masked["id"], "--threshold", "15", "--fail-above", "20")
    assert gate.returncode == 4 and "regression:" in gate.stdout
    md = run_cli("compare", plain["id"], masked["id"], "--format", "md")
    assert md.stdout.count("| case |") >= 2


def test_runs_list_show_export_rm(sslperf_dirs):
    made = json.loads(run_cli("speed", "--case", "digest/sha256/64", "--time", "2", "--samples", "3",
                              "--json").stdout)
    [listed] = json.loads(run_cli("runs", "list", "--json").stdout)
    assert listed["id"] == made["id"] and listed["complete"] and listed["measurements"] == 1
    assert made["id"] in run_cli("runs", "list").stdout
    assert "sha256 64 B" in run_cli("runs", "show", made["id"][:15]).stdout
    csv_text = run_cli("runs", "export", "latest", "--format", "csv").stdout
    header, row = csv_text.splitlines()[:2]
    assert header.startswith("run,case,") and "digest/sha256/64" in row
    assert json.loads(run_cli("runs", "export", made["id"]).stdout)["id"] == made["id"]
    assert "| digest/sha256/64 |" in run_cli("runs", "export", made["id"], "--format", "md").stdout
    assert run_cli("runs", "rm", made["id"]).returncode == 0
    missing = run_cli("runs", "show", made["id"])
    assert missing.returncode == 2 and "No run" in missing.stderr


def run_with_processes(libs: dict[str, list[list[float]]]) -> Run:
    """One run whose libraries' samples come in rounds from several worker
    processes: libs[name][process] = that process's rates, round by round."""
    run = Run.new({}, {})
    run.libs = [LibInfo(name, "openssl", "1", name, "default", "built") for name in libs]
    for index, (name, processes) in enumerate(libs.items()):
        rates = [r for process in processes for r in process]
        pids = [1000 * (index + 1) + p for p, process in enumerate(processes) for _ in process]
        run.measurements.append(Measurement("kex/x25519/derive", "kex", "key exchange", "x25519", "derive", None,
                                            "record", name, "ok", None, "ops", 0, [int(r) for r in rates],
                                            [1_000_000_000] * len(rates), [1_000_000_000] * len(rates),
                                            figures={"process": pids}))
    return run


# Five processes of four rounds. Within a process the samples agree to 0.1%; between processes
# the level moves by a few percent (memory layout, the moment): what two processes of one library do.
LEVELS = [1000, 1030, 985, 1040, 1010]
JITTER = [0, 1, -1, 0]


def test_an_aa_run_is_not_called_a_change_though_its_samples_differ():
    # The same library as two columns; each column's processes sit at different levels.
    a = [[level + j for j in JITTER] for level in LEVELS]
    b = [[level + j for j in JITTER] for level in reversed(LEVELS)]
    run = run_with_processes({"a": a, "b": b})
    result = compare([Column("a", run.id, "a"), Column("b", run.id, "b")], {run.id: run}, threshold=0.0)
    change = result.rows[0].changes[1]
    assert change.method == "paired" and change.verdict == "~"
    assert change.low < 1 < change.high


def test_a_real_difference_is_called_with_its_interval():
    a = [[level + j for j in JITTER] for level in LEVELS]
    b = [[0.9 * (level + j) for j in JITTER] for level in LEVELS]          # 10% slower in every round
    run = run_with_processes({"a": a, "b": b})
    change = compare([Column("a", run.id, "a"), Column("b", run.id, "b")], {run.id: run}).rows[0].changes[1]
    assert change.method == "paired" and change.verdict == "slower"
    assert change.low < 0.9 < change.high and change.high < 0.98


def test_across_runs_the_test_rests_on_process_medians():
    a = [[level + j for j in JITTER] for level in LEVELS]
    run_a, run_b = run_with_processes({"x": a}), run_with_processes({"x": [[v + 5 for v in p] for p in a]})
    columns = [Column("x@1", run_a.id, "x"), Column("x@2", run_b.id, "x")]
    change = compare(columns, {run_a.id: run_a, run_b.id: run_b}, threshold=0.0).rows[0].changes[1]
    assert change.method == "processes" and change.verdict == "~" and change.low < 1.005 < change.high
    # Runs without process records fall back to Mann-Whitney on the samples.
    flat = compare(columns, {run_a.id: strip(run_a), run_b.id: strip(run_b)}, threshold=0.0).rows[0].changes[1]
    assert flat.method == "samples" and flat.low is None


def strip(run: Run) -> Run:
    for m in run.measurements:
        m.figures = None
    return run


def test_a_run_exported_for_bencher_is_valid_bmf_with_each_results_rate_and_cost(sslperf_dirs):
    cases = ["digest/sha256/16384", "sig/ecdsa-p256/sign", "tls/handshake/tls1.3/x25519/ecdsa-p256/shared"]
    made = json.loads(run_cli("speed", *[a for c in cases for a in ("--case", c)], "--lib", "system", "--time", "5",
                              "--samples", "3", "--processes", "2", "--json").stdout)
    exported = run_cli("runs", "export", made["id"], "--format", "bencher")
    assert exported.returncode == 0, exported.stderr
    bmf = json.loads(exported.stdout)
    # Bencher's published schema, and its documented limits on names.
    schema = json.loads((DATA / "bencher" / "bmf.schema.json").read_text())
    jsonschema.Draft7Validator(schema).validate(bmf)
    assert all(len(name) <= 1024 and all(len(slug) <= 64 for slug in measures) for name, measures in bmf.items())
    results = {(m["case"], m["lib"]): m for m in made["measurements"]}
    assert set(bmf) == {f"{case} [{lib}]" for case, lib in results}
    for (case, lib), m in results.items():
        measures = bmf[f"{case} [{lib}]"]
        wall = m["summary"]["wall"]
        rate = measures["bytes-per-second" if m["unit"] == "bytes" else "throughput"]
        assert rate == {"value": wall["median"], "lower_value": wall["ci_low"], "upper_value": wall["ci_high"]}
        per_op = m["bytes_per_op"] if m["unit"] == "bytes" else 1
        latency = measures["latency"]           # Bencher's own measure: nanoseconds per operation
        assert latency["value"] == pytest.approx(1e9 * per_op / wall["median"])
        assert latency["lower_value"] <= latency["value"] <= latency["upper_value"]


def _openapi_nullable_as_json_schema(node):
    """OpenAPI 3.0's `nullable: true` is JSON Schema's `null` type; everything else reads the same."""
    if isinstance(node, dict):
        node = {k: _openapi_nullable_as_json_schema(v) for k, v in node.items()}
        if node.pop("nullable", False) and "type" in node:
            node["type"] = [node["type"], "null"]
        return node
    return [_openapi_nullable_as_json_schema(v) for v in node] if isinstance(node, list) else node


def test_a_run_exported_for_conbench_is_a_valid_benchmark_result_per_case_with_every_sample(sslperf_dirs):
    cases = ["digest/sha256/16384", "sig/ecdsa-p256/sign"]
    made = json.loads(run_cli("speed", *[a for c in cases for a in ("--case", c)], "--lib", "system", "--time", "5",
                              "--samples", "3", "--processes", "2", "--json").stdout)
    commit = "0123456789abcdef0123456789abcdef01234567"
    exported = run_cli("runs", "export", made["id"], "--format", "conbench",
                       env={"CONBENCH_PROJECT_REPOSITORY": "https://github.com/openssl/openssl",
                            "CONBENCH_PROJECT_COMMIT": commit})
    assert exported.returncode == 0, exported.stderr
    results = json.loads(exported.stdout)
    # Conbench's published API schema of POST /api/benchmark-result (tests/data/conbench/README.md)
    document = _openapi_nullable_as_json_schema(
        json.loads((DATA / "conbench" / "benchmark-result-create.openapi.json").read_text()))
    validator = jsonschema.Draft7Validator({**document, "$ref": "#/components/schemas/BenchmarkResultCreate"})
    for result in results:
        validator.validate(result)
        assert ("machine_info" in result) != ("cluster_info" in result)      # Conbench's rule: exactly one
    measured = {(m["case"], m["lib"]): m for m in made["measurements"]}
    assert {(r["tags"]["name"], r["tags"]["library"]) for r in results} == set(measured)
    for r in results:
        m = measured[(r["tags"]["name"], r["tags"]["library"])]
        per_op = m["bytes_per_op"] if m["unit"] == "bytes" else 1
        stats = r["stats"]
        # every sample in the order measured, so Conbench makes its own statistics and change detection
        assert stats["data"] == pytest.approx([ops * per_op * 1e9 / ns for ops, ns in zip(m["ops"], m["wall_ns"])])
        assert stats["times"] == pytest.approx([ns / 1e9 for ns in m["wall_ns"]])
        assert stats["unit"] == ("B/s" if m["unit"] == "bytes" else "i/s") and stats["iterations"] == len(m["ops"]) >= 3
        assert r["run_id"] == made["id"] and r["github"] == {"repository": "https://github.com/openssl/openssl",
                                                             "commit": commit}
        assert r["machine_info"]["cpu_thread_count"] == made["environment"]["cpus"]
    # a commit Conbench could not place is refused before anything is written
    bad = run_cli("runs", "export", made["id"], "--format", "conbench", env={"CONBENCH_PROJECT_COMMIT": "abc123"})
    assert bad.returncode == 2 and bad.stdout == "" and "CONBENCH_PROJECT_REPOSITORY" in bad.stderr, bad.stderr
    assert "Traceback" not in bad.stderr and bad.stderr.count("\n") <= 2
