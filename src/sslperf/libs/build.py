"""Building a library into the cache.

A build is keyed by (source digest, variants and extra options, compiler),
runs in a private temporary directory, installs with DESTDIR into a staging
tree, and is moved into `libs/` in one rename only when it is complete and
its probe program works, so an interrupted or failed build leaves nothing
that looks installed. The log of every build is kept.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Protocol

import sslperf
from sslperf import paths, tempdirs
from sslperf.errors import BuildFailed, BuildInterrupted, SslperfError
from sslperf.libs import build_systems, fips, footprint, relocation, releases, sources, targets, variants
from sslperf.libs.installed import MANIFEST, lib_from_manifest, libs_root
from sslperf.libs.build_systems import compiler_launcher, launcher_env, launcher_version
from sslperf.libs.model import Lib, harness_backend, prefix_linkage, version_from_string
from sslperf.libs.sources import Source
from sslperf.proc import require_tool, run

# Bump when the build steps change, so that older cache entries are not reused.
RECIPE = 2



class Progress(Protocol):
    def phase(self, name: str, total: int | None = None) -> None: ...
    def advance(self, steps: int = 1) -> None: ...


class SilentProgress:
    def phase(self, name: str, total: int | None = None) -> None:
        pass

    def advance(self, steps: int = 1) -> None:
        pass


@dataclass
class BuildRequest:
    source: Source
    variants: tuple[str, ...] = ()
    configure_options: list[str] = field(default_factory=list)
    cflags: list[str] = field(default_factory=list)
    jobs: int = os.cpu_count() or 1
    name: str | None = None

    def __post_init__(self) -> None:
        self.variants = variants.canonical_names(self.variants)
        variants.lookup(self.variants, self.source.flavor)   # fail early on typos and conflicts


def requests(names: tuple[str, ...], extra_variants: tuple[str, ...] = (), configure_opt: list[str] = (),
             cflags: list[str] = (), jobs: int = os.cpu_count() or 1, source_dir: Path | None = None,
             tarball: str | None = None, sha256: str | None = None, git_url: str | None = None,
             tag: str | None = None, custom_name: str | None = None) -> list[BuildRequest]:
    """What `sslperf libs build` is asked for: the named releases, or one
    source of its own (a directory, a tarball with its sha256, a git tag)."""
    if tarball and not sha256:
        raise SslperfError("--tarball needs --sha256 with the tarball's published checksum.")
    if bool(git_url) != bool(tag):
        raise SslperfError("--git and --tag go together: the repository URL and the tag to build.")
    local = [s for s in (source_dir, tarball, git_url) if s]
    if len(local) > 1:
        raise SslperfError("Give only one of --source-dir, --tarball and --git.")
    configure_opt, cflags = list(configure_opt), list(cflags)
    if local:
        if names:
            raise SslperfError("With --source-dir, --tarball or --git the version comes from the source: "
                               "drop the NAME arguments (use --variant for variants, --name to name it).")
        source = (sources.from_directory(source_dir) if source_dir else
                  sources.from_tarball(tarball, sha256) if tarball else sources.from_git(git_url, tag))
        return [BuildRequest(source, tuple(extra_variants), configure_opt, cflags, jobs, custom_name)]
    if not names:
        raise SslperfError("Name the libraries to build, e.g. `sslperf libs build openssl-3.6`.",
                           hint="`sslperf libs available` lists the versions on offer.")
    if custom_name and len(names) > 1:
        raise SslperfError("--name names one build; give one library with it.")
    found = []
    for text in names:
        name = releases.parse_name(text)
        found.append(BuildRequest(sources.from_release(releases.resolve(name)), name.variants + tuple(extra_variants),
                                  configure_opt, cflags, jobs, custom_name))
    return found


@dataclass
class BuildOutcome:
    lib: Lib
    cache_hit: bool
    seconds: float


def compiler_identity(cmake: bool, programs: dict[str, str] | None = None) -> dict[str, str]:
    """The compilers a build uses, by path, version banner and target: `programs` (variants.compilers), else $CC
    and $CXX, else cc and c++."""
    identity = {}
    for role, default in (("cc", "cc"), ("cxx", "c++")) if cmake else (("cc", "cc"),):
        program = (programs or {}).get(role) or os.environ.get(role.upper(), default)
        path = require_tool(program, "to compile the library")
        banner = run([path, "--version"], timeout=30).output.splitlines()
        target = run([path, "-dumpmachine"], timeout=30).output.strip()
        identity[role] = f"{os.path.realpath(path)} | {banner[0] if banner else '?'} | {target}"
    return identity


def lib_name(request: BuildRequest) -> str:
    if request.name:
        return request.name
    name = f"{request.source.flavor}-{request.source.version}"
    name += "".join(f"+{v}" for v in request.variants)
    if request.configure_options or request.cflags:
        extra = json.dumps([request.configure_options, request.cflags]).encode()
        name += f"+custom-{hashlib.sha256(extra).hexdigest()[:6]}"
    return name


def cache_key(request: BuildRequest, compiler: dict[str, str]) -> str:
    material = {
        "recipe": RECIPE,
        "flavor": request.source.flavor,
        "version": request.source.version,
        "source": request.source.digest,
        "variants": list(request.variants),
        "configure_options": request.configure_options,
        "cflags": request.cflags,
        "compiler": compiler,
    }
    if request.source.flavor == "wolfssl":
        # sslperf's own configure of wolfSSL changes with sslperf: a build of other options is another build.
        material["wolfssl_configure"] = variants.wolfssl_configure(variants.lookup(request.variants, "wolfssl"))
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def home_for(request: BuildRequest, key: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._+-]", "_", lib_name(request))
    return libs_root() / f"{safe}-{key[:12]}"


LAST_BUILD_FILE = "last-build.json"
_last_build: dict | None = None       # the newest build this process ran: {"what", "ended" (epoch seconds)}


def record_build(what: str, ended: float | None = None) -> None:
    """Note that sslperf has just built `what` (a library, curl): its compiler
    load lingers in the load average for minutes, which a run's noise check
    must not blame on the user's machine. Kept in this process and, so that
    `libs build` then `speed` is understood too, in the cache."""
    global _last_build
    _last_build = {"what": what, "ended": time.time() if ended is None else ended}
    try:
        (paths.cache_dir() / LAST_BUILD_FILE).write_text(json.dumps(_last_build) + "\n")
    except (OSError, SslperfError):
        pass                     # only a better warning is lost


def last_build() -> dict | None:
    """The newest build sslperf ran, in this process or (recorded in the cache) another: {"what", "ended"}."""
    found = [_last_build] if _last_build else []
    try:
        recorded = json.loads((paths.cache_dir() / LAST_BUILD_FILE).read_text())
        if isinstance(recorded, dict) and isinstance(recorded.get("ended"), (int, float)):
            found.append({"what": str(recorded.get("what") or "a library"), "ended": float(recorded["ended"])})
    except (OSError, ValueError, SslperfError):
        pass
    return max(found, key=lambda b: b["ended"]) if found else None


def build(request: BuildRequest, progress: Progress | None = None, force: bool = False) -> BuildOutcome:
    """Build `request` or return the cached build. Two sslperf processes asked
    for the same build make it once: the second waits for the first (a lock
    per cache key) and takes its result from the cache."""
    started = time.monotonic()
    progress = progress or SilentProgress()
    cmake = request.source.build_system == "cmake"
    programs = variants.compilers(variants.lookup(request.variants, request.source.flavor), request.source.flavor)
    compiler = compiler_identity(cmake, programs)
    key = cache_key(request, compiler)
    home = home_for(request, key)
    with paths.locked(f"build-{key[:32]}", lambda: progress.phase("waiting for another sslperf building it")):
        if (home / MANIFEST).exists() and not force:
            lib = lib_from_manifest(home)
            if lib is not None:
                return BuildOutcome(lib, True, time.monotonic() - started)
        return _build(request, progress, compiler, key, home, started)


def _build(request: BuildRequest, progress: Progress, compiler: dict[str, str], key: str, home: Path,
           started: float) -> BuildOutcome:

    workdir = tempdirs.make("build", cache=True)
    log_path = workdir / "build.log"
    phases: dict[str, float] = {}
    compiled = False
    try:
        with open(log_path, "w") as log:
            log.write(f"# sslperf {sslperf.__version__} build of {lib_name(request)} from {request.source.origin}\n")
            mark = time.monotonic()
            progress.phase("fetch")
            source_root = request.source.materialize()
            if compiler_launcher():        # the same relative paths in every build, for ccache
                source_root = Path(shutil.copytree(source_root, workdir / "src", symlinks=True))
            phases["fetch"] = time.monotonic() - mark
            compiled = True
            job = build_systems.job(request, source_root, workdir, home / "prefix", log, progress, phases,
                                    launcher_env(workdir), lib_name(request))
            plan = job.run()
            staged = workdir / "out"
            staged.mkdir()
            (workdir / "destdir" / str(job.prefix).lstrip("/")).rename(staged / "prefix")
            moved = _move(staged, job.prefix, home / "prefix")
            progress.phase("probe")
            manifest = _manifest(request, key, compiler, plan, staged / "prefix", phases, started, log)
            if moved:
                manifest["relocated"] = moved
            (staged / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        shutil.copy2(log_path, staged / "build.log")
        try:
            staged.rename(home)
        except OSError:
            if not (home / MANIFEST).exists():   # not merely a concurrent build of the same key
                raise
        lib = lib_from_manifest(home)
        assert lib is not None
        return BuildOutcome(lib, False, time.monotonic() - started)
    except BaseException as exc:
        kept = _keep_log(log_path, home)
        if isinstance(exc, KeyboardInterrupt):
            raise BuildInterrupted(
                f"The build of `{lib_name(request)}` was interrupted; nothing was installed.",
                hint=f"Its log so far is at {kept}.") from None
        if isinstance(exc, SslperfError):
            exc.hint = f"{exc.hint + ' ' if exc.hint else ''}The full log is at {kept}."
        raise
    finally:
        tempdirs.remove(workdir)
        if compiled:                 # finished, failed or stopped: the compilers ran, the load average shows it
            record_build(lib_name(request))


def _move(staged: Path, built_for: Path, prefix: Path) -> dict | None:
    """Make a build configured for `built_for` (build_systems.BUILD_PREFIX) name its home's `prefix`."""
    if built_for == prefix:
        return None
    needles = [os.fsencode(built_for)]
    done, names = relocation.rewrite(staged, relocation.naming(staged, needles), needles, prefix)
    return {"from": [str(built_for)], "to": str(prefix), **done, "names": sorted(names)}


def _keep_log(log_path: Path, home: Path) -> Path | None:
    if not log_path.exists():
        return None
    kept = paths.subdir("logs") / f"{home.name}-{dt.datetime.now():%Y%m%d-%H%M%S}.log"
    shutil.copy2(log_path, kept)
    return kept


def _manifest(request: BuildRequest, key: str, compiler: dict, plan: variants.ConfigurePlan,
              staged_prefix: Path, phases: dict[str, float], started: float, log: IO[str]) -> dict:
    """Everything `libs info` shows, measured on the staged install."""
    flavor = request.source.flavor
    linkage = prefix_linkage(staged_prefix, flavor)
    backend = harness_backend(flavor)
    if linkage is None:
        wanted = {"rustls": "librustls_ffi.a and rustls.h", "wolfssl": "libwolfssl.a and wolfssl/ssl.h"}.get(
            backend, "libssl/libcrypto")
        raise BuildFailed(f"The build `{lib_name(request)}` installed no {wanted} under {staged_prefix}.")
    target = targets.of(request.variants)
    result = footprint.probe(linkage, backend=backend, target=target)
    if flavor == "openssl" and request.source.version not in result.version_string:
        raise BuildFailed(f"The build reports `{result.version_string}`, not OpenSSL {request.source.version}.")
    lib_dir = staged_prefix / "lib"
    files = {}
    stems = {"rustls": ("librustls_ffi",), "wolfssl": ("libwolfssl",)}.get(backend, ("libcrypto", "libssl"))
    for stem in stems:
        archive = lib_dir / f"{stem}.a"
        measured = footprint.file_footprint(archive, target)
        measured.path = f"lib/{archive.name}"
        files[stem] = asdict(measured)
    tools = {}
    for tool, args in (("openssl", ["version"]), ("bssl", None)):
        binary = staged_prefix / "bin" / (tool + (target.exe if target else ""))
        if binary.exists():
            tools[tool] = run([*(target.here() if target else []), binary, *args], timeout=120).output.strip() \
                if args else "present"
    log.write(f"# probe: {result.version_string}; tools: {tools}\n")
    return {
        "name": lib_name(request),
        "flavor": flavor,
        "version": request.source.version,
        "variants": list(request.variants),
        "origin": request.source.origin,
        "source_digest": request.source.digest,
        "key": key,
        "recipe": RECIPE,
        "configure_options": plan.options,
        "skipped_options": plan.skipped,
        "cflags": plan.cflags,
        "cmake_settings": plan.cmake,
        "compiler": compiler,
        "compiler_launcher": launcher_version(),
        "jobs": request.jobs,
        "phase_seconds": {k: round(v, 2) for k, v in phases.items()},
        "build_seconds": round(time.monotonic() - started, 2),
        "built_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "sslperf_version": sslperf.__version__,
        "version_string": result.version_string,
        "version_number": result.version_number,
        "library_version": result.library_version
        or version_from_string(result.version_string, request.source.version),
        "tools": tools,
        "fips_module": str(fips.MODULE) if (staged_prefix / fips.MODULE).exists() else None,
        "footprint": {**files, "program": {"text": result.text, "data": result.data, "bss": result.bss,
                                          "static": linkage.static}},
    }
