"""A harness server and a harness client over 127.0.0.1, what the loopback modes share: the server started on one
CPU and the client on another, the server's first line read, its closing line (the connections it served and its
CPU time), the UDP relay that emulates a network path, a request loop's reply taken into a result, a transfer
round checked byte for byte. Servers listen on 127.0.0.1 only, serve a bounded number of connections and stop by
themselves."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sslperf import figures, negotiation
from sslperf.libs.model import Lib, harness_backend
from sslperf.measure import certificates
from sslperf import pinning
from sslperf.measure.harness_client import HarnessError, Server, call
from sslperf.measure.netpath import NetPath
from sslperf.results import Measurement

RELAY_IDLE_MS = 30_000      # a relay whose client and server are gone stops by itself
SERVED_WAIT_S = 10          # a server says what it spent once its last connection has closed


def placement(run) -> None:
    """The run records where the servers and the clients ran."""
    server_cpu, client_cpu = pinning.loopback_cpus()
    run.environment["placement"] = {"server_cpu": server_cpu, "client_cpu": client_cpu}


def listening(running: Server, m: Measurement, says: str = "") -> dict | None:
    """A server's first line when it is listening; else None, and `m` says why not (n/a or error)."""
    hello = running.line(timeout=120)
    if hello["type"] == "listening":
        return hello
    m.status = "n/a" if hello["type"] == "na" else "error"
    m.reason = f"{says}{hello.get('reason') or 'it did not start'}"
    return None


def served(running: Server) -> dict | None:
    """The server's closing line (the connections it served and its CPU time), once it has served them all; None
    if it does not say within SERVED_WAIT_S (a figure less, not a failure)."""
    try:
        line = running.line(timeout=SERVED_WAIT_S)
    except HarnessError:
        return None
    return line if line.get("type") == "served" and line.get("connections") else None


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


def requests(m: Measurement, client: Lib, server: Lib, cert_dir: Path, serve: tuple[str, ...],
             get: tuple[str, ...], count: int, path: NetPath = NetPath(), threads: int = 1) -> Measurement:
    """A server (`serve`: its command and arguments) of `server` on one CPU and the client (`get`: its command
    and arguments, the port and CA file put after the command) of `client` on another: one warm-up request,
    then `count` timed ones (from each of `threads` client threads at once, the server taking as many
    connections at once); `m` takes the per-request times and the whole loop's, or the reason there are none."""
    env = certificates.env(cert_dir)
    server_cpu, client_cpu = pinning.loopback_cpus()
    at_once = (str(threads),) if threads > 1 else ()
    with Server(server, *serve, str(count * threads + 1), *at_once, env=env, cpu=server_cpu) as running:
        hello = listening(running, m, "server: ")
        if hello is None:
            return m
        try:
            with relayed(server, hello["port"], path, server_cpu) as port:
                args = (get[0], str(port), hello["ca_file"], *get[1:])
                # One warm-up request, so the first measured one is not the process's first.
                call(client, *args, "1", timeout=120, env=env, ok_codes=None, cpu=client_cpu)
                server_waited = run_delay(running.pid)
                reply = call(client, *args, str(count), *at_once,
                             timeout=60 + count * 5 * (1 + path.rtt_ms / 100) * threads, env=env, ok_codes=None,
                             cpu=client_cpu).last
                # The relay still up: the last connection's close reaches the server. A client that failed or is
                # n/a made fewer connections than the server waits for: it will not say what it served.
                answered = reply.get("type") == "requests" and not reply.get("error")
                closing = served(running) if answered else None
                after = run_delay(running.pid)
                server_waited = after - server_waited if after is not None and server_waited is not None else None
        except HarnessError as failed:
            m.status, m.reason = "error", failed.message
            return m
    return _waited(_took(m, client, reply, closing), reply, server_waited)


def run_delay(pid: int | None) -> int | None:
    """The run-queue wait (ns) of every thread of process `pid` so far (the kernel's run delay, schedstat's second
    field); None where the kernel does not say (or there is no process to ask)."""
    if pid is None:
        return None
    total, found = 0, False
    for stat in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            total += int(stat.read_text().split()[1])
            found = True
        except (OSError, ValueError, IndexError):
            continue
    return total if found else None


def group_cpu_ns(pgid: int) -> int:
    """The CPU time (ns) the threads of the live processes of process group `pgid` have run so far (schedstat's first
    field: nanoseconds, where /proc/PID/stat counts clock ticks of 10 ms, longer than a TLS request's share)."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[2]) != pgid:     # state ppid pgrp …
                continue
            total += sum(int(stat.read_text().split()[0]) for stat in (entry / "task").glob("*/schedstat"))
        except (OSError, ValueError, IndexError):
            continue
    return total


def _waited(m: Measurement, reply: dict, server_waited: int | None) -> Measurement:
    """The round's run-queue wait (the client's threads', the server's) spread over its requests by their wall
    time, so each request says whether its round waited for a CPU another task held (verdict.waits)."""
    if m.status != "ok" or "wait_ns" not in reply or server_waited is None or not reply.get("loop_ns"):
        return m
    share = (reply["wait_ns"] + server_waited) / reply["loop_ns"]
    m.figures[figures.WAIT] = [round(share * ns) for ns in m.wall_ns]
    return m


def _took(m: Measurement, client: Lib, reply: dict, closing: dict | None) -> Measurement:
    """A request loop's reply into `m`: every request's times, the loop's, both sides' CPU; or why there are none."""
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
    m.negotiated = negotiation.recorded(reply)      # and what that connection negotiated, where it was recorded
    m.ops = [1] * len(reply["total_ns"])
    m.wall_ns = list(reply["total_ns"])
    m.figures = {key: list(reply[key]) for key in (figures.CONNECT, figures.PRETRANSFER, figures.TOTAL)}
    m.figures[figures.LOOP] = [reply["loop_ns"]]
    m.figures[figures.CLIENT_CPU] = [reply["cpu_ns"]]
    if closing:            # the server's CPU per connection it served (the warm-up one too)
        m.figures[figures.SERVER_CPU], m.figures[figures.SERVED] = [closing["cpu_ns"]], [closing["connections"]]
    return m


def delivered(m: Measurement, sent: dict, received: dict) -> bool:
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


def took_transfer(m: Measurement, sent: dict, received: dict) -> Measurement:
    """A transfer round's writes and time into `m`, the writer's and the reader's CPU apart, and what the writer's
    connection negotiated."""
    m.ops, m.wall_ns = [sent["writes"]], [sent["wall_ns"]]
    m.negotiated = negotiation.recorded(sent)
    m.cpu_ns = [sent["cpu_ns"] + received["cpu_ns"]]
    m.figures = {figures.CLIENT_CPU: [sent["cpu_ns"]], figures.SERVER_CPU: [received["cpu_ns"]]}
    return m
