"""Why a library stops scaling: for a case across N threads against 1 thread,
(a) where the threads were blocked — per lock and per call site, the library function that took the lock
    (`pthread_rwlock_wrlock ← CRYPTO_THREAD_write_lock ← ossl_method_store_cache_set ← evp_generic_fetch`) — from
    lockstat.c, a small interposer the harness loads around glibc's pthread locks. OpenSSL's locks are pthread
    locks in user space: `perf lock contention` sees the kernel's own locks only, and off-CPU sampling counts
    switches, not the time a lock cost; the interposer times each blocked acquisition, for every backend (the
    harness links the library statically but libc dynamically);
(b) which functions' share of the CPU grows with the threads (reference-count atomics and cache-line bouncing
    show here, not as waits) — from `perf record` with the software cpu-clock, which needs no PMU.
Addresses are symbolised against the harness binary (the library is in it) with nm."""

from __future__ import annotations

import bisect
import json
import shutil
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

from sslperf import tempdirs
from sslperf.errors import SslperfError
from sslperf.libs.model import Lib
from sslperf.measure import compiled, harness_client
from sslperf.proc import require_tool, run
from sslperf.symbols import function_name

SOURCE = Path(__file__).with_name("lockstat.c")
HARNESS_OWN = {"worker_main", "threads_run", "check_before_threads"}   # the runner's start barrier, not the library
SHOWN_FRAMES = 4
PERF_FREQUENCY = 499      # Hz; DWARF call graphs copy each sample's stack, so fewer than profile's


@dataclass
class Site:
    kind: str                       # pthread_mutex_lock | pthread_rwlock_rdlock | _wrlock | pthread_cond_wait
    frames: list[str]               # callers, innermost first: the function that took the lock, then its callers
    count: int                      # blocked acquisitions
    blocked_ns: int
    max_ns: int

    @property
    def label(self) -> str:
        """`pthread_rwlock_wrlock ← CRYPTO_THREAD_write_lock ← ossl_method_store_cache_set ← evp_generic_fetch`."""
        names = [self.kind] + [f for i, f in enumerate(self.frames) if f and (i == 0 or f != self.frames[i - 1])]
        return " ← ".join(names[:SHOWN_FRAMES + 1])


@dataclass
class Blocking:
    """Where the threads of one run were blocked."""
    threads: int
    thread_ns: int                  # the threads' time in all: N × the run's wall time
    sites: list[Site]               # the library's, most blocked first
    calls: dict[str, list[int]]     # per lock function: [calls, found taken]
    waited_ns: int | None = None    # the threads' run-queue wait: preempted by other work, not blocked on a lock

    @property
    def preempted(self) -> float | None:
        """The share of the threads' time spent runnable but off their CPUs (None where the kernel did not say)."""
        return self.waited_ns / self.thread_ns if self.waited_ns is not None and self.thread_ns else None

    @property
    def acquisitions(self) -> int:
        """Blocked lock acquisitions in all (condition waits are the runner's own barrier, not counted)."""
        return sum(s.count for s in self.sites if s.kind != "pthread_cond_wait")

    @property
    def blocked_ns(self) -> int:
        return sum(s.blocked_ns for s in self.sites if s.kind != "pthread_cond_wait")

    @property
    def share(self) -> float:
        """The share of the threads' time spent blocked on a lock."""
        return self.blocked_ns / self.thread_ns if self.thread_ns else 0.0


@dataclass
class Growth:
    function: str
    share_at_one: float             # % of CPU samples, self
    share_at_n: float
    callers: str = ""               # the caller chain most of its samples at N came through

    @property
    def grew(self) -> float:
        return self.share_at_n - self.share_at_one


@dataclass
class Contention:
    lib: str
    case: str
    mode: str
    threads: int
    at_n: Blocking
    at_one: Blocking
    growing: list[Growth] = field(default_factory=list)
    cpu_profile: str = ""           # why there is none, when perf cannot record

    def as_dict(self, top: int = 8) -> dict:
        sites = lambda b: [{"site": s.label, "kind": s.kind, "count": s.count, "blocked_ns": s.blocked_ns,  # noqa
                            "share": s.blocked_ns / b.thread_ns if b.thread_ns else 0.0, "frames": s.frames}
                           for s in b.sites[:top]]
        return {"lib": self.lib, "case": self.case, "mode": self.mode, "threads": self.threads,
                "blocked_share": {"1": self.at_one.share, str(self.threads): self.at_n.share},
                "blocked_acquisitions": {"1": self.at_one.acquisitions, str(self.threads): self.at_n.acquisitions},
                "preempted_share": {"1": self.at_one.preempted, str(self.threads): self.at_n.preempted},
                "sites": sites(self.at_n), "sites_at_one": sites(self.at_one), "calls": self.at_n.calls,
                "growing": [asdict(g) | {"grew": g.grew} for g in self.growing[:top]],
                "cpu_profile": self.cpu_profile}


def interposer() -> Path:
    """lockstat.so, compiled once per source (cached)."""
    return compiled.helper(SOURCE, "scale", "lockstat.so", ["-shared", "-fPIC", "-O2"], "sslperf's lock interposer",
                           ("-ldl", "-lpthread"))


def blocked(lib: Lib, case_id: str, threads: int, milliseconds: int, mode: str, env: dict) -> Blocking:
    """Run `case_id` on `threads` threads under the interposer and read where they were blocked."""
    with tempdirs.private_dir("lockstat-run") as work:
        out = Path(work) / "sites.json"
        done = harness_client.call(lib, "threads", case_id, str(threads), str(milliseconds), mode,
                                   timeout=120 + milliseconds / 1000, ok_codes=None,
                                   env={**env, "LD_PRELOAD": str(interposer()), "SSLPERF_LOCKSTAT_OUT": str(out)})
        reply = done.last
        if reply.get("type") != "threads":
            raise SslperfError(f"{case_id} on {threads} threads of {lib.name} did not run under the lock "
                               f"interposer: {reply.get('reason') or done.stderr.strip()[-300:]}.")
        if not out.exists():
            raise SslperfError(f"The lock interposer wrote nothing for {lib.name}: the harness may not load "
                               "preloaded libraries (a static libc).")
        found = json.loads(out.read_text())
    waits = reply.get("wait_ns")
    return Blocking(threads, threads * int(reply["wall_ns"]), read_sites(found, harness_client.harness_binary(lib)),
                    found["calls"], sum(waits) if waits else None)


def read_sites(found: dict, binary: Path) -> list[Site]:
    """The interposer's sites (its JSON), named against `binary`, most blocked first, the harness's own left out."""
    sites = [_site(s, binary) for s in found["sites"]]
    return sorted((s for s in sites if not (s.frames and s.frames[0] in HARNESS_OWN)), key=lambda s: -s.blocked_ns)


def _site(raw: dict, binary: Path) -> Site:
    frames = [_name(f, binary) for f in raw["frames"]]
    return Site(raw["kind"], frames, raw["count"], raw["blocked_ns"], raw["max_ns"])


def _name(frame: dict, binary: Path) -> str:
    """The function a frame is in: its exported name, else the harness binary's symbol at its offset."""
    if frame.get("symbol"):
        return frame["symbol"]
    if Path(frame.get("module", "?")).resolve() == binary.resolve():
        return _symbol_at(str(binary), frame["offset"] - 1)        # a return address: the call is just before it
    return f"{Path(frame.get('module', '?')).name}+{frame['offset']:#x}"


@lru_cache(maxsize=8)
def _symbols(binary: str) -> tuple[list[int], list[str]]:
    nm = require_tool("nm", "to name the functions in the harness (binutils)")
    done = run([nm, "-n", "--defined-only", binary], timeout=120)
    addresses, names = [], []
    for line in done.output.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtWw":
            addresses.append(int(parts[0], 16))
            names.append(parts[2])
    return addresses, names


def _symbol_at(binary: str, offset: int) -> str:
    addresses, names = _symbols(binary)
    at = bisect.bisect_right(addresses, offset) - 1
    return names[at] if at >= 0 else f"{offset:#x}"


def cpu_profile(lib: Lib, case_id: str, threads: int, milliseconds: int, mode: str,
                env: dict) -> tuple[dict[str, float], dict[str, str]]:
    """Of a run on `threads` threads (perf, cpu-clock, DWARF call graphs): each function's self share (%) of the
    CPU samples, and the caller chain most of its samples came through (`CRYPTO_THREAD_read_lock ← …`)."""
    perf = shutil.which("perf") or "perf"
    with tempdirs.private_dir("scale-perf") as work:
        data = str(Path(work) / "perf.data")
        done = harness_client.call(lib, "threads", case_id, str(threads), str(milliseconds), mode,
                                   timeout=300 + milliseconds / 1000, env=env, ok_codes=None, merge_stderr=True,
                                   wrapper=(perf, "record", "-e", "cpu-clock", "-F", str(PERF_FREQUENCY),
                                            "--call-graph", "dwarf", "-o", data, "--"))
        if done.last.get("type") != "threads":
            raise SslperfError(f"perf record of {case_id} on {lib.name} failed: {done.stderr.strip()[-300:]}")
        script = run([perf, "script", "-i", data, "-F", "tid,ip,sym"], timeout=600)
    return leaves_and_callers(script.output)


def leaves_and_callers(script: str) -> tuple[dict[str, float], dict[str, str]]:
    """`perf script -F tid,ip,sym` (a sample: a line with its thread, then its frames, innermost first) as
    (self share per function, its most common caller chain)."""
    leaves: dict[str, int] = {}
    chains: dict[str, dict[str, int]] = {}
    for sample in script.split("\n\n"):
        frames = [function_name(line.split(None, 1)[1]) for line in sample.splitlines()[1:]
                  if len(line.split(None, 1)) == 2]
        known = [f for f in frames if f and f != "[unknown]"]
        if not known:
            continue
        leaf, callers = known[0], [f for f in known[1:] if f not in known[:1]]
        leaves[leaf] = leaves.get(leaf, 0) + 1
        chain = " ← ".join(dict.fromkeys(callers[:SHOWN_FRAMES]))
        chains.setdefault(leaf, {})[chain] = chains.setdefault(leaf, {}).get(chain, 0) + 1
    total = sum(leaves.values())
    if not total:
        raise SslperfError("perf recorded no samples with a named function: the profile is empty.")
    return ({f: 100 * n / total for f, n in leaves.items()},
            {f: max(found, key=found.get) for f, found in chains.items()})


def growing(at_one: dict[str, float], at_n: dict[str, float], callers: dict[str, str] | None = None,
            least: float = 0.5) -> list[Growth]:
    """The functions whose self share grew by more than `least` percentage points, most first."""
    found = [Growth(name, at_one.get(name, 0.0), share, (callers or {}).get(name, "")) for name, share in at_n.items()]
    return sorted((g for g in found if g.grew > least), key=lambda g: -g.grew)


def explain(lib: Lib, case_id: str, threads: int, milliseconds: int, mode: str, env: dict) -> Contention:
    """Blocking at `threads` and at 1 thread, and the functions whose CPU share grows between them."""
    from sslperf.measure.perf import perf_problem

    result = Contention(lib.name, case_id, mode, threads, blocked(lib, case_id, threads, milliseconds, mode, env),
                        blocked(lib, case_id, 1, milliseconds, mode, env))
    problem = perf_problem()
    if problem:
        result.cpu_profile = f"no CPU profile: {problem}"
        return result
    one, _ = cpu_profile(lib, case_id, 1, milliseconds, mode, env)
    at_n, callers = cpu_profile(lib, case_id, threads, milliseconds, mode, env)
    result.growing = growing(one, at_n, callers)
    result.cpu_profile = ("perf record -e cpu-clock (the software clock) with DWARF call graphs: each function's self "
                          "share of all threads' samples, and the callers most of them came through")
    return result
