"""One round of a server under load: the server started with its generated configuration on 127.0.0.1 (its own
process group, pinned to the server CPUs), one GET checked (status, body, protocol) by Python's own TLS client,
then wrk (Debian's, the same binary for every library, pinned to the client CPUs) for a warm-up and for the timed
period; the server stopped and its request log read to check the scenario happened as named (every request
resumed, or none). Whatever happens, Ctrl-C included, the server's whole process group is gone when a round
ends.

wrk times each request from writing it to reading the whole response: on a new connection the handshake comes
before that, so it shows in the request rate and the server's CPU per request, not in wrk's latencies; the mean
time a connection takes from connect to its response is connections ÷ rate (Little's law) and is kept too."""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from sslperf import tempdirs
from sslperf.errors import SslperfError
from sslperf import pinning
from sslperf.proc import require_tool, run, tracked
from sslperf.serve_load import config
from sslperf.serve_load.build import ServerBuild

START_S = 15             # a server that does not listen within this is an error
STOP_S = 10              # after SIGTERM, then its process group is killed
PERCENTILES = (50, 75, 90, 99)
RESUMED_AT_LEAST = 0.9   # of a resumed round's requests (each wrk connection's first handshake is full)
CLIENT_SATURATED = 0.9   # the client's share of its CPU above which it, not the server, may set the rate

LUA = """-- written by sslperf serve-load
%(close)s
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('SSLPERF {"requests":%%d,"duration_us":%%d,"bytes":%%d,"connect":%%d,"read":%%d,' ..
    '"write":%%d,"status":%%d,"timeout":%%d,"mean_us":%%.2f,"max_us":%%d,%(percentiles)s}\\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.max, %(calls)s))
end
"""


@dataclass
class Load:
    """How the client drives the server."""
    connections: int = 64
    seconds: float = 5.0
    warmup_seconds: float = 1.0
    threads: int = 1             # wrk threads, one per client CPU


@dataclass
class Round:
    requests: int
    seconds: float
    latency_us: dict[int, float]      # percentile → µs
    mean_us: float
    errors: dict[str, int]
    logged: int                       # requests the server logged (warm-up included)
    resumed: int                      # of them, on a resumed session
    server_cpu_s: float
    client_cpu_s: float
    described: str                    # what the server said of itself, its protocol and group


@functools.cache
def wrk_version() -> str:
    wrk = require_tool("wrk", "to load a server (Debian package wrk)")
    result = subprocess.run([wrk, "--version"], capture_output=True, text=True, timeout=30)
    found = re.search(r"wrk (\S+)", result.stdout + result.stderr)
    return found.group(1) if found else "?"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check_port(port: int) -> None:
    """A port given by the user is free on 127.0.0.1, or a clear error before anything starts."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError as exc:
            raise SslperfError(f"Port {port} on 127.0.0.1 cannot be used for the server: {exc.strerror}.",
                               hint="Another program holds it: give another --port, or leave --port out and "
                                    "sslperf picks a free one.") from None


def one_round(build: ServerBuild, setup: config.Setup, load: Load, client_cpus: tuple[int, ...]) -> Round:
    """Start, check, load and stop the server once; the round's figures."""
    conf = config.prepare(setup)
    config.check(setup, build.binary, conf)
    with _serving(build, setup, conf) as server:
        described = _checked_get(setup)
        placement_problem(server.pid, setup.cpus, setup.server)
        if load.warmup_seconds > 0:        # --warmup 0: none (wrk itself would round 0 s up to 1 s)
            _wrk(setup, load, load.warmup_seconds, client_cpus)
        started = _group_cpu_s(server.pid)
        figures, client_cpu = _wrk(setup, load, load.seconds, client_cpus)
        server_cpu = _group_cpu_s(server.pid) - started
    logged, resumed = _read_log(setup)
    return Round(figures["requests"], figures["duration_us"] / 1e6,
                 {p: float(figures[f"p{p}"]) for p in PERCENTILES}, figures["mean_us"],
                 {k: figures[k] for k in ("connect", "read", "write", "status", "timeout")},
                 logged, resumed, server_cpu, client_cpu, described)


@contextmanager
def running(build: ServerBuild, setup: config.Setup) -> Iterator[tuple[str, int]]:
    """The server started as `setup` asks (its configuration tested by the server itself first) and answering a
    checked GET, until the block ends: what that GET negotiated, and the server's process group."""
    conf = config.prepare(setup)
    config.check(setup, build.binary, conf)
    with _serving(build, setup, conf) as server:
        yield _checked_get(setup), server.pid


@contextmanager
def _serving(build: ServerBuild, setup: config.Setup, conf: Path) -> Iterator[subprocess.Popen]:
    """The server running in its own process group; the whole group gone when the block ends."""
    out = open(setup.run_dir / ("requests.log" if setup.server == "haproxy" else "stdout.log"), "w")
    errors = open(setup.run_dir / "stderr.log", "w")
    child = subprocess.Popen(config.run_command(setup, build.binary, conf), stdin=subprocess.DEVNULL, stdout=out,
                             stderr=errors, process_group=0, cwd=setup.run_dir, preexec_fn=_child_setup(setup.cpus))
    try:
        with tracked(child):
            _wait_listening(child, setup)
            yield child
    finally:
        _stop(child)
        out.close()
        errors.close()


def _child_setup(cpus: tuple[int, ...]):
    """A server's or wrk's process: on its CPUs, and it gets SIGTERM when sslperf dies (nginx's master then stops
    its workers, as on any SIGTERM)."""
    return pinning.child_setup(set(cpus))


def _wait_listening(child: subprocess.Popen, setup: config.Setup) -> None:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if child.poll() is not None:
            said = " ".join((setup.run_dir / "stderr.log").read_text(errors="replace").split())[-500:]
            log = setup.run_dir / "error.log"
            if log.exists():
                said += " " + " ".join(log.read_text(errors="replace").split())[-500:]
            raise SslperfError(f"{setup.server} exited (code {child.returncode}) before it listened on "
                               f"127.0.0.1:{setup.port}: {said.strip()}",
                               hint="If the address is in use, give another --port or leave it out.")
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex(("127.0.0.1", setup.port)) == 0:
                return
        time.sleep(0.05)
    raise SslperfError(f"{setup.server} did not listen on 127.0.0.1:{setup.port} within {START_S} s.",
                       hint="The machine may be overloaded; try again.")


def _stop(child: subprocess.Popen) -> None:
    """SIGTERM to the whole group (nginx's master then stops its workers), SIGKILL after STOP_S."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGTERM)
    try:
        child.wait(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        pass
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)     # workers that outlived their master
    with suppress(subprocess.TimeoutExpired):
        child.wait(timeout=STOP_S)


def _group_threads(pgid: int) -> list[tuple[int, set[int]]]:
    """(thread id, the CPUs it may run on) of every thread of the live processes of a process group."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or int((entry / "stat").read_text().rsplit(")", 1)[1].split()[2]) != pgid:
                continue
            for task in (entry / "task").iterdir():
                allowed = next(line for line in (task / "status").read_text().splitlines()
                               if line.startswith("Cpus_allowed_list:")).split(":", 1)[1].strip()
                found.append((int(task.name), _cpu_list(allowed)))
        except (OSError, ValueError, StopIteration):
            continue
    return found


def _cpu_list(text: str) -> set[int]:
    """`0-3,8` → {0, 1, 2, 3, 8}."""
    cpus = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


def placement_problem(pgid: int, cpus: tuple[int, ...], server: str) -> None:
    """The server runs where it was placed: every thread of it on the server's CPUs only, and each of those CPUs
    with a worker bound to it alone (nginx's worker_cpu_affinity, HAProxy's cpu-map); else the round is refused."""
    threads = _group_threads(pgid)
    strays = {cpu for _, allowed in threads for cpu in allowed} - set(cpus)
    bound = {next(iter(allowed)) for _, allowed in threads if len(allowed) == 1}
    if strays or (len(cpus) > 1 and not set(cpus) <= bound):
        raise SslperfError(f"{server} is not placed as asked: its threads may run on CPU "
                           f"{','.join(map(str, sorted({c for _, a in threads for c in a})))}, with a worker bound "
                           f"to CPU {','.join(map(str, sorted(bound))) or 'none'}; it should have one worker on "
                           f"each of CPU {','.join(map(str, cpus))} and nothing elsewhere.",
                           hint="Another affinity setting (cgroup cpusets, taskset on sslperf) may be narrowing it.")


def _group_cpu_s(pgid: int) -> float:
    """CPU seconds (user + system) the live processes of a process group have used."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:                  # fields after the name: state ppid pgrp …
            total += int(fields[11]) + int(fields[12])
    return total / tick


def _checked_get(setup: config.Setup) -> str:
    """One GET by Python's TLS client, checked: the status, the body, the protocol; what it negotiated."""
    context = ssl.create_default_context(cafile=str(setup.cert_dir / "ca.pem"))
    with socket.create_connection(("127.0.0.1", setup.port), timeout=10) as raw, \
            context.wrap_socket(raw, server_hostname="localhost") as tls:
        tls.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        reply = b""
        while chunk := tls.recv(65536):
            reply += chunk
        version, cipher = tls.version(), tls.cipher()[0]
    head, _, body = reply.partition(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0].decode(errors="replace")
    wanted_version = config.PROTOCOLS[setup.protocol][0]
    if not status.startswith("HTTP/1.1 200") or body.decode(errors="replace") != config.BODY:
        raise SslperfError(f"{setup.server} answered the check GET with `{status}` and a body of {len(body)} bytes, "
                           f"not 200 and sslperf's {len(config.BODY)}-byte body.",
                           hint=f"Its logs are in {setup.run_dir}.")
    if version != wanted_version:
        raise SslperfError(f"{setup.server} negotiated {version}, not the {wanted_version} its configuration asks.")
    return f"{version} {cipher}"


def _wrk(setup: config.Setup, load: Load, seconds: float, cpus: tuple[int, ...]) -> tuple[dict, float]:
    """wrk for `seconds` against the server; (its figures, its CPU seconds)."""
    wrk = require_tool("wrk", "to load a server (Debian package wrk)")
    script = setup.run_dir / "sslperf.lua"
    script.write_text(LUA % {
        "close": 'wrk.headers["Connection"] = "close"' if setup.scenario.close else "",
        "percentiles": ",".join(f'"p{p}":%d' for p in PERCENTILES),
        "calls": ", ".join(f"latency:percentile({p})" for p in PERCENTILES)})
    threads = max(1, min(load.threads, len(cpus)))
    argv = [wrk, "-t", str(threads),
            "-c", str(max(load.connections, threads)), "-d", f"{max(1, round(seconds))}s", "--timeout", "10s",
            "-s", str(script), f"https://127.0.0.1:{setup.port}/"]
    usage_before = os.times()
    result = run(argv, timeout=seconds + 60, preexec_fn=_child_setup(cpus))
    usage_after = os.times()
    client_cpu = (usage_after.children_user - usage_before.children_user) + \
        (usage_after.children_system - usage_before.children_system)
    line = next((ln for ln in result.output.splitlines() if ln.startswith("SSLPERF ")), None)
    if result.returncode != 0 or line is None:
        raise SslperfError(f"wrk against {setup.server} failed (exit {result.returncode}): "
                           f"{' '.join(result.output.split())[-400:]}")
    return json.loads(line.removeprefix("SSLPERF ")), client_cpu


def _read_log(setup: config.Setup) -> tuple[int, int]:
    """(requests the server logged, how many on a resumed session)."""
    path = setup.run_dir / config.LOG
    lines = [ln.split() for ln in path.read_text(errors="replace").splitlines() if ln.strip()] if path.exists() else []
    return len(lines), sum(1 for f in lines if f and f[0] in ("r", "1"))


def run_dir() -> Path:
    """A private (0700) directory for one round's configuration and logs, until `tempdirs.remove`."""
    return tempdirs.make("serve")
