"""Change points of one series, with Apache Otava's E-Divisive means.

Why Otava: it is the method behind MongoDB's and others' performance CI
(Hunter, Fleming et al. 2023), it needs few points per segment, it splits
in sliding windows and merges weak points back by a t test, so a long
series costs little; its analysis module needs only numpy and scipy.
MongoDB's signal-processing-algorithms holds the same E-Divisive, but
installs only on Python 3.11 and numpy < 2."""

from __future__ import annotations

import bisect
import math
import statistics
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

from sslperf.verdict import decide
from sslperf.errors import SslperfError
from sslperf.regressions.series import Point, Series

MIN_POINTS = 4        # fewer: no segment on either side of a change could hold two points
OUTLIER_WINDOW = 3    # points either side a point is judged against
OUTLIER_MADS = 4.0    # a point this many (scaled) median absolute deviations off its neighbours is set aside


@dataclass(frozen=True)
class DetectionSettings:
    max_pvalue: float = 0.001      # Otava's default: a change point needs p below this
    min_change: float = 0.01       # and a relative change of the mean at least this large
    window: int = 30               # Otava's sliding window, in observations


@dataclass
class ChangePoint:
    series: Series
    index: int                     # the first point of the new level
    previous_index: int            # the point before it (outliers set aside are skipped)
    before: float                  # the mean rate of the segment before, and after
    after: float
    low: float | None              # 95% interval of the change, as a ratio after/before (None: too few observations)
    high: float | None
    p: float
    settings: DetectionSettings = DetectionSettings()

    @property
    def point(self) -> Point:
        return self.series.points[self.index]

    @property
    def previous(self) -> Point:
        return self.series.points[self.previous_index]

    @property
    def ratio(self) -> float:
        return self.after / self.before

    @property
    def percent(self) -> float:
        return (self.ratio - 1) * 100

    @property
    def verdict(self) -> str:
        """By the one rule (a change point is significant and beyond min_change by Otava's test already)."""
        return decide(self.ratio, self.p, self.settings.min_change, self.settings.max_pvalue)

    @property
    def confidence(self) -> float:
        return 1 - self.p


def _otava():
    try:
        from otava import analysis
    except ImportError:
        raise SslperfError("Change-point detection needs Apache Otava, which is not installed here.",
                           hint="Run `bash scripts/bootstrap.sh` (it installs apache-otava's analysis), or "
                                "`pip install --no-deps apache-otava`.") from None
    return analysis


def outliers(values: list[float], min_change: float) -> set[int]:
    """Points far off their neighbours (a Hampel filter: the median of the
    points within OUTLIER_WINDOW either side, and their scaled median
    absolute deviation). A change of level moves a point's neighbours with
    it, so it is not taken for one; a run that went wrong alone is. The
    distance must also exceed twice `min_change`, or exact counts, whose
    deviation is nil, would lose every point that moved at all."""
    out = set()
    for i, value in enumerate(values):
        if i < OUTLIER_WINDOW or i >= len(values) - OUTLIER_WINDOW:
            continue            # near an end a new level and an outlier look alike: the newest run stays in
        window = values[i - OUTLIER_WINDOW:i + OUTLIER_WINDOW + 1]
        middle = statistics.median(window)
        spread = 1.4826 * statistics.median(abs(v - middle) for v in window)
        if abs(value - middle) > max(OUTLIER_MADS * spread, 2 * min_change * abs(middle)):
            out.add(i)
    return out


@contextmanager
def _equal_values_allowed():
    """Exact instruction counts make segments of (nearly) equal values, on which scipy's t test warns of precision
    loss on the user's terminal; its p and interval stand (a nil spread is handled where it matters)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Precision loss occurred", category=RuntimeWarning)
        yield


@_equal_values_allowed()
def find_change_points(series: Series, settings: DetectionSettings = DetectionSettings()) -> list[ChangePoint]:
    """The change points of `series`, oldest first (none for a series shorter than MIN_POINTS).

    Otava runs on the observations — each point's per-process rates, in
    order — so a point's own spread tells the test how noisy the series is
    (exact instruction counts: not at all). A change found inside a point's
    observations is moved to the nearer edge of that point."""
    kept = [i for i in range(len(series.points))
            if i not in outliers([p.value for p in series.points], settings.min_change)]
    if len(kept) < MIN_POINTS:
        return []
    observations, starts = [], []
    for i in kept:
        starts.append(len(observations))
        observations.extend(series.points[i].observations)
    found, _ = _otava().compute_change_points(observations, window_len=max(settings.window, MIN_POINTS),
                                              max_pvalue=settings.max_pvalue, min_magnitude=settings.min_change)
    at = sorted({_snap(int(cp.index), starts) for cp in found} - {0})        # positions in `kept`
    bounds = [0] + at + [len(kept)]
    out = []
    for number in range(1, len(bounds) - 1):
        left = observations[starts[bounds[number - 1]]:starts[bounds[number]]]
        right = observations[starts[bounds[number]]:(starts + [len(observations)])[bounds[number + 1]]]
        before, after = sum(left) / len(left), sum(right) / len(right)
        if before and abs(after / before - 1) < settings.min_change:
            continue                                   # snapping merged it into too small a move
        p = _analysis_p(left, right)
        low, high = _interval(left, right, before)
        out.append(ChangePoint(series, kept[bounds[number]], kept[bounds[number] - 1], before, after, low, high, p,
                               settings))
    return out


def _snap(index: int, starts: list[int]) -> int:
    """The point (its position among the kept ones) a change at observation `index` starts."""
    position = bisect.bisect_right(starts, index) - 1
    if starts[position] == index or position + 1 >= len(starts):
        return position
    return position if index - starts[position] < starts[position + 1] - index else position + 1


def _analysis_p(left: list[float], right: list[float]) -> float:
    """Otava's t test of the two segments (its p for the change point after snapping)."""
    return float(_otava().TTestSignificanceTester(1.0).compare(left, right).pvalue)


def _interval(left: list[float], right: list[float], before: float) -> tuple[float | None, float | None]:
    """95% Welch interval of mean(right) - mean(left), as ratios to mean(left)."""
    if len(left) < 2 or len(right) < 2 or not before:
        return None, None
    from scipy import stats

    result = stats.ttest_ind(right, left, equal_var=False)
    interval = result.confidence_interval(0.95)
    if math.isnan(interval.low) or math.isnan(interval.high):      # both segments without spread
        difference = sum(right) / len(right) - before
        return 1 + difference / before, 1 + difference / before
    return float(1 + interval.low / before), float(1 + interval.high / before)
