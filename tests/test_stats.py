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
