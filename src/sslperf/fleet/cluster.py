"""The cluster as sslperf sees it: a Dask scheduler, and workers that each
offer one machine type (`machine:TYPE`) and build slots (`build`)."""

from __future__ import annotations

import asyncio
import os
import platform
import re
import signal
import sys
from dataclasses import dataclass

from sslperf import proc
from sslperf.errors import SslperfError
from sslperf.measure import environment, hostlock

MACHINE = "machine:"            # resource prefix: one unit per worker, held by a measurement
BUILD = "build"                 # resource: concurrent builds a worker accepts
TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
CONNECT_SECONDS = 20
# The HTTP server Dask starts beside every scheduler and worker answers /health only: its other pages (the cluster's
# workers, tasks, logs; Prometheus metrics) would be open to anyone who reaches it, without the fleet's certificate.
HEALTH_ONLY = {"distributed.scheduler.http.routes": ["distributed.http.health"],
               "distributed.worker.http.routes": ["distributed.http.health"]}


class FleetError(SslperfError):
    pass


class FleetIncomplete(FleetError):
    """Some machine types did not finish; what they measured is kept."""
    exit_code = 1


@dataclass(frozen=True)
class Machine:
    """One worker: its address, the machine type it offers and its host."""
    address: str
    tag: str
    name: str
    host: str


def check_tag(tag: str) -> str:
    if not TAG.fullmatch(tag):
        raise FleetError(f"`{tag}` cannot name a machine type.",
                         hint="Use letters, digits, '.', '_' and '-' (up to 63), e.g. lab-a or c7i-avx512.")
    return tag


def dask():
    """Dask's `distributed`, the one way the fleet reaches it: an optional dependency
    (the `fleet` extra), so its absence is a one-paragraph error, not a traceback."""
    try:
        import distributed
    except ImportError as exc:
        raise FleetError(f"`sslperf fleet` needs Dask's distributed package, which sslperf installs only with its "
                         f"`fleet` extra; it cannot be imported here ({exc}).",
                         hint="Install it with `pip install 'sslperf[fleet]'` (in this repository's .venv: "
                              "`.venv/bin/pip install -e '.[fleet]'`) here and on every worker.") from None
    return distributed


def connect(endpoint):
    """A Dask client of the scheduler at `endpoint` (fleet.endpoint.Endpoint), with the fleet's client certificate
    where it is tls://; or a one-paragraph error."""
    Client = dask().Client

    security = endpoint.security("client")
    try:
        return Client(endpoint.address, timeout=CONNECT_SECONDS, set_as_default=False, security=security)
    except (OSError, TimeoutError, ValueError) as exc:
        raise FleetError(f"No sslperf fleet scheduler at {endpoint.address} took this client within "
                         f"{CONNECT_SECONDS} s ({exc}).",
                         hint="Start one with `sslperf fleet scheduler` (it prints its address, e.g. "
                              "tls://10.0.0.5:8786) and give that address with --scheduler or SSLPERF_SCHEDULER; "
                              "over tls:// this machine needs the fleet's credentials (`sslperf fleet credentials "
                              "--install`), and a scheduler whose CA differs refuses them.") from None


def machines(client) -> list[Machine]:
    """The workers that serve sslperf (those offering a machine type), by type. Asked of the scheduler now:
    `client.scheduler_info()` fetches every worker into a cache and then reads that cache, which the client's own
    periodic refresh (cluster totals, no workers) may replace in between: a watched suite then took a working
    machine for one that left."""
    found = []
    for address, worker in client.sync(client.scheduler.identity, n_workers=-1)["workers"].items():
        tags = [name[len(MACHINE):] for name in (worker.get("resources") or {}) if name.startswith(MACHINE)]
        found.extend(Machine(address, tag, str(worker.get("name", address)), worker.get("host", "")) for tag in tags)
    return sorted(found, key=lambda m: (m.tag, m.address))


def chosen_types(client, wanted: tuple[str, ...]) -> dict[str, list[Machine]]:
    """Machine types to use (all, or `wanted`) with their workers; an error
    naming what is missing when a type has no worker."""
    by_type: dict[str, list[Machine]] = {}
    for machine in machines(client):
        by_type.setdefault(machine.tag, []).append(machine)
    if not by_type:
        raise FleetError("The scheduler has no sslperf worker: no worker offers a machine type.",
                         hint="On each machine run `sslperf fleet worker --scheduler ADDRESS --tag TYPE`.")
    missing = [tag for tag in wanted if tag not in by_type]
    if missing:
        raise FleetError(f"No worker offers the machine type {', '.join(missing)}; the cluster has "
                         f"{', '.join(sorted(by_type))}.",
                         hint="Start a worker with that --tag, or choose among those with --machine.")
    return {tag: by_type[tag] for tag in (wanted or sorted(by_type))}


def serve(scheduler, tag: str, cpu_mask: str | None, builds: int, name: str | None, host: str | None) -> None:
    """Run a Dask worker for this machine until it is stopped, joined to `scheduler` (fleet.endpoint.Endpoint) with
    the fleet's worker certificate, listening on `host`, else on the interface that reaches the scheduler (never
    every interface). Runs it makes carry the host SSLPERF_HOST, else the tag; `cpu_mask` applies to every
    measurement it makes (a machine type without AES-NI, say)."""
    Worker = dask().Worker

    check_tag(tag)
    security = scheduler.security("worker")
    bind = host or scheduler.reaching()
    if not scheduler.tls:       # a worker runs what it is sent: plain TCP off loopback only when insisted on
        from sslperf.fleet.endpoint import check_insecure

        check_insecure("tcp", bind, scheduler.insecure, "listen")
    if cpu_mask:
        environment.mask_env(cpu_mask)          # refuses an unknown mask or a CPU without masks, now
        os.environ[environment.MACHINE_MASK_VARIABLE] = cpu_mask
    os.environ["SSLPERF_HOST"] = os.environ.get("SSLPERF_HOST", "").strip() or tag

    async def run() -> None:     # threads: a measurement, the builds, and one for short tasks
        import dask.config

        with dask.config.set(HEALTH_ONLY):
            worker = Worker(scheduler.address, nthreads=builds + 2, security=security, host=bind,
                            name=name or f"{tag}-{platform.node()}-{os.getpid()}",
                            resources={f"{MACHINE}{tag}": 1, BUILD: builds}, death_timeout=CONNECT_SECONDS,
                            dashboard=False)
            try:
                await worker
            except (OSError, TimeoutError) as exc:
                raise FleetError(f"The worker could not join the scheduler at {scheduler.address} ({exc}).",
                                 hint="Check the address, that the scheduler runs and is reachable, and (tls://) "
                                      "that this machine holds the fleet's worker credentials from the scheduler's "
                                      "machine (`sslperf fleet credentials --install`).") from None
        await worker.finished()

    # Stopped (Ctrl-C, SIGTERM): at once, not after a graceful close that waits for the running task.
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, lambda signum, frame: _exit_now(130))
    try:
        with hostlock.serving():            # every run on this host now holds the measuring lock
            asyncio.run(run())
    except BaseException:
        proc.stop_children()
        raise
    _exit_now(0)


def _exit_now(code: int) -> None:
    """End the worker even while a task's thread still runs a build or a
    measurement: end those children first (a measurement keeps what it
    measured), then exit without waiting for the threads."""
    proc.stop_children()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


