"""A real curl, built from source against a library of the matrix: the
source comes from the `curl-sys` crate (which carries curl's whole tree),
the build is CMake + Ninja with only HTTPS (no HTTP/2, compression, IDN or
other protocols, so the TLS library is all that differs), linked to the
library statically where it is static, and cached like a library: keyed by
curl's source, the library's build and the compiler. A library curl cannot
build against is a clear error naming the step that failed."""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

from sslperf import paths, tempdirs
from sslperf.errors import BuildFailed, SslperfError
from sslperf.libs import crates, dependents, versions
from sslperf.libs.build import Progress, SilentProgress, compiler_identity, record_build
from sslperf.libs.model import Lib
from sslperf.proc import require_tool, run

CRATE = "curl-sys"
RECIPE = 1
MANIFEST = "curl.json"


@dataclass
class Curl:
    binary: Path
    version: str           # curl's own version, e.g. 8.22.0
    lib: str               # the library it is linked with
    cached: bool
    seconds: float


def release(spec: str | None = None) -> crates.CrateRelease:
    """The curl-sys crate carrying the newest curl that `spec` (e.g. `8.21`) matches; None: the newest curl."""
    chosen: dict[str, crates.CrateRelease] = {}
    for found in crates.releases(CRATE):
        carried = (found.build_metadata or "").removeprefix("curl-")
        if found.yanked or not (found.build_metadata or "").startswith("curl-"):
            continue
        if carried not in chosen or versions.sort_key(found.semver) > versions.sort_key(chosen[carried].semver):
            chosen[carried] = found
    version = versions.newest_matching(spec, list(chosen))
    if version is None:
        newest = sorted(chosen, key=versions.sort_key)[-8:]
        raise SslperfError(f"No curl-sys crate carries a curl matching `{spec}`.",
                           hint=f"The newest on offer: {', '.join(newest)}.")
    return chosen[version]


def build(lib: Lib, progress: Progress | None = None, curl_spec: str | None = None) -> Curl:
    """curl (the newest, or the newest matching `curl_spec`) linked with `lib`, built once and cached."""
    started = time.monotonic()
    progress = progress or SilentProgress()
    crate = release(curl_spec)
    curl_version = (crate.build_metadata or "curl-?").removeprefix("curl-")
    if _needs_openssl3(curl_version) and lib.flavor == "openssl" and lib.version and \
            versions.sort_key(lib.version) < versions.sort_key("3.0.0"):
        raise _too_old(curl_version, lib)        # said before configuring, as the build would say it a minute later
    compiler = compiler_identity(cmake=True)
    key = hashlib.sha256(json.dumps({"recipe": RECIPE, "curl": crate.cksum, "lib": dependents.lib_identity(lib),
                                     "compiler": compiler}, sort_keys=True).encode()).hexdigest()
    home = paths.subdir("curl") / f"curl-{curl_version}-{lib.name}-{key[:12]}"
    if (home / MANIFEST).exists() and (home / "bin" / "curl").exists():
        return Curl(home / "bin" / "curl", curl_version, lib.name, True, time.monotonic() - started)
    source = crates.fetch(crate) / "curl"
    work = tempdirs.make("curl-build", cache=True)
    log_path = paths.subdir("logs") / f"{home.name}.log"
    try:
        with open(log_path, "w") as log:
            try:
                _configure_and_compile(lib, source, work, log, progress, curl_version)
            finally:
                record_build(f"curl {curl_version} against {lib.name}")
        dependents.install(work / "build" / "src" / "curl", "curl", MANIFEST,
                           {"curl": curl_version, "crate": crate.crate_version, "lib": lib.name, "key": key,
                            "compiler": compiler}, work, home, started)
    finally:
        tempdirs.remove(work)
    return Curl(home / "bin" / "curl", curl_version, lib.name, False, time.monotonic() - started)


def _needs_openssl3(curl_version: str) -> bool:
    """curl 8.18 dropped OpenSSL 1.1.1 (its configure refuses anything older than 3.0)."""
    return versions.sort_key(curl_version) >= versions.sort_key("8.18.0")


def _too_old(curl_version: str, lib: Lib) -> BuildFailed:
    return BuildFailed(f"curl {curl_version} needs OpenSSL 3.0 or later, and {lib.name} is "
                       f"{lib.version_string or lib.flavor}.",
                       hint="curl 8.17 is the last that builds against OpenSSL 1.1.1: give --curl 8.17 to "
                            "compare 1.1.1 with later releases through the same curl.")


def _configure_and_compile(lib: Lib, source: Path, work: Path, log, progress: Progress, curl_version: str) -> None:
    cmake = require_tool("cmake", "to build curl")
    ninja = require_tool("ninja", "to build curl")
    settings = [
        "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF", "-DBUILD_STATIC_LIBS=ON", "-DBUILD_CURL_EXE=ON",
        "-DBUILD_TESTING=OFF", "-DBUILD_EXAMPLES=OFF", "-DBUILD_LIBCURL_DOCS=OFF", "-DBUILD_MISC_DOCS=OFF", "-DENABLE_CURL_MANUAL=OFF",
        "-DHTTP_ONLY=ON", "-DCURL_USE_OPENSSL=ON", "-DCURL_USE_LIBPSL=OFF", "-DCURL_USE_LIBSSH2=OFF",
        "-DUSE_NGHTTP2=OFF", "-DUSE_LIBIDN2=OFF", "-DCURL_ZLIB=OFF", "-DCURL_BROTLI=OFF", "-DCURL_ZSTD=OFF",
        "-DENABLE_ARES=OFF", "-DCURL_DISABLE_LDAP=ON", "-DCURL_CA_BUNDLE=none", "-DCURL_CA_PATH=none",
        "-DCURL_DISABLE_OPENSSL_AUTO_LOAD_CONFIG=ON",
        "-DCMAKE_DISABLE_FIND_PACKAGE_Perl=ON",     # the crate has no docs/ tree, which Perl would build
    ]
    if lib.prefix is not None:          # built or registered: that prefix, statically where it is static
        settings.append(f"-DOPENSSL_ROOT_DIR={lib.prefix}")
        settings.append(f"-DOPENSSL_USE_STATIC_LIBS={'ON' if lib.linkage and lib.linkage.static else 'OFF'}")
        settings.append(f"-DCMAKE_C_STANDARD_LIBRARIES={' '.join(dependents.system_libs(lib))}")
    settings += [f"-DCMAKE_C_COMPILER_LAUNCHER={launcher}" for launcher in dependents.launcher()]
    env = dependents.compile_env(work)
    steps = [("configure", [cmake, "-G", "Ninja", "-S", source, "-B", work / "build", *settings], 600),
             ("compile", [ninja, "-C", work / "build", "curl"], 1800)]
    if lib.linkage is not None:
        steps.insert(0, ("link check", dependents.link_check(lib, work, "curl"), 120))
    for phase, command, timeout in steps:
        progress.phase(f"curl {curl_version}: {phase}")
        result = run(command, timeout=timeout, log=log, env=env)
        if result.returncode != 0 and re.search(r"OpenSSL 3\.0\.0 or (greater|later) required", result.output):
            raise _too_old(curl_version, lib)
        if result.returncode != 0:
            tail = "\n".join("    " + line for line in result.output.rstrip().splitlines()[-12:])
            raise BuildFailed(f"curl {curl_version} cannot be built against {lib.name} "
                              f"({lib.version_string or lib.flavor}): its {phase} step failed. Last lines:\n{tail}",
                              hint=f"The whole log is at {log.name}. The harness's own curl-like client "
                                   "(`sslperf tls --loopback`) still measures this library.")
