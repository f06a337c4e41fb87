"""Where the fleet's scheduler is and how to talk to it: `tls://` with the fleet's credentials by default
(fleet.credentials), plain `tcp://` only when asked with --insecure, and then only on loopback unless asked twice —
on plain TCP anyone who reaches the port can run code on every machine of the fleet (Dask's `Client.run`)."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from sslperf.fleet.cluster import FleetError, dask

DEFAULT_PORT = 8786
SCHEMES = ("tls", "tcp")


@dataclass(frozen=True)
class Endpoint:
    """A scheduler's address (scheme://host:port) and whether it is reached without TLS."""
    address: str
    host: str
    port: int
    insecure: int = 0       # --insecure given this many times (what a worker's own listener may do too)

    @property
    def tls(self) -> bool:
        return self.address.startswith("tls://")

    def security(self, role: str):
        """Dask's settings for `role` toward this scheduler: the fleet's credentials, or none on plain TCP."""
        if not self.tls:
            return dask().Security()
        from sslperf.fleet import credentials

        return credentials.security(role)

    def reaching(self) -> str:
        """The address of this machine's interface that reaches the scheduler: what a worker binds, rather than every
        interface."""
        if is_loopback(self.host):
            return "::1" if ":" in self.host else "127.0.0.1"
        try:
            family, _, _, _, where = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_DGRAM)[0]
            with socket.socket(family, socket.SOCK_DGRAM) as probe:    # a UDP "connect" sends nothing
                probe.connect(where)
                return probe.getsockname()[0]
        except OSError as exc:
            raise FleetError(f"This machine has no route to the scheduler's host {self.host} ({exc}).",
                             hint="Check the address, or give the interface to listen on with --host.") from None


def parse(address: str, insecure: int = 0) -> Endpoint:
    """`address` (`tls://HOST:PORT`; no scheme means tls) checked against --insecure (given `insecure` times)."""
    dask()                  # the fleet extra first: without it nothing else here matters
    parts = urlsplit(address if "://" in address else f"tls://{address}")
    try:
        host, port = parts.hostname, parts.port or DEFAULT_PORT
    except ValueError:
        host = port = None
    if parts.scheme not in SCHEMES or not host or parts.path not in ("", "/"):
        raise FleetError(f"`{_shown(address)}` is not a scheduler address.",
                         hint="Give it as tls://HOST:PORT (e.g. tls://10.0.0.5:8786), as `sslperf fleet scheduler` "
                              "prints it.")
    check_insecure(parts.scheme, host, insecure, "reach a scheduler")
    shown = f"[{host}]" if ":" in host else host
    return Endpoint(f"{parts.scheme}://{shown}:{port}", host, port, insecure)


def check_insecure(scheme: str, host: str, insecure: int, doing: str) -> None:
    """Plain TCP only when --insecure says so, and off loopback only when it says so twice."""
    if scheme == "tls":
        if insecure:
            raise FleetError("--insecure is for a tcp:// scheduler; this one is tls://.",
                             hint="Leave --insecure out: the fleet's credentials protect tls://.")
        return
    if not insecure:
        raise FleetError(f"Refusing to {doing} over plain tcp:// ({host}): on it anyone who reaches the port can "
                         "run any code on the scheduler and on every worker.",
                         hint="Use tls:// (the default; `sslperf fleet credentials` makes the certificates), or "
                              "add --insecure for a scheduler on a loopback address.")
    if not is_loopback(host) and insecure < 2:
        raise FleetError(f"Refusing to {doing} over plain tcp:// on {host}, which is not a loopback address: anyone "
                         "on that network could run any code on every machine of the fleet.",
                         hint="Use tls:// (the default). If this network is yours alone, insist with "
                              "--insecure --insecure.")


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def _shown(text: str, limit: int = 80) -> str:
    """User text in a message: printable, shortened."""
    clean = "".join(c if c.isprintable() else "?" for c in text)
    return clean if len(clean) <= limit else clean[:limit - 1] + "…"
