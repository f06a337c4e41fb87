"""`offload bench`: the kernel's crypto drivers, reached through AF_ALG,
against the userspace library, per algorithm and request size.

The harness (`afalg-bench`, harness/afalg.c) writes JSON lines; this module
runs it in rounds (fresh processes, each for a share of the time, every line
tagged with its "round") or reads a recording of them, turns the lines into
per-size samples (bytes per wall second and per CPU second on each side, one
per round: median and 95% CI), finds per algorithm the size from which the
kernel clearly wins (config.clear_crossover: its CI above the library's
there and at every larger size), and hands the ciphers and digests the
engines can take to config.engine_config.
The algorithms, and the kernel's name for each, are the harness's own
table, read from its catalog (measure.catalog.afalg).
"""

from __future__ import annotations

import errno
import json
from dataclasses import dataclass, field

from sslperf import stats
from sslperf.errors import SslperfError
from sslperf.offload import config, drivers

DEFAULT_SIZES = (16, 64, 256, 1024, 8192, 16384)      # `openssl speed`'s, so figures line up with its tables
MAX_SIZE = 65536                                      # one AF_ALG request (harness/afalg.c)
# What the afalg and devcrypto engines can hand to the kernel: CBC and CTR
# ciphers (CIPHERS) and digests (DIGESTS). Neither takes AEADs, so GCM is
# measured for information only.
ENGINE_CIPHERS = frozenset({"aes-128-cbc", "aes-256-cbc", "aes-128-ctr", "aes-256-ctr"})
ENGINE_DIGESTS = frozenset({"sha1", "sha256", "sha512"})
DEFAULT_ROUNDS = 5
MAX_RECORDING = 64 * 1024 * 1024  # a recording read from a file: real ones are a few hundred KB
HARNESS_UNAVAILABLE = 3          # afalg-bench's exit status when AF_ALG is missing and the kernel side was asked for


@dataclass
class Timing:
    size: int
    ops: int
    wall_ns: int
    cpu_ns: int | None = None     # process CPU (user + system); None in recordings of wall-time-only tools
    user_ns: int | None = None
    sys_ns: int | None = None
    round: int = 1                # which harness process (recordings without the field: one round)

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
class Samples:
    """One algorithm, size and side: a Timing per round. The rates are the
    medians over rounds; `wall` and `cpu` add the 95% CI (stats.describe:
    with fewer than 6 rounds, the rounds' [min, max])."""
    size: int
    timings: list[Timing] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.timings)

    @property
    def wall(self) -> stats.Summary:
        return stats.describe([t.wall_rate for t in self.timings])

    @property
    def cpu(self) -> stats.Summary | None:
        rates = [t.cpu_rate for t in self.timings if t.cpu_rate]
        return stats.describe(rates) if rates else None

    @property
    def wall_rate(self) -> float:
        return self.wall.median

    @property
    def cpu_rate(self) -> float | None:
        cpu = self.cpu
        return cpu.median if cpu else None

    @property
    def sys_share(self) -> float | None:
        """The median share of system time in the process's CPU time."""
        shares = [t.sys_ns / t.cpu_ns for t in self.timings if t.cpu_ns and t.sys_ns is not None]
        return stats.describe(shares).median if shares else None


@dataclass
class Algorithm:
    name: str                      # the library's name, e.g. aes-128-cbc
    kernel_name: str               # the kernel's, e.g. cbc(aes)
    kind: str = ""                 # skcipher, aead or hash
    kernel: dict[int, Samples] = field(default_factory=dict)
    user: dict[int, Samples] = field(default_factory=dict)
    status: str = "ok"             # ok, na (kernel or library lacks it) or error
    reason: str = ""
    driver: dict | None = None     # the kernel driver behind kernel_name, when known
    wall_threshold: int | None = None         # the clear rule (config.clear_crossover)
    cpu_threshold: int | None = None
    wall_median_threshold: int | None = None  # the same on the medians alone (config.crossover), for the verdict
    cpu_median_threshold: int | None = None
    wall_overlap: list[int] = field(default_factory=list)   # sizes where the two wall CIs overlap

    @property
    def sizes(self) -> list[int]:
        return sorted(set(self.kernel) | set(self.user))

    def crossover(self) -> config.Crossover:
        """Wall-time crossover in the shape engine_config takes."""
        both = sorted(set(self.kernel) & set(self.user))
        unclear = self.wall_threshold is None and self.wall_median_threshold is not None
        return config.Crossover(self.name.upper(), self.wall_threshold,
                                 [(s, self.kernel[s].wall_rate, self.user[s].wall_rate) for s in both],
                                 verdict(self) if unclear else "")


@dataclass
class Bench:
    library: str = ""
    flavor: str = ""
    side: str = "both"             # both, or user (the library alone)
    seconds: float | None = None   # per round, size and side
    rounds: int = 1
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
    sslperf adds), from one round or several: each line of a round carries
    its "round" (1, 2, …; without it, round 1), each round its own header.
    A line that is not JSON, a result without its figures, a second result
    for the same round, algorithm, size and side, or rounds of different
    libraries or sides, is an error naming the line."""
    bench = Bench()
    header = None
    rounds: set[int] = set()
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
            round_ = line.get("round", 1)
            if isinstance(round_, bool) or not isinstance(round_, int) or round_ < 1:
                raise ValueError("round must be a whole number from 1")
            if kind == "afalg-bench":
                rounds.add(round_)
                same = (line.get("library", ""), line.get("side", "both"))
                if header is not None and same != header:
                    raise ValueError(f"round {round_} is of {same[0]!r}, side {same[1]}; an earlier round of "
                                     f"{header[0]!r}, side {header[1]}")
                header = same
                bench.library, bench.flavor = line.get("library", ""), line.get("flavor", "")
                bench.side, bench.seconds = line.get("side", "both"), line.get("seconds")
                if not line["af_alg"]:                       # any round without AF_ALG: none has it
                    bench.af_alg, bench.errno, bench.reason = False, line.get("errno"), line.get("reason", "")
            elif kind == "afalg-driver" and "kernel_name" not in line:   # matched to algorithms at the end
                raise KeyError("kernel_name")
            elif kind in ("afalg-result", "afalg-na", "afalg-error"):
                alg = _algorithm(bench, line)
                if kind == "afalg-result":
                    timing = Timing(int(line["size"]), int(line["ops"]), int(line["wall_ns"]), line.get("cpu_ns"),
                                    line.get("user_ns"), line.get("sys_ns"), round_)
                    if timing.size <= 0 or timing.ops <= 0 or timing.wall_ns <= 0:
                        raise ValueError("size, ops and wall_ns must be positive")
                    side = alg.kernel if line["side"] == "kernel" else alg.user
                    samples = side.setdefault(timing.size, Samples(timing.size))
                    if any(t.round == round_ for t in samples.timings):
                        raise ValueError(f"a second {line['side']} result for {alg.name} at {timing.size} bytes in "
                                         f"round {round_} (each round's lines carry their \"round\")")
                    samples.timings.append(timing)
                    alg.kind = line.get("kind", alg.kind)
                elif "size" not in line or kind == "afalg-error":   # a size the mode cannot do is not the algorithm's fault
                    if alg.status != "error":                        # a failure in any round stands
                        alg.status, alg.reason = kind.removeprefix("afalg-"), line.get("reason", "")
        except (KeyError, TypeError, ValueError) as exc:
            raise SslperfError(f"Line {number} of {source} lacks a field or has a bad value ({exc}): {raw[:120]!r}.") \
                from None
    if header is None:
        raise SslperfError(f"{source} has no afalg-bench header line.",
                           hint="Give `--from` the output of `sslperf offload bench --json`.")
    bench.rounds = len(rounds)
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
    sleeps while the engine works).

    The rule, with rounds (config.clear_crossover): at each size the median
    over rounds and its 95% CI; the kernel wins from size S only where its
    CI lies wholly above the library's at S and at every larger size. Just
    below S, a clear loss (CI wholly below) puts the threshold between the
    two, interpolated on the medians; overlapping CIs there put it at S.
    Where the CIs overlap no win is claimed — "not clearly" — even if the
    medians say the kernel is ahead; the thresholds on the medians alone are
    kept for the verdict to say so. One round (or an old recording) has no
    CI: each interval is the figure itself and the rule is the old one."""
    for alg in bench.algorithms.values():
        if not alg.kernel or not alg.user:
            continue
        kernel_wall = {s: x.wall for s, x in alg.kernel.items()}
        user_wall = {s: x.wall for s, x in alg.user.items()}
        alg.wall_threshold = config.clear_crossover(kernel_wall, user_wall)
        alg.wall_median_threshold = config.crossover({s: x.median for s, x in kernel_wall.items()},
                                                     {s: x.median for s, x in user_wall.items()})
        alg.wall_overlap = [s for s in sorted(set(kernel_wall) & set(user_wall))
                            if config.separated(kernel_wall[s], user_wall[s]) == 0]
        kernel_cpu = {s: x.cpu for s, x in alg.kernel.items() if x.cpu}
        user_cpu = {s: x.cpu for s, x in alg.user.items() if x.cpu}
        if kernel_cpu and user_cpu:
            alg.cpu_threshold = config.clear_crossover(kernel_cpu, user_cpu)
            alg.cpu_median_threshold = config.crossover({s: x.median for s, x in kernel_cpu.items()},
                                                        {s: x.median for s, x in user_cpu.items()})


def _sizes_text(sizes: list[int]) -> str:
    return ", ".join(map(str, sizes)) + " bytes"


def verdict(alg: Algorithm) -> str:
    """One sentence per algorithm: where the kernel wins, on what."""
    if alg.status != "ok":
        return f"{'n/a' if alg.status == 'na' else 'error'}: {alg.reason}"
    if not alg.kernel:
        return "library only (the kernel side was not measured)"
    driver = alg.driver or {}
    async_hw = " — its driver is asynchronous: the process waits without using the CPU" if driver.get("async") else ""
    has_cpu = any(x.cpu for x in alg.kernel.values())
    median, clear = alg.wall_median_threshold, alg.wall_threshold
    # where the medians alone say more than the CIs allow
    unclear = "" if median is None or (clear is not None and clear <= median) else \
        f"the medians cross at {median} bytes, but the 95% CIs overlap at " \
        f"{_sizes_text(alg.wall_overlap)}: not clearly"
    if clear is not None:
        text = f"the kernel wins from {clear} bytes" + (f" ({unclear} below {clear})" if unclear else "")
        if alg.cpu_threshold is not None and alg.cpu_threshold < clear:
            text += f"; it already uses less CPU from {alg.cpu_threshold} bytes{async_hw}"
        return text
    if alg.cpu_threshold is not None:
        return (f"the kernel never {'clearly ' if unclear else ''}wins on elapsed time"
                f"{f' ({unclear})' if unclear else ''}, only on CPU freed, from {alg.cpu_threshold} bytes{async_hw}; "
                "worth it only where the CPU, not the latency of a request, is the limit")
    if unclear:
        return f"{unclear}; left to the library (more --rounds or --seconds may settle it)"
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
    per_round = f"{bench.seconds:g} s per size and side" if bench.seconds else ""
    if bench.rounds > 1:
        per_round = f"{bench.rounds} rounds" + (f" of {per_round}" if per_round else "") + \
            "; thresholds where the kernel's 95% CI lies above the library's"
    notes = [f"measured by sslperf offload bench: {bench.library or 'unknown library'}"
             + (f", {per_round}" if per_round else "")]
    if engine == "devcrypto":
        notes.append("devcrypto reaches the same kernel drivers through /dev/crypto; the AF_ALG figures stand in")
    for a in compared:
        if a.name not in ENGINE_CIPHERS | ENGINE_DIGESTS:
            notes.append(f"{a.name.upper()}: measured ({verdict(a)}), but neither engine offloads AEADs")
        elif a.wall_threshold is None and a.cpu_threshold is not None:
            notes.append(f"{a.name.upper()}: frees CPU from {a.cpu_threshold} bytes but is never faster; not listed")
        elif a.wall_threshold is not None and a.wall_median_threshold != a.wall_threshold:
            notes.append(f"{a.name.upper()}: {verdict(a)}")
    return config.engine_config(ciphers, engine, digests=digests or None, notes=notes)


# ---- running the harness -----------------------------------------------------

def algorithm_names() -> tuple[str, ...]:
    """The library's names of the algorithms the harness times, in its table's order."""
    from sslperf.measure import catalog

    return tuple(a["name"] for a in catalog.afalg())


def run_harness(lib, algorithms: list[str], sizes: list[int], seconds: float, side: str = "both",
                rounds: int = DEFAULT_ROUNDS, progress=None) -> str:
    """The harness's JSON lines for `lib` from `rounds` fresh processes, one
    after the other (independent samples), each timing every algorithm (in
    the same order), size and side for seconds / rounds; each line tagged
    with its "round". Then afalg-driver lines naming the kernel driver
    behind each algorithm (from /proc/crypto). Where the first round finds
    no AF_ALG with both sides asked for, it stops there. `progress(r)` is
    called before round r."""
    from sslperf.measure import catalog, harness_client

    share = seconds / rounds
    # each size: a 10 % warm-up and the timed run, on one side or both; then room for set-up
    budget = len(algorithms) * len(sizes) * share * 1.1 * (2 if side == "both" else 1)
    lines: list[dict] = []
    for round_ in range(1, rounds + 1):
        if progress:
            progress(round_)
        done = harness_client.call(lib, "afalg-bench", "--side", side, "--seconds", f"{share:g}",
                                   "--sizes", ",".join(map(str, sizes)), *algorithms, timeout=2 * budget + 60,
                                   ok_codes=(0, 1, HARNESS_UNAVAILABLE))
        if not done.lines:
            raise SslperfError(f"The harness for {lib.name} failed in afalg-bench, round {round_} of {rounds} "
                               f"(exit code {done.returncode}): {done.stderr.strip()[-300:] or 'no message'}")
        lines += [{**line, "round": round_} for line in done.lines]
        if side == "both" and not done.lines[0].get("af_alg", True):
            break                                  # nothing to compare, in this round or any other
    kernel_names = {a["kernel"] for a in catalog.afalg() if a["name"] in algorithms}
    return "".join(json.dumps(line) + "\n" for line in [*lines, *drivers.driver_lines(kernel_names)])


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
    def figures(side: str, samples: Samples | None) -> dict:
        wall, cpu = (samples.wall, samples.cpu) if samples else (None, None)
        return {f"{side}_rounds": samples.n if samples else 0,
                f"{side}_wall_Bps": wall.median if wall else None,
                f"{side}_wall_ci": [wall.ci_low, wall.ci_high] if wall else None,
                f"{side}_cpu_Bps": cpu.median if cpu else None,
                f"{side}_cpu_ci": [cpu.ci_low, cpu.ci_high] if cpu else None}

    def clearly(a: Algorithm, s: int) -> str | None:
        if s not in a.kernel or s not in a.user:
            return None
        return {1: "kernel", -1: "library", 0: "not clearly"}[config.separated(a.kernel[s].wall, a.user[s].wall)]

    return {"type": "afalg-analysis", "library": bench.library, "af_alg": bench.af_alg, "rounds": bench.rounds,
            "seconds_per_round": bench.seconds, "algorithms": [
        {"alg": a.name, "kernel_name": a.kernel_name, "status": a.status, "reason": a.reason,
         "driver": (a.driver or {}).get("driver"), "wall_threshold": a.wall_threshold,
         "cpu_threshold": a.cpu_threshold, "wall_median_threshold": a.wall_median_threshold,
         "cpu_median_threshold": a.cpu_median_threshold, "verdict": verdict(a),
         "sizes": [{"size": s, **figures("kernel", a.kernel.get(s)), **figures("user", a.user.get(s)),
                    "wall_faster": clearly(a, s)} for s in a.sizes]}
        for a in bench.algorithms.values()]}
