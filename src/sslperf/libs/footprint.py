"""What a library is and what it weighs: the probe program compiled against
it (version as the library reports it) and the sizes of its archives or
shared objects and of the probe itself."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from sslperf import tempdirs
from sslperf.errors import SslperfError
from sslperf.libs import targets
from sslperf.proc import require_tool, run, run_ok

# The probe program per harness backend (libs.model.harness_backend).
PROBE_SOURCES = {"openssl": Path(__file__).with_name("probe.c"), "rustls": Path(__file__).with_name("probe_rustls.c"),
                 "wolfssl": Path(__file__).with_name("probe_wolfssl.c")}
SHA256_ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


@dataclass
class Linkage:
    """How to compile and link a program against one library."""

    cflags: list[str]
    libs: list[str]          # archives or -l flags, in link order
    static: bool

    def command(self, compiler: str, source: Path, output: Path, extra: list[str] | None = None) -> list[str]:
        return [compiler, "-std=c11", "-O2", *self.cflags, *(extra or []), str(source),
                "-o", str(output), *self.libs]


@dataclass
class ProbeResult:
    flavor: str
    version_string: str
    version_number: int
    library_version: str | None
    text: int
    data: int
    bss: int
    shared_objects: dict[str, str]   # soname → resolved path, for dynamic links


def probe(linkage: Linkage, workdir: Path | None = None, backend: str = "openssl",
          target: targets.Target | None = None) -> ProbeResult:
    """Compile and run the probe against `linkage`; check it works (an OpenSSL-API library hashes right, a
    rustls one makes a client connection). A cross build's (`target`) is linked statically by the cross compiler
    and run under qemu-user."""
    compiler = target.tool("gcc") if target else require_tool("cc", "to compile programs against the library")
    own_dir = workdir is None
    workdir = tempdirs.make("probe") if own_dir else workdir
    try:
        binary = workdir / "probe"
        binary = binary.with_name(binary.name + (target.exe if target else ""))
        argv = linkage.command(compiler, PROBE_SOURCES[backend], binary, ["-static"] if target else None)
        if target:      # the target's system libraries, not this machine's
            argv = [a for a in argv if not a.startswith(("-l", "-pthread"))] + list(target.system_libs)
        result = run(argv, timeout=180)
        if result.returncode != 0:
            raise SslperfError(
                "The probe program does not compile or link against this library:\n"
                + "\n".join(result.output.strip().splitlines()[-12:]),
                hint="Check that the prefix holds include/openssl/ssl.h and libssl/libcrypto."
                if backend == "openssl" else f"Check that the prefix holds the {backend} headers and static library.",
            )
        output = run_ok([*(target.here() if target else []), binary], timeout=120)
        try:
            info = json.loads(output[output.find("{"):] if "{" in output else output)
        except ValueError:
            raise SslperfError("The probe program built against the library ran but printed no report:\n    "
                               + "\n    ".join(output.strip().splitlines()[-8:] or ["(nothing)"]),
                               hint="Its last lines are above; the build's log has the rest.") from None
        if backend == "rustls" and not info.get("connection"):
            raise SslperfError("rustls-ffi could not make a client connection in the probe program.")
        if backend != "rustls" and info["sha256_abc"] != SHA256_ABC:
            raise SslperfError(f"The library computed a wrong SHA-256 of 'abc' ({info['sha256_abc']}).")
        text, data, bss = section_sizes(binary, target)
        shared = {} if linkage.static or target else linked_shared_objects(binary)
        return ProbeResult(info["flavor"], info["version_string"], int(info["version_number"]),
                           info.get("library_version"), text, data, bss, shared)
    finally:
        if own_dir:
            tempdirs.remove(workdir)


def section_sizes(path: Path, target: targets.Target | None = None) -> tuple[int, int, int]:
    """text, data and bss of an object, archive (summed) or program, as `size` (the target's) counts them."""
    size = target.tool("size") if target else require_tool("size", "to measure library footprints")
    out = run_ok([size, "--format=berkeley", "--totals", path], timeout=60)
    rows = [line.split() for line in out.strip().splitlines()[1:]]
    total = rows[-1]
    return int(total[0]), int(total[1]), int(total[2])


_LDD_LINE = re.compile(r"^\s*(\S+)\s+=>\s+(\S+)")


def linked_shared_objects(binary: Path) -> dict[str, str]:
    """libssl/libcrypto shared objects that `binary` loads, resolved by ldd."""
    ldd = require_tool("ldd")
    found = {}
    for line in run_ok([ldd, binary], timeout=30).splitlines():
        match = _LDD_LINE.match(line)
        if match and re.match(r"lib(ssl|crypto)\.so", match.group(1)):
            found[match.group(1)] = str(Path(match.group(2)).resolve())
    return found


@dataclass
class FileFootprint:
    path: str
    bytes: int
    text: int
    data: int
    bss: int


def file_footprint(path: Path, target: targets.Target | None = None) -> FileFootprint:
    text, data, bss = section_sizes(path, target)
    return FileFootprint(str(path), path.stat().st_size, text, data, bss)


def as_dict(obj) -> dict:
    return asdict(obj)
