"""`offload bench`: the kernel's crypto drivers, reached through AF_ALG,
against the userspace library, per algorithm and request size.

The harness (`afalg-bench`, harness/afalg.c) writes JSON lines; this module
runs it or reads a recording of it, turns the lines into per-size figures
(bytes per wall second and per CPU second on each side), finds per
algorithm the size from which the kernel wins (config.crossover), and
hands the ciphers and digests the engines can take to config.engine_config.
The algorithms, and the kernel's name for each, are the harness's own
table, read from its catalog (measure.catalog.afalg).
"""

from __future__ import annotations

import errno
import json
from dataclasses import dataclass, field

from sslperf.errors import SslperfError
from sslperf.offload import config, drivers

DEFAULT_SIZES = (16, 64, 256, 1024, 8192, 16384)      # `openssl speed`'s, so figures line up with its tables
MAX_SIZE = 65536                                      # one AF_ALG request (harness/afalg.c)
# What the afalg and devcrypto engines can hand to the kernel: CBC and CTR
# ciphers (CIPHERS) and digests (DIGESTS). Neither takes AEADs, so GCM is
# measured for information only.
ENGINE_CIPHERS = frozenset({"aes-128-cbc", "aes-256-cbc", "aes-128-ctr", "aes-256-ctr"})
ENGINE_DIGESTS = frozenset({"sha1", "sha256", "sha512"})
HARNESS_UNAVAILABLE = 3          # afalg-bench's exit status when AF_ALG is missing and the kernel side was asked for


@dataclass
class Timing:
    size: int
    ops: int
    wall_ns: int
    cpu_ns: int | None = None     # process CPU (user + system); None in recordings of wall-time-only tools
    user_ns: int | None = None
    sys_ns: int | None = None

    @property
    def wall_rate(self) -> float:
        """Bytes per second of elapsed time."""
        return self.size * self.ops * 1e9 / self.wall_ns

    @property
    def cpu_rate(self) -> float | None:
        """Bytes per second of this process's CPU time: what the work costs
        the CPU, whoever (user code or the kernel on its behalf) spends it."""
        return self.size * self.ops * 1e9 / self.cpu_ns if self.cpu_ns else None


@dataclass
class Algorithm:
    name: str                      # the library's name, e.g. aes-128-cbc
    kernel_name: str               # the kernel's, e.g. cbc(aes)
    kind: str = ""                 # skcipher, aead or hash
    kernel: dict[int, Timing] = field(default_factory=dict)
    user: dict[int, Timing] = field(default_factory=dict)
    status: str = "ok"             # ok, na (kernel or library lacks it) or error
    reason: str = ""
    driver: dict | None = None     # the kernel driver behind kernel_name, when known
    wall_threshold: int | None = None
    cpu_threshold: int | None = None

    @property
    def sizes(self) -> list[int]:
        return sorted(set(self.kernel) | set(self.user))

    def crossover(self) -> config.Crossover:
        """Wall-time crossover in the shape engine_config takes."""
        both = sorted(set(self.kernel) & set(self.user))
        return config.Crossover(self.name.upper(), self.wall_threshold,
                                 [(s, self.kernel[s].wall_rate, self.user[s].wall_rate) for s in both])


@dataclass
class Bench:
    library: str = ""
    flavor: str = ""
    side: str = "both"             # both, or user (the library alone)
    seconds: float | None = None
    af_alg: bool = True
    errno: int | None = None
    reason: str = ""
    algorithms: dict[str, Algorithm] = field(default_factory=dict)
    lines: list[dict] = field(default_factory=list)   # as read, to write back out with --json

    @property
    def measured_kernel(self) -> bool:
        return any(a.kernel for a in self.algorithms.values())


# ---- reading the harness's lines -------------------------------------------

def parse_lines(text: str, source: str = "the harness output") -> Bench:
    """A Bench from afalg-bench JSON lines (and afalg-driver lines that
    sslperf adds). A line that is not JSON, or a result without its figures,
    is an error naming the line."""
    bench = Bench()
    header = False
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            kind = line["type"]
        except (ValueError, KeyError, TypeError):
            raise SslperfError(f"Line {number} of {source} is not an afalg-bench JSON line: {raw[:120]!r}.",
                               hint="Give `--from` the output of `sslperf offload bench --json`.") from None
        bench.lines.append(line)
        try:
            if kind == "afalg-bench":
                header = True
                bench.library, bench.flavor = line.get("library", ""), line.get("flavor", "")
                bench.side, bench.seconds = line.get("side", "both"), line.get("seconds")
                bench.af_alg, bench.errno, bench.reason = bool(line["af_alg"]), line.get("errno"), line.get("reason", "")
            elif kind == "afalg-driver" and "kernel_name" not in line:   # matched to algorithms at the end
                raise KeyError("kernel_name")
            elif kind in ("afalg-result", "afalg-na", "afalg-error"):
                alg = _algorithm(bench, line)
                if kind == "afalg-result":
                    timing = Timing(int(line["size"]), int(line["ops"]), int(line["wall_ns"]), line.get("cpu_ns"),
                                    line.get("user_ns"), line.get("sys_ns"))
                    if timing.size <= 0 or timing.ops <= 0 or timing.wall_ns <= 0:
                        raise ValueError("size, ops and wall_ns must be positive")
                    (alg.kernel if line["side"] == "kernel" else alg.user)[timing.size] = timing
                    alg.kind = line.get("kind", alg.kind)
                elif "size" not in line or kind == "afalg-error":   # a size the mode cannot do is not the algorithm's fault
                    alg.status, alg.reason = kind.removeprefix("afalg-"), line.get("reason", "")
        except (KeyError, TypeError, ValueError) as exc:
            raise SslperfError(f"Line {number} of {source} lacks a field or has a bad value ({exc}): {raw[:120]!r}.") \
                from None
    if not header:
        raise SslperfError(f"{source} has no afalg-bench header line.",
                           hint="Give `--from` the output of `sslperf offload bench --json`.")
    drivers = {l["kernel_name"]: l for l in bench.lines if l["type"] == "afalg-driver"}
    for alg in bench.algorithms.values():
        alg.driver = drivers.get(alg.kernel_name)
    analyse(bench)
    return bench


def _algorithm(bench: Bench, line: dict) -> Algorithm:
    name = line["alg"]
    if name not in bench.algorithms:
        bench.algorithms[name] = Algorithm(name, line.get("kernel_name", name))
    return bench.algorithms[name]


# ---- thresholds ---------------------------------------------------------------

def analyse(bench: Bench) -> None:
    """Per algorithm, the size from which the kernel's wall throughput beats
    the library's at every larger size, and the same for throughput per CPU
    second (where an asynchronous hardware driver can win: the process
    sleeps while the engine works)."""
    for alg in bench.algorithms.values():
        if not alg.kernel or not alg.user:
            continue
        alg.wall_threshold = config.crossover({s: t.wall_rate for s, t in alg.kernel.items()},
                                               {s: t.wall_rate for s, t in alg.user.items()})
        kernel_cpu = {s: t.cpu_rate for s, t in alg.kernel.items() if t.cpu_rate}
        user_cpu = {s: t.cpu_rate for s, t in alg.user.items() if t.cpu_rate}
        alg.cpu_threshold = config.crossover(kernel_cpu, user_cpu) if kernel_cpu and user_cpu else None


def verdict(alg: Algorithm) -> str:
    """One sentence per algorithm: where the kernel wins, on what."""
    if alg.status != "ok":
        return f"{'n/a' if alg.status == 'na' else 'error'}: {alg.reason}"
    if not alg.kernel:
        return "library only (the kernel side was not measured)"
    driver = alg.driver or {}
    async_hw = " — its driver is asynchronous: the process waits without using the CPU" if driver.get("async") else ""
    has_cpu = any(t.cpu_ns for t in alg.kernel.values())
    if alg.wall_threshold is not None:
        text = f"the kernel wins from {alg.wall_threshold} bytes"
        if alg.cpu_threshold is not None and alg.cpu_threshold < alg.wall_threshold:
            text += f"; it already uses less CPU from {alg.cpu_threshold} bytes{async_hw}"
        return text
    if alg.cpu_threshold is not None:
        return (f"the kernel never wins on elapsed time, only on CPU freed, from {alg.cpu_threshold} bytes{async_hw}; "
                "worth it only where the CPU, not the latency of a request, is the limit")
    return "the kernel never wins" + ("" if has_cpu else " (elapsed time; this recording has no CPU times)") + \
        "; left to the library"


# ---- the engine configuration ----------------------------------------------

def engine_section(bench: Bench, engine: str) -> str:
    """The afalg/devcrypto configuration with the measured thresholds."""
    compared = [a for a in bench.algorithms.values() if a.status == "ok" and a.kernel and a.user]
    if not compared:
        raise SslperfError("Nothing was measured on both sides, so there are no thresholds to write.",
                           hint="The configuration needs a bench run where AF_ALG works (or a recording of one).")
    ciphers = [a.crossover() for a in compared if a.name in ENGINE_CIPHERS]
    digests = [a.crossover() for a in compared if a.name in ENGINE_DIGESTS]
    notes = [f"measured by sslperf offload bench: {bench.library or 'unknown library'}"
             + (f", {bench.seconds:g} s per size and side" if bench.seconds else "")]
    if engine == "devcrypto":
        notes.append("devcrypto reaches the same kernel drivers through /dev/crypto; the AF_ALG figures stand in")
    for a in compared:
        if a.name not in ENGINE_CIPHERS | ENGINE_DIGESTS:
            notes.append(f"{a.name.upper()}: measured ({verdict(a)}), but neither engine offloads AEADs")
        elif a.wall_threshold is None and a.cpu_threshold is not None:
            notes.append(f"{a.name.upper()}: frees CPU from {a.cpu_threshold} bytes but is never faster; not listed")
    return config.engine_config(ciphers, engine, digests=digests or None, notes=notes)


# ---- running the harness -----------------------------------------------------

def algorithm_names() -> tuple[str, ...]:
    """The library's names of the algorithms the harness times, in its table's order."""
    from sslperf.measure import catalog

    return tuple(a["name"] for a in catalog.afalg())


def run_harness(lib, algorithms: list[str], sizes: list[int], seconds: float, side: str = "both") -> str:
    """The harness's JSON lines for `lib`, plus afalg-driver lines naming
    the kernel driver behind each algorithm (from /proc/crypto)."""
    from sslperf.measure import catalog, harness_client

    # each size: a 10 % warm-up and the timed run, on one side or both; then room for set-up
    budget = len(algorithms) * len(sizes) * seconds * 1.1 * (2 if side == "both" else 1)
    done = harness_client.call(lib, "afalg-bench", "--side", side, "--seconds", f"{seconds:g}",
                               "--sizes", ",".join(map(str, sizes)), *algorithms, timeout=2 * budget + 60,
                               ok_codes=(0, 1, HARNESS_UNAVAILABLE))
    if not done.lines:
        raise SslperfError(f"The harness for {lib.name} failed in afalg-bench (exit code {done.returncode}): "
                           f"{done.stderr.strip()[-300:] or 'no message'}")
    kernel_names = {a["kernel"] for a in catalog.afalg() if a["name"] in algorithms}
    return "".join(json.dumps(line) + "\n" for line in [*done.lines, *drivers.driver_lines(kernel_names)])


def unavailable(bench: Bench) -> SslperfError:
    """The one-paragraph explanation when AF_ALG cannot be used here."""
    name = errno.errorcode.get(bench.errno or 0, f"errno {bench.errno}")
    if bench.errno in (errno.EPERM, errno.EACCES):
        cause = "a security policy (seccomp or an LSM) refuses the socket family"
    else:
        cause = ("the kernel was built without the AF_ALG user API (CONFIG_CRYPTO_USER_API_SKCIPHER/HASH/AEAD) "
                 "or the sandbox does not offer the socket family")
    return SslperfError(
        f"AF_ALG is not available here: socket(AF_ALG) fails with {name} ({bench.reason or 'no reason given'}). "
        f"This is typical of containers and VMs — {cause} — and means the afalg engine cannot reach the "
        "kernel's drivers on this machine, so there is no kernel side to time.",
        hint="`sslperf offload scan` still shows which drivers the kernel has; `--user-only` times the library "
             "alone. For thresholds, run `sslperf offload bench --json > bench.jsonl` where AF_ALG works and "
             "analyse the recording anywhere: `sslperf offload bench --from bench.jsonl --config-out afalg.cnf`.")


def to_json(bench: Bench) -> dict:
    """The analysis, as the last line of `--json` output."""
    return {"type": "afalg-analysis", "library": bench.library, "af_alg": bench.af_alg, "algorithms": [
        {"alg": a.name, "kernel_name": a.kernel_name, "status": a.status, "reason": a.reason,
         "driver": (a.driver or {}).get("driver"), "wall_threshold": a.wall_threshold,
         "cpu_threshold": a.cpu_threshold, "verdict": verdict(a),
         "sizes": [{"size": s,
                    "kernel_wall_Bps": a.kernel[s].wall_rate if s in a.kernel else None,
                    "user_wall_Bps": a.user[s].wall_rate if s in a.user else None,
                    "kernel_cpu_Bps": a.kernel[s].cpu_rate if s in a.kernel else None,
                    "user_cpu_Bps": a.user[s].cpu_rate if s in a.user else None} for s in a.sizes]}
        for a in bench.algorithms.values()]}
