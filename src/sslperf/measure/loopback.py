"""TLS over real loopback connections (curl's pattern in its 1.1.1 → 3.0
regression), driven through the harness's https-server and https-get
commands. Servers listen on 127.0.0.1 only, serve a bounded number of
connections and stop by themselves."""

from __future__ import annotations

from pathlib import Path

from sslperf import families
from sslperf.libs.model import Lib
from sslperf.measure import pinning
from sslperf.measure.harness_client import HarnessError, Server, call
from sslperf.results import Measurement

LOOPBACK_GROUP = families.FAMILIES["tls-loopback"].groups[0]


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
