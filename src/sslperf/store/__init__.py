"""The store: every run is kept, in SQLite in the user's data directory by
default or in PostgreSQL (`--db postgresql://…`) for a team that gathers
runs from many machines. One schema for both.

Each finished case is committed as it ends, so an interrupted run keeps
everything measured so far.

What the store guarantees, each where it is kept: the schema and its
migrations under a lock (schema); round trips of every value and the NUL
rule (rows); one-paragraph StoreErrors for every database error (errors);
how long to wait for a lock (connect); which run an id or `latest` names
(latest). And here:

* A run begun with `begin` is not lost when the store fails mid-run: a
  result the store refuses is kept and written again by `finish` (after a
  lock or an unreachable server, nothing more is tried until then, so that
  costs one timeout, not one per case). `finish` raises StoreError, saying
  what is not stored, only if that last attempt fails too.
* Runs carry a state: "running" from `begin`, then "complete",
  "interrupted" or "crashed" from `finish` (Run.state, which
  `measure.recording.recorded` sets). A killed run stays "running". Runs
  stored before states were recorded read as "complete" or "incomplete".
  `begin` also records the run's owner (store.owner), so a run still being
  measured is never deleted (`to_delete`).
* `holds` says whether the store has every row of a run this Store saved
  or finished: what "stored as run …" is printed by.
* A SQLite file this user cannot write is read as it is (connect.read_only_file):
  no table is created or migrated, and a write is refused in one paragraph.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import sqlalchemy as sa

from sslperf.errors import SslperfError
from sslperf.results import Measurement, RecordedMeasurement, Run
from sslperf.store import latest, owner
from sslperf.store.connect import default_url, driver_error, lock_timeout, open_engine, read_only_file, store_url
from sslperf.store.errors import ErrorTranslator, StoreError, safe_url
from sslperf.store.rows import (end_values, final_state, floor_row, lib_row, measurement_row,
                                recorded_measurement, run_from_rows, run_row, run_state, stored_text)
from sslperf.store.schema import STATES, ensure_schema, measurements, noise_floors, readable_schema, run_libs, runs

__all__ = ["Store", "StoreError", "STATES", "default_url"]

# The measurements' columns with the JSON ones read as text: rows.stored_json decodes them, without the two calls
# of SQLAlchemy's processor around each of a large run's 400,000 values.
MEASUREMENTS_AS_TEXT = [sa.type_coerce(c, sa.Text).label(c.name) if isinstance(c.type, sa.JSON) else c
                        for c in measurements.c]


@dataclass
class _Live:
    """A run being measured into this store (between `begin` and `finish`)."""
    failure: StoreError | None = None            # the first write the store refused
    suspended: bool = False                      # a transient failure: no more writes until `finish`
    pending: dict[tuple[str, str], Measurement] = field(default_factory=dict)


class Store:
    """The results store at `url`: SSLPERF_DB when not given, else SQLite in the data directory."""

    def __init__(self, url: str | None = None, timeout: float | None = None):
        self.url = store_url(url)
        self.timeout = lock_timeout(timeout)
        self._live: dict[str, _Live] = {}
        self._held: set[str] = set()             # runs whose every row this Store committed (`holds`)
        self._lost: dict[str, str] = {}          # why a run's last write failed (`lost`)
        self.read_only = read_only_file(self.url)      # the SQLite file's path when it cannot be written
        self.engine = open_engine(self.url, self.timeout, read_only=self.read_only is not None)
        self.backend = self.engine.url.get_backend_name()
        self._errors = ErrorTranslator(self.url, self.backend, self.timeout, driver_error(self.engine))
        with self._errors.guard(None):
            if self.read_only is None:
                ensure_schema(self.engine)
            elif not readable_schema(self.engine):
                raise StoreError(f"Cannot open the results store {self.shown_url()}: the SQLite file "
                                 f"{self.read_only} is read-only for this user and holds no sslperf runs table "
                                 "(it is empty, or another program's).",
                                 "Point --db (or SSLPERF_DB) at an sslperf store, or make the file and its directory "
                                 "writable so that sslperf can make its tables there.", "schema")

    def shown_url(self) -> str:
        """The store's URL as it may be shown (no password)."""
        return safe_url(self.url)


    def holds(self, run_id: str) -> bool:
        """Whether the store has every row of run `run_id`: this Store saved it, or began and finished it, and the
        last write went through. Only then does a verb say the run is stored."""
        return run_id in self._held

    def lost(self, run_id: str) -> str | None:
        """Why the store does not hold all of run `run_id`: the error its last write (`finish`, `save`) ended
        in; None if none failed."""
        return None if run_id in self._held else self._lost.get(run_id)

    @contextmanager
    def _write(self, what: str) -> Iterator[sa.Connection]:
        """One transaction; any database error in it (the commit included) as a StoreError."""
        if self.read_only is not None:           # said before SQLite's "attempt to write a readonly database"
            raise StoreError(f"Could not {what} in the results store {self.shown_url()}: the SQLite file "
                             f"{self.read_only} (or its directory) is read-only for this user; it can be read, "
                             "not written.", "Write to a store you can write (--db sqlite:///other.db), or make the "
                             "file and its directory writable.", "cannot-open")
        with self._errors.guard(what):
            with self.engine.begin() as conn:
                yield conn

    @contextmanager
    def _read(self, what: str) -> Iterator[sa.Connection]:
        with self._errors.guard(what):
            with self.engine.connect() as conn:
                yield conn

    # ---- a run as it is measured ----------------------------------------------

    def begin(self, run: Run, source: str = "sslperf speed") -> None:
        """Record a run that is starting (state "running", incomplete until `finish`)."""
        with self._write(f"record the start of run {run.id}") as conn:
            conn.execute(runs.insert().values(**run_row(run, source, "running", finished=None, complete=False,
                                                        warnings=[], owner=owner.mark())))
            for position, lib in enumerate(run.libs):
                conn.execute(run_libs.insert().values(**lib_row(run.id, position, lib)))
        self._live[run.id] = _Live()

    def add(self, run_id: str, measurement: Measurement) -> None:
        """Commit one finished measurement."""
        self._put(run_id, measurement, replace=False)

    def replace(self, run_id: str, measurement: Measurement) -> None:
        """Commit a measurement again, with the samples it has gained since."""
        self._put(run_id, measurement, replace=True)

    def _put(self, run_id: str, m: Measurement, replace: bool) -> None:
        live = self._live.get(run_id)
        key = (m.case, m.lib)
        if live is not None and live.suspended:
            live.pending[key] = m
            return
        try:
            with self._write(f"store the result {m.case} on {m.lib} of run {run_id}") as conn:
                _insert_measurement(conn, run_id, m, replace or (live is not None and key in live.pending))
        except StoreError as exc:
            if live is None:
                raise
            live.pending[key] = m                 # kept, and written again by `finish`
            live.failure = live.failure or exc
            live.suspended = exc.transient
            return
        if live is not None:
            live.pending.pop(key, None)

    def finish(self, run: Run) -> None:
        """Record the end of a run: its state (Run.state, else "complete" or
        "interrupted" from Run.complete), `finished` (now if the run has no
        time), warnings, and every result the store refused while it ran."""
        try:
            self._finish(run)
        except StoreError as exc:
            self._lost[run.id] = exc.message
            raise

    def _finish(self, run: Run) -> None:
        live = self._live.pop(run.id, None)
        pending = list(live.pending.values()) if live else []
        end = end_values(run)
        try:
            with self._write(f"record the end of run {run.id}") as conn:
                for m in pending:
                    _insert_measurement(conn, run.id, m, replace=True)
                ended = conn.execute(runs.update().where(runs.c.id == run.id).values(**end)).rowcount
        except StoreError as exc:
            if not pending or exc.transient:
                lost = (f" {_results(len(pending))} not in the store, and the stored run stays marked "
                        "running there." if pending else
                        " The store has every result of this run, but the run stays marked running there.")
                raise StoreError(exc.message + lost, exc.hint, exc.cause) from exc
            failure = exc
        else:
            return self._ended(run.id, ended)
        # A value this store cannot hold: store what it can, result by result, then the run's end.
        refused = []
        for m in pending:
            try:
                with self._write(f"store the result {m.case} on {m.lib} of run {run.id}") as conn:
                    _insert_measurement(conn, run.id, m, replace=True)
            except StoreError:
                refused.append(f"{m.case} on {m.lib}")
        if not refused:                           # they went in this time: only the end is left
            with self._write(f"record the end of run {run.id}") as conn:
                ended = conn.execute(runs.update().where(runs.c.id == run.id).values(**end)).rowcount
            return self._ended(run.id, ended)
        note = (f"{_results(len(refused))} not in the store ({', '.join(refused[:5])}"
                f"{' …' if len(refused) > 5 else ''}): {failure.message}")
        with self._write(f"record the end of run {run.id}") as conn:
            conn.execute(runs.update().where(runs.c.id == run.id).values(
                **{**end, "complete": False, "warnings": [*run.warnings, note]}))
        raise StoreError(note, failure.hint, failure.cause)

    def _ended(self, run_id: str, updated: int) -> None:
        """After the end of a run was written (`updated`: the rows it changed): the store holds the run, unless
        its row had gone (deleted while it was measured)."""
        if updated != 1:
            raise StoreError(f"Could not record the end of run {run_id} in the results store {self.shown_url()}: "
                             "the run is no longer there (it was deleted while it was measured).",
                             "Measure it again to keep it in the store.")
        self._held.add(run_id)

    def abandon(self, run_id: str, warning: str) -> bool:
        """Mark a run whose measuring process is gone (still "running": killed,
        or its machine lost) as crashed, adding `warning`; its results stay.
        False if the run had already ended (or does not exist)."""
        with self._write(f"mark run {run_id} as crashed") as conn:
            row = conn.execute(sa.select(runs.c.state, runs.c.warnings).where(runs.c.id == run_id)).one_or_none()
            if row is None or row.state != "running":
                return False
            conn.execute(runs.update().where(runs.c.id == run_id).values(
                state="crashed", complete=False, warnings=[*(row.warnings or []), warning],
                finished=stored_text(dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))))
        return True

    # ---- whole runs and noise floors --------------------------------------------

    def save(self, run: Run, source: str) -> None:
        """A whole run (an import) in one transaction: all of it or nothing."""
        what = f"import run {run.id}" + (f" ({run.settings['file']})" if run.settings.get("file") else "")
        try:
            with self._write(what) as conn:
                conn.execute(runs.insert().values(**run_row(run, source, final_state(run), finished=run.finished,
                                                            complete=run.complete, warnings=run.warnings)))
                _insert_many(conn, run_libs, [lib_row(run.id, position, lib)
                                              for position, lib in enumerate(run.libs)])
                _insert_many(conn, measurements, [{"run_id": run.id, **measurement_row(m)}
                                                  for m in run.measurements])
        except StoreError as exc:
            self._lost[run.id] = exc.message
            raise
        self._held.add(run.id)

    def delete(self, run_id: str) -> None:
        full = self.resolve(run_id)
        with self._write(f"delete run {full}") as conn:
            conn.execute(measurements.delete().where(measurements.c.run_id == full))
            conn.execute(run_libs.delete().where(run_libs.c.run_id == full))
            conn.execute(runs.delete().where(runs.c.id == full))

    def save_floors(self, host: str, measured: str, lib: str, floors: list[dict], run_ids: list[str]) -> None:
        """Keep a noise-floor experiment's figures (dicts with kind, family, floor, comparisons)."""
        with self._write("store the noise floors") as conn:
            for f in floors:
                conn.execute(noise_floors.insert().values(**floor_row(host, measured, lib, f, run_ids)))

    def floors(self, host: str) -> dict[tuple[str, str], dict]:
        """The newest noise floor of `host` per (kind, family)."""
        with self._read("read the noise floors") as conn:
            rows = conn.execute(sa.select(noise_floors).where(noise_floors.c.host == stored_text(host))
                                .order_by(noise_floors.c.measured, noise_floors.c.id)).mappings().all()
        return {(r["kind"], r["family"]): dict(r) for r in rows}

    # ---- reading -------------------------------------------------------------------

    def list(self, since: str | None = None) -> list[dict]:
        """Runs, newest first, with their libraries, measurement counts and
        state; only those started at or after `since` (UTC ISO time) if given."""
        chosen = runs.c.started >= stored_text(since) if since else sa.true()
        ids = sa.select(runs.c.id).where(chosen)
        with self._read("read the runs") as conn:
            rows = conn.execute(sa.select(runs).where(chosen).order_by(*latest.NEWEST_FIRST)).mappings().all()
            counts = dict(conn.execute(sa.select(measurements.c.run_id, sa.func.count())
                                       .where(measurements.c.run_id.in_(ids)).group_by(measurements.c.run_id)).all())
            libs: dict[str, list[str]] = {}
            for row in conn.execute(sa.select(run_libs.c.run_id, run_libs.c.name).where(run_libs.c.run_id.in_(ids))
                                    .order_by(run_libs.c.position)):
                libs.setdefault(row.run_id, []).append(row.name)
        return [{**dict(row), "state": run_state(row), "libs": libs.get(row["id"], []),
                 "measurements": counts.get(row["id"], 0)} for row in rows]

    def matching_runs(self, run_id: str) -> list[str]:
        """Run ids that `run_id` names: itself, ids it is a prefix of, or `latest` (sslperf.store.latest)."""
        with self._read("look up runs") as conn:
            return latest.matching_runs(conn, run_id)

    def resolve(self, run_id: str) -> str:
        """A full run id from an id or a unique prefix (or `latest`)."""
        found = self.matching_runs(run_id)
        if len(found) == 1:
            return found[0]
        if not found and run_id == "latest":
            raise latest.no_latest(self.newest_run(), self.shown_url())
        known = []
        if not found:
            with self._read("look up runs") as conn:      # for a mistyped id, the ids there are
                known = latest.run_ids(conn)
        raise latest.not_one_run(run_id, found, self.shown_url(), known)

    def to_delete(self, run_ids: tuple[str, ...], force: bool = False) -> list[str]:
        """The full ids `run_ids` name for deleting, each checked before any is
        deleted (latest.deletable: a full id, or a unique prefix with at least
        the date and time; never `latest`), and none still being measured
        (owner.refusal; `force`: one marked running on another machine is gone)."""
        chosen = list(dict.fromkeys(latest.deletable(run_id, self.matching_runs(run_id) if run_id.strip() else [])
                                    for run_id in run_ids))
        with self._read("look up runs") as conn:
            running = conn.execute(sa.select(runs.c.id, runs.c.owner).where(
                runs.c.id.in_(chosen) & (runs.c.state == "running"))).all()
        for run_id, recorded in running:
            if (refused := owner.refusal(run_id, recorded, force)) is not None:
                raise refused
        return chosen

    def newest_run(self, lib_name: str | None = None) -> dict | None:
        """The newest run of any kind (with `lib_name`, if given): id, source, state, started."""
        with self._read("look up runs") as conn:
            return latest.newest_run(conn, lib_name)

    def latest_run_with(self, lib_name: str) -> str | None:
        """The newest complete run the user made (as `latest`) that measured or imported `lib_name`."""
        with self._read("look up runs") as conn:
            return latest.latest_run_with(conn, lib_name)

    def complete_runs_with(self, lib_name: str, limit: int) -> list[tuple[str, frozenset[str]]]:
        """The newest `limit` complete runs the user made with `lib_name`, each with its cases on it (ids only)."""
        with self._read("look up runs") as conn:
            return latest.complete_runs_with(conn, lib_name, limit)

    def no_latest_with(self, lib_name: str) -> SslperfError:
        """The error for a library with no run `latest_run_with` would pick, naming the runs that exist."""
        with self._read("look up runs") as conn:
            stored = latest.lib_names(conn)
        return latest.no_latest(self.newest_run(lib_name), self.shown_url(), lib_name, stored)

    def load(self, run_id: str) -> Run:
        full = self.resolve(run_id)
        with self._read(f"read run {full}") as conn:
            row = conn.execute(sa.select(runs).where(runs.c.id == full)).mappings().one()
            libs = conn.execute(sa.select(run_libs).where(run_libs.c.run_id == full)
                                .order_by(run_libs.c.position)).mappings().all()
            rows = conn.execute(sa.select(*MEASUREMENTS_AS_TEXT).where(measurements.c.run_id == full)
                                .order_by(measurements.c.id)).mappings().all()
        return run_from_rows(row, libs, rows)

    def stored_cases(self) -> list[str]:
        """The ids of every case some run measured, sorted."""
        with self._read("read the cases measured") as conn:
            return sorted(conn.execute(sa.select(measurements.c.case_id).where(measurements.c.status == "ok")
                                       .distinct()).scalars())

    def results(self, case_ids: list[str] | None = None,
                hosts: list[str] | None = None) -> list[RecordedMeasurement]:
        """Every measured (status ok) result of `case_ids` (all cases when None)
        across the stored runs, on `hosts` (all when None), oldest run first:
        the history and hosts views read these."""
        query = (sa.select(measurements, runs.c.started, runs.c.host, runs.c.source, runs.c.state, runs.c.complete,
                           runs.c.environment, runs.c.settings, run_libs.c.flavor, run_libs.c.version, run_libs.c.variant)
                 .join(runs, runs.c.id == measurements.c.run_id)
                 .join(run_libs, (run_libs.c.run_id == measurements.c.run_id) & (run_libs.c.name == measurements.c.lib))
                 .where(measurements.c.status == "ok").order_by(runs.c.started, measurements.c.id))
        if case_ids is not None:
            query = query.where(measurements.c.case_id.in_([stored_text(c) for c in case_ids]))
        if hosts is not None:
            query = query.where(runs.c.host.in_([stored_text(h) for h in hosts]))
        with self._read("read results across runs") as conn:
            rows = conn.execute(query).mappings().all()
        return [recorded_measurement(r) for r in rows]


def _insert_many(conn, table: sa.Table, rows: list[dict]) -> None:
    """`rows` in one executemany (SQLAlchemy batches it: one statement of many VALUES on PostgreSQL, the
    driver's executemany on SQLite), not one statement each: 80,000 results take seconds, not minutes."""
    if rows:
        conn.execute(table.insert(), rows)


def _insert_measurement(conn, run_id: str, m: Measurement, replace: bool) -> None:
    row = measurement_row(m)
    if replace:
        conn.execute(measurements.delete().where(
            (measurements.c.run_id == run_id) & (measurements.c.case_id == row["case_id"])
            & (measurements.c.lib == row["lib"])))
    conn.execute(measurements.insert().values(run_id=run_id, **row))


def _results(count: int) -> str:
    return "1 result is" if count == 1 else f"{count} results are"
