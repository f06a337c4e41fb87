"""Statistics every output reads: descriptive figures (descstat, as in the
curl regression report: n, min, max, mean, median, p95, p99, stdev, sum), a
distribution-free 95% confidence interval for the median, and the A-vs-B
test."""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

# numpy is imported by the functions that compute: a command that computes no statistic (`runs list`, `import`,
# `libs`) starts ~0.1 s sooner without it.
if TYPE_CHECKING:
    import numpy as np


def _scipy_stats():
    """scipy.stats, imported at first use: it takes about 0.6 s, which a
    command that computes no statistic (`runs list`, `libs`) should not pay."""
    from scipy import stats

    return stats


def t_quantile(q: float, df: float) -> float:
    """Student's t quantile, as scipy.stats.t.ppf computes it (scipy.special's
    stdtrit): scipy.special imports in ~0.15 s, scipy.stats in ~0.6 s, and
    every command that judges a change needs only this and t_two_sided_p."""
    from scipy import special

    return float(special.stdtrit(df, q))


def t_two_sided_p(t: float, df: float) -> float:
    """The two-sided p of a t statistic: 2 * scipy.stats.t.sf(|t|, df), by scipy.special's stdtr."""
    from scipy import special

    return float(2 * special.stdtr(df, -abs(t)))


# A median whose 95% CI is wider than ±5% is called noisy (warnings, highlighted cells).
NOISY_CI = 0.05


@dataclass(frozen=True)
class Summary:
    n: int
    min: float
    max: float
    mean: float
    median: float
    p95: float
    p99: float
    stdev: float
    sum: float
    ci_low: float
    ci_high: float

    @property
    def ci_half_width(self) -> float:
        """Half the 95% CI of the median, relative to the median (0.01 = ±1%)."""
        if not self.median:
            return math.inf
        return (self.ci_high - self.ci_low) / 2 / abs(self.median)

    def as_dict(self) -> dict:
        return {**asdict(self), "ci_half_width": self.ci_half_width}


def median_ci(values: list[float] | np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """Order-statistic interval for the median: the ranks come from the
    binomial(n, 1/2) distribution, so no shape is assumed. With fewer than 6
    values no rank pair reaches 95%, and the interval is [min, max]."""
    import numpy as np
    ordered = np.sort(np.asarray(values, dtype=float))
    n = len(ordered)
    if n == 0:
        return math.nan, math.nan
    k = _median_rank(n, confidence)
    if k < 1:
        return float(ordered[0]), float(ordered[-1])
    return float(ordered[k - 1]), float(ordered[n - k])


@functools.lru_cache(maxsize=4096)
def _median_rank(n: int, confidence: float) -> int:
    """The rank k of median_ci's interval for n values (0: none reaches the
    confidence), computed once per n: a table of 80,000 results asks for the
    same few n 80,000 times. The binomial(n, 1/2) tail is summed here rather
    than asked of scipy.stats, whose import (0.7 s) every measuring command
    would otherwise pay for this one number."""
    alpha = 1 - confidence
    # Largest k with P(B < k) <= alpha/2 (so [x_(k), x_(n-k+1)] covers >= confidence): the smallest k whose
    # P(B <= k) reaches alpha/2. Terms C(n, i) / 2^n in logs (they underflow for large n); those below the
    # smallest float add nothing a 2.5% tail could notice.
    log_term, below = -n * math.log(2), 0.0
    for k in range(n + 1):
        below += math.exp(log_term)
        if below >= alpha / 2:
            return k
        log_term += math.log((n - k) / (k + 1))
    return 0


def describe(values: list[float] | np.ndarray) -> Summary:
    import numpy as np
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ValueError("no values to describe")
    if data.size == 1:              # one figure (an imported rate) is every statistic of itself, exactly
        value = float(data[0])
        return Summary(n=1, min=value, max=value, mean=value, median=value, p95=value, p99=value, stdev=0.0,
                       sum=value, ci_low=value, ci_high=value)
    low, high = median_ci(data)
    return Summary(
        n=int(data.size),
        min=float(data.min()),
        max=float(data.max()),
        mean=float(data.mean()),
        median=float(np.median(data)),
        p95=float(np.percentile(data, 95)),
        p99=float(np.percentile(data, 99)),
        stdev=float(data.std(ddof=1)) if data.size > 1 else 0.0,
        sum=float(data.sum()),
        ci_low=low,
        ci_high=high,
    )


def mann_whitney_p(a: list[float], b: list[float]) -> float:
    """Two-sided p-value that a and b come from the same distribution."""
    if len(a) < 2 or len(b) < 2:
        return 1.0
    return float(_scipy_stats().mannwhitneyu(a, b, alternative="two-sided").pvalue)


@dataclass(frozen=True)
class RatioTest:
    """B / A with its 95% CI and the two-sided p that the true ratio is 1."""
    ratio: float
    low: float
    high: float
    p: float
    n: int              # independent units the test rests on (processes)


def paired_ratio(log_ratios: list[float], confidence: float = 0.95) -> RatioTest | None:
    """One-sample t on log ratios (one per independent unit): the geometric
    mean ratio and its t interval. None with fewer than 3 units."""
    import numpy as np
    data = np.asarray(log_ratios, dtype=float)
    if data.size < 3:
        return None
    mean, se = float(data.mean()), float(data.std(ddof=1) / math.sqrt(data.size))
    if se == 0:
        return RatioTest(math.exp(mean), math.exp(mean), math.exp(mean), 0.0 if mean else 1.0, int(data.size))
    t = t_quantile(0.5 + confidence / 2, data.size - 1)
    p = t_two_sided_p(mean / se, data.size - 1)
    return RatioTest(math.exp(mean), math.exp(mean - t * se), math.exp(mean + t * se), p, int(data.size))


def welch_ratio(log_a: list[float], log_b: list[float], confidence: float = 0.95) -> RatioTest | None:
    """Welch's t on the logs of two independent sets of units (per-process
    medians): the ratio of geometric means and its interval. None with fewer
    than 3 units on a side."""
    import numpy as np
    a, b = np.asarray(log_a, dtype=float), np.asarray(log_b, dtype=float)
    if a.size < 3 or b.size < 3:
        return None
    diff = float(b.mean() - a.mean())
    va, vb = float(a.var(ddof=1)) / a.size, float(b.var(ddof=1)) / b.size
    se = math.sqrt(va + vb)
    if se == 0:
        return RatioTest(math.exp(diff), math.exp(diff), math.exp(diff), 0.0 if diff else 1.0, int(min(a.size, b.size)))
    df = (va + vb) ** 2 / ((va ** 2 / (a.size - 1) if va else 0) + (vb ** 2 / (b.size - 1) if vb else 0) or 1e-300)
    t = t_quantile(0.5 + confidence / 2, df)
    p = t_two_sided_p(diff / se, df)
    return RatioTest(math.exp(diff), math.exp(diff - t * se), math.exp(diff + t * se), p, int(min(a.size, b.size)))


def geometric_mean(values: list[float]) -> float:
    import numpy as np
    positive = [v for v in values if v > 0]
    return float(np.exp(np.mean(np.log(positive)))) if positive else math.nan


@dataclass(frozen=True)
class ScalingFit:
    """rate ≈ c · size^(-log2 a): each doubling of the key size divides the
    rate by `a` (the figure of merit of the `openssl speed` plotting write-up)."""

    a: float
    c: float
    r2: float

    def predict(self, size: float) -> float:
        return self.c * size ** (-math.log2(self.a))


def doubling_fit(sizes: list[float], rates: list[float]) -> ScalingFit | None:
    """Least-squares fit of log2(rate) on log2(size); None with fewer than two sizes."""
    import numpy as np
    points = [(s, r) for s, r in zip(sizes, rates) if s > 0 and r > 0]
    if len({s for s, _ in points}) < 2:
        return None
    x = np.log2([s for s, _ in points])
    y = np.log2([r for _, r in points])
    slope, intercept = np.polyfit(x, y, 1)
    fitted = slope * x + intercept
    total = float(((y - y.mean()) ** 2).sum())
    r2 = 1 - float(((y - fitted) ** 2).sum()) / total if total else 1.0
    return ScalingFit(a=float(2 ** (-slope)), c=float(2 ** intercept), r2=r2)
