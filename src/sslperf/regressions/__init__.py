"""`sslperf regressions`: change points in the stored history.

A series is one case of one library line (flavor, variant, CPU mask) on
one host, measured with one metric: its points are the stored results,
ordered as the history page orders them — by release, then by the commits
a bisect or `track` built, then by date (nightly runs of one library).
Apache Otava's E-Divisive means (Fleming et al., "Hunter: Using Change
Point Detection to Hunt for Performance Regressions", ICPE 2023) finds the
points where the series' level changed; each is reported with the size of
the change between the neighbouring segments, its 95% interval and p."""

from sslperf.regressions.detect import ChangePoint, DetectionSettings, find_change_points
from sslperf.regressions.series import Point, Series, build_series

__all__ = ["ChangePoint", "DetectionSettings", "Point", "Series", "build_series", "find_change_points"]
