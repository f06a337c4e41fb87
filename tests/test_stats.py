import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats as sps

from sslperf import stats


def test_median_ci_uses_order_statistics():
    values = list(range(1, 11))            # n=10: ranks 2 and 9 cover 97.9% >= 95%
    assert stats.median_ci(values) == (2.0, 9.0)
    assert stats.median_ci([5, 1, 3]) == (1.0, 5.0)      # too few for 95%: min and max


@pytest.mark.parametrize("n", [6, 10, 20, 30, 100])
def test_median_ci_has_at_least_95_percent_coverage(n):
    low, high = stats.median_ci(np.arange(n))
    k = int(low) + 1                                          # 1-based rank of the lower bound
    coverage = 1 - 2 * sps.binom.cdf(k - 1, n, 0.5)
    assert coverage >= 0.95 and int(high) == n - k


def test_median_ranks_are_scipys_binomial_quantiles_for_every_n():
    """The ranks summed by hand are those scipy.stats' binomial gives (its ppf, stepped down where its cdf says)."""
    for confidence in (0.9, 0.95, 0.99):
        alpha = 1 - confidence
        for n in [*range(1, 1501), 4999, 20000, 123457]:
            k = int(sps.binom.ppf(alpha / 2, n, 0.5))
            if k < 1 or sps.binom.cdf(k - 1, n, 0.5) > alpha / 2:
                k = max(k - 1, 0)
            assert stats._median_rank(n, confidence) == k, (n, confidence)


def test_a_measuring_command_does_not_import_scipy_stats(sslperf_dirs):
    """scipy.stats takes 0.7 s to import: a run that tests nothing (one library) must not pay it for its CIs."""
    said = subprocess.run(
        [sys.executable, "-c", "import atexit, sys; atexit.register(lambda: print('scipy.stats' in sys.modules)); "
         "from sslperf.cli import main; main(sys.argv[1:])", "speed", "--lib", "system", "--case", "digest/sha256/64",
         "--time", "2", "--samples", "7", "--no-store"], capture_output=True, text=True, timeout=300)
    assert said.returncode == 0, said.stderr
    assert "±" in said.stdout and said.stdout.splitlines()[-1] == "False", said.stdout    # a CI, and no scipy


@pytest.mark.parametrize("df", [2, 3, 4.5, 9, 17.25, 29, 250.0])
def test_the_t_quantile_and_p_are_scipy_stats_t_s(df):
    for q in (0.9, 0.95, 0.975, 0.995):
        assert stats.t_quantile(q, df) == pytest.approx(sps.t.ppf(q, df), rel=1e-12)
    for t in (-7.0, -2.1, -0.3, 0.0, 0.3, 2.1, 7.0):
        assert stats.t_two_sided_p(t, df) == pytest.approx(2 * sps.t.sf(abs(t), df), rel=1e-12, abs=1e-300)


def test_judging_a_change_does_not_import_scipy_stats():
    """The verdict's ratio tests need only Student's t, which scipy.special gives without scipy.stats' 0.6 s."""
    said = subprocess.run(
        [sys.executable, "-c", "import sys; from sslperf import stats; "
         "w = stats.welch_ratio([0.0, 0.01, -0.01], [0.2, 0.21, 0.19]); p = stats.paired_ratio([0.1, 0.12, 0.09]); "
         "print(w.p < 0.05 < w.ratio, p.low < p.ratio < p.high, 'scipy.stats' in sys.modules)"],
        capture_output=True, text=True, timeout=120)
    assert said.returncode == 0, said.stderr
    assert said.stdout.split() == ["True", "True", "False"], said.stdout


def test_listing_runs_and_libraries_imports_no_numpy(tmp_path):
    """numpy is imported where a statistic is computed: `runs list` and `libs list` (the suite runs ~200 of
    them) start without its ~0.1 s."""
    probe = ("import runpy, sys; sys.argv = ['sslperf', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('sslperf', run_name='__main__')\n"
             "except SystemExit as exit:\n    assert not exit.code, exit.code\n"
             "print('numpy' in sys.modules, file=sys.stderr)")
    env = {**os.environ, "SSLPERF_DATA_DIR": str(tmp_path / "data"), "SSLPERF_CACHE_DIR": str(tmp_path / "cache")}
    for command in (["runs", "list"], ["libs", "list"]):
        said = subprocess.run([sys.executable, "-c", probe, *command], capture_output=True, text=True, timeout=120,
                              env=env)
        assert said.returncode == 0, said.stderr
        assert said.stderr.strip().splitlines()[-1] == "False", (command, said.stderr)
    # and a statistic still computes, importing it then
    assert stats.geometric_mean([1, 4, 16]) == pytest.approx(4)


def test_describe_gives_the_descstat_figures():
    s = stats.describe([0.050, 0.056, 0.064, 0.064, 0.060])
    assert (s.n, s.min, s.max) == (5, 0.050, 0.064)
    assert s.median == pytest.approx(0.060) and s.mean == pytest.approx(0.0588)
    assert s.sum == pytest.approx(0.294) and s.stdev == pytest.approx(np.std([0.050, 0.056, 0.064, 0.064, 0.060], ddof=1))
    assert s.ci_low <= s.median <= s.ci_high


def test_mann_whitney_and_geomean():
    assert stats.mann_whitney_p([1, 2, 3, 4, 5, 6], [11, 12, 13, 14, 15, 16]) < 0.01
    assert stats.mann_whitney_p([1, 2, 3], [1, 2, 3]) > 0.5
    assert stats.geometric_mean([1, 4, 16]) == pytest.approx(4)


def test_doubling_fit_recovers_the_factor():
    # RSA private operations scale roughly as bits^3: a doubling costs 8x.
    sizes = [2048, 3072, 4096]
    rates = [8000 * (2048 / s) ** 3 for s in sizes]
    fit = stats.doubling_fit(sizes, rates)
    assert fit.a == pytest.approx(8.0, rel=1e-6) and fit.r2 == pytest.approx(1.0)
    assert fit.predict(8192) == pytest.approx(8000 / 64, rel=1e-6)
    assert stats.doubling_fit([2048], [1.0]) is None
