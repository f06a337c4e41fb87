"""`sslperf serve-load`: what a server operator runs, measured per library. nginx and HAProxy from Debian's
source packages, built against each library (build.py, debian.py), started on 127.0.0.1 with a generated
configuration (config.py) and loaded by wrk (load.py), one round at a time (rounds.py), the rounds interleaved
across libraries by measure/rounds.py, so `bisect` and `track` measure these cases the same way."""

from __future__ import annotations

from sslperf.errors import SslperfError
from sslperf.cases import catalog
from sslperf.cases.ids import Case, make
from sslperf.serve_load.config import GROUP_NAMES, SCENARIOS

SERVERS = ("nginx", "haproxy")


def cases(servers: tuple[str, ...], scenarios: tuple[str, ...], protocols: tuple[str, ...], groups: tuple[str, ...],
          certs: tuple[str, ...]) -> list[Case]:
    """Every combination, server by server, each scenario's cases together; a group or certificate sslperf does
    not know is an error naming the ones it does."""
    for group in groups:
        if group not in GROUP_NAMES:
            raise SslperfError(f"Unknown group `{group}`.", hint=f"Choose among {', '.join(GROUP_NAMES)}.")
    known = [c["name"] for c in catalog.tls()["certs"]]
    for cert in certs:
        if cert not in known:
            raise SslperfError(f"Unknown certificate `{cert}`.", hint=f"Choose among {', '.join(known)}.")
    return [make("tls/serve", server=server, scenario=scenario, protocol=protocol, group=group, cert=cert)
            for server in servers for scenario in scenarios for protocol in protocols for group in groups
            for cert in certs]


__all__ = ["SCENARIOS", "SERVERS", "cases"]
