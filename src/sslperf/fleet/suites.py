"""One suite sent to every machine type of the cluster, watched until each
machine has answered.

Each type gets one Dask task (tasks.measure) holding that type's
`machine:TYPE` resource, so a worker measures one suite at a time. Each
machine's run goes into the one store as it is measured, marked with this
fleet run and the type (SSLPERF_FLEET_RUN), which is how it is found here
while it runs and after a worker dies.

A worker that leaves mid-suite (killed, its machine lost) is noticed from
the scheduler: that type is reported failed, with the results its run kept,
and the task is cancelled rather than started again from the beginning on
another worker. Only the case being measured is lost.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from sslperf.fleet import tasks
from sslperf.fleet.cluster import MACHINE, FleetError, Machine, machines

POLL_SECONDS = 1.0
SETTLE_SECONDS = 15      # for a dying worker's child to end its run as interrupted (SIGTERM), before we mark it


@dataclass
class Outcome:
    """What one machine type did with the suite."""
    tag: str
    ok: bool = False
    run_id: str | None = None
    host: str | None = None
    state: str | None = None
    results: int = 0
    worker: str | None = None
    message: str = ""
    runs: int = 0                # its runs of this fleet run (a repeating request makes several)


def shared_store(db: str) -> str:
    """`db` when every machine can reach it (PostgreSQL); a fleet cannot gather its runs anywhere else."""
    if not db.startswith("postgresql"):
        raise FleetError(f"A fleet writes every machine's run into one store, and {db.split(':')[0]} is not one "
                         "other machines can reach.",
                         hint="Give a PostgreSQL server with --db postgresql://USER@HOST/DB (or SSLPERF_DB).")
    return db


def send(client, store, db: str, request, types: dict[str, list[Machine]], timeout: float, pin_there: bool,
         progress: Callable[[dict[str, Outcome]], None] = lambda outcomes: None) -> tuple[str, list[Outcome]]:
    """Run `request` (measure.request.Request) on one worker of each type in `types`; the fleet run's id and an
    Outcome per type once every type has ended. `pin_there`: each machine chooses the CPU its workers are pinned
    to (the user named none), rather than the CPU chosen here."""
    verb = request.source.removeprefix("sslperf ").replace(" ", "-")
    fleet_run = f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    # Runs started from now on (5 minutes of slack for machines whose clocks run behind this one).
    since = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=5)).isoformat(timespec="seconds")
    futures = {tag: client.submit(tasks.measure, request.to_json(), db, f"{fleet_run}:{tag}", timeout, pin_there,
                                  resources={f"{MACHINE}{tag}": 1}, pure=False, retries=0,
                                  key=f"sslperf-{verb}-{tag}-{fleet_run}")
               for tag in types}
    outcomes = {tag: Outcome(tag) for tag in types}
    running = dict(futures)
    while running:
        _watch(client, running, outcomes)
        _runs_so_far(store, fleet_run, since, outcomes)
        progress(outcomes)
        for tag, future in list(running.items()):
            if future.done():
                _ended(future, outcomes[tag])
                del running[tag]
            elif outcomes[tag].message:         # its worker left: _watch said why
                future.cancel()
                del running[tag]
        if running:
            time.sleep(POLL_SECONDS)
    _settle(store, fleet_run, since, outcomes)
    progress(outcomes)
    return fleet_run, [outcomes[tag] for tag in types]


def _watch(client, running: dict, outcomes: dict[str, Outcome]) -> None:
    """Note the worker each task started on; a task whose worker is gone has failed."""
    alive = {m.address: m for m in machines(client)}
    processing = client.processing()
    for tag, future in running.items():
        outcome = outcomes[tag]
        for address, keys in processing.items():
            if future.key in keys:
                outcome.worker = address
        if future.done() or outcome.message:
            continue
        if outcome.worker and outcome.worker not in alive:
            outcome.message = (f"its worker {outcome.worker} left the cluster mid-suite (killed, stopped, or its "
                               "machine lost); the case being measured then is lost")
        elif not any(m.tag == tag for m in alive.values()):
            outcome.message = f"no worker offers the machine type {tag} any more"


def _ended(future, outcome: Outcome) -> None:
    if future.status == "cancelled":
        outcome.message = outcome.message or "cancelled"
        return
    try:
        answer = future.result()
    except Exception as exc:            # the task itself failed on the worker (raised again here by Dask)
        outcome.message = f"the task failed on the worker: {exc}"
        return
    outcome.host = answer["host"]
    if answer["returncode"] == 0:
        outcome.ok = True
        return
    outcome.message = (f"`sslperf` on {answer['host']} exited with {answer['returncode']}"
                       + (" after its timeout" if answer.get("timed_out") else "")
                       + (f"; it said:\n{answer['tail']}" if answer["tail"] else ""))


def _runs_so_far(store, fleet_run: str, since: str, outcomes: dict[str, Outcome]) -> None:
    """Each type's runs of this fleet run: a request that repeats (noise's A/A runs) makes several; the latest is
    the one shown, the results are all of them."""
    seen: dict[str, list[dict]] = {}
    for row in store.list(since):      # this fleet run's, not the whole store every second
        marker = (row.get("environment") or {}).get("fleet", "")
        run_of, _, tag = marker.partition(":")
        if run_of == fleet_run and tag in outcomes:
            seen.setdefault(tag, []).append(row)
    for tag, rows in seen.items():
        outcome, latest = outcomes[tag], max(rows, key=lambda row: row["id"])
        outcome.run_id, outcome.host, outcome.state = latest["id"], latest.get("host"), latest["state"]
        outcome.results, outcome.runs = sum(row["measurements"] for row in rows), len(rows)


def _settle(store, fleet_run: str, since: str, outcomes: dict[str, Outcome]) -> None:
    """A failed type's run: give its process time to end it as interrupted;
    one still "running" after that is marked crashed, saying why."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while any(o.state == "running" for o in outcomes.values() if not o.ok) and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
        _runs_so_far(store, fleet_run, since, outcomes)
    for outcome in outcomes.values():
        if not outcome.ok and outcome.run_id and outcome.state == "running":
            store.abandon(outcome.run_id, f"The fleet lost this run's machine ({outcome.tag}): {outcome.message}.")
    _runs_so_far(store, fleet_run, since, outcomes)
