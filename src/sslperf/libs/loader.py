"""Which libssl and libcrypto a program really loads under a library: the dynamic loader's own answer, never a
guess. The program is run once with the library's directory first on the loader's path and the loader's trace on
(`LD_DEBUG=files`, one file per process, children and `dlopen` included: Python's `_ssl`, curl's libcurl); the
objects it initialised are read from that trace. What cannot be measured against the library is refused in one
paragraph with the remedy — a statically linked program, one that loads no libssl or libcrypto (it bundles its
own TLS, as node does), one that needs another soname (a 1.1 program on 3.x) or a symbol version the library lacks
(`OPENSSL_3.2.0` on 3.0), one whose libraries came from elsewhere (its RPATH wins over the loader's path) — so no
figure is ever reported for the wrong library.

    loaded = check(["curl", "-sI", "https://127.0.0.1:8443/"], installed.find("system"))
    loaded.objects    # {"libssl.so.3": Path("/usr/lib/x86_64-linux-gnu/libssl.so.3"), "libcrypto.so.3": …}
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from sslperf import tempdirs
from sslperf.errors import SslperfError
from sslperf.libs.model import Lib
from sslperf.proc import run

TLS_OBJECTS = ("libssl", "libcrypto")
_INIT = re.compile(r"calling init: (\S+)")
_NEEDED = re.compile(r"file=(\S+) \[\d+\];\s+needed by (\S+)")
_NO_SONAME = re.compile(r"error while loading shared libraries: (\S+): cannot open shared object file")
_NO_VERSION = re.compile(r"version [`'](\S+?)' not found \(required by (\S+?)\)")
_ELF = b"\x7fELF"
_VERSIONED = re.compile(rf"(?:{'|'.join(TLS_OBJECTS)})\.so(?:\.\d+)+")     # libssl.so.3, libssl.so.1.1
PT_INTERP = 3


@dataclass(frozen=True)
class Loaded:
    """What one run of the program initialised: soname → the file (resolved), for libssl and libcrypto; and how
    many processes the run had (each traced)."""
    objects: dict[str, Path]
    processes: int

    def describe(self) -> str:
        """`libcrypto.so.3, libssl.so.3 from /usr/lib/x86_64-linux-gnu` (grouped by directory)."""
        by_dir: dict[Path, list[str]] = {}
        for name, path in sorted(self.objects.items()):
            by_dir.setdefault(path.parent, []).append(name)
        return "; ".join(f"{', '.join(names)} from {directory}" for directory, names in by_dir.items())


def shared_dir(lib: Lib) -> Path:
    """The directory that holds `lib`'s shared libssl and libcrypto; refused when it has none (a static build)."""
    known = (lib.info or {}).get("shared_objects") or {}
    for name, path in known.items():
        if name.startswith("libssl.so"):
            return Path(path).resolve().parent
    for sub in ("lib", "lib64"):
        found = sorted((lib.prefix / sub).glob("libssl.so*")) if lib.prefix else []
        if found:
            return (lib.prefix / sub).resolve()
    remedy = (f"Build it with its shared libraries too, `sslperf libs build {lib.name}+shared`, and give "
              f"`--lib {lib.name}+shared`; or name" if lib.kind == "built" and lib.flavor == "openssl" else "Name")
    raise SslperfError(
        f"{lib.name} has no shared libssl: it is built as static libraries (what sslperf's harness links), and a "
        "program can only be given a library through the dynamic loader. Nothing was run.",
        hint=f"{remedy} a library with shared objects: `system`, or a prefix registered with `sslperf libs add` "
             "whose lib/ holds libssl.so and libcrypto.so.")


def linkages(lib: Lib) -> list[str]:
    """How `lib` can be linked: "static" (archives, what the harness links) and/or "shared" (what `sslperf exec`
    gives a program)."""
    found = ["static"] if lib.linkage and lib.linkage.static else []
    try:
        shared_dir(lib)
        found.append("shared")
    except SslperfError:
        pass
    return found


def provided(directory: Path) -> list[str]:
    """The sonames of libssl and libcrypto `directory` offers (libssl.so.3, libcrypto.so.3); BoringSSL's and AWS-LC's
    shared objects have no version, and are offered as libssl.so and libcrypto.so (where no versioned one is:
    elsewhere libssl.so is the link a compiler's -lssl reads, not a soname)."""
    names = [p.name for p in directory.iterdir()]
    versioned = [n for n in names if _VERSIONED.fullmatch(n)]
    plain = [f"{o}.so" for o in TLS_OBJECTS
             if f"{o}.so" in names and not any(v.startswith(f"{o}.so.") for v in versioned)]
    return sorted(versioned + plain)


def linked(directory: Path, into: Path) -> Path:
    """`into` holding links to `directory`'s libssl and libcrypto only, by soname: the directory a program's loader
    path starts with. Not `directory` itself: a system library's directory holds every other library too, and
    putting it first would swap those as well (a Python of its own would load the system's libpython)."""
    into.mkdir(parents=True, exist_ok=True)
    for name in provided(directory):
        (into / name).symlink_to(directory / name)
    return into


def loader_env(links: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment that puts `links` (see linked) first on the loader's path."""
    env = dict(os.environ if base is None else base)
    env["LD_LIBRARY_PATH"] = os.pathsep.join([str(links), *filter(None, [env.get("LD_LIBRARY_PATH")])])
    return env


def check(argv: list[str], lib: Lib, *, env: dict[str, str] | None = None, cwd: Path | None = None,
          timeout: float = 120) -> Loaded:
    """Run `argv` once under `lib` with the loader's trace on: the libssl and libcrypto it initialised, each from
    `lib`'s directory — or a one-paragraph refusal (SslperfError, exit 2) saying why it cannot be measured."""
    program = shutil.which(argv[0]) if argv else None
    if program is None:
        raise SslperfError(f"`{argv[0] if argv else ''}` is not a program on PATH. Nothing was run.",
                           hint="Give the command after `--`, its program first, e.g. `-- curl -s URL`.")
    directory = shared_dir(lib)
    if _is_static(Path(program)):
        raise SslperfError(
            f"{program} is statically linked: the dynamic loader never runs for it, so no library can be given to it "
            f"and it would measure whatever TLS library was linked in when it was built. Nothing was measured.",
            hint="Measure a dynamically linked build of the program (`file PROGRAM` says which it is).")
    with tempdirs.private_dir("loader") as trace_dir:
        links = linked(directory, trace_dir / "libs")
        traced = {**loader_env(links, env), "LD_DEBUG": "files", "LD_DEBUG_OUTPUT": str(trace_dir / "ld")}
        result = run(argv, timeout=timeout, cwd=cwd, env=traced)
        traces = [p.read_text(errors="replace") for p in sorted(trace_dir.glob("ld.*"))]
        # Resolved while the links exist: each TLS object initialised, as (its name, the file it is).
        inits = [(Path(p).name, Path(p).resolve()) for trace in traces for p in _INIT.findall(trace)
                 if Path(p).name.startswith(tuple(f"{o}.so" for o in TLS_OBJECTS))]
    _refuse_loader_errors(result.output, lib, directory, argv)
    if result.returncode != 0:
        tail = "\n".join("    " + line for line in result.output.rstrip().splitlines()[-8:])
        raise SslperfError(
            f"`{argv[0]}` failed under {lib.name} (exit {result.returncode}) in its checked run; a failing run is "
            f"never timed. Nothing was measured. Its last lines:\n{tail}",
            hint="Run the command by hand until it succeeds (with LD_LIBRARY_PATH pointing at a directory of "
                 f"links to {directory}'s libssl and libcrypto), then measure it.")
    if not traces:
        raise SslperfError(
            f"`{argv[0]}` ran without the dynamic loader (no trace from it): it is statically linked, or a setuid "
            "program whose loader ignores the trace. No library can be given to it. Nothing was measured.",
            hint="Measure a dynamically linked, non-setuid build of the program.")
    objects: dict[str, Path] = {}
    elsewhere: list[str] = []
    for name, real in inits:
        if real.parent != directory:
            elsewhere.append(f"{name} from {real.parent}")
        objects.setdefault(name, real)
    if elsewhere:
        needed = sorted({name for trace in traces for name, _ in _NEEDED.findall(trace)
                         if name.startswith(TLS_OBJECTS)})
        offered = provided(directory)
        other = [n for n in needed if n not in offered]
        why = (f"it needs {', '.join(other)}, and {lib.name} provides {', '.join(offered)}" if other else
               "its RPATH, or a library it loads, names another directory before the loader's path")
        raise SslperfError(
            f"`{argv[0]}` loaded {'; '.join(sorted(set(elsewhere)))}, not {lib.name}'s ({directory}): {why}. A figure "
            "would be the other library's. Nothing was measured.",
            hint="Measure a build of the program linked against this library's soname (libssl.so.1.1 programs run "
                 "on 1.1.x only, libssl.so.3 ones on 3.x), without an RPATH to another OpenSSL.")
    if not objects:
        raise SslperfError(
            f"`{argv[0]}` loaded neither libssl nor libcrypto under {lib.name} (traced in {len(traces)} "
            f"process{'es' if len(traces) != 1 else ''}): it does no TLS in this run, or carries its own TLS "
            "library linked in (as node and some Go programs do). Nothing was measured.",
            hint="Check that the command really makes a TLS connection or calls the library, and that the program "
                 "uses the system's shared OpenSSL (`ldd PROGRAM`); a program that bundles its own cannot be given "
                 "another.")
    return Loaded(objects, len(traces))


def _refuse_loader_errors(output: str, lib: Lib, directory: Path, argv: list[str]) -> None:
    """The loader's own refusals, said with what the library offers."""
    missing = _NO_SONAME.search(output)
    if missing:
        raise SslperfError(
            f"`{argv[0]}` needs {missing.group(1)}, which {lib.name} does not provide (it has "
            f"{', '.join(provided(directory)) or 'no libssl or libcrypto'} in {directory}); the loader stopped "
            "before the program ran. Nothing was measured.",
            hint="A program built against OpenSSL 1.1 (libssl.so.1.1) runs only on 1.1.x builds and one built "
                 "against 3.x (libssl.so.3) only on 3.x: compare libraries of the soname the program was built for.")
    version = _NO_VERSION.search(output)
    if version:
        raise SslperfError(
            f"`{argv[0]}` needs the symbol version {version.group(1)} (required by {version.group(2)}), which "
            f"{lib.name} ({lib.version}) does not have; the loader stopped before the program ran. Nothing was "
            "measured.",
            hint=f"The program was built against a newer release than {lib.version}: compare releases at least as "
                 "new as the one it was built against, or rebuild it against the oldest one you want to measure.")


def _is_static(program: Path) -> bool:
    """Whether `program` is an ELF executable with no program interpreter (statically linked); a script or an
    unreadable file is not judged here (its trace says)."""
    try:
        with open(program, "rb") as f:
            header = f.read(64)
            if header[:4] != _ELF or header[4] != 2:        # 64-bit ELF only; anything else is judged by its trace
                return False
            order = "little" if header[5] == 1 else "big"
            phoff = int.from_bytes(header[32:40], order)
            phentsize, phnum = int.from_bytes(header[54:56], order), int.from_bytes(header[56:58], order)
            f.seek(phoff)
            table = f.read(phentsize * phnum)
    except OSError:
        return False
    kinds = [int.from_bytes(table[i * phentsize:i * phentsize + 4], order) for i in range(phnum)]
    return PT_INTERP not in kinds
