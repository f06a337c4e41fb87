"""Opening the database a store lives in: its URL, how long to wait for a
lock, and the connection settings of each backend.

SQLite runs in WAL mode with a busy timeout, so two runs writing at once
lose nothing. How long to wait for a lock: `timeout` (seconds), else
SSLPERF_DB_TIMEOUT, else 60.

A SQLite file this user cannot write (or whose directory it cannot: SQLite
writes its -wal and -shm files there) is opened read-only (read_only_file):
it can be read, and nothing tries to write to it.
"""

from __future__ import annotations

import os
import time
import urllib.parse

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


def read_only_file(url: str) -> str | None:
    """The path of the SQLite file `url` names when it exists and this user cannot write it or its directory
    (chmod, a read-only mount), else None (PostgreSQL, a new file, a writable one, a URL already in SQLite's
    own `file:` form)."""
    try:
        parsed = sa.engine.make_url(url)
    except (SQLAlchemyError, ValueError):
        return None
    path = parsed.database
    if parsed.get_backend_name() != "sqlite" or not path or path == ":memory:" or "uri" in parsed.query:
        return None
    if not os.path.isfile(path):
        return None
    writable = os.access(path, os.W_OK) and os.access(os.path.dirname(os.path.abspath(path)), os.W_OK)
    return None if writable else path


def _read_only_url(parsed: sa.engine.URL) -> sa.engine.URL:
    """`parsed` (a SQLite file) as a read-only `file:` URI. Without a -wal file beside it (none is left once the
    last writer closed the file) it is also opened `immutable`: SQLite then needs no -shm file, which it could
    not make in a directory it cannot write and without which it would refuse a WAL-mode file. (A file that
    changed while read so would read wrong; one this user may not write is, in practice, an archive.)"""
    path = os.path.abspath(parsed.database)
    uri = {"uri": "true", "mode": "ro", **({} if os.path.exists(path + "-wal") else {"immutable": "1"})}
    return parsed.set(database=f"file:{urllib.parse.quote(path)}", query={**parsed.query, **uri})


def open_engine(url: str, timeout: float, read_only: bool = False) -> sa.Engine:
    """The engine for `url` (with `read_only`, a SQLite file opened read-only); nothing is connected yet, so a
    server that is down is not an error here."""
    try:
        parsed = sa.engine.make_url(url)
    except (SQLAlchemyError, ValueError):
        raise SslperfError(f"`{mask(url)}` is not a database URL.", hint=URL_HINT) from None
    try:
        if parsed.get_backend_name() == "sqlite":
            engine = sa.create_engine(_read_only_url(parsed) if read_only else parsed,
                                      connect_args={"timeout": timeout}, json_serializer=json_for_store,
                                      json_deserializer=json_from_store)
            sa.event.listen(engine, "connect", _sqlite_pragmas(timeout, read_only))
            return engine
        parsed = _with_password_file(parsed)
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


PASSWORD_FILE = "SSLPERF_DB_PASSWORD_FILE"


def _with_password_file(parsed: sa.engine.URL) -> sa.engine.URL:
    """`parsed` with the password SSLPERF_DB_PASSWORD_FILE holds, when the URL has none: a password kept in a file
    (a Kubernetes Secret mounted read-only) is then in no URL, environment, command line or fleet task."""
    path = os.environ.get(PASSWORD_FILE)
    if not path or parsed.password is not None or parsed.get_backend_name() != "postgresql":
        return parsed
    try:
        with open(path, encoding="utf-8") as held:
            password = held.read(4097).rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise SslperfError(f"{PASSWORD_FILE} names {path}, which cannot be read as the store's password "
                           f"({getattr(exc, 'strerror', None) or exc}).",
                           hint="Point it at a readable file holding the password alone, or unset it.") from None
    if not password or len(password) > 4096 or "\n" in password:
        raise SslperfError(f"{PASSWORD_FILE} names {path}, which does not hold one password (one line, 1 to 4096 "
                           "characters).", hint="Write the password alone into it, or unset the variable.")
    return parsed.set(password=password)


def driver_error(engine: sa.Engine) -> type:
    """The driver's own error class, for errors raised outside SQLAlchemy's wrapping (connect events)."""
    return getattr(getattr(engine.dialect, "loaded_dbapi", None), "Error", SQLAlchemyError)


def _sqlite_pragmas(timeout: float, read_only: bool = False):
    def pragmas(dbapi_connection, _record) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        cursor.execute("PRAGMA foreign_keys=ON")
        if read_only:                        # switching to WAL is a write: a read-only file stays as it is
            cursor.close()
            return
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
