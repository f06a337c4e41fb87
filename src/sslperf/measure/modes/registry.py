"""The registry of measurement modes: one row per mode, each row its module's MODE. A case is measured by the one
row that claims it (by its id's template and parts, and by whether the run counts instructions); adding a mode is
one module and one row here. tests/test_modes.py checks the rows against the harness's case catalog."""

from __future__ import annotations

from sslperf.errors import SslperfError
from sslperf.cases.ids import Case
from sslperf.measure.modes import (afalg, base, clients, counted, curl, in_memory, loopback, memory, program,
                                  program_counted, quic, quic_memory, quic_transfer, serve, threads, transfer_tcp)

MODES: tuple[base.Mode, ...] = (
    in_memory.MODE,
    counted.MODE,
    threads.MODE,
    loopback.MODE,
    curl.MODE,
    transfer_tcp.MODE,
    quic.MODE,
    quic_transfer.MODE,
    clients.MODE,
    memory.MODE,
    quic_memory.MODE,
    serve.MODE,
    afalg.MODE,
    program.MODE,
    program_counted.MODE,
)
BY_NAME = {mode.name: mode for mode in MODES}
IMPORTED_ONLY = ("pke", "other")        # families only other tools' output has: no mode measures them


def mode_of(case: Case, counter: str = "time") -> base.Mode:
    """The mode that measures `case` in a run whose counter is `counter` ("time" or "instructions")."""
    for mode in MODES:
        if mode.claims(case, counter):
            return mode
    if counter == "instructions" and any(mode.claims(case) for mode in MODES):
        timed = next(mode for mode in MODES if mode.claims(case))
        raise SslperfError(f"{case.id} cannot be counted in instructions: {timed.title} is timed by the wall clock "
                           "(a server and a client process, or several threads, that one callgrind cannot count).",
                           hint="Use --metric wall (or auto).")
    raise SslperfError(f"No measurement mode measures {case.id}.",
                       hint="Cases of other tools' output (imports) cannot be measured; see `sslperf speed --list`.")


def split(cases: list[Case], counter: str = "time") -> dict[base.Mode, list[Case]]:
    """The cases by the mode that measures each, in the registry's order."""
    found: dict[base.Mode, list[Case]] = {}
    for case in cases:
        found.setdefault(mode_of(case, counter), []).append(case)
    return {mode: found[mode] for mode in MODES if mode in found}


def metric(case: Case, requested: str) -> tuple[str, str]:
    """The metric a verdict on `case` rests on, and why: `auto` takes the mode's first (a case in one process:
    instructions where valgrind is installed, else wall time); a metric the mode cannot measure is refused."""
    import shutil

    mode = mode_of(case)
    if requested == "auto":
        if mode.auto_metric:
            return mode.auto_metric, f"auto: {mode.title} is judged by {_said(mode.auto_metric)}"
        if mode.metrics == base.TIME_METRICS:
            if shutil.which("valgrind"):
                return "instructions", "auto: valgrind is installed; counts do not move with the machine's load"
            return "wall", "auto: valgrind is not installed (install it for the deterministic instruction counts)"
        return mode.metrics[0], f"auto: {mode.title} is judged by {_said(mode.metrics[0])}"
    if requested not in mode.metrics:
        raise SslperfError(f"--metric {requested} cannot judge {case.id}: {mode.title} is measured by "
                           f"{' and '.join(_said(m) for m in mode.metrics)}.",
                           hint=f"Use --metric {' or '.join(mode.metrics)} (or auto).")
    return requested, "asked for"


def _said(metric_name: str) -> str:
    return {"wall": "the wall clock", "cpu": "CPU time", "instructions": "instruction counts"}[metric_name]
