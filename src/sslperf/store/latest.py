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

import sqlalchemy as sa

from sslperf.errors import SslperfError
from sslperf.store.rows import run_state, stored_text
from sslperf.store.schema import run_libs, runs

# Runs a verb makes for its own purposes, not results the user asked for: never `latest`.
INTERNAL_SOURCES = ("sslperf recommend", "sslperf noise", "sslperf bisect", "sslperf track")
STALE = dt.timedelta(hours=24)      # a run "running" for longer was most likely killed
NEWEST_FIRST = (runs.c.started.desc(), runs.c.id.desc())


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


# ---- what the user reads ---------------------------------------------------------

def not_one_run(run_id: str, found: list[str], url: str) -> SslperfError:
    """The error for an id (not `latest`) that names no run, or several, in the store at `url`."""
    if not found:
        return SslperfError(f"No run `{run_id}` in the store {url}.", hint="`sslperf runs list` shows the runs kept.")
    return SslperfError(f"`{run_id}` matches {len(found)} runs ({', '.join(found[:4])} …); give more of the id.")


def no_latest(newest: dict | None, url: str, lib: str | None = None) -> SslperfError:
    """Why nothing counts as `latest` (or as `lib`'s latest run), given the newest run there is."""
    if newest is None:
        if lib:
            return SslperfError(f"No run in the store has measured `{lib}`.",
                                hint=f"Measure it first: `sslperf speed --lib {lib}` (or import its "
                                "`openssl speed` output with `sslperf import`).")
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
