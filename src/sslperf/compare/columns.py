"""What `sslperf compare`'s items name, as columns: a library (of its complete runs of the user's, the newest
with the most cases in common with the other columns), a run id, a unique prefix or `latest` (every library of
that run), or RUN:LIB; and one line per column saying which run it comes from and how that run was picked."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sslperf.compare.verdicts import Column
from sslperf.errors import SslperfError
from sslperf.libs import installed
from sslperf.results import Run, refuse_emulated_beside_native
from sslperf.store.latest import looks_like_run_id

CANDIDATES = 20         # a library's newest complete runs that its column may come from


@dataclass
class _Choice:
    """A library item's column still to be given a run: its runs (newest first), each with its cases."""
    index: int
    name: str
    runs: list[tuple[str, frozenset[str]]]


def resolve(store, items: tuple[str, ...]) -> tuple[list[Column], dict[str, Run]]:
    """The columns `items` name, and the runs they come from (each with settings["picked_as"]: how the run of
    each of its libraries' columns was chosen)."""
    columns: list[Column] = []
    runs: dict[str, Run] = {}
    picked: dict[tuple[str, str], str] = {}
    choices: list[_Choice] = []
    for item in items:
        run_part, _, lib_part = item.partition(":")
        run_id = _as_run(store, run_part)
        if run_id is None:
            name, found = _library_runs(store, item)
            choices.append(_Choice(len(columns), name, found))
            columns.append(Column(name, "", name))
            continue
        run = runs.get(run_id) or store.load(run_id)
        runs[run_id] = run
        names = [lib_part] if lib_part else [lib.name for lib in run.libs]
        unknown = [n for n in names if n not in {lib.name for lib in run.libs}]
        if unknown:
            raise SslperfError(f"Run {run_id} has no library `{unknown[0]}`; it has "
                               f"{', '.join(lib.name for lib in run.libs)}.")
        for name in names:
            columns.append(Column(name, run_id, name))
            picked.setdefault((run_id, name), "`latest`: the newest complete run of yours" if run_part == "latest"
                              else "given")
    chosen = _choose(columns, runs, choices)
    for choice in choices:
        run_id, how = chosen[choice.index]
        columns[choice.index] = Column(choice.name, run_id, choice.name)
        picked[(run_id, choice.name)] = how
        runs[run_id] = runs.get(run_id) or store.load(run_id)
    refuse_emulated_beside_native([runs[run_id] for run_id in {c.run_id for c in columns}])
    labels = [c.lib for c in columns]
    if len(set(labels)) != len(labels):   # the same lib from two runs: tell them apart
        columns = [Column(f"{c.lib}@{c.run_id}", c.run_id, c.lib) for c in columns]
    for (run_id, name), how in picked.items():
        settings = runs[run_id].settings
        runs[run_id].settings = {**settings, "picked_as": {**settings.get("picked_as", {}), name: how}}
    return columns, runs


def _library_runs(store, item: str) -> tuple[str, list[tuple[str, frozenset[str]]]]:
    """The library `item` names as the store knows it (its name, else what it resolves to among the libraries in
    hand: openssl-3.0 → openssl-3.0.8), and its newest complete runs of the user's with their cases."""
    found = store.complete_runs_with(item, CANDIDATES)
    if found:
        return item, found
    try:
        name = installed.find(item).name
    except SslperfError:
        raise store.no_latest_with(item) from None
    found = store.complete_runs_with(name, CANDIDATES)
    if not found:
        raise store.no_latest_with(name)
    return name, found


def _choose(columns: list[Column], runs: dict[str, Run], choices: list[_Choice]) -> dict[int, tuple[str, str]]:
    """For each library column, the run it comes from and why: of its runs, the one whose cases overlap most
    with the other columns' (a given run's cases, or the best of another library's runs), the newest of those
    that tie — not a newer one-case run beside the full suite the others measured."""
    given = {i: _cases(runs[c.run_id], c.lib) for i, c in enumerate(columns) if c.run_id}
    options = {**{i: [cases] for i, cases in given.items()}, **{c.index: [s for _, s in c.runs] for c in choices}}

    def overlap(index: int, cases: frozenset[str]) -> int:
        return sum(max(len(cases & other) for other in sets) for i, sets in options.items() if i != index)

    best = {}
    for choice in choices:
        scores = [overlap(choice.index, cases) for _, cases in choice.runs]
        best[choice.index] = scores.index(max(scores))        # the first of the best: the newest
    final = {**given, **{c.index: c.runs[best[c.index]][1] for c in choices}}
    return {c.index: (c.runs[best[c.index]][0], _why(c, best[c.index], [s for i, s in final.items() if i != c.index]))
            for c in choices}


def _why(choice: _Choice, at: int, others: list[frozenset[str]]) -> str:
    """How a library column's run (choice.runs[at]) was picked, with the cases it has in common with every
    other column's."""
    if not others:
        return f"the newest complete run of yours with {choice.name}"

    def common(cases: frozenset[str]) -> int:
        return len(cases.intersection(*others))
    cases = choice.runs[at][1]
    shared = f"{common(cases)} of its {len(cases)} case{'' if len(cases) == 1 else 's'}"
    if len(choice.runs) == 1:
        return f"its only complete run of yours, {shared} in common with the others"
    why = f"the newest of its complete runs of yours with the most cases in common with the others: {shared}"
    newest_id, newest = choice.runs[0]
    return why if at == 0 else why + f" (its newest run, {newest_id}, has {common(newest)})"


def _cases(run: Run, lib: str) -> frozenset[str]:
    """The cases `run` measured on `lib`."""
    return frozenset(m.case for m in run.measurements if m.lib == lib and m.status == "ok")


def _as_run(store, text: str) -> str | None:
    """The run `text` names, None when it names none (then it is a library); an id, or a prefix of one, that
    names no run is a missing run (store.resolve says so, with the close ids), never a library."""
    if text == "latest":
        return store.resolve(text)     # no run counts as latest: say why, rather than look for a library "latest"
    if not text or not store.matching_runs(text) and not looks_like_run_id(text):
        return None
    return store.resolve(text)     # an ambiguous prefix is an error, not a library name


def picked_lines(columns: list[Column], runs: dict[str, Run]) -> list[str]:
    """One line per column: the run it comes from, who made it and when, and how it was chosen."""
    lines = []
    for column in columns:
        run = runs[column.run_id]
        source = run.settings.get("source") or "?"
        state = "" if run.state in ("complete", None) else f", {run.state}"
        how = (run.settings.get("picked_as") or {}).get(column.lib)
        lines.append(f"{column.label}: run {run.id} ({source}, {_when(run.started)}{state})"
                     + (f" — {how}" if how and how != "given" else ""))
    return lines


def _when(started: str | None) -> str:
    """`2026-11-22T21:44:05+00:00` → `2026-11-22 21:44 UTC`."""
    try:
        moment = dt.datetime.fromisoformat(started or "")
    except ValueError:
        return started or "?"
    zone = "" if moment.tzinfo is None else (" UTC" if moment.utcoffset() == dt.timedelta(0) else moment.strftime(" %z"))
    return moment.strftime("%Y-%m-%d %H:%M") + zone
