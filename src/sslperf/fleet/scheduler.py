"""`sslperf fleet scheduler`: Dask's scheduler, started the one way the fleet is safe — TLS with the fleet's
credentials, each peer's certificate required (made on the first start), listening on the address it was given
(loopback unless told otherwise), its HTTP server on that address too and answering /health only."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable

from sslperf.fleet import credentials
from sslperf.fleet.cluster import HEALTH_ONLY, FleetError, dask
from sslperf.fleet.endpoint import check_insecure

DEFAULT_HOST = "127.0.0.1"
WILDCARDS = ("0.0.0.0", "::", "")


def serve(host: str, port: int, http_port: int, insecure: int, hosts: list[str],
          started: Callable[[str, list], None]) -> None:
    """Run the scheduler until it is stopped; `started(address, credential files made now)` once it listens.
    `hosts`: further names the scheduler's certificate carries when it is made now."""
    distributed = dask()
    if not host.strip() or ":" in host:
        # "" would be every interface unasked; an IPv6 literal cannot be written into Dask's HTTP address.
        raise FleetError(f"`{host}` is not an address `sslperf fleet scheduler` can listen on.",
                         hint="Give an IPv4 address of this machine or a host name with --host (0.0.0.0 for every "
                              "interface).")
    check_insecure("tcp" if insecure else "tls", host, insecure, "listen")
    made = []
    if not insecure:
        if not (credentials.directory() / credentials.CA_CERT).exists():        # the first start makes them
            made = credentials.make([h for h in (host, *hosts) if h not in WILDCARDS])
        security = credentials.security("scheduler")
    else:
        security = distributed.Security()
    shown = f"[{host}]" if ":" in host else host

    async def run() -> None:
        import dask.config

        with dask.config.set(HEALTH_ONLY):
            try:
                scheduler = distributed.Scheduler(host=host, port=port, protocol="tcp" if insecure else "tls",
                                                  security=security, dashboard=False,
                                                  dashboard_address=f"{shown}:{http_port}")
                await scheduler
            except (OSError, ValueError) as exc:
                raise FleetError(f"The scheduler cannot listen on {shown}:{port} "
                                 f"({getattr(exc, 'strerror', None) or exc}).",
                                 hint="Give an address of this machine with --host and a free port with --port."
                                 ) from None
        started(scheduler.address, made)
        loop = asyncio.get_running_loop()
        for stop in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(stop, lambda: asyncio.ensure_future(scheduler.close()))
        await scheduler.finished()

    asyncio.run(run())
