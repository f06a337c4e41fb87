"""The machines a library is built for: this one, or another architecture it is cross-compiled for with Debian's
cross tool chain. A cross build is a variant (`openssl-3.6+aarch64`): its name says where it runs, its cache key
holds the cross compiler, and nothing measures it here — a probe (`sslperf probe build`) carries its harness to
such a machine. Its probe program (the build's check) runs under qemu-user, which only shows that it works."""

from __future__ import annotations

import platform
from dataclasses import dataclass

from sslperf.proc import require_tool


@dataclass(frozen=True)
class Target:
    variant: str            # the build variant that selects it
    name: str               # a probe's target: "aarch64-linux"
    machine: str            # `uname -m` there
    configure: str          # OpenSSL's Configure target
    tools: str              # the cross tools' prefix: aarch64-linux-gnu-gcc, -ar, -size …
    runner: str             # what runs its programs here: qemu-user's emulator, or Wine
    packages: str           # what installs both on Debian
    emulates: bool = True   # qemu-user emulates the CPU (timings are its own); Wine runs the code on this CPU
    system_libs: tuple[str, ...] = ("-pthread", "-lm")     # a static program's libraries beside the library's
    exe: str = ""           # its programs' suffix

    def tool(self, name: str) -> str:
        return require_tool(f"{self.tools}{name}", f"to cross-compile for {self.name} (`apt-get install "
                                                    f"{self.packages}`)")

    def here(self) -> list[str]:
        """The argv prefix that runs one of its programs on this machine."""
        runner = require_tool(self.runner, f"to run {self.name} programs here (`apt-get install {self.packages}`)")
        return [runner] if self.emulates else ["env", "WINEDEBUG=-all", runner]    # Wine: no fixme lines


CROSS = {t.variant: t for t in (
    Target("aarch64", "aarch64-linux", "aarch64", "linux-aarch64", "aarch64-linux-gnu-", "qemu-aarch64",
           "gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user"),
    # Seed 003's MinGW build of openssl.exe: Windows on the same x86-64 CPU. Wine runs it here on this CPU.
    Target("mingw", "x86_64-windows", "x86_64", "mingw64", "x86_64-w64-mingw32-", "wine",
           "gcc-mingw-w64-x86-64 wine", emulates=False, system_libs=("-lws2_32", "-lgdi32", "-lcrypt32"),
           exe=".exe"),
)}
NATIVE = {"x86_64": "x86_64-linux", "aarch64": "aarch64-linux"}


def of(variants) -> Target | None:
    """The machine a build of these variants runs on, where it is not this one."""
    for name in variants or ():
        if name in CROSS:
            return CROSS[name]
    return None


def native() -> str | None:
    """This machine's target name (None: one sslperf builds no probes for)."""
    return NATIVE.get(platform.machine())
