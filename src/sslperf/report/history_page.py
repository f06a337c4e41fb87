"""history.html: cases across the stored runs, as asv draws a benchmark across commits:
one series per library flavor (and variant, and host when there are
several), its points ordered by library version or by the date of the run.
Each point is marked with the verdict of `compare`'s test against the
previous version of its series (or, by date, the previous run of the same
library), so a step that is only noise is not drawn as one. A bisect's run
holds the releases it searched, so they appear as points of their own."""

from __future__ import annotations

from html import escape

from sslperf.verdict import Policy, judge
from sslperf.errors import SslperfError
from sslperf.libs import versions
from sslperf.report import page_frame
from sslperf.report.charts import ALPHA, THRESHOLD, metrics_present, ratio_point
from sslperf.regressions.detect import find_change_points
from sslperf.regressions.series import build_series, commit_date, search_position, series_key, version_label
from sslperf.results import RecordedMeasurement

def pairable(a: RecordedMeasurement, b: RecordedMeasurement) -> bool:
    """Two results taken side by side in one interleaved run. A bisect's
    run gathers the measurements of all its steps, which were not."""
    return a.run_id == b.run_id and a.source != "sslperf bisect"


def _verdict(earlier: RecordedMeasurement, later: RecordedMeasurement, metric: str, floors) -> dict | None:
    noise = {r.run_id: r.environment.get("noise") or {} for r in (earlier, later)}     # as Run.noise() reads it
    point = ratio_point(judge(earlier.measurement, later.measurement, metric,
                              Policy(THRESHOLD, ALPHA, floors or {}, noise),
                              paired=pairable(earlier, later), runs=(earlier.run_id, later.run_id)))
    return point and {**point, "vs": f"{version_label(earlier)} (run {earlier.run_id})"}


def _point(result: RecordedMeasurement, key: str, rank: int, metrics: list[str]) -> dict:
    figures = {}
    for metric in metrics:
        s = result.measurement.summary(metric)
        if s is not None:
            figures[metric] = {"y": s.median, "lo": s.ci_low, "hi": s.ci_high, "n": s.n}
    return {"series": key, "lib": result.measurement.lib, "version": result.version or "?",
            "version_label": version_label(result), "rank": rank, "date": result.started.replace("T", " ")[:19],
            "run": result.run_id, "host": result.host, "source": result.source, "metrics": figures,
            "verdicts": {"version": {}, "date": {}}}


def case_chart(chart_id: str, results: list[RecordedMeasurement], several_hosts: bool, floors=None) -> dict | None:
    """One case's history chart, or None when no run measured it."""
    if not results:
        return None
    order = sorted({version_label(r): (r.flavor, versions.sort_key(r.version or "0"), search_position(r),
                                       commit_date(r)) for r in results}.items(), key=lambda item: item[1])
    version_order = [label for label, _ in order]
    metrics = metrics_present([r.measurement for r in results])
    keys = list(dict.fromkeys(series_key(r, several_hosts) for r in results))
    points = [_point(r, series_key(r, several_hosts), version_order.index(version_label(r)), metrics)
              for r in results]
    for key in keys:
        members = [(p, r) for p, r in zip(points, results) if p["series"] == key]
        # By version: each point against the newest run of the version before it in the series.
        by_version = sorted(members, key=lambda pr: (pr[0]["rank"], pr[1].started))
        newest: dict[int, RecordedMeasurement] = {}
        for point, result in by_version:
            earlier_ranks = [rank for rank in newest if rank < point["rank"]]
            if earlier_ranks:
                earlier = newest[max(earlier_ranks)]
                for metric in metrics:
                    point["verdicts"]["version"][metric] = _verdict(earlier, result, metric, floors)
            newest[point["rank"]] = result
        # By date: each point against the previous run of the very same library.
        previous: dict[str, RecordedMeasurement] = {}
        for point, result in sorted(members, key=lambda pr: pr[1].started):
            earlier = previous.get(result.measurement.lib)
            if earlier is not None:
                for metric in metrics:
                    point["verdicts"]["date"][metric] = _verdict(earlier, result, metric, floors)
            previous[result.measurement.lib] = result
    first = results[0].measurement
    return {"id": chart_id, "title": first.label, "note": f"{first.case} ({first.group})", "kind": "history",
            "unit": first.unit, "metrics": metrics, "series": [{"key": k, "legend": k} for k in keys],
            "points": points, "version_order": version_order,
            "change_points": change_marks(results, metrics, several_hosts)}


def change_marks(results: list[RecordedMeasurement], metrics: list[str], several_hosts: bool) -> list[dict]:
    """Where each series changed level (`sslperf regressions`' detection), for
    the chart to mark; none where Apache Otava is not installed."""
    marks = []
    try:
        for series in build_series(results, tuple(metrics)):
            key = f"{series.line} on {series.host or 'an unnamed host'}" if several_hosts else series.line
            for c in find_change_points(series):
                marks.append({"series": key, "metric": series.metric, "version_label": c.point.label,
                              "date": c.point.started.replace("T", " ")[:19], "from": c.previous.label,
                              "percent": c.percent, "p": c.p, "verdict": c.verdict})
    except SslperfError:
        return []
    return marks


def history_charts(results: list[RecordedMeasurement], floors=None) -> list[dict]:
    by_case: dict[str, list[RecordedMeasurement]] = {}
    for result in results:
        by_case.setdefault(result.measurement.case, []).append(result)
    several_hosts = len({r.host for r in results}) > 1      # one naming of the series on every chart
    charts = [case_chart(f"history-{index}", rows, several_hosts, floors)
              for index, rows in enumerate(by_case.values())]
    return [c for c in charts if c]


def render(charts: list[dict], patterns: tuple[str, ...], hosts: list[str], runs: int) -> str:
    intro = (f"<p>{len(charts)} case{'s' if len(charts) != 1 else ''} matching "
             f"<b>{escape(' '.join(patterns))}</b> across {runs} stored run{'s' if runs != 1 else ''} on "
             f"{escape(', '.join(hosts) or 'no host')}. A series is one library flavor (and variant, and host when "
             "there are several). ▲ / ▼ (large markers) mark a significant change against the previous version "
             "(by date: the previous run of the same library); hover a point for the test, its p and method. "
             "Runs of one machine only compare with each other honestly: across hosts use the hosts page.</p>")
    body = page_frame.chart_divs(charts)
    return page_frame.render("sslperf history", intro, body,
                       {"charts": charts, "default_view": "absolute", "history": True})
