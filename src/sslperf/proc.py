"""Running other programs: every call has a timeout, output can be streamed
line by line to a log and a progress callback, and missing tools are named
together with the Debian package that provides them."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from sslperf.errors import MissingTool, SslperfError

# Debian package for each program sslperf may call.
TOOL_PACKAGES = {
    "cc": "gcc",
    "gcc": "gcc",
    "make": "make",
    "perl": "perl",
    "cargo": "cargo",
    "cmake": "cmake",
    "ninja": "ninja-build",
    "go": "golang-go",
    "clang": "clang",
    "clang++": "clang",
    "autoreconf": "autoconf",
    "libtoolize": "libtool",
    "pkg-config": "pkg-config",
    "size": "binutils",
    "git": "git",
    "tar": "tar",
    "ldd": "libc-bin",
    "valgrind": "valgrind",
}


# Cross compilers are named for their target; Debian's packages, for the target with `-` for `_`:
# x86_64-w64-mingw32-gcc is in gcc-mingw-w64-x86-64, aarch64-linux-gnu-g++ in g++-aarch64-linux-gnu.
_MINGW = re.compile(r"(x86_64|i686)-w64-mingw32-(gcc|g\+\+)(?:-posix|-win32)?")
_CROSS = re.compile(r"([a-z0-9_]+-linux-gnu[a-z]*)-(gcc|g\+\+)(-\d+)?")


def debian_package(tool: str) -> str | None:
    """The Debian package that installs the program `tool`, where sslperf knows it; None where it does not."""
    if tool in TOOL_PACKAGES:
        return TOOL_PACKAGES[tool]
    if found := _MINGW.fullmatch(tool):
        return f"{found[2]}-mingw-w64-{found[1].replace('_', '-')}"
    if found := _CROSS.fullmatch(tool):
        return f"{found[2]}{found[3] or ''}-{found[1].replace('_', '-')}"
    return None


def require_tool(name: str, why: str = "") -> str:
    """Return the path of `name`, or explain which package provides it."""
    path = shutil.which(name)
    if path:
        return path
    package = debian_package(name)
    purpose = f" (needed {why})" if why else ""
    raise MissingTool(
        f"The program `{name}` is not installed{purpose}.",
        hint=f"Install it with `sudo apt-get install {package}` and run the command again." if package else
        f"Install the package that provides it (on Debian and Ubuntu `apt-file search bin/{name}` names it) and run "
        "the command again.",
    )


@dataclass
class Result:
    returncode: int
    output: str


class CommandTimeout(SslperfError):
    pass


def run(
    cmd: Sequence[str | os.PathLike],
    *,
    timeout: float,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    log: IO[str] | None = None,
    on_line: Callable[[str], None] | None = None,
    keep_output: bool = True,
    preexec_fn: Callable[[], None] | None = None,
) -> Result:
    """Run `cmd` with stdout and stderr merged, killing its whole process
    group when `timeout` seconds pass or the user interrupts."""
    argv = [str(c) for c in cmd]
    if log is not None:
        log.write(f"$ {' '.join(argv)}\n")
        log.flush()
    try:
        child = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            # Its own process group (killed whole on a timeout), not its own session: a new session is a new
            # scheduler autogroup, which would take an equal share of the CPU whatever our nice value says.
            process_group=0,
            preexec_fn=preexec_fn,      # e.g. pinning, or dying with sslperf (serve_load)
        )
    except FileNotFoundError as exc:
        raise MissingTool(f"Cannot run `{argv[0]}`: {exc.strerror}.",
                          hint="Check that it is installed and on PATH.") from None

    _running.add(child)
    timed_out = threading.Event()

    def kill() -> None:
        timed_out.set()
        _kill_group(child)

    timer = threading.Timer(timeout, kill)
    timer.start()
    lines: list[str] = []
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if log is not None:
                log.write(line)
            if keep_output:
                lines.append(line)
            if on_line is not None:
                on_line(line.rstrip("\n"))
        child.wait()
    except BaseException:
        _kill_group(child)
        raise
    finally:
        _running.discard(child)
        timer.cancel()
        if log is not None:
            log.flush()
    if timed_out.is_set():
        raise CommandTimeout(
            f"`{' '.join(argv[:3])}` did not finish within {timeout:.0f} s and was stopped.",
            hint="The machine may be overloaded; try again, or raise the timeout.",
        )
    return Result(child.returncode, "".join(lines))


def run_ok(cmd: Sequence[str | os.PathLike], *, timeout: float = 60, **kw) -> str:
    """Run a short command that must succeed; return its output."""
    result = run(cmd, timeout=timeout, **kw)
    if result.returncode != 0:
        tail = "\n".join(result.output.strip().splitlines()[-15:])
        raise SslperfError(f"`{' '.join(str(c) for c in cmd)}` failed (exit {result.returncode}):\n{tail}")
    return result.output


_running: set[subprocess.Popen] = set()      # children in their own process groups, for stop_children


@contextmanager
def tracked(child: subprocess.Popen) -> Iterator[subprocess.Popen]:
    """Count `child` (started with process_group=0) among those stop_children ends."""
    _running.add(child)
    try:
        yield child
    finally:
        _running.discard(child)


def stop_children(grace: float = 10) -> None:
    """End every child this process runs in a process group of its own: SIGTERM
    (a measurement then keeps what it measured), SIGKILL after `grace` s. For a
    process that stops while other threads still wait on children (a fleet worker)."""
    children = list(_running)
    for child in children:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for child in children:
        try:
            child.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _kill_group(child)


def _kill_group(child: subprocess.Popen) -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
