"""Comparison logic on constructed samples, and `sslperf compare` end to end
on real runs: with and without AES-NI is a real, significant difference."""

import json

from conftest import run_cli
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
