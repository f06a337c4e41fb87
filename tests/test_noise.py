"""The noise floor: what an A/A experiment's runs give per family and kind,
that `compare` never calls a change smaller than it, and `sslperf noise`
end to end on the system library."""

import json

from conftest import run_cli

from sslperf.compare import Column, compare
from sslperf.noise.floor import TWIN, floors
from sslperf.results import LibInfo, Measurement, Run

JITTER = [0, 1, -1, 0]


def aa_run(levels_a, levels_b, lib="x") -> Run:
    """One run with `lib` and its twin; per process a level, four rounds each."""
    run = Run.new({}, {"host": "h"})
    run.libs = [LibInfo(name, "openssl", "1", name, "default", "built") for name in (lib, lib + TWIN)]
    for index, (name, levels) in enumerate(((lib, levels_a), (lib + TWIN, levels_b))):
        rates = [level + j for level in levels for j in JITTER]
        pids = [100 * (index + 1) + p for p, _ in enumerate(levels) for _ in JITTER]
        run.measurements.append(Measurement("kex/x25519/derive", "kex", "key exchange", "x25519", "derive", None,
                                            "record", name, "ok", None, "ops", 0, rates, [10 ** 9] * len(rates),
                                            [10 ** 9] * len(rates), figures={"process": pids}))
    return run


def test_floors_are_the_largest_change_seen_within_and_across_runs():
    first = aa_run([1000, 1010, 990, 1005, 995], [1002, 1012, 992, 1007, 997])        # +0.2% within
    second = aa_run([1030, 1040, 1020, 1035, 1025], [1030, 1040, 1020, 1035, 1025])    # +3.0% across
    got = {(f.kind, f.family): f for f in floors([first, second], "x")}
    assert abs(got[("within", "kex")].floor - 0.002) < 0.001
    assert abs(got[("across", "kex")].floor - 0.030) < 0.002 and got[("across", "kex")].comparisons == 1


def test_compare_calls_no_change_below_the_floor():
    first = aa_run([1000, 1010, 990, 1005, 995], [1002, 1012, 992, 1007, 997])
    second = aa_run([1030, 1040, 1020, 1035, 1025], [1030, 1040, 1020, 1035, 1025])
    columns = [Column("1", first.id, "x"), Column("2", second.id, "x")]
    runs = {first.id: first, second.id: second}
    plain = compare(columns, runs).rows[0].changes[1]
    assert plain.verdict == "faster" and plain.floor is None           # +3% > 2%, and significant
    floored = compare(columns, runs, floors={("across", "kex"): 0.05}).rows[0].changes[1]
    assert floored.verdict == "~" and floored.threshold == 0.05 and floored.floor == 0.05


def test_noise_command_stores_a_floor_that_compare_uses(sslperf_dirs):
    result = run_cli("noise", "--runs", "2", "--filter", "kex/x25519", "--processes", "3", "--json")
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    kinds = {(f["kind"], f["family"]) for f in got["floors"]}
    assert kinds == {("within", "kex"), ("across", "kex")}
    a, b = got["runs"]
    table = run_cli("compare", f"{a}:system", f"{b}:system")
    assert table.returncode == 0, table.stderr
    assert "noise floor of" in table.stdout and "applies" in table.stdout


def test_one_burst_does_not_set_the_floor():
    """21 cases: 20 move by about 1% between two runs, one by 30% (a burst of
    interference). The floor is the 95th percentile, not that one outlier."""
    def run_of(levels_by_case):
        run = Run.new({}, {"host": "h"})
        run.libs = [LibInfo(n, "openssl", "1", n, "default", "built") for n in ("x", "x" + TWIN)]
        for case, level in levels_by_case.items():
            for index, name in enumerate(("x", "x" + TWIN)):
                rates = [level + j for _ in range(5) for j in JITTER]
                pids = [100 * (index + 1) + p for p in range(5) for _ in JITTER]
                run.measurements.append(Measurement(case, "kex", "key exchange", case, "derive", None, "record",
                                                    name, "ok", None, "ops", 0, rates, [10 ** 9] * len(rates),
                                                    [10 ** 9] * len(rates), figures={"process": pids}))
        return run
    cases = [f"kex/c{i}/derive" for i in range(21)]
    first = run_of({c: 1000 for c in cases})
    second = run_of({c: (1300 if i == 0 else 1010) for i, c in enumerate(cases)})
    [across] = [f for f in floors([first, second], "x") if f.kind == "across"]
    assert across.comparisons == 21 and abs(across.largest - 0.30) < 0.01
    assert abs(across.floor - 0.01) < 0.002
