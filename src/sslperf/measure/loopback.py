"""TLS over real loopback connections (curl's pattern in its 1.1.1 → 3.0
regression) and handshakes across threads, driven through the harness's
https-server, https-get and tls-threads commands. Servers listen on
127.0.0.1 only, serve a bounded number of connections and stop by
themselves."""

from __future__ import annotations

from pathlib import Path

from sslperf import families
from sslperf.libs.model import Lib
from sslperf.measure import environment, pinning
from sslperf.measure.harness_client import HarnessError, Server, call
from sslperf.results import Measurement

LOOPBACK_GROUP = families.FAMILIES["tls-loopback"].groups[0]
THREADS_GROUP = families.FAMILIES["tls-threads"].groups[0]


def loopback(client: Lib, server: Lib, cert_dir: Path, proto: str, group: str, cert: str, ctx: str,
             requests: int) -> Measurement:
    """`requests` sequential HTTPS GETs from `client` to a server of `server`."""
    case_id = f"tls/loopback/{proto}/{group}/{cert}/{ctx}"
    m = Measurement(case_id, "tls-loopback", LOOPBACK_GROUP, f"{group} {cert}", f"get-{ctx}", None, "record",
                    client.name, "ok", unit="ops", note=f"server: {server.name}")
    env = {"SSLPERF_CERT_DIR": str(cert_dir)}
    server_cpu, client_cpu = pinning.loopback_cpus()
    with Server(server, "https-server", str(cert_dir), proto, group, cert, str(requests + 1), env=env,
                cpu=server_cpu) as running:
        hello = running.line(timeout=120)
        if hello["type"] != "listening":
            m.status = "n/a" if "cannot make" in hello.get("reason", "") else "error"
            m.reason = f"server: {hello.get('reason')}"
            return m
        args = ("https-get", str(hello["port"]), hello["ca_file"], proto, group, cert, ctx)
        try:
            # One warm-up request, so the first measured one is not the process's first.
            call(client, *args, "1", timeout=120, env=env, ok_codes=None, cpu=client_cpu)
            reply = call(client, *args, str(requests), timeout=60 + requests * 5, env=env, ok_codes=None,
                         cpu=client_cpu).last
        except HarnessError as failed:
            m.status, m.reason = "error", failed.message
            return m
        if reply.get("type") != "requests" or reply.get("error"):
            m.status = "error"
            m.reason = reply.get("error") or reply.get("reason") or "the client gave no result"
            return m
        m.ops = [1] * len(reply["total_ns"])
        m.wall_ns = reply["total_ns"]
        m.extra = {k: reply[k] for k in ("connect_ns", "pretransfer_ns", "total_ns")}
        return m


def threads(lib: Lib, cert_dir: Path, case_id: str, counts: list[int], milliseconds: int, rounds: int,
            mask: str | None = None) -> list[Measurement]:
    """Handshakes per second with each thread count, the counts interleaved
    over `rounds` so drift hits them alike."""
    env = {"SSLPERF_CERT_DIR": str(cert_dir), **environment.mask_env(mask)}
    tail = case_id.split("/", 2)[2]                 # tls1.3/x25519/ecdsa-p256/shared
    results = {n: Measurement(f"tls/threads/{n:03d}/{tail}", "tls-threads", THREADS_GROUP, tail.replace("/", " "),
                              f"{n} thread{'s' if n > 1 else ''}", None, "record", lib.name, "ok", unit="ops")
               for n in counts}
    for _ in range(rounds):
        for n in counts:
            m = results[n]
            if m.status != "ok":
                continue
            try:
                reply = call(lib, "tls-threads", case_id, str(n), str(milliseconds),
                             timeout=120 + milliseconds / 1000, env=env, ok_codes=None,
                             cpu=set(pinning.allowed())).last
            except HarnessError as failed:
                m.status, m.reason = "error", failed.message
                continue
            if reply.get("type") != "threads" or reply.get("failed"):
                m.status, m.reason = "error", reply.get("reason") or "a handshake failed"
                continue
            m.ops.append(sum(reply["handshakes"]))
            m.wall_ns.append(reply["wall_ns"])
            m.extra = m.extra or {"per_thread": []}
            m.extra["per_thread"] += reply["handshakes"]
    return list(results.values())
