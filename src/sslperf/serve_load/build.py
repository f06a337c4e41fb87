"""nginx and HAProxy built from Debian's source packages against a library of the matrix: statically against a
built library (only the prefix's static archives are on the link path), or against the system library's shared
objects as the distribution builds them. Only what an HTTPS endpoint needs (no PCRE, zlib or Lua: the TLS library
is all that differs between two builds), and no debug information: both add -g, which a profile does not need (it
names functions from the symbol table, which stays, and unwinds by .eh_frame) and which makes each build 15% dearer.
Cached like curl: keyed by the source package, the library's build (the system library: its version) and the
compiler. The binary is checked after linking: a built library's server loads no shared libssl, the system
library's loads exactly the system's. A library a server cannot be built against is a clear error that names the
step and shows the compiler's first errors."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sslperf import paths, tempdirs
from sslperf.errors import BuildFailed, SslperfError
from sslperf.libs import dependents
from sslperf.libs.build import Progress, SilentProgress, compiler_identity, record_build
from sslperf.libs.model import Lib
from sslperf.proc import require_tool, run
from sslperf.serve_load import debian

RECIPE = 3
MANIFEST = "server.json"


@dataclass(frozen=True)
class ServerBuild:
    server: str          # nginx | haproxy
    version: str         # upstream version, e.g. 1.22.1
    debian: str          # the Debian source version it was built from
    binary: Path
    lib: str
    cached: bool
    seconds: float

    @property
    def label(self) -> str:
        return f"{self.server} {self.version}"


def _nginx_steps(lib: Lib, source: Path, out: Path) -> list[tuple[str, list, float]]:
    link = "-lm"
    if lib.prefix is not None:
        # -L first, to a directory of the static archives only: -lssl -lcrypto take them, not the system's (nor the
        # library's own shared objects, where it has them). nginx puts these before -lssl -lcrypto:
        # --no-as-needed keeps libstdc++ (BoringSSL, AWS-LC) for them.
        archives = dependents.archives_dir(lib, out.parent)
        link = f"-L{archives} -Wl,--no-as-needed {' '.join(dependents.system_libs(lib))} -lm"
    configure = ["./configure", f"--prefix={out}", "--with-http_ssl_module", "--with-http_v2_module",
                 "--without-http_rewrite_module", "--without-http_gzip_module", "--without-pcre",
                 "--without-http_userid_module", "--without-http_upstream_hash_module",
                 f"--with-cc-opt={' '.join(lib.linkage.cflags)} -O2 -g0", f"--with-ld-opt={link}"]
    return [("configure", configure, 300), ("compile", [require_tool("make"), "-j2"], 1800)]


def _haproxy_steps(lib: Lib, source: Path, out: Path) -> list[tuple[str, list, float]]:
    where = []          # the system library: HAProxy's defaults find its headers and shared objects
    if lib.prefix is not None:
        include = next(flag[2:] for flag in lib.linkage.cflags if flag.startswith("-I"))
        where = [f"SSL_INC={include}", f"SSL_LIB={dependents.archives_dir(lib, out.parent)}"]
    make = [require_tool("make"), "-j2", f"CC={dependents.cc()}", "TARGET=linux-glibc", "USE_OPENSSL=1", *where,
            f"ADDLIB={' '.join(dependents.system_libs(lib))} -lm", "USE_PCRE=", "USE_PCRE2=", "USE_ZLIB=", "USE_LUA=",
            "USE_SYSTEMD=", "USE_PROMEX=", "CPU_CFLAGS=-O2", "DEBUG_CFLAGS="]
    return [("compile", make, 1800)]


@dataclass(frozen=True)
class Recipe:
    package: str
    steps: Callable[[Lib, Path, Path], list[tuple[str, list, float]]]
    built: str                       # the binary, relative to the source tree
    version_flags: tuple[str, ...]   # prints the version and the TLS library it was built with


RECIPES = {
    "nginx": Recipe("nginx", _nginx_steps, "objs/nginx", ("-V",)),
    "haproxy": Recipe("haproxy", _haproxy_steps, "haproxy", ("-vv",)),
}


def recipe(server: str) -> Recipe:
    if server not in RECIPES:
        raise SslperfError(f"sslperf does not build a server called `{server}`.",
                           hint=f"Choose one of: {', '.join(RECIPES)}.")
    return RECIPES[server]


def build(server: str, lib: Lib, progress: Progress | None = None, version: str | None = None) -> ServerBuild:
    """`server` (newest in Debian's configured suites, or the one whose version starts with `version`) linked with
    `lib`, built once and cached."""
    started = time.monotonic()
    progress = progress or SilentProgress()
    how = recipe(server)
    if lib.linkage is None or lib.prefix is not None and not lib.linkage.static:
        raise SslperfError(f"{lib.name} has no static build for {server} to link with.",
                           hint="Servers are built against libraries sslperf built (`sslperf libs build ...`), "
                                "statically, or against the system library, as the distribution builds them.")
    source = debian.fetch(how.package, version)
    compiler = compiler_identity(cmake=False)
    key = hashlib.sha256(json.dumps({"recipe": RECIPE, "server": server, "source": source.version,
                                     "lib": dependents.lib_identity(lib), "compiler": compiler},
                                    sort_keys=True).encode()).hexdigest()
    home = paths.subdir("servers") / f"{server}-{source.upstream}-{lib.name}-{key[:12]}"
    if (home / MANIFEST).exists() and (home / "bin" / server).exists():
        return ServerBuild(server, source.upstream, source.version, home / "bin" / server, lib.name, True,
                           time.monotonic() - started)
    work = tempdirs.make(f"{server}-build", cache=True)
    log_path = paths.subdir("logs") / f"{home.name}.log"
    label = f"{server} {source.upstream}"
    try:
        tree = work / "src"
        shutil.copytree(source.tree, tree, symlinks=True)
        with open(log_path, "w") as log:
            try:
                # nginx's configure takes its compiler from CC; HAProxy's make from its CC= argument.
                compile_env = {**dependents.compile_env(work), "CC": dependents.cc()}
                steps = [("link check", dependents.link_check(lib, work, server), 120),
                         *how.steps(lib, tree, work / "prefix")]
                for phase, command, timeout in steps:
                    progress.phase(f"{label} against {lib.name}: {phase}")
                    result = run(command, timeout=timeout, log=log, cwd=tree, env=compile_env)
                    if result.returncode != 0:
                        raise BuildFailed(_failure(label, lib, phase, result.output),
                                          hint=f"The whole log is at {log_path}. The harness's own server "
                                               "(`sslperf tls --loopback`) still measures this library.")
            finally:
                record_build(f"{label} against {lib.name}")
        binary = tree / how.built
        _check_linked(binary, lib, label)
        dependents.install(binary, server, MANIFEST, {"server": server, "version": source.upstream,
                                                      "debian": source.version, "lib": lib.name, "key": key,
                                                      "compiler": compiler}, work, home, started)
    finally:
        tempdirs.remove(work)
    return ServerBuild(server, source.upstream, source.version, home / "bin" / server, lib.name, False,
                       time.monotonic() - started)


def _failure(label: str, lib: Lib, phase: str, output: str) -> str:
    errors = [line.strip() for line in output.splitlines() if re.search(r"\berror\b", line)]
    shown = errors[:6] or output.rstrip().splitlines()[-8:]
    body = "\n".join("    " + line[:200] for line in shown)
    return (f"{label} cannot be built against {lib.name} ({lib.version_string or lib.flavor}): its {phase} step "
            f"failed. {'First errors' if errors else 'Last lines'}:\n{body}")


def _check_linked(binary: Path, lib: Lib, label: str) -> None:
    """A server of a built library loads no shared libssl/libcrypto (it would be the system's, not `lib`); one of the
    system library loads exactly the system's."""
    ldd = require_tool("ldd", "to check how a server was linked")
    loaded = subprocess.run([ldd, str(binary)], capture_output=True, text=True, timeout=60, check=False).stdout
    shared = dict(re.findall(r"(lib(?:ssl|crypto)\.so\S*) => (\S+)", loaded))
    if lib.prefix is None:
        wanted = {name: str(Path(path).resolve()) for name, path in lib.info.get("shared_objects", {}).items()}
        if {name: str(Path(path).resolve()) for name, path in shared.items()} != wanted:
            raise BuildFailed(f"{label} built against the system library loads {shared or 'no libssl'}, not "
                              f"{wanted}.", hint="Check that libssl-dev matches the installed libssl.")
    elif shared:
        raise BuildFailed(f"{label} built against {lib.name} loads {', '.join(shared)} at run time, so it would "
                          "use another library than the one asked for.",
                          hint="The library's prefix should hold only its static archives; rebuild it with "
                               "`sslperf libs build --force`.")


def describe(build_: ServerBuild) -> str:
    """What the binary says of itself and its TLS library (`nginx -V`, `haproxy -vv`), one line each."""
    how = recipe(build_.server)
    result = subprocess.run([str(build_.binary), *how.version_flags], capture_output=True, text=True, timeout=30)
    text = result.stdout + result.stderr
    lines = [line.strip() for line in text.splitlines()
             if re.search(r"(?i)version|built with|running on|OpenSSL library", line)]
    return "; ".join(lines[:4])
