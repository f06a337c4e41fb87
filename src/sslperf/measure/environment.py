"""The machine a run happens on, recorded with every result so that any two
results can be compared honestly, and the CPU what-if masks.

Masks are applied through OPENSSL_ia32cap, which OpenSSL, BoringSSL and
AWS-LC all read when they initialise (x86 only): `~` clears capability
bits. Bits: word 1 is CPUID.1:EDX (0-31) and ECX (32-63); word 2 is
CPUID.7:EBX (0-31) and ECX (32-63).
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import re
import socket
from pathlib import Path

from sslperf.errors import SslperfError

AESNI, PCLMULQDQ = 1 << 57, 1 << 33
AVX2 = 1 << 5
AVX512 = (1 << 16) | (1 << 17) | (1 << 21) | (1 << 28) | (1 << 30) | (1 << 31)   # F DQ IFMA CD BW VL
VAES, VPCLMULQDQ = 1 << 41, 1 << 42

MASKS: dict[str, tuple[str, str]] = {
    "no-aesni": (f"~{AESNI | PCLMULQDQ:#x}:~{VAES | VPCLMULQDQ:#x}",
                 "no AES-NI or carry-less multiply: what a CPU without AES instructions gets"),
    "no-avx2": (f":~{AVX2 | AVX512:#x}", "no AVX2 (and so no AVX-512)"),
    "no-avx512": (f":~{AVX512 | VAES | VPCLMULQDQ:#x}", "no AVX-512 (nor VAES/VPCLMULQDQ)"),
    "generic": ("0:0", "no optional instruction at all: the portable C code paths"),
}

# The CPU flags that decide which code paths crypto libraries take.
CRYPTO_FLAGS = ("aes", "pclmulqdq", "sse4_1", "ssse3", "avx", "avx2", "bmi2", "adx", "sha_ni", "avx512f",
                "avx512bw", "avx512vl", "avx512ifma", "vaes", "vpclmulqdq", "asimd", "pmull", "sha2", "sha3")


def mask_env(mask: str | None) -> dict[str, str]:
    """The environment that puts `mask` in force (empty for none)."""
    if not mask:
        return {}
    if mask not in MASKS:
        raise SslperfError(f"`{mask}` is not a CPU mask.", hint=f"Masks: {', '.join(MASKS)}.")
    if platform.machine() not in ("x86_64", "AMD64", "i686", "i386"):
        raise SslperfError(f"CPU masks use OPENSSL_ia32cap, which only x86 CPUs have (this is {platform.machine()}).")
    return {"OPENSSL_ia32cap": MASKS[mask][0]}


def _cpuinfo() -> dict[str, str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return {}
    first = text.split("\n\n", 1)[0]
    return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in first.splitlines()) if k.strip()}


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def cpu_mhz() -> list[float]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    return [float(m) for m in re.findall(r"^cpu MHz\s*:\s*([\d.]+)", text, re.M)]


def capture(mask: str | None = None) -> dict:
    """Facts about this machine and moment."""
    info = _cpuinfo()
    flags = set((info.get("flags") or info.get("Features") or "").split())
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "host": socket.gethostname(),
        "time": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": platform.machine(),
        "cpu_model": info.get("model name") or info.get("Model") or platform.processor(),
        "cpus": os.cpu_count(),
        "cpu_flags": sorted(flags & set(CRYPTO_FLAGS)),
        "kernel": platform.release(),
        "governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        "cpu_mhz": cpu_mhz(),
        "loadavg": list(load),
        "mask": mask,
        "mask_env": mask_env(mask).get("OPENSSL_ia32cap"),
        "virtualized": "hypervisor" in flags,
    }


def noise_warnings(env: dict, env_after: dict | None = None) -> list[str]:
    """Conditions that make measurements noisy, each with its likely cause."""
    warnings = []
    governor = env.get("governor")
    if governor and governor != "performance":
        warnings.append(f"the CPU governor is `{governor}`, not `performance`: the clock may change under load "
                        "(set it with `cpupower frequency-set -g performance`).")
    cpus = env.get("cpus") or 1
    if env.get("loadavg") and env["loadavg"][0] > 0.5 * cpus:
        warnings.append(f"the machine was busy (load average {env['loadavg'][0]:.1f} on {cpus} CPUs): "
                        "other work competes with the measurement.")
    if env_after and env.get("cpu_mhz") and env_after.get("cpu_mhz"):
        before, after = max(env["cpu_mhz"]), max(env_after["cpu_mhz"])
        if before and abs(after - before) / before > 0.05:
            warnings.append(f"the CPU clock moved from {before:.0f} to {after:.0f} MHz during the run: "
                            "frequency scaling or thermal throttling.")
    return warnings
