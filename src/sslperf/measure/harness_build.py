"""Compiling the C harness against one library: a file at a time, in
parallel, through ccache where it is installed, then one link.

Every compile line names its files relative to a work directory whose
links point at the harness's sources and at the library's header
directories. So the same harness file against the same headers reads the
same to ccache whichever library's directory holds them: the next commit of
a bisect, whose headers did not change, compiles nothing again, and neither
does a copy of a build (a fleet host's, an imported bundle's)."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sslperf.libs.build_systems import compiler_launcher, launcher_env
from sslperf.libs.model import Lib
from sslperf.proc import Result, run

CFLAGS = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Wno-deprecated-declarations"]


def compile_harness(cc: str, harness_dir: Path, backend: str, sources: list[Path], lib: Lib, workdir: Path,
                    binary: Path, static: bool = False) -> list[Result]:
    """Compile `sources` (files under `harness_dir`) against `lib` in `workdir` into `binary` (`static`: linked
    with -static, the C library too, for a probe that runs where nothing is installed). The failed steps'
    results, [] when the harness was made."""
    (workdir / "harness").symlink_to(harness_dir, target_is_directory=True)
    cflags = _relative_includes(lib.linkage.cflags, workdir)
    includes = ["-Iharness/core", f"-Iharness/{backend}"]
    launcher = compiler_launcher()
    env = {**os.environ, **launcher_env(workdir)} if launcher else None
    (workdir / "obj").mkdir()

    def compile_one(source: Path) -> tuple[Result, str]:
        relative = Path("harness") / source.relative_to(harness_dir)
        obj = f"obj/{source.parent.name}_{source.stem}.o"
        argv = [cc, *CFLAGS, *includes, *cflags, "-MD", "-c", str(relative), "-o", obj]
        return run([launcher, *argv] if launcher else argv, timeout=300, cwd=workdir, env=env), obj

    with ThreadPoolExecutor(max_workers=max(1, len(os.sched_getaffinity(0)))) as pool:
        compiled = list(pool.map(compile_one, sources))
    failed = [result for result, _ in compiled if result.returncode != 0]
    if failed:
        return failed
    link = run([cc, *[obj for _, obj in compiled], "-o", binary, *(["-static"] if static else []), *lib.linkage.libs],
               timeout=300, cwd=workdir)
    return [link] if link.returncode != 0 else []


def _relative_includes(cflags: list[str], workdir: Path) -> list[str]:
    """`cflags` with each -I/absolute/dir replaced by -Iinc/N, a link in `workdir` to that directory."""
    out = []
    for flag in cflags:
        if flag.startswith("-I/"):
            (workdir / "inc").mkdir(exist_ok=True)
            link = Path("inc") / str(sum(1 for f in out if f.startswith("-Iinc/")))
            (workdir / link).symlink_to(flag[2:], target_is_directory=True)
            flag = f"-I{link}"
        out.append(flag)
    return out
