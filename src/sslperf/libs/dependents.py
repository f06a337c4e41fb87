"""What every program sslperf builds against a library of the matrix (curl, nginx, HAProxy) shares: the
library's identity in the program's cache key, the libraries it links after the TLS library, and a one-file link
check that fails in a second when a prefix is not a usable TLS library, not after minutes of compiling."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from sslperf.libs.build_systems import compiler_launcher, launcher_env
from sslperf.libs.model import Lib, is_bssl
from sslperf.proc import require_tool

LINK_CHECK = """#include <openssl/ssl.h>
int main(void)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_free(ctx);
    return 0;
}
"""


def lib_identity(lib: Lib) -> dict:
    """What makes two builds of a library different, as far as a program built against it is concerned."""
    return {"name": lib.name, "key": lib.info.get("key"), "version": lib.version_string,
            "linkage": lib.linkage and [lib.linkage.cflags, lib.linkage.libs]}


def system_libs(lib: Lib) -> list[str]:
    """What a static TLS library needs linked after it (BoringSSL and AWS-LC have C++ inside)."""
    return ["-pthread", "-ldl"] + (["-lstdc++"] if is_bssl(lib.flavor) else [])


def compile_env(work: Path) -> dict[str, str]:
    """The environment a dependent's build in `work` runs in: the libraries' compiler-cache settings, so a server or
    curl built again against the same library (a fresh checkout of the tests, a rebuild after its home was removed)
    compiles nothing it compiled before. The build puts `launcher()` in front of its compiler."""
    return {**os.environ, **launcher_env(work)}


def launcher() -> list[str]:
    """ccache, when installed and not turned off: the command a dependent's build puts before its C compiler."""
    found = compiler_launcher()
    return [found] if found else []


def cc() -> str:
    """The C compiler as a Makefile's CC= takes it: ccache first, when there is one."""
    return " ".join([*launcher(), os.environ.get("CC", "cc")])


def archives_dir(lib: Lib, work: Path) -> Path:
    """A directory under `work` holding only links to `lib`'s static archives: `-L` there makes `-lssl -lcrypto`
    take them even where the library's own directory also holds its shared objects (the `shared` variant), which
    the linker would prefer, and which the built program would then look for on the system at run time."""
    where = work / "archives"
    where.mkdir(exist_ok=True)
    for archive in (Path(item) for item in lib.linkage.libs if item.endswith(".a")):
        link = where / archive.name
        if not link.exists():
            link.symlink_to(archive)
    return where


def link_check(lib: Lib, work: Path, program: str) -> list:
    """The command that links a one-file program as `program` will link against `lib`."""
    probe = work / "link-check.c"
    probe.write_text(LINK_CHECK)
    return [require_tool("cc", f"to build {program}"), *lib.linkage.cflags, probe, "-o", work / "link-check",
            *lib.linkage.libs, *system_libs(lib)]


def install(binary: Path, name: str, manifest_file: str, manifest: dict, work: Path, home: Path,
            started: float) -> Path:
    """`binary` put in place as `home`/bin/`name`, with `manifest_file` saying what was built and how long it took
    since `started`; staged in `work` first, so a half-written home is never taken for a build. The installed path."""
    staged = work / "out"
    (staged / "bin").mkdir(parents=True)
    shutil.copy2(binary, staged / "bin" / name)
    (staged / manifest_file).write_text(json.dumps({**manifest, "build_seconds": round(time.monotonic() - started, 1)},
                                                   indent=1) + "\n")
    if home.exists():
        shutil.rmtree(home)
    staged.rename(home)
    return home / "bin" / name
