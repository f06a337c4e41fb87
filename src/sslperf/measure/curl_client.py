"""The curl regression's exact pattern with a real curl: N sequential HTTPS
GETs, each a new curl process (so each loads the CA file into a new
SSL_CTX, as curl does), against the harness's loopback server, timed by
curl itself (`-w %{time_connect} %{time_pretransfer} %{time_total}`).
Shown next to the harness's own curl-like client, so a user sees whether
the imitation is faithful."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from sslperf.libs.curl import Curl
from sslperf.libs.model import Lib
from sslperf.measure import certificates, pinning
from sslperf.measure.harness_client import Server
from sslperf.measure.case_ids import Case, make
from sslperf.results import Measurement

TIMINGS = "%{time_connect} %{time_pretransfer} %{time_total} %{http_code}\\n"
TLS_FLAGS = {"tls1.3": ["--tlsv1.3", "--tls-max", "1.3"], "tls1.2": ["--tlsv1.2", "--tls-max", "1.2"]}


def case(proto: str, group: str, cert: str) -> Case:
    return make("tls/loopback", protocol=proto, group=group, cert=cert, client="curl")


def requests(curl: Curl, client: Lib, server: Lib, cert_dir: Path, proto: str, group: str, cert: str,
             count: int) -> Measurement:
    """`count` sequential GETs by `curl` (linked with `client`) from a server of `server`."""
    m = case(proto, group, cert).result(client.name, unit="ops",
                                        note=f"curl {curl.version} (its own -w timings), server: {server.name}")
    server_cpu, client_cpu = pinning.loopback_cpus()
    with Server(server, "https-server", str(cert_dir), proto, group, cert, str(count + 1),
                env=certificates.env(cert_dir), cpu=server_cpu) as running:
        hello = running.line(timeout=120)
        if hello["type"] != "listening":
            m.status = "n/a" if "cannot make" in hello.get("reason", "") else "error"
            m.reason = f"server: {hello.get('reason')}"
            return m
        port = hello["port"]
        argv = [str(curl.binary), "--silent", "--show-error", "--output", os.devnull, "--cacert", hello["ca_file"],
                "--resolve", f"localhost:{port}:127.0.0.1", "--write-out", TIMINGS, *TLS_FLAGS[proto],
                f"https://localhost:{port}/"]
        times: dict[str, list[int]] = {"connect_ns": [], "pretransfer_ns": [], "total_ns": []}
        for i in range(count + 1):       # the first is a warm-up (page cache, the first process's costs)
            problem, line = _one(argv, client_cpu)
            if problem:
                m.status, m.reason = "error", problem
                return m
            if i == 0:
                continue
            connect, pretransfer, total, code = line.split()
            if code != "200":
                m.status, m.reason = "error", f"curl got HTTP {code}, not 200"
                return m
            for key, value in zip(times, (connect, pretransfer, total)):
                times[key].append(round(float(value) * 1e9))
    m.ops = [1] * count
    m.wall_ns = times["total_ns"]
    m.extra = times
    return m


def _one(argv: list[str], cpu: int | None) -> tuple[str | None, str]:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
                              preexec_fn=pinning.pin_self(cpu))
    except subprocess.TimeoutExpired:
        return "curl did not finish a request within 30 s", ""
    if done.returncode != 0:
        return f"curl failed (exit {done.returncode}): {done.stderr.strip()[-300:]}", ""
    return None, done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
