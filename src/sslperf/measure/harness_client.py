"""The one client of the C harness: compile it once per (library, harness
source, compiler), and start it in one of three ways, all of which turn a
timeout, a crash or a line that is not JSON into a `HarnessError` that names
the library:

- `Worker`: the `serve` line protocol (see harness/main.c) — the runner
  prepares a case in every library's worker, calibrates it, then asks each
  worker for one sample in turn, so libraries are interleaved;
- `call`: one subcommand run to its end (info, list, mkcerts, check-config,
  threads, https-get, profile under a profiler);
- `start`: a subcommand that keeps running beside the caller (https-server).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import select
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sslperf import paths, tempdirs
from sslperf.errors import SslperfError
from sslperf.libs.build import compiler_identity
from sslperf.libs import targets
from sslperf.libs.model import Lib, harness_backend
from sslperf.measure.harness_build import compile_harness
from sslperf.pinning import child_setup
from sslperf.proc import require_tool, run

HARNESS_DIR = Path(__file__).parent.parent / "harness"


def _sources(backend: str) -> list[Path]:
    """The shared core and one backend's directory (harness/core/backend.h)."""
    return sorted(HARNESS_DIR.glob("core/*.[ch]")) + sorted((HARNESS_DIR / backend).glob("*.[ch]"))


def source_digest(backend: str = "openssl") -> str:
    digest = hashlib.sha256()
    for path in _sources(backend):
        digest.update(f"{path.parent.name}/{path.name}".encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def lib_identity(lib: Lib) -> str:
    """What makes a harness binary for `lib` stale: the build key of a built
    lib, or the flags and library files of a system/registered one."""
    if lib.kind == "built" and lib.info.get("key"):
        return lib.info["key"]
    parts = [lib.base or lib.name, lib.version_string, " ".join(lib.linkage.cflags + lib.linkage.libs) if lib.linkage else ""]
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


def environment(lib: Lib, extra: dict[str, str] | None = None) -> dict[str, str]:
    """A harness process's environment: ours, the library view's (a FIPS module), the caller's."""
    return {**os.environ, **lib.env, **(extra or {})}


def harness_binary(lib: Lib, static: bool = False) -> Path:
    """The harness compiled against `lib` (cached); `static`: linked with -static (a probe's), a build of its own."""
    if lib.linkage is None:
        raise SslperfError(f"{lib.name} has no usable headers and libraries to compile the harness against.",
                           hint=f"Check `sslperf libs info {lib.name}`.")
    machine = targets.of(lib.variants)
    if machine is not None and not static:
        raise SslperfError(f"{lib.name} is cross-compiled for {machine.name}: it runs there, not on this machine, "
                           "so it is measured by a probe. Nothing was measured.",
                           hint=f"`sslperf probe build --lib {lib.name} … -o probe.tar.gz`, run it on the "
                                f"{machine.machine} machine, then `sslperf import` its results here.")
    compiler = compiler_identity(cmake=False, programs={"cc": f"{machine.tools}gcc"} if machine else None)
    backend = harness_backend(lib.flavor)
    key = hashlib.sha256(json.dumps([source_digest(backend), lib_identity(lib), compiler, *(["static"] if static else [])])
                         .encode()).hexdigest()
    target = paths.subdir("harness") / f"{(lib.base or lib.name).replace('/', '_')}-{key[:16]}" / "sslperf-harness"
    if target.exists():
        return target
    cc = machine.tool("gcc") if machine else require_tool("cc", "to compile the measuring harness")
    workdir = tempdirs.make("harness", cache=True)
    try:
        binary = workdir / "sslperf-harness"
        sources = [p for p in _sources(backend) if p.suffix == ".c"]
        failed = compile_harness(cc, HARNESS_DIR, backend, sources, lib, workdir, binary, static)
        if failed:
            output = "\n".join(result.output for result in failed)
            errors = [line for line in output.splitlines() if "error" in line] or output.splitlines()
            raise HarnessCompileError(
                f"The harness does not compile against {lib.name} ({lib.version_string}):\n"
                + "\n".join("    " + line for line in errors[:15]),
                hint=f"This is a gap in the harness's {backend} backend (harness/{backend}/) for this library "
                "version; please report it.",
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        binary.rename(target)
        return target
    finally:
        tempdirs.remove(workdir)


class HarnessError(SslperfError):
    """The harness timed out, died or printed something that is not its protocol."""


class HarnessCrashed(HarnessError):
    """A serve-protocol worker died or stopped answering (the runner restarts it)."""


def _json(raw: bytes | str, lib: Lib, what: str) -> dict:
    """One protocol line, or a HarnessError naming the library."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
        raise HarnessError(f"The harness for {lib.name} printed a line that is not JSON during `{what}`: "
                           f"{text.strip()[:200]!r}.",
                           hint="This is a bug in the harness; please report it with the library's name.") from None
    if not isinstance(data, dict):
        raise HarnessError(f"The harness for {lib.name} printed {str(data)[:100]!r} during `{what}`, not an object.")
    return data


def _how(code: int | None) -> str:
    return f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"


@dataclass
class Reply:
    type: str
    data: dict


class Worker:
    """One harness process for one library, spoken to line by line."""

    def __init__(self, lib: Lib, env: dict[str, str] | None = None, cpu: int | None = None,
                 binary: Path | None = None, fixed_layout: bool = False):
        self.lib = lib
        self.binary = binary or harness_binary(lib)
        self.env = environment(lib, env)
        self.cpu = cpu                  # pinned to this CPU (None: free to move)
        self.fixed_layout = fixed_layout    # address-space randomisation off
        self._buffer = b""
        self._start()

    def _start(self) -> None:
        self.proc = subprocess.Popen([str(self.binary), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=self.env, process_group=0,
                                     preexec_fn=child_setup(self.cpu, self.fixed_layout))
        self._buffer = b""

    @property
    def pid(self) -> int:
        return self.proc.pid

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
            # Gone before reading the command: a worker that refuses to start (a FIPS module failing its
            # self-test) prints its reason first and exits, and that reason is its answer, whatever the timing.
            if self._drain(timeout) is None:
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
        data = _json(raw, self.lib, line)
        return Reply(data.get("type", ""), data)

    def _drain(self, timeout: float) -> bytes | None:
        """Read what a dead worker left on its stdout; the buffer if it holds a whole line, else None."""
        fd = self.proc.stdout.fileno()
        while select.select([fd], [], [], timeout)[0]:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            self._buffer += chunk
        return self._buffer if b"\n" in self._buffer else None

    def _crashed(self, line: str) -> HarnessCrashed:
        self.proc.wait(timeout=10)
        err = (self.proc.stderr.read().decode(errors="replace").strip() if self.proc.stderr else "")[-300:]
        return HarnessCrashed(f"The harness for {self.lib.name} died ({_how(self.proc.returncode)}) during `{line}`."
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
                # A command the dead worker never read is still buffered: closing flushes it into the
                # broken pipe, which must not end sslperf (click takes EPIPE for a closed terminal: exit 1).
                with contextlib.suppress(BrokenPipeError):
                    stream.close()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---- one-shot subcommands and servers ----------------------------------------

@dataclass
class Output:
    """What a finished harness subcommand printed."""
    lines: list[dict]       # its JSON lines, in order
    other: list[str]        # stdout lines that are not JSON (a wrapping tool's messages)
    stderr: str
    returncode: int

    @property
    def last(self) -> dict:
        return self.lines[-1] if self.lines else {}


def call(lib: Lib, *args: str, timeout: float, env: dict[str, str] | None = None, wrapper: tuple[str, ...] = (),
         ok_codes: tuple[int, ...] | None = (0,), merge_stderr: bool = False,
         cpu: int | set[int] | None = None, fixed_layout: bool = False) -> Output:
    """Run `harness ARGS` (under `wrapper`, e.g. a profiler) to its end. A
    timeout, an exit code outside `ok_codes` (None: any exit, the caller
    reads the lines) or a broken JSON line is a HarnessError naming the
    library and the subcommand."""
    argv = [*wrapper, str(harness_binary(lib)), *map(str, args)]
    what = " ".join(map(str, args[:2]))
    try:
        done = subprocess.run(argv, capture_output=True, timeout=timeout, env=environment(lib, env),
                              stdin=subprocess.DEVNULL, process_group=0,
                              preexec_fn=child_setup(cpu, fixed_layout))
    except subprocess.TimeoutExpired:
        raise HarnessError(f"The harness for {lib.name} did not finish `{what}` within {timeout:.0f} s and was "
                           "stopped.", hint="The machine may be overloaded, or the library stuck; try again.") from None
    stdout = done.stdout.decode(errors="replace")
    stderr = done.stderr.decode(errors="replace")
    text = stdout + (stderr if merge_stderr else "")
    lines, other = [], []
    for line in text.splitlines():
        if line.startswith("{"):
            lines.append(_json(line, lib, what))
        elif line.strip():
            other.append(line)
    if ok_codes is not None and done.returncode not in ok_codes:
        said = (stderr.strip() or "\n".join(other))[-300:]
        raise HarnessError(f"The harness for {lib.name} failed in `{what}` ({_how(done.returncode)})"
                           + (f": {said}" if said else "."))
    return Output(lines, other, stderr, done.returncode)


class Server:
    """A harness subcommand that runs beside the caller (a loopback server);
    read its lines with `line`, stop it with `close` (or `with`)."""

    def __init__(self, lib: Lib, *args: str, env: dict[str, str] | None = None, cpu: int | None = None):
        self.lib = lib
        self.what = " ".join(map(str, args[:1]))
        self.proc = subprocess.Popen([str(harness_binary(lib)), *map(str, args)], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=environment(lib, env), process_group=0,
                                     preexec_fn=child_setup(cpu))

    @property
    def pid(self) -> int:
        """The server process (its threads' run delay tells whether it waited for its CPU)."""
        return self.proc.pid

    def line(self, timeout: float) -> dict:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        raw = self.proc.stdout.readline() if ready else b""
        if not raw:
            self.proc.kill()
            self.proc.wait(timeout=10)
            err = self.proc.stderr.read().decode(errors="replace").strip()[-300:] if self.proc.stderr else ""
            state = "gave no answer" if not ready else f"died ({_how(self.proc.returncode)})"
            raise HarnessError(f"The harness {self.what} of {self.lib.name} {state} within {timeout:.0f} s"
                               + (f": {err}" if err else "."))
        return _json(raw, self.lib, self.what)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
