"""The store's tables, one schema for SQLite and PostgreSQL, and how a
database gets them.

The schema is created and migrated (old databases gain `runs.state`; on
PostgreSQL VARCHAR(n) columns become TEXT and INTEGER sizes BIGINT) under
a lock — SQLite `BEGIN IMMEDIATE`, a PostgreSQL advisory lock — so any
number of processes may open a new database at once.

Strings that come from outside (names, version strings, the ia32cap
vector, notes) are TEXT, sizes and counts 64-bit (BIGINT), so everything an
importer or a run produces fits on both databases.
"""

from __future__ import annotations

import time

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

metadata = sa.MetaData()

STATES = ("running", "complete", "interrupted", "crashed")
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
    sa.Column("owner", sa.JSON),                        # the process measuring it (store.owner); NULL in older runs
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


def ensure_schema(engine: sa.Engine) -> None:
    """Create the tables and migrate old ones, race-safe: a cheap check
    first, then the work under a lock, checked again inside it."""
    with engine.connect() as conn:
        missing, changes = _schema_changes(conn)
    if not missing and not changes:
        return
    backend = engine.url.get_backend_name()
    if backend not in ("sqlite", "postgresql"):             # no lock to take: tolerate a racing creator
        try:
            with engine.begin() as conn:
                _create(conn)
        except SQLAlchemyError:
            time.sleep(0.5)
            with engine.begin() as conn:
                _create(conn)
        return
    with engine.connect() as conn:
        if backend == "sqlite":
            conn.exec_driver_sql("BEGIN IMMEDIATE")            # the write lock, waiting up to the busy timeout
        else:                                                  # held until the commit
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": SCHEMA_LOCK})
        _create(conn)
        conn.commit()


def readable_schema(engine: sa.Engine) -> bool:
    """Make a store this user cannot write readable as it is, creating and migrating nothing; False when it has
    no `runs` table (not a store sslperf made). What an older store lacks (only nullable columns and whole tables
    are ever added) reads as NULL, or as an empty table: on each connection a TEMP view of the table's name, which
    SQLite looks up in the connection's own temp schema before the file's."""
    with engine.connect() as conn:
        inspector = sa.inspect(conn)
        tables = set(inspector.get_table_names())
        if runs.name not in tables:
            return False
        missing = {table: [c.name for c in table.columns if table.name not in tables or c.name not in
                           {have["name"] for have in inspector.get_columns(table.name)}]
                   for table in metadata.sorted_tables}
    views = [_view(table, columns, table.name in tables) for table, columns in missing.items() if columns]
    if views and engine.url.get_backend_name() == "sqlite":
        sa.event.listen(engine, "connect", _creating(views))
        engine.dispose()                   # the connection that looked was made without them
    return True


def _creating(views: list[str]):
    def create(dbapi_connection, _record) -> None:
        for view in views:
            dbapi_connection.execute(view)
    return create


def _view(table: sa.Table, columns: list[str], exists: bool) -> str:
    """A TEMP view named as `table`: its rows with the `columns` it lacks as NULL, or (not `exists`) no rows."""
    added = ", ".join(f'NULL AS "{column}"' for column in columns)
    rows = f'*, {added} FROM main."{table.name}"' if exists else f"{added} WHERE 0"
    return f'CREATE TEMP VIEW IF NOT EXISTS "{table.name}" AS SELECT {rows}'


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
