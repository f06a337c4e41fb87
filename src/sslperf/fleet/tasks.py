"""What runs on a fleet worker. Each function is a Dask task: plain
arguments in, plain values out, errors as FleetError with the machine named.

A measurement is the request a verb makes (measure.request.Request, sent as
JSON), run by `sslperf measure-request` in a child process: it records into
the store as it goes, a hang ends at its timeout, and if the worker dies the
child gets SIGTERM and keeps what it measured (see cli.main). The child's
recording takes this host's measuring lock (measure.hostlock), as every run
on a host that serves a fleet does."""

from __future__ import annotations

import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

from sslperf import proc
from sslperf.errors import SslperfError
from sslperf.fleet.cluster import FleetError
from sslperf.measure import environment

TAIL_LINES = 12


def _where() -> str:
    return f"{environment.host_name()} ({platform.node()})"


def inventory(names: list[str]) -> dict:
    """This machine: architecture, libc, and which of `names` it has in hand."""
    from sslperf.libs import installed

    has = {}
    for name in names:
        try:
            lib = installed.find(name)
            has[name] = {"name": lib.name, "kind": lib.kind}
        except SslperfError:
            has[name] = None
    return {"host": environment.host_name(), "machine": platform.machine(),
            "libc": " ".join(platform.libc_ver()), "has": has}


def build_bundle(name: str) -> dict:
    """Build `name` here (a cached build is reused) and return it as a bundle."""
    from sslperf.libs import build

    started = time.monotonic()
    try:
        outcome = build.build(build.requests((name,))[0])
    except SslperfError as exc:
        raise FleetError(f"Building {name} on {_where()} failed: {exc.message}", exc.hint) from None
    return {"lib": outcome.lib.name, "built_here": not outcome.cache_hit, "seconds": time.monotonic() - started,
            "bundle": _bundle(outcome.lib)}


def export_bundle(name: str) -> dict:
    """The library `name` this machine has, as a bundle."""
    from sslperf.libs import installed

    lib = installed.find(name)
    return {"lib": lib.name, "built_here": False, "seconds": 0.0, "bundle": _bundle(lib)}


def _bundle(lib) -> bytes:
    from sslperf.libs import bundle

    out = io.BytesIO()
    bundle.export([lib], out)
    return out.getvalue()


def install_bundle(made: dict) -> list[str]:
    """Install a bundle made elsewhere; the names now in hand here."""
    from sslperf.libs import bundle

    try:
        return [lib.name for lib in bundle.install(io.BytesIO(made["bundle"]))]
    except SslperfError as exc:
        raise FleetError(f"{_where()} refused the bundle of {made['lib']}: {exc.message}", exc.hint) from None


def measure(request_json: str, db: str, fleet_run: str, timeout: float, pin_here: bool = True) -> dict:
    """Run the request (measure.request.Request as JSON) here into the store `db`, under this machine's CPU
    mask if its type has one; its exit code and the tail of its output. `pin_here`: the workers are pinned to the
    CPU this machine chooses (the client's choice is a CPU of the client's machine)."""
    from sslperf import pinning
    from sslperf.measure.request import Request

    if pin_here:        # the client's CPU may not exist here: it is replaced before the request is checked
        sent_data = json.loads(request_json)
        sent_data["settings"]["cpu"] = pinning.choose(None)
        request_json = json.dumps(sent_data)
    request = Request.from_json(request_json)
    if "exec" in request.options:
        raise FleetError(f"{_where()} refused an `exec` request: a fleet worker runs sslperf's own measurements, "
                         "never a command sent to it (whoever holds the fleet's credentials would run anything on "
                         "every machine).", "Run `sslperf exec` on the machine itself.")
    mask = os.environ.get(environment.MACHINE_MASK_VARIABLE)
    if mask:                    # a machine type made by a mask: every measurement here runs under it
        request.settings.mask = mask
    with tempfile.NamedTemporaryFile("w", prefix="sslperf-request-", suffix=".json", delete=False) as sent:
        sent.write(request.to_json())
    # The store's URL (it may hold a password) goes in the child's environment, which only this user can read,
    # never on its command line, which every user of the machine can (ps).
    argv = [sys.executable, "-m", "sslperf", "measure-request", sent.name]
    env = {**os.environ, "SSLPERF_DB": db, environment.FLEET_VARIABLE: fleet_run, "SSLPERF_EXIT_WITH_PARENT": "1",
           "COLUMNS": "160", "NO_COLOR": "1"}
    try:
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, env=env, process_group=0)
        with proc.tracked(child):
            output, note = _finish(child, timeout)
    finally:
        os.unlink(sent.name)
    tail = "\n".join(output.strip().splitlines()[-TAIL_LINES:]) + note
    return {"host": environment.host_name(), "returncode": child.returncode, "timed_out": bool(note), "tail": tail}


def _finish(child: subprocess.Popen, timeout: float) -> tuple[str, str]:
    """The child's output once it ends, and a note if its timeout ended it."""
    try:
        output, _ = child.communicate(timeout=timeout)
        return output, ""
    except subprocess.TimeoutExpired:
        child.terminate()               # SIGTERM: the run ends as interrupted, keeping what it measured
        try:
            output, _ = child.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            output, _ = child.communicate()
        return output, f"\nstopped after its timeout of {timeout:.0f} s"
