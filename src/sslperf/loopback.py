"""TLS over real loopback connections (curl's pattern, seed 001) and
handshakes across threads, driven through the harness's https-server,
https-get and tls-threads commands. Servers listen on 127.0.0.1 only,
serve a bounded number of connections and stop by themselves."""

from __future__ import annotations

import json
import os
import select
import subprocess
from pathlib import Path

from sslperf import environment
from sslperf.errors import SslperfError
from sslperf.libs.model import Lib
from sslperf.native import harness_binary
from sslperf.results import Measurement

LOOPBACK_GROUP = "TLS over loopback (HTTPS GET)"
THREADS_GROUP = "TLS handshakes across threads"


def _json_line(proc: subprocess.Popen, timeout: float, what: str) -> dict:
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    line = proc.stdout.readline() if ready else ""
    if not line:
        proc.kill()
        err = proc.stderr.read() if proc.stderr else ""
        raise SslperfError(f"The {what} did not start: {err.strip()[-300:] or 'no answer'}.")
    return json.loads(line)


def loopback(client: Lib, server: Lib, cert_dir: Path, proto: str, group: str, cert: str, ctx: str,
             requests: int) -> Measurement:
    """`requests` sequential HTTPS GETs from `client` to a server of `server`."""
    case_id = f"tls/loopback/{proto}/{group}/{cert}/{ctx}"
    m = Measurement(case_id, "tls-loopback", LOOPBACK_GROUP, f"{group} {cert}", f"get-{ctx}", None, "record",
                    client.name, "ok", unit="ops", note=f"server: {server.name}")
    env = {**os.environ, "SSLPERF_CERT_DIR": str(cert_dir)}
    server_proc = subprocess.Popen(
        [str(harness_binary(server)), "https-server", str(cert_dir), proto, group, cert, str(requests + 1)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        hello = _json_line(server_proc, 120, f"TLS server of {server.name}")
        if hello["type"] != "listening":
            m.status = "n/a" if "cannot make" in hello.get("reason", "") else "error"
            m.reason = f"server: {hello.get('reason')}"
            return m
        # One warm-up request, so the first measured one is not the process's first.
        args = [str(harness_binary(client)), "https-get", str(hello["port"]), hello["ca_file"], proto, group, cert, ctx]
        subprocess.run([*args, "1"], capture_output=True, text=True, timeout=120, env=env)
        done = subprocess.run([*args, str(requests)], capture_output=True, text=True,
                              timeout=60 + requests * 5, env=env)
        reply = json.loads(done.stdout.splitlines()[-1]) if done.stdout.strip() else {}
        if reply.get("type") != "requests" or reply.get("error"):
            m.status = "error"
            m.reason = reply.get("error") or reply.get("reason") or done.stderr.strip()[-300:]
            return m
        m.ops = [1] * len(reply["total_ns"])
        m.wall_ns = reply["total_ns"]
        m.extra = {k: reply[k] for k in ("connect_ns", "pretransfer_ns", "total_ns")}
        return m
    finally:
        server_proc.kill()
        server_proc.wait(timeout=10)
        for stream in (server_proc.stdout, server_proc.stderr):
            stream.close()


def threads(lib: Lib, cert_dir: Path, case_id: str, counts: list[int], milliseconds: int, rounds: int,
            mask: str | None = None) -> list[Measurement]:
    """Handshakes per second with each thread count, the counts interleaved
    over `rounds` so drift hits them alike."""
    env = {**os.environ, "SSLPERF_CERT_DIR": str(cert_dir), **environment.mask_env(mask)}
    tail = case_id.split("/", 2)[2]                 # tls1.3/x25519/ecdsa-p256/shared
    results = {n: Measurement(f"tls/threads/{n:03d}/{tail}", "tls-threads", THREADS_GROUP, tail.replace("/", " "),
                              f"{n} thread{'s' if n > 1 else ''}", None, "record", lib.name, "ok", unit="ops")
               for n in counts}
    for _ in range(rounds):
        for n in counts:
            m = results[n]
            if m.status != "ok":
                continue
            done = subprocess.run([str(harness_binary(lib)), "tls-threads", case_id, str(n), str(milliseconds)],
                                  capture_output=True, text=True, timeout=120 + milliseconds / 1000, env=env)
            reply = json.loads(done.stdout.splitlines()[-1]) if done.stdout.strip() else {}
            if reply.get("type") != "threads" or reply.get("failed"):
                m.status, m.reason = "error", reply.get("reason") or "a handshake failed"
                continue
            m.ops.append(sum(reply["handshakes"]))
            m.wall_ns.append(reply["wall_ns"])
            m.extra = m.extra or {"per_thread": []}
            m.extra["per_thread"] += reply["handshakes"]
    return list(results.values())
