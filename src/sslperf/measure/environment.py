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

# The /proc/cpuinfo flags each mask hides from the libraries.
HIDDEN_FLAGS = {"no-aesni": {"aes", "pclmulqdq", "vaes", "vpclmulqdq"},
                "no-avx2": {"avx2", "avx512f", "avx512bw", "avx512vl", "avx512ifma"},
                "no-avx512": {"avx512f", "avx512bw", "avx512vl", "avx512ifma", "vaes", "vpclmulqdq"},
                "generic": None}            # None: every optional flag
MACHINE_MASK_VARIABLE = "SSLPERF_FLEET_CPU_MASK"     # a fleet worker's mask: part of what the machine type is

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


FLEET_VARIABLE = "SSLPERF_FLEET_RUN"      # set by a fleet worker: which fleet run a machine's run belongs to


def host_name() -> str:
    """The name runs of this machine carry in the store: SSLPERF_HOST when set
    (a fleet names machine types, and CI runners get random hostnames), else
    the hostname."""
    return os.environ.get("SSLPERF_HOST", "").strip() or socket.gethostname()


def capture(mask: str | None = None) -> dict:
    """Facts about this machine and moment."""
    info = _cpuinfo()
    flags = set((info.get("flags") or info.get("Features") or "").split())
    # A fleet machine type made by a mask is a machine without those flags, not a variant of the library.
    machine_mask = bool(mask) and os.environ.get(MACHINE_MASK_VARIABLE) == mask
    crypto_flags = set(CRYPTO_FLAGS) - ((HIDDEN_FLAGS[mask] or set(CRYPTO_FLAGS)) if machine_mask else set())
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "host": host_name(),
        "time": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": platform.machine(),
        "cpu_model": info.get("model name") or info.get("Model") or platform.processor(),
        "cpus": os.cpu_count(),
        "cpu_flags": sorted(flags & crypto_flags),
        "kernel": platform.release(),
        "governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        "cpu_mhz": cpu_mhz(),
        "loadavg": list(load),
        "mask": mask,
        "mask_env": mask_env(mask).get("OPENSSL_ia32cap"),
        **({"machine_mask": True} if machine_mask else {}),
        "virtualized": "hypervisor" in flags,
        **({"fleet": fleet} if (fleet := os.environ.get(FLEET_VARIABLE)) else {}),
    }


SETTLE_SECONDS = 600      # a build's trail in the 1-minute load average: after 10 minutes it is under 0.01%


def _seconds_since(last_build: dict | None, started: str | None) -> float | None:
    """Seconds from the end of `last_build` to `started` (the run's start,
    ISO time), when the build ended before the run and within SETTLE_SECONDS."""
    if not last_build or not isinstance(last_build.get("ended"), (int, float)) or not started:
        return None
    try:
        begun = dt.datetime.fromisoformat(started)
    except ValueError:
        return None
    if begun.tzinfo is None:
        begun = begun.replace(tzinfo=dt.timezone.utc)
    since = begun.timestamp() - last_build["ended"]
    return since if -1 <= since <= SETTLE_SECONDS else None       # -1: the start is rounded to the second


def _ago(seconds: float) -> str:
    seconds = max(0, round(seconds))
    return f"{seconds} s" if seconds < 120 else f"{seconds // 60} min {seconds % 60} s"


def noise_flags(env: dict, env_after: dict | None = None, last_build: dict | None = None) -> list[str]:
    """The conditions of noise_warnings as short flags a run records (a build's trail is not one: it is sslperf's
    own, gone when the run is), for verdicts between runs."""
    flags = []
    cpus = env.get("cpus") or 1
    if env.get("loadavg") and env["loadavg"][0] > 0.5 * cpus and _seconds_since(last_build, env.get("time")) is None:
        flags.append(f"load {env['loadavg'][0]:.1f} on {cpus} CPUs")
    if env_after and env.get("cpu_mhz") and env_after.get("cpu_mhz"):
        before, after = max(env["cpu_mhz"]), max(env_after["cpu_mhz"])
        if before and abs(after - before) / before > 0.05:
            flags.append(f"clock {before:.0f} → {after:.0f} MHz")
    return flags


def noise_warnings(env: dict, env_after: dict | None = None, last_build: dict | None = None) -> list[str]:
    """Conditions that make measurements noisy, each with its likely cause.
    `last_build` ({"what", "ended": epoch seconds}, from libs.build.last_build)
    is sslperf's own newest build: a high load average shortly after it is
    that build's trail (the 1-minute average falls by ~63% a minute), not
    other work on the user's machine, and the warning says so."""
    warnings = []
    governor = env.get("governor")
    if governor and governor != "performance":
        warnings.append(f"the CPU governor is `{governor}`, not `performance`: the clock may change under load "
                        "(set it with `cpupower frequency-set -g performance`).")
    cpus = env.get("cpus") or 1
    if env.get("loadavg") and env["loadavg"][0] > 0.5 * cpus:
        load = env["loadavg"][0]
        since = _seconds_since(last_build, env.get("time"))
        if since is not None:
            warnings.append(f"the load average was {load:.1f} on {cpus} CPUs when the run began, but that is most "
                            f"likely the trail of sslperf's own build of {last_build.get('what') or 'a library'}, "
                            f"which ended {_ago(since)} before: the 1-minute load average takes minutes to fall "
                            "after a build. If nothing else was running, no other work competed with the "
                            "measurement; to be sure, run it again in a few minutes.")
        else:
            warnings.append(f"the machine was busy (load average {load:.1f} on {cpus} CPUs): "
                            "other work competes with the measurement.")
    if env_after and env.get("cpu_mhz") and env_after.get("cpu_mhz"):
        before, after = max(env["cpu_mhz"]), max(env_after["cpu_mhz"])
        if before and abs(after - before) / before > 0.05:
            warnings.append(f"the CPU clock moved from {before:.0f} to {after:.0f} MHz during the run: "
                            "frequency scaling or thermal throttling.")
    return warnings
