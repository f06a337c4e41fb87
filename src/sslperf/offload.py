"""Kernel crypto (seed 004): what /proc/crypto offers, which driver the
kernel would pick for each algorithm (the highest priority), whether that
driver is generic C, CPU-accelerated code or a hardware engine, and whether
AF_ALG — the socket family the afalg/devcrypto engines use — is open to
user space here."""

from __future__ import annotations

import errno
import math
import re
import socket
from dataclasses import asdict, dataclass, field
from pathlib import Path

PROC_CRYPTO = Path("/proc/crypto")

# Driver or module names of hardware crypto engines (SoC blocks, PCIe cards, virtio).
HARDWARE = re.compile(r"caam|qat|ccp|ccree|omap|atmel|safexcel|inside-secure|hisi|sec2|sun[48]i|marvell|\bmv[-_]|"
                      r"cesa|talitos|nx[-_]|virtio|keembay|rk[-_]|rockchip|stm32|s5p|exynos|img-|artpec|mxs-dcp|"
                      r"zynqmp|versal|iaa|qce|bcm|ux500|amlogic|starfive|aspeed|octeon|otx|cpt|chelsio|chcr")
# Kernel code that uses the CPU's own instructions.
CPU_ACCEL = re.compile(r"aesni|aes-ni|avx|ssse3|sse2|sha-?ni|clmul|x86_64|-asm|-ce\b|-ce-|neon|arm64|s390|"
                       r"ppc|vmx|p8|riscv|zvk|lib-|padlock")


@dataclass
class Driver:
    name: str
    driver: str
    module: str
    priority: int
    type: str
    selftest: str = ""
    is_async: bool = False
    internal: bool = False
    fields: dict = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """hardware, cpu-accelerated or generic (portable C)."""
        text = f"{self.driver} {self.module}".lower()
        if HARDWARE.search(text):
            return "hardware"
        if CPU_ACCEL.search(text):
            return "cpu-accelerated"
        return "generic"


def parse(text: str) -> list[Driver]:
    """The entries of a /proc/crypto text."""
    drivers = []
    for block in re.split(r"\n\s*\n", text.strip()):
        entry = {}
        for line in block.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                entry[key.strip()] = value.strip()
        if "name" not in entry or "driver" not in entry:
            continue
        drivers.append(Driver(entry["name"], entry["driver"], entry.get("module", ""),
                              int(entry.get("priority", "0") or 0), entry.get("type", ""), entry.get("selftest", ""),
                              entry.get("async") == "yes", entry.get("internal") == "yes", entry))
    return drivers


def chosen(drivers: list[Driver]) -> list[Driver]:
    """Per algorithm name, the driver the kernel would use: the highest
    priority among those that passed their self-test and are not internal."""
    best: dict[tuple[str, str], Driver] = {}
    for d in drivers:
        if d.internal or d.selftest not in ("passed", "unknown", ""):
            continue
        key = (d.name, d.type)
        if key not in best or d.priority > best[key].priority:
            best[key] = d
    return sorted(best.values(), key=lambda d: (d.type, d.name))


# The AF_ALG socket type for each /proc/crypto type user space can reach.
AF_ALG_TYPES = {"skcipher": "skcipher", "lskcipher": "skcipher", "shash": "hash", "ahash": "hash",
                "aead": "aead", "rng": "rng"}


@dataclass
class AfAlg:
    available: bool
    reason: str
    bindable: dict[str, bool] = field(default_factory=dict)


def probe_af_alg(drivers: list[Driver]) -> AfAlg:
    """Whether user space can open AF_ALG sockets here, and which of the
    algorithms can be bound."""
    family = getattr(socket, "AF_ALG", None)
    if family is None:
        return AfAlg(False, "this Python has no AF_ALG support (not Linux)")
    try:
        sock = socket.socket(family, socket.SOCK_SEQPACKET, 0)
    except OSError as exc:
        if exc.errno in (errno.EAFNOSUPPORT, errno.EPROTONOSUPPORT):
            why = ("the kernel does not offer AF_ALG to user space (built without CONFIG_CRYPTO_USER_API, or a "
                   "container or VM sandbox forbids the socket family)")
        elif exc.errno in (errno.EPERM, errno.EACCES):
            why = "opening an AF_ALG socket is not permitted here (seccomp or LSM policy)"
        else:
            why = f"AF_ALG sockets fail here: {exc.strerror}"
        return AfAlg(False, why)
    sock.close()
    result = AfAlg(True, "AF_ALG sockets can be opened")
    for d in chosen(drivers):
        kind = AF_ALG_TYPES.get(d.type)
        if kind is None:
            continue
        with socket.socket(family, socket.SOCK_SEQPACKET, 0) as s:
            try:
                s.bind((kind, d.name))
                result.bindable[d.name] = True
            except OSError:
                result.bindable[d.name] = False
    return result


def scan(text: str | None = None) -> dict:
    """Everything `offload scan` reports, as data."""
    if text is None:
        try:
            text = PROC_CRYPTO.read_text()
        except OSError as exc:
            return {"available": False, "reason": f"{PROC_CRYPTO} cannot be read ({exc.strerror})", "drivers": [],
                    "chosen": [], "af_alg": asdict(AfAlg(False, "no /proc/crypto"))}
    drivers = parse(text)
    picked = chosen(drivers)
    af_alg = probe_af_alg(drivers)
    return {
        "available": True,
        "drivers": [asdict(d) | {"kind": d.kind} for d in drivers],
        "chosen": [asdict(d) | {"kind": d.kind} for d in picked],
        "hardware": sorted({d.driver for d in drivers if d.kind == "hardware"}),
        "af_alg": asdict(af_alg),
    }


# ---- thresholds and engine configuration ------------------------------

@dataclass
class Crossover:
    cipher: str                  # OpenSSL's name, e.g. AES-256-CBC
    threshold: int | None        # smallest request size from which the kernel wins; None: it never does
    points: list[tuple[int, float, float]]   # (size, kernel bytes/s, userspace bytes/s)


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
    lo, hi = sizes[first - 1], sizes[first]
    # ratio kernel/user crosses 1 between lo and hi: interpolate log(ratio) against log(size)
    r_lo, r_hi = math.log(kernel[lo] / user[lo]), math.log(kernel[hi] / user[hi])
    t = r_lo / (r_lo - r_hi)
    size = math.exp(math.log(lo) + t * (math.log(hi) - math.log(lo)))
    return int(math.ceil(size / 16) * 16)          # whole cipher blocks


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
            comments.append(f"{c.cipher}: the kernel driver never wins in the sizes measured; left to userspace")
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
                comments.append(f"{d.cipher}: the kernel driver never wins in the sizes measured; left to userspace")
            elif d not in everywhere:
                comments.append(f"{d.cipher}: wins only from {d.threshold} bytes; digests cannot switch by size "
                                "in either engine, so it is left to userspace")
        if everywhere:
            comments.append("digests through an engine share one kernel context across fork() (seed 004): "
                            "check that no program here forks with an open digest context")
            default_algorithms = "CIPHERS, DIGESTS"
        settings.append(f"DIGESTS = {', '.join(d.cipher for d in everywhere) or 'NONE'}")
    lines = [*(f"# {c}" for c in comments), "openssl_conf = openssl_init", "", "[openssl_init]",
             "engines = engine_section", "", "[engine_section]", f"{engine} = {engine}_section", "",
             f"[{engine}_section]", f"default_algorithms = {default_algorithms}", *settings]
    return "\n".join(lines) + "\n"
