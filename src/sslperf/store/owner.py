"""Which process is measuring a run, and whether it still is.

Store.begin records a run's owner: this machine (its name and the id of its current boot), the process id
and the moment that process started. A process id alone is not enough: after the owner dies the id may be
given to another process, and after a reboot every id is new. `runs rm` reads it to refuse a run still
being measured; a run "running" whose owner is gone (killed, its machine rebooted) may be deleted.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from sslperf.errors import SslperfError

ALIVE, GONE, ELSEWHERE = "alive", "gone", "elsewhere"


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:                        # not Linux
        return None


def _machine_id() -> str | None:
    """The machine's own id (a clone with the same host name has another; so does a reboot, never)."""
    try:
        return Path("/etc/machine-id").read_text().strip() or None
    except OSError:
        return None


def _pid_namespace() -> str | None:
    """The process-id namespace (a container on this kernel has its own: its ids mean nothing here)."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def _started(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot, /proc/PID/stat's 22nd field), None where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (2nd field, in parentheses) may hold spaces and parentheses: count after its end.
    fields = stat[stat.rfind(")") + 2:].split()
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else None


def mark() -> dict:
    """This process, as the owner of a run it begins."""
    pid = os.getpid()
    return {"host": socket.gethostname(), "machine": _machine_id(), "pidns": _pid_namespace(), "boot": _boot_id(),
            "pid": pid, "since": _started(pid)}


def status(owner: dict | None) -> str:
    """ALIVE (the owner runs on this machine), GONE (it ended, or its machine rebooted; also a run recorded
    before owners were, which nothing can be checked of) or ELSEWHERE (another machine's: cannot be told)."""
    if not isinstance(owner, dict) or not isinstance(owner.get("pid"), int):
        return GONE
    if owner.get("host") != socket.gethostname():
        return ELSEWHERE
    # Same name, another machine (a clone) or another process-id namespace (a container): its ids cannot be
    # checked from here.
    for key, ours in (("machine", _machine_id()), ("pidns", _pid_namespace())):
        if owner.get(key) and ours and owner[key] != ours:
            return ELSEWHERE
    if owner.get("boot") and _boot_id() and owner["boot"] != _boot_id():
        return GONE
    pid = owner["pid"]
    if owner.get("since") is not None and _started(pid) is not None:
        return ALIVE if _started(pid) == owner["since"] else GONE    # else: the id went to a new process
    try:
        os.kill(pid, 0)                    # no /proc: whether a process has the id at all
    except ProcessLookupError:
        return GONE
    except PermissionError:                # another user's process
        return ALIVE
    return ALIVE


def refusal(run_id: str, owner: dict | None, force: bool = False) -> SslperfError | None:
    """Why run `run_id`, still marked running by `owner`, may not be deleted; None when it may: its owner is
    gone, or it is on another machine and `force` says it is gone too. A run being measured on this machine
    is never deleted: its process would go on writing to a run that is not there."""
    found = status(owner)
    if found == GONE or (found == ELSEWHERE and force):
        return None
    pid, host = owner.get("pid"), owner.get("host") or "its machine"
    if found == ALIVE:
        return SslperfError(f"Run {run_id} is still being measured, by process {pid} on this machine; nothing was "
                            "deleted.", hint=f"Stop the measurement first (Ctrl-C where it runs, or `kill {pid}`: "
                            "the run is then kept as interrupted), then delete the run.")
    return SslperfError(f"Run {run_id} is still marked running by process {pid} on {host}, which this machine "
                        "cannot check; nothing was deleted.",
                        hint=f"Stop that measurement on {host} (Ctrl-C where it runs, or `kill {pid}` there), then "
                        "delete the run; if it is gone (killed, or its machine lost), `sslperf runs rm --force "
                        f"{run_id}` deletes the run anyway.")
