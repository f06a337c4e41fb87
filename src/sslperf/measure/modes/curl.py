"""The curl regression's exact pattern with a real curl: per round a fresh harness server and the round's GETs,
each a new curl process (so each loads the CA file into a new SSL_CTX, as curl does) built from source against the
library, timed by curl itself (`-w %{time_connect} %{time_pretransfer} %{time_total}`). Measured beside the
harness's curl-like client (the loopback mode), so a user sees whether the imitation is faithful. Every curl is
built (cached) before the first round."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from sslperf import figures
from sslperf.errors import BuildFailed
from sslperf.libs import curl as curl_builds
from sslperf.libs import installed
from sslperf.libs.model import Lib
from sslperf.measure import certificates, servers
from sslperf import pinning
from sslperf.cases.ids import Case
from sslperf.measure.harness_client import Server
from sslperf.measure.modes import base
from sslperf.results import Measurement

TIMINGS = "%{time_connect} %{time_pretransfer} %{time_total} %{http_code}\\n"
TLS_FLAGS = {"tls1.3": ["--tlsv1.3", "--tls-max", "1.3"], "tls1.2": ["--tlsv1.2", "--tls-max", "1.2"]}
REQUEST_TIMEOUT_S = 30


@dataclass(frozen=True)
class Options:
    requests: int = 30                  # GETs (curl processes) per library per round
    curl: str | None = None             # which curl (None: the newest the curl-sys crate carries)
    server: str | None = None           # the server's library (None: each client's own)


class Session(base.Session):
    def __init__(self, mode, ctx, cases):
        super().__init__(mode, ctx, cases)
        self.server = installed.find(self.options.server) if self.options.server else None
        self.curls, self.refused = {}, {}
        servers.placement(ctx.run)
        for lib in ctx.libs:
            if self.mode.lacking(lib):
                continue
            try:
                if ctx.on_build:
                    ctx.on_build(f"curl against {lib.name}")
                self.curls[lib.name] = curl_builds.build(lib, curl_spec=self.options.curl)
            except BuildFailed as failed:
                self.refused[lib.name] = failed.message.split("Last lines:")[0].strip()
                ctx.run.warnings.append(self.refused[lib.name] + (f" {failed.hint}" if failed.hint else ""))

    def prepare(self, case: Case, libs: list[Lib]) -> base.Prepared:
        results = {lib.name: Measurement.of(case, lib.name, "n/a", self.refused[lib.name]) if lib.name in self.refused
                   else Measurement.of(case, lib.name) for lib in libs}
        return base.Prepared(results, self.passes)

    def take(self, case: Case, lib: Lib):
        return requests(self.curls[lib.name], lib, self.server or lib, self.ctx.cert_dir, case,
                        self.options.requests)

    def cpus(self) -> set[int]:
        return set(pinning.loopback_cpus())


def requests(curl: curl_builds.Curl, client: Lib, server: Lib, cert_dir, case: Case, count: int):
    """`count` sequential GETs by `curl` (linked with `client`) from a server of `server`: one round."""
    proto, group, cert = (case.part(p) for p in ("protocol", "group", "cert"))
    m = Measurement.of(case, client.name, unit="ops", note=f"curl {curl.version} (its own -w timings), server: {server.name}")
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
        times: dict[str, list[int]] = {figures.CONNECT: [], figures.PRETRANSFER: [], figures.TOTAL: []}
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
    m.ops, m.wall_ns, m.figures = [1] * count, list(times[figures.TOTAL]), times
    return m


def _one(argv: list[str], cpu: int | None) -> tuple[str | None, str]:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=REQUEST_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, preexec_fn=pinning.child_setup(cpu))
    except subprocess.TimeoutExpired:
        return f"curl did not finish a request within {REQUEST_TIMEOUT_S} s", ""
    if done.returncode != 0:
        return f"curl failed (exit {done.returncode}): {done.stderr.strip()[-300:]}", ""
    return None, done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


MODE = base.Mode("curl", "HTTPS GETs by a real curl over loopback TCP", ("tls/loopback",), base.ALL_BACKENDS,
                 (figures.CONNECT, figures.PRETRANSFER, figures.TOTAL), base.WALL_ONLY, Session,
                 where=(("client", ("curl",)),), options=Options)
