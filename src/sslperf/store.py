"""The store: every run is kept, in SQLite in the user's data directory by
default or in PostgreSQL (`--db postgresql://…`) for a team that gathers
runs from many machines. One schema for both.

Each finished case is committed as it ends, so an interrupted run keeps
everything measured so far. SQLite runs in WAL mode with a busy timeout, so
two runs writing at once lose nothing.

What the store guarantees:

* Everything an importer or a run produces round-trips, on SQLite and
  PostgreSQL alike: strings that come from outside (names, version strings,
  the ia32cap vector, notes) are TEXT, sizes and counts are 64-bit. A NUL
  character, which PostgreSQL cannot hold in text, is stored as U+2400 (␀)
  in every text column on both databases (one-way: it loads back as ␀; the
  JSON columns keep NUL exactly, escaped as \\u0000). An integer beyond 64
  bits or a NaN/infinity in a JSON column is refused with a SslperfError.
* The schema is created and migrated (old databases gain `runs.state`; on
  PostgreSQL VARCHAR(n) columns become TEXT and INTEGER sizes BIGINT) under
  a lock — SQLite `BEGIN IMMEDIATE`, a PostgreSQL advisory lock — so any
  number of processes may open a new database at once.
* Every database error becomes a StoreError (a SslperfError): one paragraph
  naming the cause (locked, server down, value out of range …) and advice.
  How long to wait for a lock: `timeout` (seconds), else SSLPERF_DB_TIMEOUT,
  else 60.
* A run begun with `begin` is not lost when the store fails mid-run: a
  result the store refuses is kept and written again by `finish` (after a
  lock or an unreachable server, nothing more is tried until then, so that
  costs one timeout, not one per case). `finish` raises StoreError, saying
  what is not stored, only if that last attempt fails too.
* Runs carry a state: "running" from `begin`, then "complete",
  "interrupted" or "crashed" from `finish` (Run.state, which
  `measure.session.recorded` sets). A killed run stays "running". Runs
  stored before states were recorded read as "complete" or "incomplete".
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

from sslperf import paths
from sslperf.errors import SslperfError
from sslperf.results import LibInfo, Measurement, Run

metadata = sa.MetaData()

STATES = ("running", "complete", "interrupted", "crashed")
NUL_REPLACEMENT = "\u2400"          # ␀, SYMBOL FOR NULL
INT64 = (-(2 ** 63), 2 ** 63 - 1)
DEFAULT_TIMEOUT = 60.0
SCHEMA_LOCK = 0x5353_4C50_4552_46      # "SSLPERF": the PostgreSQL advisory lock taken while creating the schema

runs = sa.Table(
    "runs", metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("started", sa.Text, nullable=False),
    sa.Column("finished", sa.Text),
    sa.Column("complete", sa.Boolean, nullable=False, default=False),
    sa.Column("source", sa.Text, nullable=False),      # "sslperf speed", "openssl speed" (imported) …
    sa.Column("host", sa.Text),
    sa.Column("settings", sa.JSON, nullable=False),
    sa.Column("environment", sa.JSON, nullable=False),
    sa.Column("warnings", sa.JSON, nullable=False),
    sa.Column("state", sa.String(16)),                  # STATES; NULL in runs stored before states
)

run_libs = sa.Table(
    "run_libs", metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True),
    sa.Column("name", sa.Text, nullable=False, index=True),
    sa.Column("flavor", sa.Text),
    sa.Column("version", sa.Text),
    sa.Column("version_string", sa.Text),
    sa.Column("variant", sa.Text),
    sa.Column("kind", sa.Text),
    sa.Column("ia32cap", sa.Text),
)

measurements = sa.Table(
    "measurements", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
    sa.Column("case_id", sa.Text, nullable=False),
    sa.Column("family", sa.Text),
    sa.Column("grp", sa.Text),
    sa.Column("algorithm", sa.Text),
    sa.Column("operation", sa.Text),
    sa.Column("size", sa.BigInteger),
    sa.Column("workload", sa.Text),
    sa.Column("lib", sa.Text, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("reason", sa.Text),
    sa.Column("unit", sa.Text),
    sa.Column("bytes_per_op", sa.BigInteger),
    sa.Column("note", sa.Text),
    sa.Column("ops", sa.JSON, nullable=False),
    sa.Column("wall_ns", sa.JSON, nullable=False),
    sa.Column("cpu_ns", sa.JSON, nullable=False),
    sa.Column("reported_rates", sa.JSON),
    sa.Column("extra", sa.JSON),
    sa.UniqueConstraint("run_id", "case_id", "lib"),
)


# This machine's measured noise floor (`sslperf noise`): per family and kind
# ("within" one run, "across" runs), the 95th percentile of the changes an A/A experiment saw.
noise_floors = sa.Table(
    "noise_floors", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("host", sa.Text, nullable=False, index=True),
    sa.Column("measured", sa.Text, nullable=False),
    sa.Column("lib", sa.Text, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("family", sa.Text, nullable=False),
    sa.Column("floor", sa.Float, nullable=False),
    sa.Column("comparisons", sa.BigInteger, nullable=False),
    sa.Column("runs", sa.JSON, nullable=False),
)

URL_HINT = ("Give --db (or SSLPERF_DB) as sqlite:///path/to/file.db or postgresql://user@host/db, and check that "
            "the database server is running.")


class StoreError(SslperfError):
    """A database error, explained. `cause` is one of "locked", "unavailable"
    (server down or unreachable), "cannot-open", "value" (out of range or not
    storable), "duplicate", "schema" or "other"."""

    def __init__(self, message: str, hint: str | None = None, cause: str = "other"):
        super().__init__(message, hint)
        self.cause = cause

    @property
    def transient(self) -> bool:
        """Whether the same write may succeed later (a lock, a server that comes back)."""
        return self.cause in ("locked", "unavailable")


def default_url() -> str:
    return os.environ.get("SSLPERF_DB") or f"sqlite:///{paths.data_dir() / 'sslperf.db'}"


@dataclass
class _Live:
    """A run being measured into this store (between `begin` and `finish`)."""
    failure: StoreError | None = None            # the first write the store refused
    suspended: bool = False                      # a transient failure: no more writes until `finish`
    pending: dict[tuple[str, str], Measurement] = field(default_factory=dict)


class Store:
    def __init__(self, url: str | None = None, timeout: float | None = None):
        try:
            self.url = url or default_url()
        except OSError as exc:
            raise SslperfError(f"Cannot create the data directory for the results store: {exc}.",
                               hint="Set SSLPERF_DATA_DIR to a writable directory, or give --db.") from None
        self.timeout = timeout if timeout is not None else _env_timeout()
        self._live: dict[str, _Live] = {}
        try:
            parsed = sa.engine.make_url(self.url)
        except (SQLAlchemyError, ValueError):
            raise SslperfError(f"`{_mask(self.url)}` is not a database URL.", hint=URL_HINT) from None
        self.backend = parsed.get_backend_name()
        try:
            if self.backend == "sqlite":
                self.engine = sa.create_engine(parsed, connect_args={"timeout": self.timeout},
                                               json_serializer=_json_dumps)
                sa.event.listen(self.engine, "connect", _sqlite_pragmas(self.timeout))
            else:
                connect_args = {}
                if parsed.get_driver_name() in ("psycopg", "psycopg2") and "connect_timeout" not in parsed.query:
                    connect_args["connect_timeout"] = max(1, round(min(self.timeout, 30)))
                self.engine = sa.create_engine(parsed, pool_pre_ping=True, json_serializer=_json_dumps,
                                               connect_args=connect_args)
                if self.backend == "postgresql":
                    sa.event.listen(self.engine, "connect", _postgres_settings(self.timeout))
        except ImportError as exc:
            raise SslperfError(f"Cannot open the results store {self._safe_url()}: its database driver is not "
                               f"installed ({exc}).",
                               hint="sslperf keeps runs in SQLite (sqlite:///path) or PostgreSQL "
                               "(postgresql://user@host/db, driver psycopg).") from None
        except SQLAlchemyError as exc:
            raise SslperfError(f"Cannot open the results store {self._safe_url()}: {_first_line(exc)}.",
                               hint="sslperf keeps runs in SQLite (sqlite:///path) or PostgreSQL "
                               "(postgresql://user@host/db); `postgres://` is spelled `postgresql://`.") from None
        # The driver's own errors, for those raised outside SQLAlchemy's wrapping (connect events).
        self._driver_error = getattr(getattr(self.engine.dialect, "loaded_dbapi", None), "Error", SQLAlchemyError)
        with self._guard(None):
            self._ensure_schema()

    def _safe_url(self) -> str:
        try:
            return sa.engine.make_url(self.url).render_as_string(hide_password=True)
        except (SQLAlchemyError, ValueError):
            return _mask(self.url)

    # ---- the schema ------------------------------------------------------

    def _ensure_schema(self) -> None:
        """Create the tables and migrate old ones, race-safe: a cheap check
        first, then the work under a lock, checked again inside it."""
        with self.engine.connect() as conn:
            missing, changes = _schema_changes(conn)
        if not missing and not changes:
            return
        if self.backend not in ("sqlite", "postgresql"):         # no lock to take: tolerate a racing creator
            try:
                with self.engine.begin() as conn:
                    _create(conn)
            except SQLAlchemyError:
                time.sleep(0.5)
                with self.engine.begin() as conn:
                    _create(conn)
            return
        with self.engine.connect() as conn:
            if self.backend == "sqlite":
                conn.exec_driver_sql("BEGIN IMMEDIATE")            # the write lock, waiting up to the busy timeout
            else:                                                  # held until the commit
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK})
            _create(conn)
            conn.commit()

    # ---- writing ---------------------------------------------------------

    def begin(self, run: Run, source: str = "sslperf speed") -> None:
        """Record a run that is starting (state "running", incomplete until `finish`)."""
        with self._write(f"record the start of run {run.id}") as conn:
            conn.execute(runs.insert().values(**_run_row(run, source, "running", finished=None, complete=False,
                                                         warnings=[])))
            for position, lib in enumerate(run.libs):
                conn.execute(run_libs.insert().values(**_lib_row(run.id, position, lib)))
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
        live = self._live.pop(run.id, None)
        pending = list(live.pending.values()) if live else []
        end = _end_values(run)
        try:
            with self._write(f"record the end of run {run.id}") as conn:
                for m in pending:
                    _insert_measurement(conn, run.id, m, replace=True)
                conn.execute(runs.update().where(runs.c.id == run.id).values(**end))
            return
        except StoreError as exc:
            if not pending or exc.transient:
                lost = (f" {_results(len(pending))} not in the store, and the stored run stays marked "
                        "running there." if pending else
                        " The store has every result of this run, but the run stays marked running there.")
                raise StoreError(exc.message + lost, exc.hint, exc.cause) from exc
            failure = exc
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
                conn.execute(runs.update().where(runs.c.id == run.id).values(**end))
            return
        note = (f"{_results(len(refused))} not in the store ({', '.join(refused[:5])}"
                f"{' …' if len(refused) > 5 else ''}): {failure.message}")
        with self._write(f"record the end of run {run.id}") as conn:
            conn.execute(runs.update().where(runs.c.id == run.id).values(
                **{**end, "complete": False, "warnings": [*run.warnings, note]}))
        raise StoreError(note, failure.hint, failure.cause)

    def save(self, run: Run, source: str) -> None:
        """A whole run (an import) in one transaction: all of it or nothing."""
        what = f"import run {run.id}" + (f" ({run.settings['file']})" if run.settings.get("file") else "")
        with self._write(what) as conn:
            conn.execute(runs.insert().values(**_run_row(run, source, _final_state(run),
                                                         finished=run.finished, complete=run.complete,
                                                         warnings=run.warnings)))
            for position, lib in enumerate(run.libs):
                conn.execute(run_libs.insert().values(**_lib_row(run.id, position, lib)))
            for m in run.measurements:
                _insert_measurement(conn, run.id, m, replace=False)

    def save_floors(self, host: str, measured: str, lib: str, floors: list[dict], run_ids: list[str]) -> None:
        """Keep a noise-floor experiment's figures (dicts with kind, family, floor, comparisons)."""
        with self._write("store the noise floors") as conn:
            for f in floors:
                conn.execute(noise_floors.insert().values(**_clean(dict(
                    host=host, measured=measured, lib=lib, kind=f["kind"], family=f["family"], floor=f["floor"],
                    comparisons=_int64(f["comparisons"], "the comparison count"), runs=run_ids))))

    def floors(self, host: str) -> dict[tuple[str, str], dict]:
        """The newest noise floor of `host` per (kind, family)."""
        with self._read("read the noise floors") as conn:
            rows = conn.execute(sa.select(noise_floors).where(noise_floors.c.host == _text(host))
                                .order_by(noise_floors.c.measured, noise_floors.c.id)).mappings().all()
        return {(r["kind"], r["family"]): dict(r) for r in rows}

    def delete(self, run_id: str) -> None:
        full = self.resolve(run_id)
        with self._write(f"delete run {full}") as conn:
            conn.execute(measurements.delete().where(measurements.c.run_id == full))
            conn.execute(run_libs.delete().where(run_libs.c.run_id == full))
            conn.execute(runs.delete().where(runs.c.id == full))

    @contextmanager
    def _write(self, what: str) -> Iterator[sa.Connection]:
        """One transaction; any database error in it (the commit included) as a StoreError."""
        with self._guard(what):
            with self.engine.begin() as conn:
                yield conn

    @contextmanager
    def _read(self, what: str) -> Iterator[sa.Connection]:
        with self._guard(what):
            with self.engine.connect() as conn:
                yield conn

    @contextmanager
    def _guard(self, what: str | None) -> Iterator[None]:
        try:
            yield
        except SslperfError:
            raise
        except (SQLAlchemyError, OverflowError, ValueError, self._driver_error) as exc:
            raise self._explain(exc, what) from exc

    def _explain(self, exc: BaseException, what: str | None) -> StoreError:
        """`exc` as one paragraph: what was being done, the cause, advice."""
        url = self._safe_url()
        cause, text = _classify(exc)
        lead = f"Cannot open the results store {url}" if what is None else \
            f"Could not {what} in the results store {url}"
        if cause == "locked" and self.backend == "sqlite":
            database = sa.engine.make_url(self.url).database or ":memory:"
            return StoreError(
                f"{lead}: the SQLite file {database} stayed locked for more than {self.timeout:g} s ({text}); "
                "another sslperf may be writing to it, or another program holds a transaction open on it.",
                "Wait for the other run to end and try again, or use another store for this run "
                "(--db sqlite:///other.db). SSLPERF_DB_TIMEOUT sets how many seconds to wait.", cause)
        if cause == "locked":
            return StoreError(f"{lead}: a lock stayed taken by another session for more than {self.timeout:g} s "
                              f"({text}).",
                              "Another sslperf or a database session holds it; wait for it and try again. "
                              "SSLPERF_DB_TIMEOUT sets how many seconds to wait.", cause)
        if cause == "unavailable":
            return StoreError(f"{lead}: the database server is down or unreachable ({text}).",
                              "Start the database server, or check the host, port and database name in --db "
                              "(or SSLPERF_DB).", cause)
        if cause == "cannot-open":
            return StoreError(f"{lead}: {text}.",
                              "Check that the file's directory exists and is writable by this user (SQLite), "
                              "or the user, password and database name (PostgreSQL). " + URL_HINT, cause)
        if cause == "value":
            return StoreError(f"{lead}: a value is out of range or cannot be stored ({text}).",
                              "Nothing of this write was stored. If the input is a real tool's output, this is a "
                              "bug in sslperf: please report it with the input.", cause)
        if cause == "duplicate":
            return StoreError(f"{lead}: it is already there ({text}).",
                              "`sslperf runs list` shows the runs kept.", cause)
        if cause == "schema":
            return StoreError(f"{lead}: its tables are not what this sslperf expects ({text}).",
                              "The database may belong to another program or a newer sslperf; use another "
                              "store with --db.", cause)
        return StoreError(f"{lead}: {text}.", None if what else URL_HINT, cause)

    # ---- reading ---------------------------------------------------------

    def list(self) -> list[dict]:
        """Runs, newest first, with their libraries, measurement counts and state."""
        with self._read("read the runs") as conn:
            rows = conn.execute(sa.select(runs).order_by(runs.c.started.desc(), runs.c.id.desc())).mappings().all()
            counts = dict(conn.execute(sa.select(measurements.c.run_id, sa.func.count())
                                       .group_by(measurements.c.run_id)).all())
            libs: dict[str, list[str]] = {}
            for row in conn.execute(sa.select(run_libs.c.run_id, run_libs.c.name).order_by(run_libs.c.position)):
                libs.setdefault(row.run_id, []).append(row.name)
        return [{**dict(row), "state": _state(row), "libs": libs.get(row["id"], []),
                 "measurements": counts.get(row["id"], 0)} for row in rows]

    def matching_runs(self, run_id: str) -> list[str]:
        """Run ids that `run_id` names: itself, ids it is a prefix of, or for
        `latest` the newest run the user made that is complete (LATEST)."""
        with self._read("look up runs") as conn:
            if run_id == "latest":
                return list(conn.execute(sa.select(runs.c.id).where(_users_complete())
                                         .order_by(runs.c.started.desc(), runs.c.id.desc()).limit(1)).scalars())
            return list(conn.execute(sa.select(runs.c.id).where(runs.c.id.startswith(_text(run_id),
                                                                                     autoescape=True)))
                        .scalars())

    def resolve(self, run_id: str) -> str:
        """A full run id from an id or a unique prefix (or `latest`)."""
        found = self.matching_runs(run_id)
        if len(found) == 1:
            return found[0]
        if not found and run_id == "latest":
            raise self._no_latest(self.newest_run())
        if not found:
            raise SslperfError(f"No run `{run_id}` in the store {self._safe_url()}.",
                               hint="`sslperf runs list` shows the runs kept.")
        raise SslperfError(f"`{run_id}` matches {len(found)} runs ({', '.join(found[:4])} …); give more of the id.")

    def _no_latest(self, newest: dict | None, lib: str | None = None) -> SslperfError:
        """Why nothing counts as `latest` (or as `lib`'s latest run)."""
        if newest is None:
            if lib:
                return SslperfError(f"No run in the store has measured `{lib}`.",
                                    hint=f"Measure it first: `sslperf speed --lib {lib}` (or import its "
                                    "`openssl speed` output with `sslperf import`).")
            return SslperfError(f"No run `latest` in the store {self._safe_url()}: it holds no run yet.",
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

    def newest_run(self, lib_name: str | None = None) -> dict | None:
        """The newest run of any kind (with `lib_name`, if given): id, source, state, started."""
        query = sa.select(runs)
        if lib_name is not None:
            query = query.join(run_libs, run_libs.c.run_id == runs.c.id).where(run_libs.c.name == _text(lib_name))
        with self._read("look up runs") as conn:
            row = conn.execute(query.order_by(runs.c.started.desc(), runs.c.id.desc()).limit(1)).mappings().first()
        return None if row is None else {"id": row["id"], "source": row["source"], "state": _state(row),
                                         "started": row["started"]}

    def load(self, run_id: str) -> Run:
        full = self.resolve(run_id)
        with self._read(f"read run {full}") as conn:
            row = conn.execute(sa.select(runs).where(runs.c.id == full)).mappings().one()
            libs = conn.execute(sa.select(run_libs).where(run_libs.c.run_id == full)
                                .order_by(run_libs.c.position)).mappings().all()
            rows = conn.execute(sa.select(measurements).where(measurements.c.run_id == full)
                                .order_by(measurements.c.id)).mappings().all()
        run = Run(row["id"], row["started"], row["settings"], row["environment"], warnings=row["warnings"],
                  finished=row["finished"], complete=row["complete"], state=_state(row))
        run.settings = {**run.settings, "source": row["source"]}
        run.libs = [LibInfo(**{k: v for k, v in lib.items() if k not in ("run_id", "position")}) for lib in libs]
        run.measurements = [_measurement_from_row(r) for r in rows]
        return run

    def stored_cases(self) -> list[str]:
        """The ids of every case some run measured, sorted."""
        with self._read("read the cases measured") as conn:
            return sorted(conn.execute(sa.select(measurements.c.case_id).where(measurements.c.status == "ok")
                                       .distinct()).scalars())

    def results(self, case_ids: list[str] | None = None, hosts: list[str] | None = None) -> list[StoredResult]:
        """Every measured (status ok) result of `case_ids` (all cases when None)
        across the stored runs, on `hosts` (all when None), oldest run first:
        the history and hosts views read these."""
        query = (sa.select(measurements, runs.c.started, runs.c.host, runs.c.source, runs.c.state, runs.c.complete,
                           runs.c.environment, runs.c.settings, run_libs.c.flavor, run_libs.c.version, run_libs.c.variant)
                 .join(runs, runs.c.id == measurements.c.run_id)
                 .join(run_libs, (run_libs.c.run_id == measurements.c.run_id) & (run_libs.c.name == measurements.c.lib))
                 .where(measurements.c.status == "ok").order_by(runs.c.started, measurements.c.id))
        if case_ids is not None:
            query = query.where(measurements.c.case_id.in_([_text(c) for c in case_ids]))
        if hosts is not None:
            query = query.where(runs.c.host.in_([_text(h) for h in hosts]))
        with self._read("read results across runs") as conn:
            rows = conn.execute(query).mappings().all()
        return [StoredResult(r["run_id"], r["started"], r["host"] or "", r["source"], _state(r),
                             r["environment"] or {}, r["flavor"] or "", r["version"] or "", r["variant"] or "",
                             _measurement_from_row(r), r["settings"] or {}) for r in rows]

    def latest_run_with(self, lib_name: str) -> str | None:
        """The newest complete run the user made (as `latest`) that measured or imported `lib_name`."""
        with self._read("look up runs") as conn:
            return conn.execute(
                sa.select(runs.c.id).join(run_libs, run_libs.c.run_id == runs.c.id)
                .where((run_libs.c.name == _text(lib_name)) & _users_complete())
                .order_by(runs.c.started.desc(), runs.c.id.desc()).limit(1)
            ).scalar()

    def no_latest_with(self, lib_name: str) -> SslperfError:
        """The error for a library with no run `latest_run_with` would pick, naming the runs that exist."""
        return self._no_latest(self.newest_run(lib_name), lib_name)


# Runs a verb makes for its own purposes, not results the user asked for: never `latest`.
INTERNAL_SOURCES = ("sslperf recommend", "sslperf noise", "sslperf bisect")


def _users_complete():
    """The runs `latest` may name (LATEST); runs from before states count by their `complete` flag."""
    return runs.c.source.notin_(INTERNAL_SOURCES) & sa.or_(
        runs.c.state == "complete", runs.c.state.is_(None) & (runs.c.complete == sa.true()))


# ---- rows ------------------------------------------------------------------

@dataclass(frozen=True)
class StoredResult:
    """One stored measurement with the facts of its run and library."""
    run_id: str
    started: str
    host: str
    source: str
    state: str
    environment: dict
    flavor: str
    version: str
    variant: str
    measurement: Measurement
    settings: dict = field(default_factory=dict)


def _text(value):
    """A string as the text columns keep it: NUL (which PostgreSQL refuses) as ␀."""
    return value.replace("\x00", NUL_REPLACEMENT) if isinstance(value, str) else value


def _clean(row: dict) -> dict:
    return {k: _text(v) for k, v in row.items()}


def _int64(value, what: str):
    if isinstance(value, int) and not INT64[0] <= value <= INT64[1]:
        raise OverflowError(f"{what} is {value}, beyond the 64-bit integers the store keeps")
    return value


def _final_state(run: Run) -> str:
    if run.state in STATES and run.state != "running":
        return run.state
    return "complete" if run.complete else "interrupted"


def _end_values(run: Run) -> dict:
    import datetime as dt

    finished = run.finished or dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    return {"finished": _text(finished), "complete": run.complete, "state": _final_state(run),
            "warnings": run.warnings}


def _run_row(run: Run, source: str, state: str, **values) -> dict:
    return _clean({"id": run.id, "started": run.started, "source": source, "host": run.environment.get("host"),
                   "settings": run.settings, "environment": run.environment, "state": state, **values})


def _lib_row(run_id: str, position: int, lib: LibInfo) -> dict:
    return _clean({"run_id": run_id, "position": position, **vars(lib)})


def _insert_measurement(conn, run_id: str, m: Measurement, replace: bool) -> None:
    row = _measurement_row(m)
    if replace:
        conn.execute(measurements.delete().where(
            (measurements.c.run_id == run_id) & (measurements.c.case_id == row["case_id"])
            & (measurements.c.lib == row["lib"])))
    conn.execute(measurements.insert().values(run_id=run_id, **row))


def _measurement_row(m: Measurement) -> dict:
    where = f"of {m.case} on {m.lib}"
    return _clean({
        "case_id": m.case, "family": m.family, "grp": m.group, "algorithm": m.algorithm,
        "operation": m.operation, "size": _int64(m.size, f"the size {where}"), "workload": m.workload, "lib": m.lib,
        "status": m.status, "reason": m.reason, "unit": m.unit,
        "bytes_per_op": _int64(m.bytes_per_op, f"the bytes per operation {where}"), "note": m.note, "ops": m.ops,
        "wall_ns": m.wall_ns, "cpu_ns": m.cpu_ns, "reported_rates": m.reported_rates, "extra": m.extra})


def _measurement_from_row(r) -> Measurement:
    return Measurement(r["case_id"], r["family"], r["grp"], r["algorithm"], r["operation"], r["size"], r["workload"],
                       r["lib"], r["status"], r["reason"], r["unit"], r["bytes_per_op"], list(r["ops"]),
                       list(r["wall_ns"]), list(r["cpu_ns"]), r["note"],
                       list(r["reported_rates"]) if r["reported_rates"] is not None else None, r["extra"])


def _state(row) -> str:
    """A run's state; runs stored before states were recorded: complete or incomplete."""
    state = row.get("state")
    return state or ("complete" if row["complete"] else "incomplete")


def _json_dumps(value) -> str:
    """JSON as both databases can keep it: NaN and infinities are refused
    (PostgreSQL's json type has no spelling for them)."""
    try:
        return json.dumps(value, allow_nan=False)
    except ValueError:
        raise ValueError(f"a JSON value holds NaN or infinity ({_first_bad_float(value)})") from None


def _first_bad_float(value) -> str:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return repr(item)
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return "?"


# ---- the schema --------------------------------------------------------------

def _create(conn) -> None:
    """The tables, and the changes an old schema needs (inside the caller's lock)."""
    metadata.create_all(conn)                 # checks which tables exist first
    for statement in _schema_changes(conn)[1]:
        conn.exec_driver_sql(statement)


def _schema_changes(conn) -> tuple[bool, list[str]]:
    """(whether a table is missing, the ALTER statements an old schema needs)."""
    inspector = sa.inspect(conn)
    if not set(metadata.tables) <= set(inspector.get_table_names()):
        return True, []
    quote = conn.dialect.identifier_preparer
    statements = []
    for table in metadata.sorted_tables:
        have = {c["name"]: c["type"] for c in inspector.get_columns(table.name)}
        for column in table.columns:
            prefix = f"ALTER TABLE {quote.format_table(table)} "
            if column.name not in have:         # only nullable columns are ever added (runs.state)
                statements.append(prefix + f"ADD COLUMN {quote.format_column(column)} "
                                  f"{column.type.compile(conn.dialect)}")
                continue
            if conn.dialect.name != "postgresql":     # SQLite ignores VARCHAR lengths; its INTEGER is 64-bit
                continue
            old = have[column.name]
            alter = prefix + f"ALTER COLUMN {quote.format_column(column)} TYPE "
            if isinstance(column.type, sa.Text) and isinstance(old, sa.String) and not isinstance(old, sa.Text):
                statements.append(alter + "TEXT")
            elif isinstance(column.type, sa.BigInteger) and isinstance(old, sa.Integer) \
                    and not isinstance(old, sa.BigInteger):
                statements.append(alter + "BIGINT")
    return False, statements


def _sqlite_pragmas(timeout: float):
    def pragmas(dbapi_connection, _record) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        cursor.execute("PRAGMA foreign_keys=ON")
        # Switching a new file to WAL needs its exclusive lock, which may not wait for the busy
        # timeout when several processes open the file at once: retry until the timeout.
        deadline = time.monotonic() + timeout
        while True:
            try:
                cursor.execute("PRAGMA journal_mode=WAL")
                break
            except Exception as exc:         # sqlite3.OperationalError: database is locked
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
        cursor.close()
    return pragmas


def _postgres_settings(timeout: float):
    def settings(dbapi_connection, _record) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute(f"SET lock_timeout = {int(timeout * 1000)}")
        cursor.close()
        dbapi_connection.commit()
    return settings


def _env_timeout() -> float:
    value = os.environ.get("SSLPERF_DB_TIMEOUT")
    if not value:
        return DEFAULT_TIMEOUT
    try:
        seconds = float(value)
        if not 0 < seconds < 1e6:
            raise ValueError
        return seconds
    except ValueError:
        raise SslperfError(f"SSLPERF_DB_TIMEOUT={value!r} is not a number of seconds.",
                           hint="Give a positive number, e.g. SSLPERF_DB_TIMEOUT=120.") from None


def _classify(exc: BaseException) -> tuple[str, str]:
    """(cause, the driver's first line) of a database error."""
    orig = getattr(exc, "orig", None) or exc
    text = _first_line(orig)
    low = str(orig).lower()
    code = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None) or ""
    name = type(orig).__name__
    if isinstance(orig, (OverflowError, ValueError, TypeError)) and not isinstance(orig, SQLAlchemyError):
        return "value", text
    if "locked" in low or "busy" in low or code in ("55P03", "40P01") or "lock timeout" in low:
        return "locked", text
    if code.startswith("22") or name == "DataError" or "out of range" in low or "too long" in low \
            or "nul (0x00)" in low or "too large" in low:
        return "value", text
    if code == "23505" or "unique" in low or "duplicate key" in low:
        return "duplicate", text
    if code.startswith("28") or code in ("3D000", "42501") or any(
            s in low for s in ("unable to open database", "readonly database", "permission denied",
                               "not a database", "authentication failed",
                               "database or disk is full", "disk i/o error")) \
            or (not code.startswith("42") and "does not exist" in low):
        return "cannot-open", text
    if code.startswith("42") or "no such table" in low or "no such column" in low or "has no column" in low:
        return "schema", text
    if code.startswith("08") or code in ("57P01", "57P02", "57P03") or any(
            s in low for s in ("connection refused", "could not connect", "connection failed", "server closed",
                               "terminating connection", "timeout expired", "connection is lost",
                               "no route to host", "could not translate host name", "is the server running")):
        return "unavailable", text
    if isinstance(orig, (OverflowError, ValueError)) or "integrityerror" in name.lower() or code.startswith("23"):
        return "value", text
    return "other", text


def _results(count: int) -> str:
    return "1 result is" if count == 1 else f"{count} results are"


def _mask(url: str) -> str:
    """A URL-ish string with any password hidden."""
    return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", url)


def _first_line(exc: BaseException) -> str:
    """The driver's message without SQLAlchemy's [SQL: …] lines; a first line
    that ends in ":" ("Multiple connection attempts failed. All failures
    were:") is continued by the next."""
    lines = [line.strip().lstrip("- ").strip() for line in str(getattr(exc, "orig", None) or exc).splitlines()]
    lines = [line for line in lines if line]
    if not lines:
        return type(exc).__name__
    text, rest = lines[0], lines[1:]
    while text.endswith(":") and rest:
        text = f"{text} {rest.pop(0)}"
    return text
