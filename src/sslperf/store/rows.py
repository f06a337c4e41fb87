"""Between the result model (sslperf.results) and the store's rows.

Everything an importer or a run produces round-trips, on SQLite and
PostgreSQL alike. A NUL character, which PostgreSQL cannot hold in text, is
stored as U+2400 (␀) in every text column on both databases (one-way: it
loads back as ␀; the JSON columns keep NUL exactly, escaped as \\u0000). An
integer beyond 64 bits or a NaN/infinity in a JSON column is refused with a
SslperfError (the StoreError the store's guard makes of it).
"""

from __future__ import annotations

import datetime as dt
import json
import math

from sslperf.results import (COUNTER_KEY, DETERMINISTIC_KEY, NEGOTIATED_KEY, LibInfo, Measurement,
                             RecordedMeasurement, Run,
                             split_facts)
from sslperf.store.schema import STATES

NUL_REPLACEMENT = "\u2400"          # ␀, SYMBOL FOR NULL
INT64 = (-(2 ** 63), 2 ** 63 - 1)


def stored_text(value):
    """A string as the text columns keep it: NUL (which PostgreSQL refuses) as ␀."""
    return value.replace("\x00", NUL_REPLACEMENT) if isinstance(value, str) else value


def stored_values(row: dict) -> dict:
    return {k: stored_text(v) for k, v in row.items()}


def checked_int64(value, what: str):
    if isinstance(value, int) and not INT64[0] <= value <= INT64[1]:
        raise OverflowError(f"{what} is {value}, beyond the 64-bit integers the store keeps")
    return value


def json_for_store(value) -> str:
    """JSON as both databases can keep it: NaN and infinities are refused
    (PostgreSQL's json type has no spelling for them). The empty lists and
    nulls of most imported results' columns are written without the encoder."""
    if value is None:
        return "null"
    if isinstance(value, list) and not value:
        return "[]"
    try:
        return json.dumps(value, allow_nan=False)
    except ValueError:
        raise ValueError(f"a JSON value holds NaN or infinity ({_first_bad_float(value)})") from None


def json_from_store(text: str | bytes):
    """A JSON column's value (text on SQLite, bytes from psycopg). The empty
    lists and nulls that most columns of an imported result hold (no samples
    of our own, no extra figures) are read without the decoder: a run of
    80,000 results holds 300,000 of them."""
    if text == "[]" or text == b"[]":
        return []
    if text == "null" or text == b"null":
        return None
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8")
    try:                 # the store's own JSON starts at its first character: raw_decode skips json.loads' scans
        value, end = _DECODER.raw_decode(text)
        if end == len(text):
            return value
    except ValueError:
        pass
    return json.loads(text)


_DECODER = json.JSONDecoder()


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


# ---- to rows -------------------------------------------------------------------

def final_state(run: Run) -> str:
    """The state a finished run is stored with: Run.state, else from Run.complete."""
    if run.state in STATES and run.state != "running":
        return run.state
    return "complete" if run.complete else "interrupted"


def end_values(run: Run) -> dict:
    """The columns `finish` sets on a run's row; `finished` is now if the run has no time. The settings and the
    environment too: a run adds to them as it ends (the noise it recorded, a thread sweep's contention)."""
    finished = run.finished or dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    return stored_values({"finished": finished, "complete": run.complete, "state": final_state(run),
                          "warnings": run.warnings, "settings": run.settings, "environment": run.environment})


def run_row(run: Run, source: str, state: str, **values) -> dict:
    return stored_values({"id": run.id, "started": run.started, "source": source,
                          "host": run.environment.get("host"), "settings": run.settings,
                          "environment": run.environment, "state": state, **values})


def lib_row(run_id: str, position: int, lib: LibInfo) -> dict:
    return stored_values({"run_id": run_id, "position": position, **vars(lib)})


def measurement_row(m: Measurement) -> dict:
    where = f"of {m.case} on {m.lib}"
    return stored_values({
        "case_id": m.case, "family": m.family, "grp": m.group, "algorithm": m.algorithm,
        "operation": m.operation, "size": checked_int64(m.size, f"the size {where}"), "workload": m.workload,
        "lib": m.lib, "status": m.status, "reason": m.reason, "unit": m.unit,
        "bytes_per_op": checked_int64(m.bytes_per_op, f"the bytes per operation {where}"), "note": m.note,
        "ops": m.ops, "wall_ns": m.wall_ns, "cpu_ns": m.cpu_ns, "reported_rates": m.reported_rates,
        "extra": stored_figures(m)})


def stored_figures(m: Measurement) -> dict | None:
    """The figures and the result's facts in the one JSON column they share (facts under the keys older runs
    kept them by, so every sslperf reads both): split again by results.split_facts when read."""
    facts = {**({COUNTER_KEY: m.counter} if m.counter is not None else {}),
             **({DETERMINISTIC_KEY: m.deterministic} if m.deterministic is not None else {}),
             **({NEGOTIATED_KEY: m.negotiated} if m.negotiated else {})}
    return {**(m.figures or {}), **facts} if m.figures is not None or facts else None


def floor_row(host: str, measured: str, lib: str, floor: dict, run_ids: list[str]) -> dict:
    """One noise floor (a dict with kind, family, floor, comparisons) of an experiment over `run_ids`."""
    return stored_values(dict(
        host=host, measured=measured, lib=lib, kind=floor["kind"], family=floor["family"], floor=floor["floor"],
        comparisons=checked_int64(floor["comparisons"], "the comparison count"), runs=run_ids))


# ---- from rows -----------------------------------------------------------------

def run_state(row) -> str:
    """A run's state; runs stored before states were recorded: complete or incomplete."""
    state = row.get("state")
    return state or ("complete" if row["complete"] else "incomplete")


def measurement_from_row(r) -> Measurement:
    rates = stored_json(r["reported_rates"])
    figures, facts = split_facts(stored_json(r["extra"]))
    return Measurement(r["case_id"], r["family"], r["grp"], r["algorithm"], r["operation"], r["size"], r["workload"],
                       r["lib"], r["status"], r["reason"], r["unit"], r["bytes_per_op"], list(stored_json(r["ops"])),
                       list(stored_json(r["wall_ns"])), list(stored_json(r["cpu_ns"])), r["note"],
                       list(rates) if rates is not None else None, figures, **facts)


def stored_json(value):
    """A JSON column's value as a query gave it: text (Store.load reads the measurements' JSON columns as text,
    sparing SQLAlchemy's processor per value) decoded here, a value already decoded (by SQLAlchemy, or by a
    driver that decodes JSON itself) as it is. No JSON column holds a bare string, so text is always JSON."""
    return json_from_store(value) if isinstance(value, (str, bytes, bytearray)) else value


def run_from_rows(row, libs, measurement_rows) -> Run:
    """A whole run from its row, its run_libs rows in order and its measurement rows in order."""
    run = Run(row["id"], row["started"], row["settings"], row["environment"], warnings=row["warnings"],
              finished=row["finished"], complete=row["complete"], state=run_state(row))
    run.settings = {**run.settings, "source": row["source"]}
    run.libs = [LibInfo(**{k: v for k, v in lib.items() if k not in ("run_id", "position")}) for lib in libs]
    run.measurements = [measurement_from_row(r) for r in measurement_rows]
    return run


def recorded_measurement(r) -> RecordedMeasurement:
    """A measurement row joined with its run's and library's columns."""
    return RecordedMeasurement(r["run_id"], r["started"], r["host"] or "", r["source"], run_state(r),
                               r["environment"] or {}, r["flavor"] or "", r["version"] or "", r["variant"] or "",
                               measurement_from_row(r), r["settings"] or {})
