"""Cases across threads, as OpenSSL's perftools run every test with 1…N
threads: the rate with each thread count and the scaling efficiency
(rate at N / (N × rate at 1)). Three ways to share the library, for any
case of `speed`, `api` or `tls`:

- own:    each thread prepares the case itself (its own keys, contexts and,
          for handshakes, its own SSL_CTX pair: a pool of one per thread);
          the library's global state is shared;
- libctx: the same, and each thread has its own OSSL_LIB_CTX as its default
          (perftools' -l; OpenSSL 3.0+ only);
- shared: TLS handshakes on one SSL_CTX pair shared by every thread.

All three are the harness's one thread runner (`harness threads CASE N MS MODE`). A fourth, `clients`, is for
loopback GETs (TCP or QUIC): N client threads at once against one server (measure.modes.run_quic_threads).

The thread counts are interleaved over rounds, so drift hits them alike;
the workers may use every allowed CPU (recorded)."""

from __future__ import annotations

from pathlib import Path

from sslperf.libs.model import Lib
from sslperf.measure import certificates, environment, pinning
from sslperf.measure.case_ids import make
from sslperf.measure.harness_client import HarnessError, call
from sslperf.results import OP_WALL_KEY, Measurement

MODES = ("own", "libctx", "shared")


def across(lib: Lib, cert_dir: Path, of: str, counts: list[int], milliseconds: int, rounds: int, mode: str,
           mask: str | None = None) -> list[Measurement]:
    """`of` (a case id) with each thread count, `rounds` times each."""
    env = {**certificates.env(cert_dir), **environment.mask_env(mask)}
    results = {n: make("threads", mode=mode, size=n, case=of).result(
                   lib.name, unit="ops", note=mode, operation=f"{n} thread{'s' if n > 1 else ''}")
               for n in counts}
    for _ in range(rounds):
        for n in counts:
            m = results[n]
            if m.status != "ok":
                continue
            try:
                reply = call(lib, "threads", of, str(n), str(milliseconds), mode, timeout=120 + milliseconds / 1000,
                             env=env, ok_codes=None, cpu=set(pinning.allowed())).last
            except HarnessError as failed:
                m.status, m.reason = "error", failed.message
                continue
            if reply.get("type") == "na":
                m.status, m.reason = "n/a", reply.get("reason")
                continue
            if reply.get("type") != "threads":
                m.status, m.reason = "error", reply.get("reason") or "an operation failed"
                continue
            per_thread = reply["ops"]
            if reply.get("bytes_per_op"):
                m.unit, m.bytes_per_op = "bytes", reply["bytes_per_op"]
            m.ops.append(sum(per_thread))
            m.wall_ns.append(reply["wall_ns"])
            m.extra = m.extra or {"per_thread": []}
            m.extra["per_thread"] += per_thread
            if reply.get("op_wall_ns"):             # TLS handshakes: a uniform sample of each thread's latencies
                m.extra.setdefault(OP_WALL_KEY, []).extend(reply["op_wall_ns"])
    return list(results.values())


CLIENTS = "clients"      # loopback GETs from N client threads at once against one server (measure.modes)


def clients_result(lib: Lib, of: str, n: int) -> Measurement:
    """The result of `of` (a loopback GET case) with `n` client threads at once."""
    return make("threads", mode=CLIENTS, size=n, case=of).result(
        lib.name, unit="ops", note=CLIENTS, operation=f"{n} client thread{'s' if n > 1 else ''}")


def take_clients_round(m: Measurement, got: Measurement) -> None:
    """One round of `got` (the loopback measurement) into `m`: a sample of all its requests over the whole loop's
    wall time, and every request's latency; the first failure ends `m`."""
    if m.status != "ok":
        return
    if got.status != "ok":
        m.status, m.reason = got.status, got.reason
        return
    m.ops.append(len(got.wall_ns))
    m.wall_ns.append(got.extra["loop_ns"][0])
    m.extra = m.extra or {"total_ns": [], "pretransfer_ns": [], "client_cpu_ns": [], "server_cpu_ns": [], "served": []}
    for key in m.extra:
        m.extra[key] += got.extra.get(key, [])


def efficiency(measurements: list[Measurement], metric: str = "wall") -> dict[str, float]:
    """Scaling efficiency per case id: rate at N / (N × rate at 1 thread) of the same case, lib and mode."""
    one = {(m.algorithm, m.lib, m.note): m.summary(metric).median for m in measurements
           if m.status == "ok" and m.size == 1 and m.summary(metric)}
    out = {}
    for m in measurements:
        base = one.get((m.algorithm, m.lib, m.note))
        if base and m.status == "ok" and m.summary(metric) and m.size:
            out[(m.case, m.lib)] = m.summary(metric).median / (m.size * base)
    return out
