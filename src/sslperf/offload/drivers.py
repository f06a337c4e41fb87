"""Kernel crypto, as the afalg/devcrypto engines see it: what /proc/crypto
offers, which driver the kernel would pick for each algorithm (the highest
priority), whether that driver is generic C, CPU-accelerated code or a
hardware engine (such as the Marvell CESA of the AF_ALG engine write-up),
and whether AF_ALG — the socket family the afalg engine uses — is open to
user space here."""

from __future__ import annotations

import errno
import re
import socket
from dataclasses import asdict, dataclass, field
from pathlib import Path

PROC_CRYPTO = Path("/proc/crypto")
MAX_PROC_CRYPTO = 4 * 1024 * 1024     # a copy read from a file: real ones are tens of KB

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
                              _priority(entry.get("priority", "")), entry.get("type", ""), entry.get("selftest", ""),
                              entry.get("async") == "yes", entry.get("internal") == "yes", entry))
    return drivers


def _priority(text: str) -> int:
    """A driver's priority; a damaged or absurd value counts as none (0)."""
    return int(text) if text.isdigit() and len(text) <= 9 else 0


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
    errno: int | None = None          # why socket(AF_ALG) failed, where it did


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
        return AfAlg(False, why, errno=exc.errno)
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


def serving(kernel_names: set[str]) -> dict[str, dict]:
    """For each of the kernel's algorithm names (e.g. cbc(aes)), the driver
    the kernel would bind (highest priority of a type AF_ALG reaches): its
    name, kind and whether it is asynchronous. Empty where /proc/crypto
    cannot be read."""
    try:
        drivers = chosen(parse(PROC_CRYPTO.read_text()))
    except OSError:
        return {}
    best: dict[str, Driver] = {}
    for d in drivers:
        reachable = d.name in kernel_names and d.type in AF_ALG_TYPES
        if reachable and (d.name not in best or d.priority > best[d.name].priority):
            best[d.name] = d
    return {name: {"driver": d.driver, "kind": d.kind, "async": d.is_async} for name, d in sorted(best.items())}
