"""TLS over real loopback connections (curl's pattern in its 1.1.1 → 3.0
regression), driven through the harness's https-server and https-get
commands, and QUIC over loopback UDP through quic-server and quic-get.
Servers listen on 127.0.0.1 only, serve a bounded number of connections and
stop by themselves."""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sslperf.libs.model import Lib, harness_backend
from sslperf.measure import certificates, pinning
from sslperf.measure.case_ids import make
from sslperf.measure.harness_client import HarnessError, Server, call
from sslperf.measure.netpath import NetPath
from sslperf.results import Measurement, cpu_per_request

RELAY_IDLE_MS = 30_000      # a relay whose client and server are gone stops by itself
QUIC_STALL = (" (OpenSSL's QUIC stack stalls this way when the client offers X25519 alone, as an X25519 case's "
              "client does, more often with large writes; reproduced without sslperf by bench/quic_write_stall.py, "
              "docs/findings.md)")
SERVED_WAIT_S = 10          # a server says what it spent once its last connection has closed


def loopback(client: Lib, server: Lib, cert_dir: Path, proto: str, group: str, cert: str, ctx: str,
             requests: int, threads: int = 1) -> Measurement:
    """`requests` sequential HTTPS GETs from `client` to a server of `server`; with `threads`, that many client
    threads at once, `requests` each, and as many server workers."""
    m = make("tls/loopback", protocol=proto, group=group, cert=cert, client=ctx).result(
        client.name, unit="ops", note=f"server: {server.name}")
    return _requests(m, client, server, cert_dir, ("https-server", str(cert_dir), proto, group, cert),
                     ("https-get", proto, group, cert, ctx), requests, threads=threads)


def quic(client: Lib, server: Lib, cert_dir: Path, group: str, cert: str, requests: int,
         path: NetPath = NetPath(), threads: int = 1) -> Measurement:
    """`requests` sequential GETs from `client` to a server of `server`, each on a new QUIC connection over
    loopback UDP (OpenSSL's QUIC stack, ALPN "sslperf"), the request on one bidirectional stream; over `path`
    (through the UDP relay) when it is emulated; with `threads`, that many client threads at once, `requests`
    each, the server's one event loop taking that many connections at once."""
    m = quic_case(group, cert, path).result(client.name, unit="ops",
                                            note=f"server: {server.name}; path: {path.describe()}")
    return _requests(m, client, server, cert_dir, ("quic-server", str(cert_dir), group, cert),
                     ("quic-get", group, cert), requests, path, threads)


def quic_case(group: str, cert: str, path: NetPath = NetPath()):
    """The QUIC GET case of `group` and `cert` over `path`."""
    return make("tls/quic", group=group, cert=cert, path=path.id)


def tcp_case(group: str, cert: str):
    """The TCP+TLS 1.3 GET case a QUIC GET of `group` and `cert` stands beside."""
    return make("tls/loopback", protocol="tls1.3", group=group, cert=cert, client="shared")


def tcp_transfer_case(suite: str, size: int | str):
    """The TCP+TLS 1.3 transfer case (kernel TLS off) a QUIC transfer stands beside."""
    return make("tls/transfer-tcp", protocol="tls1.3", suite=suite, size=size, kernel="no-ktls")


def against_tcp(quic_m: Measurement, tcp: Measurement) -> Measurement:
    """The QUIC measurement, its note saying what it costs against TLS 1.3 over TCP of the same library, group
    and certificate measured just before it: median time to a finished handshake and to the whole response, and the
    server's CPU time per request."""
    if quic_m.status == "ok" and tcp.status == "ok":
        ratios = [statistics.median(quic_m.extra[k]) / statistics.median(tcp.extra[k])
                  for k in ("pretransfer_ns", "total_ns")]
        quic_m.note += f"; against TCP+TLS 1.3: handshake ×{ratios[0]:.2f}, whole request ×{ratios[1]:.2f}"
        cpu = [cpu_per_request(m) for m in (quic_m, tcp)]
        if all(cpu):
            quic_m.note += f", server CPU per request ×{cpu[0][0] / cpu[1][0]:.2f}"
    return quic_m


@contextmanager
def relayed(lib: Lib, port: int, path: NetPath, cpu: int | None) -> Iterator[int]:
    """The port a client talks to for `path`: the server's own, or that of a UDP relay (`lib`'s harness) that
    gives the path its delay, jitter and loss on the way to the server."""
    if not path.emulated:
        yield port
        return
    with Server(lib, "udp-relay", str(port), *path.relay_args(), str(RELAY_IDLE_MS), cpu=cpu) as relay:
        hello = relay.line(timeout=60)
        if hello.get("type") != "relaying":
            raise HarnessError(f"The UDP relay of {lib.name} did not start: {hello.get('reason')}.")
        yield hello["port"]


def _requests(m: Measurement, client: Lib, server: Lib, cert_dir: Path, serve: tuple[str, ...],
              get: tuple[str, ...], requests: int, path: NetPath = NetPath(), threads: int = 1) -> Measurement:
    """A server (`serve`: its command and arguments) of `server` on one CPU and the client (`get`: its command
    and arguments, the port and CA file put after the command) of `client` on another: one warm-up request,
    then `requests` timed ones (from each of `threads` client threads at once, the server taking as many
    connections at once); `m` takes the per-request times and the whole loop's, or the reason there are none."""
    env = certificates.env(cert_dir)
    server_cpu, client_cpu = pinning.loopback_cpus()
    at_once = (str(threads),) if threads > 1 else ()
    with Server(server, *serve, str(requests * threads + 1), *at_once, env=env, cpu=server_cpu) as running:
        hello = _listening(running, m, "server: ")
        if hello is None:
            return m
        try:
            with relayed(server, hello["port"], path, server_cpu) as port:
                args = (get[0], str(port), hello["ca_file"], *get[1:])
                # One warm-up request, so the first measured one is not the process's first.
                call(client, *args, "1", timeout=120, env=env, ok_codes=None, cpu=client_cpu)
                reply = call(client, *args, str(requests), *at_once,
                             timeout=60 + requests * 5 * (1 + path.rtt_ms / 100) * threads, env=env, ok_codes=None,
                             cpu=client_cpu).last
                served = _served(running)      # the relay still up: the last connection's close reaches the server
        except HarnessError as failed:
            m.status, m.reason = "error", failed.message
            return m
        if reply.get("type") == "na":
            m.status, m.reason = "n/a", f"client: {reply.get('reason')}"
            return m
        if reply.get("type") != "requests" or reply.get("error"):
            m.reason = reply.get("error") or reply.get("reason") or "the client gave no result"
            # rustls-ffi cannot choose its group: against a server that does not either, another one is n/a
            chooses_no_group = harness_backend(client.flavor) == "rustls" and "another group than asked" in m.reason
            m.status = "n/a" if chooses_no_group else "error"
            if chooses_no_group:
                m.reason += " (rustls-ffi cannot be told which group to use)"
            return m
        if reply.get("checked"):      # the first handshake's negotiation, checked by the client
            m.note += f"; {reply['checked']}"
        m.ops = [1] * len(reply["total_ns"])
        m.wall_ns = reply["total_ns"]
        m.extra = {k: reply[k] for k in ("connect_ns", "pretransfer_ns", "total_ns")}
        m.extra["loop_ns"] = [reply["loop_ns"]]
        m.extra["client_cpu_ns"] = [reply["cpu_ns"]]
        if served:            # the server's CPU per connection it served (the warm-up one too)
            m.extra["server_cpu_ns"], m.extra["served"] = [served["cpu_ns"]], [served["connections"]]
        return m


def _listening(running: Server, m: Measurement, says: str = "") -> dict | None:
    """A server's first line when it is listening; else None, and `m` says why not (n/a or error)."""
    hello = running.line(timeout=120)
    if hello["type"] == "listening":
        return hello
    m.status = "n/a" if hello["type"] == "na" else "error"
    m.reason = f"{says}{hello.get('reason') or 'it did not start'}"
    return None


def _served(running: Server) -> dict | None:
    """The server's closing line (the connections it served and its CPU time), once it has served them all; None
    if it does not say within SERVED_WAIT_S (a figure less, not a failure)."""
    try:
        line = running.line(timeout=SERVED_WAIT_S)
    except HarnessError:
        return None
    return line if line.get("type") == "served" and line.get("connections") else None


def transfer(lib: Lib, cert_dir: Path, proto: str, suite: str, size: int, milliseconds: int, rounds: int,
             ktls: bool) -> Measurement:
    """Bulk transfer over a real loopback TCP connection: per round a fresh
    server and client, the client writing `size`-byte writes for
    `milliseconds`; the server checks every byte. With `ktls`, both ask
    the library for kernel TLS, and the result says whether the kernel
    really did the sending, or why not (n/a)."""
    case = make("tls/transfer-tcp", protocol=proto, suite=suite, size=size, kernel="ktls" if ktls else "no-ktls")
    m = case.result(lib.name, unit="bytes", bytes_per_op=size)
    env = {"SSLPERF_CERT_DIR": str(cert_dir)}
    server_cpu, client_cpu = pinning.loopback_cpus()
    on = "on" if ktls else "off"
    for _ in range(rounds):
        with Server(lib, "transfer-server", str(cert_dir), proto, suite, str(size), on, env=env,
                    cpu=server_cpu) as running:
            hello = _listening(running, m)
            if hello is None:
                return m
            try:
                sent = call(lib, "transfer-client", str(hello["port"]), hello["ca_file"], proto, suite, str(size),
                            str(milliseconds), on, timeout=120 + milliseconds / 1000, env=env, ok_codes=None,
                            cpu=client_cpu).last
                received = running.line(timeout=120)
            except HarnessError as failed:
                m.status, m.reason = "error", failed.message
                return m
        if sent.get("type") == "na":
            m.status, m.reason = "n/a", sent.get("reason")
            return m
        if not _delivered(m, sent, received):
            return m
        if ktls and not sent["ktls_send"]:
            why = [hello["library_ktls"]] if hello.get("library_ktls") else []
            if not str(hello.get("kernel_tls")).startswith("yes"):
                why.append(f"the kernel: {hello['kernel_tls']}")
            m.status = "n/a"
            m.reason = ("kernel TLS was asked for but not used: "
                        + ("; ".join(why) or f"the library did not hand {sent['cipher']} to the kernel"))
            return m
        _take_round(m, sent, received)
        m.note = (f"{sent['cipher']}; kernel TLS {'used for sending' if sent['ktls_send'] else 'off'}; "
                  f"kernel tls module: {hello['kernel_tls']}")
    return m


def quic_transfer(lib: Lib, cert_dir: Path, suite: str, size: int, milliseconds: int, rounds: int,
                  path: NetPath = NetPath()) -> Measurement:
    """Bulk transfer on one QUIC stream over loopback UDP (through the UDP relay when `path` is emulated): per
    round a fresh server and client, the client writing `size`-byte writes for `milliseconds` and then waiting for
    the server's count of what it read, every byte checked, so the wall time runs until the reader has
    everything."""
    m = make("tls/quic-transfer", suite=suite, size=size, path=path.id).result(lib.name, unit="bytes",
                                                                               bytes_per_op=size)
    env = certificates.env(cert_dir)
    server_cpu, client_cpu = pinning.loopback_cpus()
    for _ in range(rounds):
        with Server(lib, "quic-transfer-server", str(cert_dir), suite, str(size), env=env,
                    cpu=server_cpu) as running:
            hello = _listening(running, m)
            if hello is None:
                return m
            try:
                with relayed(lib, hello["port"], path, server_cpu) as port:
                    sent = call(lib, "quic-transfer-client", str(port), hello["ca_file"], suite, str(size),
                                str(milliseconds), timeout=300 + milliseconds / 10, env=env, ok_codes=None,
                                cpu=client_cpu).last
                received = running.line(timeout=120)
            except HarnessError as failed:
                m.status, m.reason = "error", failed.message
                return m
        if not _delivered(m, sent, received):
            if m.reason.startswith("stalled"):
                m.reason += QUIC_STALL
            return m
        _take_round(m, sent, received)
        m.note = (f"{sent['checked']}; one stream; the time runs until the reader has every byte; "
                  f"path: {path.describe()}")
    return m


def transfer_against_tcp(quic_m: Measurement, tcp: Measurement) -> Measurement:
    """The QUIC transfer, its note saying its throughput against TLS 1.3 over TCP measured just before it."""
    rates = [statistics.median(ops * m.bytes_per_op * 1e9 / ns for ops, ns in zip(m.ops, m.wall_ns))
             for m in (quic_m, tcp) if m.status == "ok" and m.ops]
    if len(rates) == 2:
        quic_m.note += f"; against TCP+TLS 1.3: throughput ×{rates[0] / rates[1]:.2f}"
    return quic_m


def _delivered(m: Measurement, sent: dict, received: dict) -> bool:
    """Whether a transfer round's reader got exactly what the writer sent; else `m` says what went wrong."""
    if sent.get("type") != "sent" or not sent.get("ok") or not received.get("ok"):
        m.status, m.reason = "error", sent.get("reason") or "the transfer failed"
        return False
    if received["bytes"] != sent["bytes"] or received["mismatched_pieces"]:
        m.status = "error"
        m.reason = (f"the server received {received['bytes']} bytes ({received['mismatched_pieces']} pieces "
                    f"differing from what was written), the client sent {sent['bytes']}")
        return False
    return True


def _take_round(m: Measurement, sent: dict, received: dict) -> None:
    """A transfer round's writes and time into `m`, the writer's and the reader's CPU apart."""
    m.ops.append(sent["writes"])
    m.wall_ns.append(sent["wall_ns"])
    m.cpu_ns.append(sent["cpu_ns"] + received["cpu_ns"])
    m.extra = m.extra or {"client_cpu_ns": [], "server_cpu_ns": []}
    m.extra["client_cpu_ns"].append(sent["cpu_ns"])
    m.extra["server_cpu_ns"].append(received["cpu_ns"])
