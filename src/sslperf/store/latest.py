"""Which run a name means, and what a run's state says to the user.

A run is named by its id or a prefix of it, or as `latest`: the newest
complete run the user made (speed, api, tls or an import) — never
one that is running, was interrupted or crashed, nor one a verb made for its
own use (INTERNAL_SOURCES). When none counts, the error says why, naming the
newest run there is. A run "running" for over a day (STALE) is shown as
most likely killed.
"""

from __future__ import annotations

import datetime as dt
import re

import sqlalchemy as sa

from sslperf import suggest
from sslperf.errors import SslperfError
from sslperf.store.rows import run_state, stored_text
from sslperf.store.schema import measurements, run_libs, runs

# Runs a verb makes for its own purposes, not results the user asked for: never `latest`.
INTERNAL_SOURCES = ("sslperf recommend", "sslperf noise", "sslperf bisect", "sslperf track")
STALE = dt.timedelta(hours=24)      # a run "running" for longer was most likely killed
NEWEST_FIRST = (runs.c.started.desc(), runs.c.id.desc())
# A run id (Run.new: 20261125-101500-a1b2c3), mistyped or not, or a prefix of one: a date and a dash, or digits
# and dashes. No library's name has that shape, so an item of it that names no run is a missing run, never a
# library to measure.
RUN_ID_SHAPE = re.compile(r"[0-9]{8}-.*|[0-9]{4}[0-9-]*")


def looks_like_run_id(text: str) -> bool:
    return RUN_ID_SHAPE.fullmatch(text.strip()) is not None


def users_complete():
    """The runs `latest` may name; runs from before states count by their `complete` flag."""
    return runs.c.source.notin_(INTERNAL_SOURCES) & sa.or_(
        runs.c.state == "complete", runs.c.state.is_(None) & (runs.c.complete == sa.true()))


# ---- queries (on an open connection) ---------------------------------------------

DELETE_PREFIX = len("20261123-101500")   # a prefix `runs rm` takes has at least a run's date and time


def deletable(run_id: str, found: list[str]) -> str:
    """The one run `run_id` names for deleting (`found`: the runs it matches)."""
    if not run_id.strip() or run_id == "latest":
        raise SslperfError(f"`runs rm` needs a run id (or a unique prefix of one), not `{run_id}`; nothing "
                           "was deleted.", hint="`sslperf runs list` shows the ids.")
    if len(run_id) < DELETE_PREFIX and found != [run_id]:
        raise SslperfError(f"`{run_id}` is too short a prefix to delete by: `runs rm` takes a run's full id (or "
                           f"at least its first {DELETE_PREFIX} characters, the date and time); nothing was "
                           "deleted.", hint="`sslperf runs list` shows the ids.")
    if len(found) > 1:
        raise SslperfError(f"`{run_id}` matches {len(found)} runs: {', '.join(found[:10])}"
                           f"{' …' if len(found) > 10 else ''}; nothing was deleted.",
                           hint="Give each run's full id.")
    if not found:
        raise SslperfError(f"No run `{run_id}` in the store; nothing was deleted.",
                           hint="`sslperf runs list` shows the runs kept.")
    return found[0]


def matching_runs(conn, run_id: str) -> list[str]:
    """Run ids that `run_id` names: itself, ids it is a prefix of, or for
    `latest` the newest run the user made that is complete."""
    if run_id == "latest":
        return list(conn.execute(sa.select(runs.c.id).where(users_complete()).order_by(*NEWEST_FIRST).limit(1))
                    .scalars())
    return list(conn.execute(sa.select(runs.c.id).where(runs.c.id.startswith(stored_text(run_id), autoescape=True)))
                .scalars())


def newest_run(conn, lib_name: str | None = None) -> dict | None:
    """The newest run of any kind (with `lib_name`, if given): id, source, state, started."""
    query = sa.select(runs)
    if lib_name is not None:
        query = query.join(run_libs, run_libs.c.run_id == runs.c.id).where(run_libs.c.name == stored_text(lib_name))
    row = conn.execute(query.order_by(*NEWEST_FIRST).limit(1)).mappings().first()
    return None if row is None else {"id": row["id"], "source": row["source"], "state": run_state(row),
                                     "started": row["started"]}


def latest_run_with(conn, lib_name: str) -> str | None:
    """The newest complete run the user made (as `latest`) that measured or imported `lib_name`."""
    return conn.execute(
        sa.select(runs.c.id).join(run_libs, run_libs.c.run_id == runs.c.id)
        .where((run_libs.c.name == stored_text(lib_name)) & users_complete())
        .order_by(*NEWEST_FIRST).limit(1)
    ).scalar()


def complete_runs_with(conn, lib_name: str, limit: int) -> list[tuple[str, frozenset[str]]]:
    """The newest `limit` complete runs the user made (as `latest`) with `lib_name`, newest first, each with the
    ids of the cases it measured on that library: the ids alone, no samples."""
    ids = list(conn.execute(
        sa.select(runs.c.id).join(run_libs, run_libs.c.run_id == runs.c.id)
        .where((run_libs.c.name == stored_text(lib_name)) & users_complete())
        .order_by(*NEWEST_FIRST).limit(limit)).scalars())
    cases: dict[str, set[str]] = {run_id: set() for run_id in ids}
    for run_id, case_id in conn.execute(
            sa.select(measurements.c.run_id, measurements.c.case_id)
            .where(measurements.c.run_id.in_(ids) & (measurements.c.lib == stored_text(lib_name))
                   & (measurements.c.status == "ok"))):
        cases[run_id].add(case_id)
    return [(run_id, frozenset(cases[run_id])) for run_id in ids]


def run_ids(conn) -> list[str]:
    """Every run's id, newest first (what a mistyped id is held against)."""
    return list(conn.execute(sa.select(runs.c.id).order_by(*NEWEST_FIRST)).scalars())


def lib_names(conn) -> list[str]:
    """The names of the libraries some run measured or imported."""
    return list(conn.execute(sa.select(run_libs.c.name).distinct()).scalars())


# ---- what the user reads ---------------------------------------------------------

def not_one_run(run_id: str, found: list[str], url: str, known: list[str] = ()) -> SslperfError:
    """The error for an id (not `latest`) that names no run, or several, in the store at `url`; with the ids
    there are (`known`, newest first), the close ones, else the newest."""
    if not found:
        near = close_run_ids(run_id, known)
        said = (f"Did you mean {suggest.either(near)}? " if near else
                f"The newest: {', '.join(known[:3])}. " if known else "The store holds no run yet. ")
        return SslperfError(f"No run `{run_id}` in the store {url}.",
                            hint=said + "`sslperf runs list` shows the runs kept.")
    return SslperfError(f"`{run_id}` matches {len(found)} runs ({', '.join(found[:4])} …); give more of the id.")


def close_run_ids(run_id: str, known: list[str]) -> list[str]:
    """The ids among `known` whose start is close to `run_id` (a mistyped id, or prefix of one)."""
    starts: dict[str, str] = {}
    for full in known:                          # newest first: each start stands for its newest run
        starts.setdefault(full[:len(run_id)], full)
    return [starts[start] for start in suggest.close(run_id, starts, cutoff=suggest.CUTOFF_LONG)]


def no_latest(newest: dict | None, url: str, lib: str | None = None, stored_libs: list[str] = ()) -> SslperfError:
    """Why nothing counts as `latest` (or as `lib`'s latest run), given the newest run there is (and the names of
    the libraries the store has runs of, for a mistyped `lib`)."""
    if newest is None:
        if lib:
            meant = suggest.did_you_mean(lib, stored_libs, cutoff=suggest.CUTOFF_LONG)   # a mistyped name
            return SslperfError(f"No run in the store has measured `{lib}`.",
                                hint=f"{meant} `sslperf runs list` shows the runs kept." if meant else
                                f"Measure it first: `sslperf speed --lib {lib}` (or import its `openssl speed` "
                                "output with `sslperf import`).")
        return SslperfError(f"No run `latest` in the store {url}: it holds no run yet.",
                            hint="Measure one with `sslperf speed --quick`.")
    why = {"running": "still running (or its process was killed)", "incomplete": "left incomplete"}.get(
        newest["state"], newest["state"])
    if newest["source"] in INTERNAL_SOURCES:
        why = f"made by `{newest['source']}` for its own use"
    if lib:
        lead = (f"No complete run of yours has measured `{lib}`: a library's run is its newest complete run "
                "that you made yourself (speed, api, tls or an import). The newest run with it,")
    else:
        lead = ("No run counts as `latest`: that is the newest complete run you made yourself (speed, api, tls "
                "or an import), and none of the runs kept is one. The newest,")
    return SslperfError(f"{lead} {newest['id']}, was {why} (started {newest['started']}).",
                        hint=f"Give its id to use it anyway (e.g. `sslperf runs show {newest['id']}`), or "
                        "measure again; `sslperf runs list` shows every run and its state.")


def describe_state(state: str, started: str, now: dt.datetime | None = None) -> str:
    """A run's state as `runs list` shows it; a run "running" for over a day was most likely killed."""
    if state != "running":
        return state
    try:
        begun = dt.datetime.fromisoformat(started)
        if begun.tzinfo is None:
            begun = begun.replace(tzinfo=dt.timezone.utc)
    except (TypeError, ValueError):
        return state
    age = (now or dt.datetime.now(dt.timezone.utc)) - begun
    if age < STALE:
        return state
    days, hours = age.days, age.seconds // 3600
    return f"running? (started {f'{days} d' if days else f'{hours} h'} ago; killed?)"
