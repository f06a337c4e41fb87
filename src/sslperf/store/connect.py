"""Opening the database a store lives in: its URL, how long to wait for a
lock, and the connection settings of each backend.

SQLite runs in WAL mode with a busy timeout, so two runs writing at once
lose nothing. How long to wait for a lock: `timeout` (seconds), else
SSLPERF_DB_TIMEOUT, else 60.
"""

from __future__ import annotations

import os
import time

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

from sslperf import paths
from sslperf.errors import SslperfError
from sslperf.store.errors import URL_HINT, first_line, mask, safe_url
from sslperf.store.rows import json_for_store, json_from_store

DEFAULT_TIMEOUT = 60.0


def default_url() -> str:
    return os.environ.get("SSLPERF_DB") or f"sqlite:///{paths.data_dir() / 'sslperf.db'}"


def store_url(url: str | None) -> str:
    """`url`, else SSLPERF_DB, else the SQLite file in the data directory (created here)."""
    try:
        return url or default_url()
    except OSError as exc:
        raise SslperfError(f"Cannot create the data directory for the results store: {exc}.",
                           hint="Set SSLPERF_DATA_DIR to a writable directory, or give --db.") from None


def lock_timeout(timeout: float | None) -> float:
    """Seconds to wait for a lock: `timeout`, else SSLPERF_DB_TIMEOUT, else DEFAULT_TIMEOUT."""
    if timeout is not None:
        return timeout
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


def open_engine(url: str, timeout: float) -> sa.Engine:
    """The engine for `url`; nothing is connected yet, so a server that is down is not an error here."""
    try:
        parsed = sa.engine.make_url(url)
    except (SQLAlchemyError, ValueError):
        raise SslperfError(f"`{mask(url)}` is not a database URL.", hint=URL_HINT) from None
    try:
        if parsed.get_backend_name() == "sqlite":
            engine = sa.create_engine(parsed, connect_args={"timeout": timeout}, json_serializer=json_for_store,
                                      json_deserializer=json_from_store)
            sa.event.listen(engine, "connect", _sqlite_pragmas(timeout))
            return engine
        connect_args = {}
        if parsed.get_driver_name() in ("psycopg", "psycopg2") and "connect_timeout" not in parsed.query:
            connect_args["connect_timeout"] = max(1, round(min(timeout, 30)))
        engine = sa.create_engine(parsed, pool_pre_ping=True, json_serializer=json_for_store,
                                  json_deserializer=json_from_store, connect_args=connect_args)
        if parsed.get_backend_name() == "postgresql":
            sa.event.listen(engine, "connect", _postgres_settings(timeout))
        return engine
    except ImportError as exc:
        raise SslperfError(f"Cannot open the results store {safe_url(url)}: its database driver is not "
                           f"installed ({exc}).",
                           hint="sslperf keeps runs in SQLite (sqlite:///path) or PostgreSQL "
                           "(postgresql://user@host/db, driver psycopg).") from None
    except SQLAlchemyError as exc:
        raise SslperfError(f"Cannot open the results store {safe_url(url)}: {first_line(exc)}.",
                           hint="sslperf keeps runs in SQLite (sqlite:///path) or PostgreSQL "
                           "(postgresql://user@host/db); `postgres://` is spelled `postgresql://`.") from None


def driver_error(engine: sa.Engine) -> type:
    """The driver's own error class, for errors raised outside SQLAlchemy's wrapping (connect events)."""
    return getattr(getattr(engine.dialect, "loaded_dbapi", None), "Error", SQLAlchemyError)


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
