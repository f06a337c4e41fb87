"""What `sslperf compare`'s items name, as columns: a library (its newest
complete run of the user's), a run id, a unique prefix or `latest` (every
library of that run), or RUN:LIB; and one line per column saying which run
it comes from and how that run was picked."""

from __future__ import annotations

import datetime as dt

from sslperf.compare.verdicts import Column
from sslperf.errors import SslperfError
from sslperf.libs import installed
from sslperf.results import Run


def resolve(store, items: tuple[str, ...]) -> tuple[list[Column], dict[str, Run]]:
    """The columns `items` name, and the runs they come from (each with
    settings["picked_as"] saying how it was chosen)."""
    columns, runs, picked = [], {}, {}
    for item in items:
        run_part, _, lib_part = item.partition(":")
        run_id = _as_run(store, run_part)
        if run_id is None:
            name = item
            run_id = store.latest_run_with(name)
            if run_id is None:
                try:
                    name = installed.find(item).name     # openssl-3.0 → openssl-3.0.8
                except SslperfError:
                    pass
                run_id = store.latest_run_with(name)
            if run_id is None:
                raise store.no_latest_with(name)
            names = [name]
            picked[run_id] = picked.get(run_id) or f"the newest complete run of yours with {name}"
        else:
            names = None
            picked[run_id] = picked.get(run_id) or ("`latest`: the newest complete run of yours"
                                                    if run_part == "latest" else "given")
        run = runs.get(run_id) or store.load(run_id)
        runs[run_id] = run
        if names is None:
            names = [lib_part] if lib_part else [lib.name for lib in run.libs]
            unknown = [n for n in names if n not in {lib.name for lib in run.libs}]
            if unknown:
                raise SslperfError(f"Run {run_id} has no library `{unknown[0]}`; it has "
                                   f"{', '.join(lib.name for lib in run.libs)}.")
        for name in names:
            columns.append(Column(name, run_id, name))
    labels = [c.lib for c in columns]
    if len(set(labels)) != len(labels):   # the same lib from two runs: tell them apart
        columns = [Column(f"{c.lib}@{c.run_id}", c.run_id, c.lib) for c in columns]
    for run_id, how in picked.items():
        runs[run_id].settings = {**runs[run_id].settings, "picked_as": how}
    return columns, runs


def _as_run(store, text: str) -> str | None:
    """The run `text` names, None when it names none (then it is a library)."""
    if text == "latest":
        return store.resolve(text)     # no run counts as latest: say why, rather than look for a library "latest"
    if not text or not store.matching_runs(text):
        return None
    return store.resolve(text)     # an ambiguous prefix is an error, not a library name


def picked_lines(columns: list[Column], runs: dict[str, Run]) -> list[str]:
    """One line per column: the run it comes from, who made it and when, and how it was chosen."""
    lines = []
    for column in columns:
        run = runs[column.run_id]
        source = run.settings.get("source") or "?"
        state = "" if run.state in ("complete", None) else f", {run.state}"
        how = run.settings.get("picked_as")
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
