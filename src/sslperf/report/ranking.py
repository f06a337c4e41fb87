"""Rankings, as the rustls project's comparison reports give them: per case
the libraries first, second and third, and per family group how often each
library came first. A library shares a place with the library that opened
it unless `compare`'s test calls the two significantly different, so a
place is never given on noise."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sslperf import families
from sslperf.verdict import DEFAULT_ALPHA, DEFAULT_THRESHOLD, Policy, judge, waits
from sslperf.results import Measurement, Run

ALPHA, THRESHOLD = DEFAULT_ALPHA, DEFAULT_THRESHOLD      # compare's defaults


@dataclass
class CaseRanking:
    case: str
    label: str
    places: list[list[str]]          # places[0] = the libraries sharing first place, and so on


@dataclass
class GroupRanking:
    group: str
    cases: list[CaseRanking] = field(default_factory=list)

    def firsts(self) -> dict[str, int]:
        """How many cases each library was clearly first in: alone in first place, significantly ahead of every
        other. A first place shared by a tie is no first place for anyone (shared_firsts counts those)."""
        counts: dict[str, int] = {}
        for case in self.cases:
            if len(case.places[0]) == 1:
                counts[case.places[0][0]] = counts.get(case.places[0][0], 0) + 1
        return dict(sorted(counts.items(), key=lambda item: -item[1]))

    def shared_firsts(self) -> int:
        """How many cases had a tie at the top (two libraries or more within noise of each other)."""
        return sum(1 for case in self.cases if len(case.places[0]) > 1)


def rank_case(cells: list[Measurement], metric: str, run_of: Callable[[str], str], floors=None,
              noise=None) -> list[list[str]]:
    """Places for one case's measurements (higher rate is better); noise: run id → what the run recorded."""
    shown = waits.row_metric(cells, metric)          # ordered on the basis the row is judged on
    ok = [(m, s) for m in cells if m.status == "ok" and (s := m.summary(shown)) is not None]
    ok.sort(key=lambda pair: -pair[1].median)
    row = [m for m, _ in ok]
    places: list[list[str]] = []
    leader: Measurement | None = None       # the library that opened the current place
    for m, _ in ok:
        if leader is not None:
            found = judge(leader, m, metric, Policy(THRESHOLD, ALPHA, floors or {}, noise or {}),
                          paired=run_of(leader.lib) == run_of(m.lib), runs=(run_of(leader.lib), run_of(m.lib)),
                          row=row)
            if found is not None and found.verdict not in ("faster", "slower"):
                places[-1].append(m.lib)
                continue
        places.append([m.lib])
        leader = m
    return places


def rank_run(run: Run, metric: str = "wall", run_of: Callable[[str], str] | None = None,
             floors=None, noise=None) -> list[GroupRanking]:
    """Per family group, the ranking of every case measured on two libraries or more."""
    run_of = run_of or (lambda lib: run.id)
    by_group: dict[str, dict[str, list[Measurement]]] = {}
    for m in run.measurements:
        by_group.setdefault(m.group, {}).setdefault(m.case, []).append(m)
    out = []
    for group in families.ordered(by_group):
        ranking = GroupRanking(group)
        for case, cells in by_group[group].items():
            places = rank_case(cells, metric, run_of, floors, noise)
            if sum(len(p) for p in places) >= 2:
                ranking.cases.append(CaseRanking(case, cells[0].label, places))
        if ranking.cases:
            out.append(ranking)
    return out
