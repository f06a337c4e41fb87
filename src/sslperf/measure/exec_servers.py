"""The server an `sslperf exec` command talks to (`--server SPEC`), on 127.0.0.1 for the whole run: `LIB` is
sslperf's own HTTPS server of that library (the harness's), `nginx:LIB` and `haproxy:LIB` the real servers built
from Debian's sources against it (sslperf.serve_load, statically). Either way the server stays the same while the
command's library changes. With `{lib}` for LIB it is the reverse: each library under test gets its own server, and
the command runs as it is, with its own libraries: the figures are the servers' libraries', seen by a fixed client.
Every server answers a GET checked by sslperf (status, body, TLS 1.3) before anything is timed. Configured as
deployed: TLS 1.3, the ECDSA P-256 certificate for `localhost`, no groups set (the library's defaults), session
tickets and cache on. `{ca}` is the same kind of file for every server: a CA bundle of ~150 certificates, as a
curl-like client loads, with the server's CA among them."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Iterator

from sslperf import tempdirs
from sslperf.errors import SslperfError
from sslperf.libs import installed
from sslperf.libs.model import Lib
from sslperf.measure import certificates
from sslperf.measure.harness_client import Server
from sslperf.serve_load import build as serve_build, config, load
from sslperf.untrusted import shorten, visible

FOLLOWS = "{lib}"           # as the server's library: each library under test's own server
REAL = ("nginx", "haproxy")
OWN_CASE = ("tls1.3", "default", "ecdsa-p256")      # sslperf's server: the client's own groups, nothing set
CONNECTIONS = 1_000_000_000                         # it serves until the run stops it


@dataclass(frozen=True)
class Spec:
    server: str             # "sslperf" (the harness's own) or one of REAL
    lib: str                # a library, or FOLLOWS

    @property
    def follows(self) -> bool:
        """The reverse: the server's library is the one under test, the command's fixed."""
        return self.lib == FOLLOWS


@dataclass(frozen=True)
class Serving:
    values: dict[str, str]      # {port} and {ca}
    said: str                   # what serves: the server, its library, what the checked GET negotiated
    group: int                  # the server's process group: its CPU time per run (servers.group_cpu_ns)


def parse(text: str) -> Spec:
    """`LIB`, `nginx:LIB` or `haproxy:LIB` (LIB may be `{lib}`), or a one-paragraph error."""
    server, sep, lib = text.partition(":")
    if not sep:
        server, lib = "sslperf", text
    if server not in ("sslperf", *REAL) or not lib:
        raise SslperfError(f"--server `{shorten(visible(text), 80)}` names no server sslperf starts. Nothing was run.",
                           hint="Give a library (sslperf's own HTTPS server of it), nginx:LIB or haproxy:LIB (the "
                                "real server built against LIB); LIB may be {lib}: each library under test serves.")
    return Spec(server, lib)


def serving(spec: Spec, lib: Lib | None = None) -> contextlib.AbstractContextManager[Serving]:
    """The server of `spec` while the block runs; `lib` is the library under test, which a spec that follows it
    serves."""
    server_lib = lib if spec.follows and lib is not None else installed.find(spec.lib)
    return _own(server_lib) if spec.server == "sslperf" else _real(spec.server, server_lib)


@contextlib.contextmanager
def _own(lib: Lib) -> Iterator[Serving]:
    with certificates.made_by(lib) as certs, \
            Server(lib, "https-server", str(certs), *OWN_CASE, str(CONNECTIONS), env=certificates.env(certs)) as up:
        hello = up.line(timeout=120)
        if hello.get("type") != "listening":
            raise SslperfError(f"The HTTPS server of {lib.name} did not start: {hello.get('reason')}. Nothing was "
                               "measured.", hint="Try another --server library.")
        yield Serving({"{port}": str(hello["port"]), "{ca}": str(hello["ca_file"])},
                      f"sslperf's HTTPS server of {lib.name}", up.pid)


@contextlib.contextmanager
def _real(server: str, lib: Lib) -> Iterator[Serving]:
    built = serve_build.build(server, lib)
    cpu = max(os.sched_getaffinity(0))          # one worker (an nginx process, an HAProxy thread) on one CPU
    with certificates.made_by(lib, pem=True) as certs:
        setup = config.Setup(server, config.SCENARIOS["resumed"], OWN_CASE[0], config.DEFAULT_GROUP, OWN_CASE[2],
                             load.free_port(), (cpu,), certs, load.run_dir())
        # {ca} as sslperf's own server gives it: the CA bundle a curl-like client loads (the ~150 made with the
        # certificates) and the server's CA, so a client parses the same file whichever server it talks to.
        bundle = certs / "exec-ca.pem"
        bundle.write_text((certs / "ca-bundle.pem").read_text() + (certs / "ca.pem").read_text())
        try:
            with load.running(built, setup) as (negotiated, group):
                yield Serving({"{port}": str(setup.port), "{ca}": str(bundle)},
                              f"{built.label} against {lib.name} (Debian {built.debian}, one worker on CPU {cpu}; "
                              f"its check GET: {negotiated})", group)
        finally:
            tempdirs.remove(setup.run_dir)
