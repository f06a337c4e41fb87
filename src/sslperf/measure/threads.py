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

The thread counts are interleaved over rounds, so drift hits them alike;
the workers may use every allowed CPU (recorded)."""

from __future__ import annotations

from pathlib import Path

from sslperf import families
from sslperf.libs.model import Lib
from sslperf.measure import environment, pinning
from sslperf.measure.harness_client import HarnessError, call
from sslperf.results import Measurement

GROUP = families.FAMILIES["threads"].groups[0]
MODES = ("own", "libctx", "shared")


def case_id(mode: str, n: int, of: str) -> str:
    return f"threads/{mode}/{n:03d}/{of}"


def across(lib: Lib, cert_dir: Path, of: str, counts: list[int], milliseconds: int, rounds: int, mode: str,
           mask: str | None = None) -> list[Measurement]:
    """`of` (a case id) with each thread count, `rounds` times each."""
    env = {"SSLPERF_CERT_DIR": str(cert_dir), **environment.mask_env(mask)}
    results = {n: Measurement(case_id(mode, n, of), "threads", GROUP, of, f"{n} thread{'s' if n > 1 else ''}",
                              n, "record", lib.name, "ok", unit="ops", note=mode)
               for n in counts}
    if mode == "shared":
        command = ["tls-threads", of]
    else:
        command = ["threads", of]
    for _ in range(rounds):
        for n in counts:
            m = results[n]
            if m.status != "ok":
                continue
            args = [*command, str(n), str(milliseconds)] + ([] if mode == "shared" else [mode])
            try:
                reply = call(lib, *args, timeout=120 + milliseconds / 1000, env=env, ok_codes=None,
                             cpu=set(pinning.allowed())).last
            except HarnessError as failed:
                m.status, m.reason = "error", failed.message
                continue
            if reply.get("type") == "na":
                m.status, m.reason = "n/a", reply.get("reason")
                continue
            if reply.get("type") != "threads" or reply.get("failed"):
                m.status, m.reason = "error", reply.get("reason") or "an operation failed"
                continue
            per_thread = reply.get("ops") or reply.get("handshakes")
            if reply.get("bytes_per_op"):
                m.unit, m.bytes_per_op = "bytes", reply["bytes_per_op"]
            m.ops.append(sum(per_thread))
            m.wall_ns.append(reply["wall_ns"])
            m.extra = m.extra or {"per_thread": []}
            m.extra["per_thread"] += per_thread
    return list(results.values())


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
