"""`offload bench`: the kernel's crypto drivers, reached through AF_ALG,
against the library, per algorithm and request size.

Each algorithm and size is two ordinary cases of the harness's `afalg`
family (harness/afalg.c): `kernel`, one AF_ALG request per operation,
checked against the library's bytes before it is timed, and `user`, the
library through EVP. The ordinary runner measures them (fresh pinned
worker processes, passes, CIs), so the run is stored, shown, compared and
drawn like any other. This module chooses the cases, reads such a run back
(stored or exported), asks the one verdict rule per size whether the
kernel is faster (`versus`), and per algorithm from which size it wins at every
larger one (config.clear_crossover), for config.engine_config.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sslperf import userfiles
from sslperf import figures
from sslperf.verdict import judge
from sslperf.errors import SslperfError
from sslperf.cases import catalog
from sslperf.measure import scheduler
from sslperf.measure.request import Request, name_of
from sslperf.cases.ids import Case, make
from sslperf.offload import config, drivers
from sslperf.results import Measurement, Run

SOURCE = "sslperf offload bench"
DEFAULT_SIZES = (16, 64, 256, 1024, 8192, 16384)      # `openssl speed`'s, so figures line up with its tables
MAX_SIZE = 65536                                      # one AF_ALG request (harness/afalg.c)
SIDES = ("kernel", "user")
# What the afalg and devcrypto engines can hand to the kernel: CBC and CTR
# ciphers (CIPHERS) and digests (DIGESTS). Neither takes AEADs, so GCM is
# measured for information only.
ENGINE_CIPHERS = frozenset({"aes-128-cbc", "aes-256-cbc", "aes-128-ctr", "aes-256-ctr"})
ENGINE_DIGESTS = frozenset({"sha1", "sha256", "sha384", "sha512"})
MAX_EXPORT = 64 * 1024 * 1024     # an exported run read from a file: a full bench is well under 1 MB
SETTINGS_KEY = "afalg"            # run.settings[SETTINGS_KEY][alg]: the kernel's name and the driver serving it


# ---- the cases and their run --------------------------------------------------

def algorithm_names() -> tuple[str, ...]:
    """The algorithms the harness can hand to the kernel, in its tables' order."""
    return tuple(a["name"] for a in catalog.afalg())


def cases(algorithms: list[str], sizes: list[int], user_only: bool = False) -> list[Case]:
    """Per algorithm and size the kernel case and the library's, side by side
    (so the runner takes them in the same worker processes, moments apart)."""
    operation = {a["name"]: a["operation"] for a in catalog.afalg()}
    sides = ("user",) if user_only else SIDES
    return [make("afalg", algorithm=a, operation=operation[a], size=s, workload=side)
            for a in algorithms for s in sizes for side in sides]


def measure(lib, chosen: list[Case], settings, store, progress=None) -> Run:
    """The cases on `lib` with the ordinary runner, kept as source "sslperf
    offload bench", with each algorithm's kernel name and the driver
    /proc/crypto says serves it."""
    kernel = {a["name"]: a["kernel"] for a in catalog.afalg()}
    names = {c.algorithm for c in chosen}
    serving = drivers.serving({kernel[a] for a in names})
    facts = {a: {"kernel": kernel[a], **serving.get(kernel[a], {})} for a in sorted(names)}
    return scheduler.measure(Request(SOURCE, [name_of(lib)], [c.id for c in chosen], settings,
                                     labels={"suite": "afalg", SETTINGS_KEY: facts}), store, progress)


def require_af_alg() -> None:
    """Refuse, before anything is measured, where AF_ALG sockets cannot be opened."""
    probe = drivers.probe_af_alg([])
    if not probe.available:
        raise unavailable(probe)


def unavailable(probe: drivers.AfAlg) -> SslperfError:
    """The one-paragraph explanation when AF_ALG cannot be used here."""
    name = errno.errorcode.get(probe.errno or 0, f"errno {probe.errno}")
    said = os.strerror(probe.errno) if probe.errno else probe.reason
    if probe.errno in (errno.EPERM, errno.EACCES):
        cause = "a security policy (seccomp or an LSM) refuses the socket family"
    else:
        cause = ("the kernel was built without the AF_ALG user API (CONFIG_CRYPTO_USER_API_SKCIPHER/HASH/AEAD) "
                 "or the sandbox does not offer the socket family")
    return SslperfError(
        f"AF_ALG is not available here: socket(AF_ALG) fails with {name} ({said}). This is typical of "
        f"containers and VMs — {cause} — and means the afalg engine cannot reach the kernel's drivers on this "
        "machine, so there is no kernel side to time.",
        hint="`sslperf offload scan` still shows which drivers the kernel has; `--user-only` times the library "
             "alone. For thresholds, run `sslperf offload bench --json > run.json` where AF_ALG works (or export "
             "its stored run: `sslperf runs export ID --out run.json`) and analyse it anywhere: "
             "`sslperf offload bench --from run.json --config-out afalg.cnf`.")


# ---- a run read back ------------------------------------------------------------

def load(source: str, open_store: Callable[[], object]) -> Run:
    """The run `source` names: a file exported by `sslperf runs export` (or
    this command's --json), else a stored run's id, unique prefix or `latest`."""
    path = Path(source)
    if path.exists() or source == "-" or path.suffix == ".json" or "/" in source:
        text = userfiles.read(path, MAX_EXPORT, "exported run").decode("utf-8", errors="replace")
        try:
            data = json.loads(text)
            data.pop("analysis", None)           # this command's --json adds its analysis to the run
            return Run.from_dict(data)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise SslperfError(f"{source} is not a run as `sslperf runs export` writes it ({exc}).",
                               hint="Give `--from` a file written by `sslperf runs export ID --out run.json` or by "
                                    "`sslperf offload bench --json`, or a stored run's id.") from None
    return open_store().load(source)


# ---- the analysis ---------------------------------------------------------------

@dataclass(frozen=True)
class Versus:
    """The kernel against the library at one size, on one metric."""
    ratio: float               # kernel / library
    low: float | None          # the ratio's 95% CI, where a test across worker processes gave one
    high: float | None
    clear: int                 # 1: the kernel clearly faster, -1: clearly slower, 0: not clearly (the rule's ~ or ?)
    method: str                # the verdict rule's test ("paired", "processes", "mann-whitney" …)
    why: str | None = None     # why the rule called nothing (`?`): e.g. one figure a side


def _timed(m: Measurement | None, metric: str) -> bool:
    """An ok result with figures of this metric (imports of `openssl speed
    -elapsed` have elapsed time only: no CPU figures, whatever they report)."""
    return m is not None and m.status == "ok" and m.summary(metric) is not None and \
        (metric != "cpu" or bool(m.cpu_ns))


def versus(kernel: Measurement, user: Measurement, metric: str = "wall") -> Versus | None:
    """Whether the kernel is clearly faster at one size: the one verdict rule's answer (sslperf.verdict.judge), the
    kernel/library ratio paired by worker process where both cases ran in the same processes. What the rule cannot
    call (`~`, or `?` — one imported figure a side, samples that waited) is not clearly either way."""
    if not (_timed(kernel, metric) and _timed(user, metric)):
        return None
    pids = (kernel.figures or {}).get(figures.PROCESS)
    found = judge(user, kernel, metric, paired=bool(pids) and pids == (user.figures or {}).get(figures.PROCESS))
    if found is None:
        return None
    return Versus(found.ratio, found.low, found.high, {"faster": 1, "slower": -1}.get(found.verdict, 0), found.method,
                  found.why)


@dataclass
class Algorithm:
    name: str                      # the library's name, e.g. aes-128-cbc
    kernel_name: str = ""          # the kernel's, e.g. cbc(aes)
    driver: dict = field(default_factory=dict)   # the driver serving kernel_name where /proc/crypto said
    kernel: dict[int, Measurement] = field(default_factory=dict)
    user: dict[int, Measurement] = field(default_factory=dict)
    wall: dict[int, Versus] = field(default_factory=dict)
    cpu: dict[int, Versus] = field(default_factory=dict)
    wall_threshold: int | None = None         # the clear rule (config.clear_crossover)
    cpu_threshold: int | None = None
    wall_median_threshold: int | None = None  # the same on the medians alone (config.crossover), for the verdict
    cpu_median_threshold: int | None = None

    @property
    def sizes(self) -> list[int]:
        return sorted(set(self.kernel) | set(self.user))

    @property
    def wall_overlap(self) -> list[int]:
        """Sizes where the kernel is neither clearly faster nor clearly slower."""
        return [s for s, v in sorted(self.wall.items()) if v.clear == 0]

    @property
    def failed(self) -> Measurement | None:
        """What keeps the algorithm from a verdict: an error at any size, or a
        side that is n/a at every size (a size the mode cannot take is not
        the algorithm's fault)."""
        results = [*self.kernel.values(), *self.user.values()]
        error = next((m for m in results if m.status == "error"), None)
        if error:
            return error
        for side in (self.kernel, self.user):
            if side and all(m.status == "n/a" for m in side.values()):
                return next(iter(side.values()))
        return None

    def crossover(self) -> config.Crossover:
        """Wall-time crossover in the shape engine_config takes."""
        medians = [(s, self.kernel[s].summary().median, self.user[s].summary().median) for s in sorted(self.wall)]
        unclear = self.wall_threshold is None and self.wall_median_threshold is not None
        return config.Crossover(self.name.upper(), self.wall_threshold, medians, verdict(self) if unclear else "")


@dataclass
class Bench:
    run: Run
    lib: str                       # the library the kernel is compared with
    algorithms: dict[str, Algorithm] = field(default_factory=dict)

    @property
    def library(self) -> str:
        """The library as it describes itself."""
        info = next((i for i in self.run.libs if i.name == self.lib), None)
        return (info.version_string if info else "") or self.lib

    @property
    def measured_kernel(self) -> bool:
        return any(m.status == "ok" for a in self.algorithms.values() for m in a.kernel.values())


def afalg_libs(run: Run) -> list[str]:
    """The libraries of `run` with afalg cases, in the run's order."""
    found = {m.lib for m in run.measurements if m.family == "afalg"}
    return [lib.name for lib in run.libs if lib.name in found] or sorted(found)


def analyse(run: Run, lib: str | None = None) -> Bench:
    """The afalg results of `run` for `lib` (default: its only library with
    such results), each algorithm's sizes compared (versus) and its
    thresholds found: on elapsed time, and on CPU time — where an
    asynchronous hardware driver can win, the process sleeping while the
    engine works."""
    libs = afalg_libs(run)
    if not libs:
        raise SslperfError(f"Run {run.id} holds no AF_ALG results (afalg/… cases); it was made by "
                           f"`{run.settings.get('source') or 'an unknown command'}`.",
                           hint="Give `--from` a run that `sslperf offload bench` made (`sslperf runs list` shows "
                                "the source of each).")
    if lib is None and len(libs) > 1:
        raise SslperfError(f"Run {run.id} compares the kernel with {len(libs)} libraries ({', '.join(libs)}).",
                           hint="Choose one with --lib.")
    if lib is not None and lib not in libs:
        raise SslperfError(f"Run {run.id} has no AF_ALG results of `{lib}`; it has those of {', '.join(libs)}.",
                           hint="Choose one of them with --lib.")
    bench = Bench(run, lib or libs[0])
    facts = run.settings.get(SETTINGS_KEY) or {}
    for m in run.measurements:
        if m.family != "afalg" or m.lib != bench.lib or m.size is None:
            continue
        if m.algorithm not in bench.algorithms:
            known = dict(facts.get(m.algorithm) or {})
            bench.algorithms[m.algorithm] = Algorithm(m.algorithm, known.pop("kernel", ""), known)
        alg = bench.algorithms[m.algorithm]
        (alg.kernel if m.workload == "kernel" else alg.user)[m.size] = m
    for alg in bench.algorithms.values():
        _thresholds(alg)
    return bench


def _thresholds(alg: Algorithm) -> None:
    for metric in ("wall", "cpu"):
        compared = {s: v for s in sorted(set(alg.kernel) & set(alg.user))
                    if (v := versus(alg.kernel[s], alg.user[s], metric)) is not None}
        if not compared:
            continue
        kernel = {s: alg.kernel[s].summary(metric).median for s in compared}
        user = {s: alg.user[s].summary(metric).median for s in compared}
        setattr(alg, metric, compared)
        setattr(alg, f"{metric}_threshold", config.clear_crossover({s: v.clear for s, v in compared.items()},
                                                                   kernel, user))
        setattr(alg, f"{metric}_median_threshold", config.crossover(kernel, user))


def _sizes_text(sizes: list[int]) -> str:
    return ", ".join(map(str, sizes)) + " bytes"


def _why(alg: Algorithm) -> str:
    """What kept the rule from a call, where it said (`?`): the first reason, once."""
    reasons = [v.why for _, v in sorted(alg.wall.items()) if v.clear == 0 and v.why]
    return f" ({reasons[0]})" if reasons else ""


def verdict(alg: Algorithm) -> str:
    """One sentence per algorithm: where the kernel wins, on what."""
    failed = alg.failed
    if failed is not None:
        return f"{failed.status} on the {failed.workload} side: {failed.reason}"
    if not alg.kernel:
        return "library only (the kernel side was not measured)"
    if not alg.wall:
        return "nothing was measured on both sides at the same size"
    async_hw = " — its driver is asynchronous: the process waits without using the CPU" \
        if alg.driver.get("async") else ""
    median, clear = alg.wall_median_threshold, alg.wall_threshold
    # where the medians alone say more than the verdict rule allows
    unclear = "" if median is None or (clear is not None and clear <= median) else \
        f"the medians cross at {median} bytes, but the verdict rule calls no change at " \
        f"{_sizes_text(alg.wall_overlap)}{_why(alg)}: not clearly"
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
        one_each = all(len(m.rates()) <= 1 for m in [*alg.kernel.values(), *alg.user.values()])
        remedy = ("measure samples with `sslperf offload bench` (imported figures are one a side)" if one_each
                  else "more --samples or --processes may settle it")
        return f"{unclear}; left to the library ({remedy})"
    return "the kernel never wins" + ("" if alg.cpu else " (elapsed time; these figures have no CPU times)") + \
        "; left to the library"


# ---- the engine configuration ----------------------------------------------

def how_measured(run: Run) -> str:
    """`20 ms samples × 10 from 5 worker processes per size and side`, or where imported figures came from."""
    s = run.settings
    if s.get("target_ms") and s.get("samples"):
        return (f"{s['target_ms']:g} ms samples × {s['samples']} from {s.get('processes', 1)} worker processes "
                "per size and side")
    return s.get("recorded_from") or s.get("source") or ""


def engine_section(bench: Bench, engine: str) -> str:
    """The afalg/devcrypto configuration with the measured thresholds."""
    compared = [a for a in bench.algorithms.values() if a.failed is None and a.wall]
    if not compared:
        raise SslperfError("Nothing was measured on both sides, so there are no thresholds to write.",
                           hint="The configuration needs a bench run where AF_ALG works (or such a run exported).")
    ciphers = [a.crossover() for a in compared if a.name in ENGINE_CIPHERS]
    digests = [a.crossover() for a in compared if a.name in ENGINE_DIGESTS]
    how = how_measured(bench.run)
    notes = [f"measured by sslperf offload bench: {bench.library}, run {bench.run.id}" + (f"; {how}" if how else ""),
             "a threshold is where the verdict rule calls the kernel faster at that size and every larger one"]
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


# ---- JSON -------------------------------------------------------------------------

def analysis(bench: Bench) -> dict:
    """The analysis as data: per algorithm its thresholds and verdict, per size both sides' medians and CIs and
    the kernel/library ratio with how it was tested."""
    def figures(side: str, m: Measurement | None) -> dict:
        out = {}
        for metric in ("wall", "cpu"):
            s = m.summary(metric) if _timed(m, metric) else None
            out[f"{side}_{metric}_Bps"] = s.median if s else None
            out[f"{side}_{metric}_ci"] = [s.ci_low, s.ci_high] if s else None
        out[f"{side}_status"] = m.status if m else None
        return out

    def compared(v: Versus | None) -> dict:
        if v is None:
            return {"ratio": None, "wall_faster": None}
        return {"ratio": v.ratio, "ratio_ci": [v.low, v.high] if v.low is not None else None, "method": v.method,
                "wall_faster": {1: "kernel", -1: "library", 0: "not clearly"}[v.clear]}

    return {"type": "afalg-analysis", "run": bench.run.id, "library": bench.library, "lib": bench.lib,
            "algorithms": [
                {"alg": a.name, "kernel_name": a.kernel_name, "driver": a.driver.get("driver"),
                 "kind": a.driver.get("kind"), "status": a.failed.status if a.failed else "ok",
                 "wall_threshold": a.wall_threshold, "cpu_threshold": a.cpu_threshold,
                 "wall_median_threshold": a.wall_median_threshold, "cpu_median_threshold": a.cpu_median_threshold,
                 "verdict": verdict(a),
                 "sizes": [{"size": s, **figures("kernel", a.kernel.get(s)), **figures("user", a.user.get(s)),
                            **compared(a.wall.get(s))} for s in a.sizes]}
                for a in bench.algorithms.values()]}


def export(bench: Bench) -> dict:
    """The run as `sslperf runs export` writes it, with the analysis under "analysis": what `--json` prints
    and `--from` reads back."""
    return {**bench.run.to_dict(), "analysis": analysis(bench)}
