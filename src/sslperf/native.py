"""The C harness: compile it once per (library, harness source, compiler),
run it as a worker process, and decode its JSON lines.

The worker speaks a line protocol (see harness/main.c): the runner prepares
a case in every library's worker, calibrates it, then asks each worker for
one sample in turn, so libraries are interleaved sample by sample.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sslperf import paths
from sslperf.errors import SslperfError
from sslperf.libs.build import compiler_identity
from sslperf.libs.model import Lib
from sslperf.proc import require_tool, run

HARNESS_DIR = Path(__file__).with_name("harness")
CFLAGS = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Wno-deprecated-declarations"]


def source_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(HARNESS_DIR.glob("*.[ch]")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def lib_identity(lib: Lib) -> str:
    """What makes a harness binary for `lib` stale: the build key of a built
    lib, or the flags and library files of a system/registered one."""
    if lib.kind == "built" and lib.info.get("key"):
        return lib.info["key"]
    parts = [lib.name, lib.version_string, " ".join(lib.linkage.cflags + lib.linkage.libs) if lib.linkage else ""]
    for path in sorted(lib.info.get("shared_objects", {}).values()):
        try:
            stat = Path(path).stat()
            parts.append(f"{path}:{stat.st_size}:{int(stat.st_mtime)}")
        except OSError:
            parts.append(path)
    if lib.prefix:
        parts.append(str(lib.prefix))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


class HarnessCompileError(SslperfError):
    pass


def harness_binary(lib: Lib) -> Path:
    """The harness compiled against `lib` (cached)."""
    if lib.linkage is None:
        raise SslperfError(f"{lib.name} has no usable headers and libraries to compile the harness against.",
                           hint=f"Check `sslperf libs info {lib.name}`.")
    compiler = compiler_identity(cmake=False)
    key = hashlib.sha256(json.dumps([source_digest(), lib_identity(lib), compiler]).encode()).hexdigest()
    target = paths.subdir("harness") / f"{lib.name.replace('/', '_')}-{key[:16]}" / "sslperf-harness"
    if target.exists():
        return target
    cc = require_tool("cc", "to compile the measuring harness")
    workdir = Path(tempfile.mkdtemp(dir=paths.subdir("tmp"), prefix="harness-"))
    try:
        binary = workdir / "sslperf-harness"
        sources = sorted(str(p) for p in HARNESS_DIR.glob("*.c"))
        result = run([cc, *CFLAGS, *lib.linkage.cflags, *sources, "-o", binary, *lib.linkage.libs], timeout=300)
        if result.returncode != 0:
            errors = [line for line in result.output.splitlines() if "error" in line] or result.output.splitlines()
            raise HarnessCompileError(
                f"The harness does not compile against {lib.name} ({lib.version_string}):\n"
                + "\n".join("    " + line for line in errors[:15]),
                hint="This is a gap in harness/compat.h for this library version; please report it.",
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        binary.rename(target)
        return target
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


class HarnessCrashed(SslperfError):
    pass


@dataclass
class Reply:
    type: str
    data: dict


class Worker:
    """One harness process for one library, spoken to line by line."""

    def __init__(self, lib: Lib, env: dict[str, str] | None = None):
        self.lib = lib
        self.binary = harness_binary(lib)
        self.env = {**os.environ, **(env or {})}
        self._buffer = b""
        self._start()

    def _start(self) -> None:
        self.proc = subprocess.Popen([str(self.binary), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=self.env, start_new_session=True)
        self._buffer = b""

    def restart(self) -> None:
        self.close()
        self._start()

    def request(self, line: str, timeout: float) -> Reply:
        """Send one command; return the one JSON reply, or raise when the
        worker dies or says nothing for `timeout` seconds."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write((line + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise self._crashed(line) from None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                self.proc.kill()
                raise HarnessCrashed(f"The harness for {self.lib.name} gave no answer to `{line}` within {timeout:.0f} s "
                                     "and was stopped.")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise self._crashed(line)
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\n", 1)
        data = json.loads(raw)
        return Reply(data.get("type", ""), data)

    def _crashed(self, line: str) -> HarnessCrashed:
        self.proc.wait(timeout=10)
        err = (self.proc.stderr.read().decode(errors="replace").strip() if self.proc.stderr else "")[-300:]
        code = self.proc.returncode
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return HarnessCrashed(f"The harness for {self.lib.name} died ({how}) during `{line}`."
                              + (f" It said: {err}" if err else ""))

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(b"quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=10)
            except (BrokenPipeError, subprocess.TimeoutExpired, ValueError):
                self.proc.kill()
                self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
