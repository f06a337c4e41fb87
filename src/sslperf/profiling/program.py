"""Why your program's time moved (`sslperf exec --profile`): the command run --runs times under each library inside
one `perf record` (cpu-clock sampling, DWARF call graphs; the runs' processes and their children followed), read
into a Profile like the harness's (profiling.model), and each function placed in the object it lives in — so the
functions whose share moved are named with the library they belong to (libcrypto.so.3, libssl.so.3) or the
program's own code. The command is given the library exactly as `sslperf exec` gives it (libs.loader)."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

from sslperf import tempdirs
from sslperf.errors import SslperfError
from sslperf.libs import loader
from sslperf.libs.model import Lib
from sslperf.profiling.model import Profile
from sslperf.profiling.parse import parse_perf_report
from sslperf.profiling.record import PERF_FREQUENCY, file_stem
from sslperf.symbols import function_name

# The runs, one after another, in one process tree perf follows: the command's words are the script's arguments,
# never part of the script.
LOOP = 'n=$1; shift; i=0; while [ "$i" -lt "$n" ]; do "$@" >/dev/null 2>&1 || exit 3; i=$((i + 1)); done'
_DSO_ROW = re.compile(r"^\s*(?:\d+(?:\.\d+)?%\s+){1,2}(\S+)\s+\[.\]\s+(\S.*?)(?:\s{2,}.*)?$", re.M)


def record(lib: Lib, argv: list[str], runs: int, out_dir: Path, env: dict[str, str],
           timeout: float = 1800) -> tuple[Profile, dict[str, str]]:
    """`argv` run `runs` times under `lib` inside perf record: (its Profile, each function's object)."""
    perf = shutil.which("perf")
    if perf is None:
        raise SslperfError("--profile needs perf (Debian package linux-perf).", hint="Install it, or leave --profile "
                           "out: the run's figures do not need it.")
    stem = out_dir / file_stem(lib.name)
    data = stem.with_name(stem.name + ".perf.data")
    with tempdirs.private_dir("exec-profile") as tmp:
        links = loader.linked(loader.shared_dir(lib), tmp / "libs")
        started = time.perf_counter_ns()
        done = subprocess.run([perf, "record", "-e", "cpu-clock", "-F", str(PERF_FREQUENCY), "--call-graph", "dwarf",
                               "-o", str(data), "--", "sh", "-c", LOOP, "sh", str(runs), *argv],
                              env=loader.loader_env(links, env), capture_output=True, text=True, errors="replace",
                              timeout=timeout)
        wall_ns = time.perf_counter_ns() - started
    if done.returncode != 0 or not data.exists():
        raise SslperfError(f"perf record of the command under {lib.name} failed (exit {done.returncode}): "
                           f"{done.stderr.strip()[-400:]}",
                           hint="Check that perf may sample here (kernel.perf_event_paranoid ≤ 2, or run as root).")
    texts = {sort: _report(perf, data, sort) for sort in ("symbol", "dso,symbol")}
    for sort, text in texts.items():
        stem.with_name(f"{stem.name}.perf-report-{sort.replace(',', '-')}.txt").write_text(text)
    functions, cpu_ns = parse_perf_report(texts["symbol"])
    objects = {function_name(symbol): dso for dso, symbol in _DSO_ROW.findall(texts["dso,symbol"])
               if not symbol.startswith("0x")}
    profile = Profile(lib.name, lib.version_string, " ".join(argv), "perf", "CPU ns, from cpu-clock samples", cpu_ns,
                      runs, wall_ns, cpu_ns, f"{runs} runs of the whole command, every process it started",
                      "as perf resolved them (the library's exported and local symbols where it has them)", str(data),
                      [str(stem) + ".perf-report-symbol.txt"], functions)
    return profile, objects


def _report(perf: str, data: Path, sort: str) -> str:
    argv = [perf, "report", "-i", str(data), "--stdio", "--sort", sort, "--percent-limit", "0.05", "--children",
            "-g", "none"]
    done = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=900)
    if done.returncode != 0:
        raise SslperfError(f"perf report failed: {done.stderr.strip()[-300:]}")
    return done.stdout


def library_of(name: str, objects: dict[str, str]) -> str:
    """`libcrypto.so.3` for a function of the library, else the object it lives in, `?` when perf did not say."""
    return objects.get(name, "?")


def in_the_library(name: str, objects: dict[str, str]) -> bool:
    return library_of(name, objects).startswith(loader.TLS_OBJECTS)
