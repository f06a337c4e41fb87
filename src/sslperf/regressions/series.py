"""Stored results as series: one per (case, library line, host, metric),
its points in history order."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from sslperf import figures
from sslperf.libs import versions
from sslperf.results import Measurement, RecordedMeasurement


DEFAULT_VARIANTS = ("", "default", "unknown")


def series_key(result: RecordedMeasurement, several_hosts: bool) -> str:
    key = result.flavor or result.measurement.lib
    if result.variant not in DEFAULT_VARIANTS:
        key += f"+{result.variant}"
    if result.environment.get("mask"):          # a CPU-masked run measures another machine, in effect
        key += f"@{result.environment['mask']}"
    return f"{key} on {result.host or 'an unnamed host'}" if several_hosts else key


def version_label(result: RecordedMeasurement) -> str:
    """`openssl 3.0.8`; a build of a commit (NAME-VERSION-gSHA, from `bisect --git`) keeps its commit."""
    if not result.version:
        return result.measurement.lib
    commit = result.measurement.lib.partition(f"-{result.version}-g")[2]
    return f"{result.flavor} {result.version}" + (f" g{commit}" if commit else "")


def search_position(result: RecordedMeasurement) -> int:
    """Where a bisect placed this library in the history it searched (0 elsewhere):
    commits of one version are ordered by it."""
    points = (result.settings.get("bisect") or {}).get("points") or []
    lib = result.measurement.lib
    tokens = [str(p).split(" ")[0] for p in points]
    return next((i for i, t in enumerate(tokens) if t and (t == lib or lib.endswith(t))), 0)


def commit_date(result: RecordedMeasurement) -> str:
    """When the commit a `track` run measured was made ("" for other runs):
    commits of one version are ordered by it."""
    return str(((result.settings or {}).get("track") or {}).get("date") or "")


@dataclass(frozen=True)
class Point:
    label: str            # `openssl 3.0.3`, or with its commit `openssl 3.0.3 gabc1234567`
    lib: str
    run_id: str
    started: str
    value: float          # the median rate: operations (or bytes) per second, or per 10^9 instructions
    # One median rate per worker process (the independent units the result rests on; the
    # detection's observations), or the one value where the result has no process records.
    values: tuple[float, ...] = ()

    @property
    def observations(self) -> tuple[float, ...]:
        return self.values or (self.value,)


@dataclass
class Series:
    case: str
    title: str            # the case's row label
    line: str             # `openssl+minimal` and the like
    host: str
    metric: str
    points: list[Point] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.case} · {self.line} on {self.host or 'an unnamed host'} · {self.metric}"


def per_process(m: Measurement, metric: str) -> tuple[float, ...]:
    """The median rate of each worker process that measured `m` (empty without process records)."""
    rates, processes = m.rates(metric), (m.figures or {}).get(figures.PROCESS)
    if not processes or len(processes) != len(rates):
        return ()
    groups: dict[int, list[float]] = {}
    for process, rate in zip(processes, rates):
        groups.setdefault(process, []).append(rate)
    return tuple(float(statistics.median(group)) for group in groups.values())


def _order(result: RecordedMeasurement) -> tuple:
    return (versions.sort_key(result.version or "0"), search_position(result), commit_date(result), result.started)


def build_series(results: list[RecordedMeasurement], metrics: tuple[str, ...]) -> list[Series]:
    """Every series the results hold for `metrics`; a result that has no
    figure for a metric (an import has no instruction counts) is left out
    of that metric's series."""
    grouped: dict[tuple, Series] = {}
    for result in sorted(results, key=_order):
        m = result.measurement
        for metric in metrics:
            summary = m.summary(metric)
            if summary is None or not summary.median:
                continue
            line = series_key(result, several_hosts=False)
            key = (m.case, line, result.host, metric)
            series = grouped.setdefault(key, Series(m.case, m.label, line, result.host, metric))
            series.points.append(Point(version_label(result), m.lib, result.run_id, result.started,
                                       float(summary.median), per_process(m, metric)))
    return list(grouped.values())
