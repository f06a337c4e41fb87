"""Engine thresholds and configuration: from the kernel's and the library's
throughput per request size, the size from which the kernel driver wins,
and the afalg/devcrypto engine section of openssl.cnf that hands the kernel
only what it wins, from that size on."""

from __future__ import annotations

import math
from dataclasses import dataclass


NEVER = "the kernel driver never wins in the sizes measured; left to userspace"


@dataclass
class Crossover:
    cipher: str                  # OpenSSL's name, e.g. AES-256-CBC
    threshold: int | None        # smallest request size from which the kernel wins; None: it never does
    points: list[tuple[int, float, float]]   # (size, kernel bytes/s, userspace bytes/s)
    why: str = ""                # with no threshold: why not, when there is more to say than "never wins"


def crossover(kernel: dict[int, float], user: dict[int, float]) -> int | None:
    """The request size from which the kernel driver is faster at every
    larger measured size, interpolated on a log scale between the last size
    where it lost and the first where it won; None when it never wins."""
    sizes = sorted(set(kernel) & set(user))
    if not sizes:
        return None
    wins = [kernel[s] > user[s] for s in sizes]
    if not wins[-1]:
        return None
    first = len(wins) - 1
    while first > 0 and wins[first - 1]:
        first -= 1
    if first == 0:
        return sizes[0] if wins[0] else None
    return _interpolate(sizes[first - 1], sizes[first], kernel, user)


def _interpolate(lo: int, hi: int, kernel: dict[int, float], user: dict[int, float]) -> int:
    """The ratio kernel/user crosses 1 between lo and hi: interpolate
    log(ratio) against log(size), rounded up to whole cipher blocks."""
    r_lo, r_hi = math.log(kernel[lo] / user[lo]), math.log(kernel[hi] / user[hi])
    t = r_lo / (r_lo - r_hi)
    size = math.exp(math.log(lo) + t * (math.log(hi) - math.log(lo)))
    return int(math.ceil(size / 16) * 16)


def clear_crossover(clear: dict[int, int], kernel: dict[int, float], user: dict[int, float]) -> int | None:
    """The crossover under uncertainty. `clear` says per size whether the
    kernel is clearly faster (1), clearly slower (-1) or neither (0), by a
    the one verdict rule (see offload.bench.versus); `kernel` and `user` are the
    medians. The kernel must win clearly at the threshold's measured size S
    and every larger one; None when it does not at the largest. Below S: if
    the next smaller size is a clear loss, the crossover lies between the
    two and is interpolated on the medians as crossover() does; if neither
    is clear there, nothing below S is claimed and the threshold is S
    itself."""
    sizes = sorted(clear)
    flags = [clear[s] for s in sizes]
    if not sizes or flags[-1] != 1:
        return None
    first = len(flags) - 1
    while first > 0 and flags[first - 1] == 1:
        first -= 1
    if first == 0:
        return sizes[0]
    lo, hi = sizes[first - 1], sizes[first]
    if flags[first - 1] == 0:
        return hi
    return _interpolate(lo, hi, kernel, user)


def crossovers(kernel_run, user_run) -> list[Crossover]:
    """Per cipher measured in both runs (e.g. imports of `openssl speed
    -elapsed` with and without the engine), its crossover size."""
    def rates(run) -> dict[str, dict[int, float]]:
        table: dict[str, dict[int, float]] = {}
        for m in run.measurements:
            if m.family == "cipher" and m.status == "ok" and m.size and m.summary():
                table.setdefault(m.algorithm, {})[m.size] = m.summary().median
        return table

    kernel, user = rates(kernel_run), rates(user_run)
    out = []
    for cipher in sorted(set(kernel) & set(user)):
        sizes = sorted(set(kernel[cipher]) & set(user[cipher]))
        out.append(Crossover(cipher.upper(), crossover(kernel[cipher], user[cipher]),
                             [(s, kernel[cipher][s], user[cipher][s]) for s in sizes]))
    return out


def engine_config(results: list[Crossover], engine: str = "afalg", digests: list[Crossover] | None = None,
                  notes: list[str] | None = None) -> str:
    """An openssl.cnf fragment enabling the engine only for ciphers whose
    driver wins, each from its measured crossover size (afalg), or only for
    ciphers the driver wins at every size (devcrypto, which has no
    per-size threshold). Digests (`offload bench`) have no threshold in
    either engine: one is listed only where its driver wins at every size.
    `notes` become comment lines at the top."""
    comments = [f"sslperf offload config: {engine} engine, from measured crossover sizes", *(notes or [])]
    winners = [c for c in results if c.threshold is not None]
    default_algorithms = "CIPHERS"
    settings = ["USE_SOFTDRIVERS = 0"]
    for c in results:
        if c.threshold is None:
            comments.append(f"{c.cipher}: {c.why or NEVER}")
    if engine == "afalg":
        listed = ", ".join(f"{c.cipher}:{c.threshold}" for c in winners)
        settings.append(f"CIPHERS = {listed}" if listed else "CIPHERS = NONE")
    else:
        always = [c for c in winners if c.threshold == min(s for s, _, _ in c.points)]
        for c in winners:
            if c not in always:
                comments.append(f"{c.cipher}: wins only from {c.threshold} bytes; devcrypto cannot switch by "
                                "size, so it is left to userspace (the afalg engine can)")
        settings.append(f"CIPHERS = {', '.join(c.cipher for c in always) or 'NONE'}")
    if digests is not None:
        everywhere = [d for d in digests if d.threshold is not None and d.threshold == min(s for s, _, _ in d.points)]
        for d in digests:
            if d.threshold is None:
                comments.append(f"{d.cipher}: {d.why or NEVER}")
            elif d not in everywhere:
                comments.append(f"{d.cipher}: wins only from {d.threshold} bytes; digests cannot switch by size "
                                "in either engine, so it is left to userspace")
        if everywhere:
            comments.append("digests through an engine share one kernel context across fork() (see the AF_ALG engine "
                            "write-up): "
                            "check that no program here forks with an open digest context")
            default_algorithms = "CIPHERS, DIGESTS"
        settings.append(f"DIGESTS = {', '.join(d.cipher for d in everywhere) or 'NONE'}")
    lines = [*(f"# {c}" for c in comments), "openssl_conf = openssl_init", "", "[openssl_init]",
             "engines = engine_section", "", "[engine_section]", f"{engine} = {engine}_section", "",
             f"[{engine}_section]", f"default_algorithms = {default_algorithms}", *settings]
    return "\n".join(lines) + "\n"
