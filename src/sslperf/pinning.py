"""Which CPU the harness workers of a run are pinned to.

A worker that floats between CPUs meets other caches, other frequencies and
other tenants from one sample to the next: on a 2-vCPU VM pinning alone
removed most of the run-to-run swing. By default every worker of a run runs
on the last CPU this process may use — the one the OS is least likely to put
its own work on — and the run records it. `--cpu N` chooses, `--no-pin`
opts out.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from pathlib import Path

from sslperf.errors import SslperfError

BUSY = 0.2          # a CPU busy more than 20% of the time before a run competes with it


def allowed() -> list[int]:
    """CPUs this process may run on."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def choose(cpu: int | None, pin: bool = True) -> int | None:
    """The CPU to pin to (None: not pinned), checked against the allowed set."""
    if not pin:
        return None
    cpus = allowed()
    if cpu is None:
        return cpus[-1]
    if cpu not in cpus:
        raise SslperfError(f"CPU {cpu} is not one this process may run on (allowed: {_ranges(cpus)}).",
                           hint="Choose one of those with --cpu, or measure unpinned with --no-pin.")
    return cpu


ADDR_NO_RANDOMIZE = 0x0040000       # personality(2): the layout of `setarch -R`
PR_SET_PDEATHSIG = 1                # prctl(2): the signal a process gets when its parent dies


def child_setup(cpu: int | set[int] | None, fixed_layout: bool = False):
    """A preexec function for a program sslperf starts (a harness worker, server or client, curl, a server under
    load, wrk): it gets SIGTERM when sslperf dies, even by SIGKILL, which leaves sslperf no chance to stop it; it
    is pinned to `cpu` (or a set of CPUs; None: not pinned); and with `fixed_layout` the program runs without
    address-space randomisation, so every worker process has the same memory layout."""
    pin = cpu is not None and hasattr(os, "sched_setaffinity")

    def setup() -> None:
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        except (OSError, AttributeError):        # not Linux: the child outlives a killed sslperf
            pass
        if pin:
            os.sched_setaffinity(0, cpu if isinstance(cpu, set) else {cpu})
        if fixed_layout:
            libc = ctypes.CDLL(None, use_errno=True)
            current = libc.personality(0xFFFFFFFF)
            if current != -1:
                libc.personality(current | ADDR_NO_RANDOMIZE)
    return setup


def loopback_cpus() -> tuple[int, int]:
    """(server CPU, client CPU) for loopback runs: apart when there are two."""
    cpus = allowed()
    return cpus[0], cpus[-1]


def busy_fraction(cpu: int, seconds: float = 0.3) -> float | None:
    """How busy `cpu` was over the next `seconds` (0..1), from /proc/stat."""
    first = _cpu_times(cpu)
    if first is None:
        return None
    time.sleep(seconds)
    second = _cpu_times(cpu)
    if second is None:
        return None
    total = sum(second) - sum(first)
    idle = (second[3] + second[4]) - (first[3] + first[4])       # idle + iowait
    return max(0.0, 1 - idle / total) if total > 0 else None


def busy_warning(cpu: int | None) -> str | None:
    """A warning when the pinned CPU is already busy with other work."""
    if cpu is None:
        return None
    busy = busy_fraction(cpu)
    if busy is None or busy <= BUSY:
        return None
    return (f"CPU {cpu}, which the workers are pinned to, was {busy:.0%} busy with other work before the run: "
            "its samples compete with that work; stop it, or choose an idle CPU with --cpu.")


def busy_cpus(cpus: set[int], seconds: float = 0.3) -> dict[int, float]:
    """The CPUs of `cpus` (every CPU a run's processes will use) busy with other work more than BUSY of the time,
    all watched over the same `seconds`: CPU → the share it was busy."""
    if not cpus:
        return {}
    first = {cpu: _cpu_times(cpu) for cpu in sorted(cpus)}
    time.sleep(seconds)
    found = {}
    for cpu, before in first.items():
        after = _cpu_times(cpu)
        if before is None or after is None or sum(after) <= sum(before):
            continue
        idle = (after[3] + after[4]) - (before[3] + before[4])
        busy = max(0.0, 1 - idle / (sum(after) - sum(before)))
        if busy > BUSY:
            found[cpu] = busy
    return found


def busy_warnings(busy: dict[int, float]) -> list[str]:
    """The warning for each busy CPU (busy_cpus)."""
    return [f"CPU {cpu}, which this run's processes use, was {share:.0%} busy with other work before the run: its "
            "samples compete with that work; stop it, or choose idle CPUs (--cpu)." for cpu, share in busy.items()]


def _cpu_times(cpu: int) -> list[int] | None:
    try:
        for line in Path("/proc/stat").read_text().splitlines():
            if line.startswith(f"cpu{cpu} "):
                return [int(x) for x in line.split()[1:8]]
    except (OSError, ValueError):
        pass
    return None


def _ranges(cpus: list[int]) -> str:
    return ", ".join(map(str, cpus))
