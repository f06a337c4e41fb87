"""A probe for Windows (a library's `mingw` build): seed 003's job — the library's own `openssl.exe speed`, built by
MinGW-w64, run on the Windows machine by a batch file (run.cmd) in place of the POSIX driver. The harness does not
port to Windows (it needs fork, POSIX threads' affinity and the kernel's scheduler statistics), so a Windows probe
times what `openssl speed` times, with the scheduler's plan around it: rounds, the libraries alternating A B, B A.
Each library's output is imported as `sslperf import` reads `openssl speed` (importers), its rounds as samples."""

from __future__ import annotations

from sslperf.cases.ids import Case
from sslperf.errors import SslperfError
from sslperf.libs.model import Lib

TARGET = "x86_64-windows"
SECONDS = 1             # `openssl speed -seconds`: each algorithm and size, per round


def speed_args(cases: list[Case]) -> list[list[str]]:
    """`openssl speed` argument lists that time `cases` (their speed-compat loops): the algorithms, then one
    `-evp CIPHER` list per AEAD (speed takes one -evp at a time)."""
    names, evp = [], []
    for case in cases:
        alg = str(case.algorithm)
        if case.family == "digest" and alg in ("sha256", "sha512", "sha1"):
            names.append(alg)
        elif case.family == "cipher" and alg in ("aes-128-gcm", "aes-256-gcm", "chacha20-poly1305"):
            evp.append(alg)
        elif case.family == "sig" and alg in ("rsa-2048", "rsa-3072", "rsa-4096"):
            names.append(alg.replace("-", ""))
        elif case.family == "sig" and alg in ("ecdsa-p256", "ecdsa-p384"):
            names.append(alg.replace("-", ""))
        elif case.family == "kex" and alg == "x25519":
            names.append("ecdhx25519")
        else:
            raise SslperfError(f"A Windows probe times `openssl.exe speed`, which has no loop for {case.id}. Nothing "
                               "was built.", hint="Choose digests (sha256, sha512), AEADs (aes-128-gcm, "
                               "chacha20-poly1305), RSA or ECDSA signatures, or X25519.")
    lists = [sorted(set(names))] if names else []
    return lists + [["-evp", alg] for alg in sorted(set(evp))]


def files(libs: list[Lib], cases: list[Case], rounds: int) -> tuple[dict[str, bytes], dict]:
    """The probe's files (each library's openssl.exe and run.cmd) and what its manifest says of the plan."""
    found: dict[str, bytes] = {}
    for index, lib in enumerate(libs):
        exe = lib.prefix / "bin" / "openssl.exe" if lib.prefix else None
        if exe is None or not exe.is_file():
            raise SslperfError(f"{lib.name} has no bin/openssl.exe to carry. Nothing was built.",
                               hint="Rebuild it (`sslperf libs build --force`).")
        found[f"bin/{index}/openssl.exe"] = exe.read_bytes()
    lists = speed_args(cases)
    found["run.cmd"] = _run_cmd(len(libs), lists, rounds).encode()
    return found, {"speed": lists, "seconds": SECONDS, "rounds": rounds}


def _run_cmd(count: int, lists: list[list[str]], rounds: int) -> str:
    lines = ["@echo off",
             "rem sslperf's probe for Windows: `openssl.exe speed` of each library, in rounds, the libraries",
             "rem alternating A B, B A. Usage: run.cmd [RESULTS_DIR]; then `sslperf import` the results.",
             "setlocal",
             'set "probe=%~dp0"',
             'set "out=%probe%results"',
             'if not "%~1"=="" set "out=%~1"',
             'if not exist "%out%" mkdir "%out%"',
             'set "facts=%out%\\machine.tsv"',
             '> "%facts%" echo host\t%COMPUTERNAME%',
             '>> "%facts%" echo system\tWindows',
             '>> "%facts%" echo machine\t%PROCESSOR_ARCHITECTURE%',
             '>> "%facts%" echo cpu_model\t%PROCESSOR_IDENTIFIER%',
             '>> "%facts%" echo cpus\t%NUMBER_OF_PROCESSORS%',
             "rem SSLPERF_PROBE_RUNNER: what ran this where Windows is not the system (Wine), recorded as such",
             '>> "%facts%" echo runner\t%SSLPERF_PROBE_RUNNER%',
             '>> "%facts%" echo started\t%DATE% %TIME%']
    for index in range(count):
        lines.append(f'"%probe%bin\\{index}\\openssl.exe" version -a > "%out%\\version-{index}.txt" 2>&1')
        # the program as found there (the manifest names its sha256; Windows' certutil says it, where it runs)
        lines.append(f'certutil -hashfile "%probe%bin\\{index}\\openssl.exe" SHA256 > "%out%\\digest-{index}.txt" 2>&1')
    for number in range(rounds):
        order = list(range(count)) if number % 2 == 0 else list(range(count))[::-1]
        lines.append(f"echo round {number + 1} of {rounds}")
        for index in order:
            for args in lists:
                lines.append(f'"%probe%bin\\{index}\\openssl.exe" speed -seconds {SECONDS} {" ".join(args)} '
                             f'>> "%out%\\speed-{index}.txt" 2>> "%out%\\speed-{index}.log"')
    lines += ['>> "%facts%" echo finished\t%DATE% %TIME%',
              'copy /y "%probe%manifest.json" "%out%\\manifest.json" > nul',
              'for %%I in ("%out%") do (',
              '  tar -czf "%%~fI.tar.gz" -C "%%~dpI." "%%~nxI" > nul 2>&1',
              '  if exist "%%~fI.tar.gz" (echo results: %%~fI.tar.gz) else (echo results: %%~fI ^(no tar here: '
              'pack the folder with tar -czf on another machine, then sslperf import it^)))',
              "endlocal", "exit /b 0"]
    return "\r\n".join(lines) + "\r\n"
