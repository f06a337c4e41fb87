"""The store: every run is kept, in SQLite in the user's data directory by
default or in PostgreSQL (`--db postgresql://…`) for a team that gathers
runs from many machines. One schema for both.

Each finished case is committed as it ends, so an interrupted run keeps
everything measured so far and stays marked incomplete. SQLite runs in WAL
mode with a busy timeout, so two runs writing at once lose nothing.
"""

from __future__ import annotations

import os

import sqlalchemy as sa
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from sslperf import paths
from sslperf.errors import SslperfError
from sslperf.results import LibInfo, Measurement, Run

metadata = sa.MetaData()

runs = sa.Table(
    "runs", metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("started", sa.String(40), nullable=False),
    sa.Column("finished", sa.String(40)),
    sa.Column("complete", sa.Boolean, nullable=False, default=False),
    sa.Column("source", sa.String(40), nullable=False),      # "sslperf speed", "openssl speed" (imported) …
    sa.Column("host", sa.String(255)),
    sa.Column("settings", sa.JSON, nullable=False),
    sa.Column("environment", sa.JSON, nullable=False),
    sa.Column("warnings", sa.JSON, nullable=False),
)

run_libs = sa.Table(
    "run_libs", metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(255), nullable=False, index=True),
    sa.Column("flavor", sa.String(40)),
    sa.Column("version", sa.String(80)),
    sa.Column("version_string", sa.String(255)),
    sa.Column("variant", sa.String(255)),
    sa.Column("kind", sa.String(40)),
    sa.Column("ia32cap", sa.String(80)),
)

measurements = sa.Table(
    "measurements", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False, index=True),
    sa.Column("case_id", sa.String(255), nullable=False),
    sa.Column("family", sa.String(40)),
    sa.Column("grp", sa.String(80)),
    sa.Column("algorithm", sa.String(80)),
    sa.Column("operation", sa.String(40)),
    sa.Column("size", sa.Integer),
    sa.Column("workload", sa.String(40)),
    sa.Column("lib", sa.String(255), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("reason", sa.Text),
    sa.Column("unit", sa.String(16)),
    sa.Column("bytes_per_op", sa.Integer),
    sa.Column("note", sa.Text),
    sa.Column("ops", sa.JSON, nullable=False),
    sa.Column("wall_ns", sa.JSON, nullable=False),
    sa.Column("cpu_ns", sa.JSON, nullable=False),
    sa.Column("reported_rates", sa.JSON),
    sa.Column("extra", sa.JSON),
    sa.UniqueConstraint("run_id", "case_id", "lib"),
)


# This machine's measured noise floor (`sslperf noise`): per family and kind
# ("within" one run, "across" runs), the largest change an A/A experiment saw.
noise_floors = sa.Table(
    "noise_floors", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("host", sa.String(255), nullable=False, index=True),
    sa.Column("measured", sa.String(40), nullable=False),
    sa.Column("lib", sa.String(255), nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("family", sa.String(40), nullable=False),
    sa.Column("floor", sa.Float, nullable=False),
    sa.Column("comparisons", sa.Integer, nullable=False),
    sa.Column("runs", sa.JSON, nullable=False),
)


def default_url() -> str:
    return os.environ.get("SSLPERF_DB") or f"sqlite:///{paths.data_dir() / 'sslperf.db'}"


class Store:
    def __init__(self, url: str | None = None):
        self.url = url or default_url()
        try:
            if self.url.startswith("sqlite"):
                self.engine = sa.create_engine(self.url, connect_args={"timeout": 60})
                sa.event.listen(self.engine, "connect", _sqlite_pragmas)
            else:
                self.engine = sa.create_engine(self.url, pool_pre_ping=True)
            metadata.create_all(self.engine)
        except (SQLAlchemyError, ImportError) as exc:
            raise SslperfError(f"Cannot open the results store {self._safe_url()}: {_first_line(exc)}.",
                               hint="Check the --db URL (sqlite:///path or postgresql://user@host/db) and that "
                               "the database server is running.") from None

    def _safe_url(self) -> str:
        return sa.engine.make_url(self.url).render_as_string(hide_password=True)

    # ---- writing ---------------------------------------------------------

    def begin(self, run: Run, source: str = "sslperf speed") -> None:
        """Record a run that is starting (incomplete until `finish`)."""
        with self._write() as conn:
            conn.execute(runs.insert().values(
                id=run.id, started=run.started, finished=None, complete=False, source=source,
                host=run.environment.get("host"), settings=run.settings, environment=run.environment, warnings=[]))
            for position, lib in enumerate(run.libs):
                conn.execute(run_libs.insert().values(run_id=run.id, position=position, **vars(lib)))

    def add(self, run_id: str, measurement: Measurement) -> None:
        """Commit one finished measurement."""
        with self._write() as conn:
            conn.execute(measurements.insert().values(run_id=run_id, **_measurement_row(measurement)))

    def finish(self, run: Run) -> None:
        with self._write() as conn:
            conn.execute(runs.update().where(runs.c.id == run.id).values(
                finished=run.finished, complete=run.complete, warnings=run.warnings))

    def save(self, run: Run, source: str) -> None:
        """A whole run (an import) in one transaction: all of it or nothing."""
        with self._write() as conn:
            conn.execute(runs.insert().values(
                id=run.id, started=run.started, finished=run.finished, complete=run.complete, source=source,
                host=run.environment.get("host"), settings=run.settings, environment=run.environment,
                warnings=run.warnings))
            for position, lib in enumerate(run.libs):
                conn.execute(run_libs.insert().values(run_id=run.id, position=position, **vars(lib)))
            for m in run.measurements:
                conn.execute(measurements.insert().values(run_id=run.id, **_measurement_row(m)))

    def save_floors(self, host: str, measured: str, lib: str, floors: list[dict], run_ids: list[str]) -> None:
        """Keep a noise-floor experiment's figures (dicts with kind, family, floor, comparisons)."""
        with self._write() as conn:
            for f in floors:
                conn.execute(noise_floors.insert().values(host=host, measured=measured, lib=lib, kind=f["kind"],
                                                          family=f["family"], floor=f["floor"],
                                                          comparisons=f["comparisons"], runs=run_ids))

    def floors(self, host: str) -> dict[tuple[str, str], dict]:
        """The newest noise floor of `host` per (kind, family)."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(noise_floors).where(noise_floors.c.host == host)
                                .order_by(noise_floors.c.measured, noise_floors.c.id)).mappings().all()
        return {(r["kind"], r["family"]): dict(r) for r in rows}

    def delete(self, run_id: str) -> None:
        full = self.resolve(run_id)
        with self._write() as conn:
            conn.execute(measurements.delete().where(measurements.c.run_id == full))
            conn.execute(run_libs.delete().where(run_libs.c.run_id == full))
            conn.execute(runs.delete().where(runs.c.id == full))

    def _write(self):
        try:
            return self.engine.begin()
        except OperationalError as exc:
            raise SslperfError(f"The results store {self._safe_url()} refused a write: {_first_line(exc)}.") from None

    # ---- reading ---------------------------------------------------------

    def list(self) -> list[dict]:
        """Runs, newest first, with their libraries and measurement counts."""
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(runs).order_by(runs.c.started.desc(), runs.c.id.desc())).mappings().all()
            counts = dict(conn.execute(sa.select(measurements.c.run_id, sa.func.count())
                                       .group_by(measurements.c.run_id)).all())
            libs: dict[str, list[str]] = {}
            for row in conn.execute(sa.select(run_libs.c.run_id, run_libs.c.name).order_by(run_libs.c.position)):
                libs.setdefault(row.run_id, []).append(row.name)
        return [{**dict(row), "libs": libs.get(row["id"], []), "measurements": counts.get(row["id"], 0)}
                for row in rows]

    def matching_runs(self, run_id: str) -> list[str]:
        """Run ids that `run_id` names: itself, ids it is a prefix of, or the newest for `latest`."""
        with self.engine.connect() as conn:
            if run_id == "latest":
                return list(conn.execute(sa.select(runs.c.id).order_by(runs.c.started.desc(), runs.c.id.desc())
                                         .limit(1)).scalars())
            return list(conn.execute(sa.select(runs.c.id).where(runs.c.id.startswith(run_id, autoescape=True)))
                        .scalars())

    def resolve(self, run_id: str) -> str:
        """A full run id from an id or a unique prefix (or `latest`)."""
        found = self.matching_runs(run_id)
        if len(found) == 1:
            return found[0]
        if not found:
            raise SslperfError(f"No run `{run_id}` in the store {self._safe_url()}.",
                               hint="`sslperf runs list` shows the runs kept.")
        raise SslperfError(f"`{run_id}` matches {len(found)} runs ({', '.join(found[:4])} …); give more of the id.")

    def load(self, run_id: str) -> Run:
        full = self.resolve(run_id)
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(runs).where(runs.c.id == full)).mappings().one()
            libs = conn.execute(sa.select(run_libs).where(run_libs.c.run_id == full)
                                .order_by(run_libs.c.position)).mappings().all()
            rows = conn.execute(sa.select(measurements).where(measurements.c.run_id == full)
                                .order_by(measurements.c.id)).mappings().all()
        run = Run(row["id"], row["started"], row["settings"], row["environment"], warnings=row["warnings"],
                  finished=row["finished"], complete=row["complete"])
        run.settings = {**run.settings, "source": row["source"]}
        run.libs = [LibInfo(**{k: v for k, v in lib.items() if k not in ("run_id", "position")}) for lib in libs]
        run.measurements = [_measurement_from_row(r) for r in rows]
        return run

    def latest_run_with(self, lib_name: str) -> str | None:
        """The newest run that measured or imported `lib_name`."""
        with self.engine.connect() as conn:
            return conn.execute(
                sa.select(runs.c.id).join(run_libs, run_libs.c.run_id == runs.c.id)
                .where(run_libs.c.name == lib_name).order_by(runs.c.started.desc(), runs.c.id.desc()).limit(1)
            ).scalar()


def _measurement_row(m: Measurement) -> dict:
    return {"case_id": m.case, "family": m.family, "grp": m.group, "algorithm": m.algorithm,
            "operation": m.operation, "size": m.size, "workload": m.workload, "lib": m.lib, "status": m.status,
            "reason": m.reason, "unit": m.unit, "bytes_per_op": m.bytes_per_op, "note": m.note, "ops": m.ops,
            "wall_ns": m.wall_ns, "cpu_ns": m.cpu_ns, "reported_rates": m.reported_rates, "extra": m.extra}


def _measurement_from_row(r) -> Measurement:
    return Measurement(r["case_id"], r["family"], r["grp"], r["algorithm"], r["operation"], r["size"], r["workload"],
                       r["lib"], r["status"], r["reason"], r["unit"], r["bytes_per_op"], list(r["ops"]),
                       list(r["wall_ns"]), list(r["cpu_ns"]), r["note"],
                       list(r["reported_rates"]) if r["reported_rates"] is not None else None, r["extra"])


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=60000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _first_line(exc: Exception) -> str:
    return str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
