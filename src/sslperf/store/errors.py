"""Database errors as one paragraph each.

Every database error becomes a StoreError (a SslperfError): one paragraph
naming the cause (locked, server down, value out of range …) and advice.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.exc import SQLAlchemyError

from sslperf.errors import SslperfError

URL_HINT = ("Give --db (or SSLPERF_DB) as sqlite:///path/to/file.db or postgresql://user@host/db, and check that "
            "the database server is running.")


class StoreError(SslperfError):
    """A database error, explained. `cause` is one of "locked", "unavailable"
    (server down or unreachable), "cannot-open", "damaged" (a SQLite file
    that is not one, or is truncated or corrupt), "value" (out of range or not
    storable), "duplicate", "schema" or "other"."""

    def __init__(self, message: str, hint: str | None = None, cause: str = "other"):
        super().__init__(message, hint)
        self.cause = cause

    @property
    def transient(self) -> bool:
        """Whether the same write may succeed later (a lock, a server that comes back)."""
        return self.cause in ("locked", "unavailable")


# Per cause (but a lock, whose text names the timeout): what went wrong ({text}: the driver's words), advice.
_EXPLANATIONS = {
    "unavailable": ("the database server is down or unreachable ({text})",
                    "Start the database server, or check the host, port and database name in --db (or SSLPERF_DB)."),
    "cannot-open": ("{text}",
                    "Check that the file's directory exists and is writable by this user (SQLite), or the user, "
                    "password and database name (PostgreSQL). " + URL_HINT),
    "value": ("a value is out of range or cannot be stored ({text})",
              "Nothing of this write was stored. If the input is a real tool's output, this is a bug in sslperf: "
              "please report it with the input."),
    "duplicate": ("it is already there ({text})", "`sslperf runs list` shows the runs kept."),
    "schema": ("its tables are not what this sslperf expects ({text})",
               "The database may belong to another program or a newer sslperf; use another store with --db."),
}


@dataclass(frozen=True)
class ErrorTranslator:
    """Turns the errors of one store's database into StoreErrors that name
    the store (its URL without the password) and its lock timeout."""
    url: str
    backend: str
    timeout: float
    driver_error: type = SQLAlchemyError    # the driver's own errors, raised outside SQLAlchemy's wrapping

    @contextmanager
    def guard(self, what: str | None) -> Iterator[None]:
        """Any database error in the block as a StoreError; `what` is being done (None: opening the store)."""
        try:
            yield
        except SslperfError:
            raise
        except (SQLAlchemyError, OverflowError, ValueError, self.driver_error) as exc:
            raise self.explain(exc, what) from exc

    def explain(self, exc: BaseException, what: str | None) -> StoreError:
        """`exc` as one paragraph: what was being done, the cause, advice."""
        url = safe_url(self.url)
        cause, text = classify(exc)
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
        if cause == "damaged":               # a file, never a server: no advice about servers
            database = sa.engine.make_url(self.url).database if self.backend == "sqlite" else None
            return StoreError(f"{lead}: {f'the SQLite file {database}' if database else 'the database'} is not a "
                              f"SQLite database or is damaged ({text}).",
                              "Restore it from a backup, or point --db (or SSLPERF_DB) elsewhere.", cause)
        if cause in _EXPLANATIONS:
            detail, hint = _EXPLANATIONS[cause]
            return StoreError(f"{lead}: {detail.format(text=text)}.", hint, cause)
        return StoreError(f"{lead}: {text}.", None if what else URL_HINT, cause)


def classify(exc: BaseException) -> tuple[str, str]:
    """(cause, the driver's first line) of a database error. SQLite and the
    PostgreSQL drivers say the same thing differently: both the SQLSTATE code
    and the message's words are read."""
    orig = getattr(exc, "orig", None) or exc
    text = first_line(orig)
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
    if not code and any(s in low for s in ("not a database", "malformed", "database corrupt")):   # SQLite's words
        return "damaged", text
    if code.startswith("28") or code in ("3D000", "42501") or any(
            s in low for s in ("unable to open database", "readonly database", "permission denied",
                               "authentication failed",
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


def safe_url(url: str) -> str:
    """The store's URL as messages show it: without its password."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except (SQLAlchemyError, ValueError):
        return mask(url)


def mask(url: str) -> str:
    """A URL-ish string with any password hidden (for one SQLAlchemy cannot parse)."""
    return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", url)


def first_line(exc: BaseException) -> str:
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
