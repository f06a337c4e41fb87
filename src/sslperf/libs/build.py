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
import platform
import re
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Protocol

import sslperf
from sslperf import paths
from sslperf.errors import BuildFailed, BuildInterrupted, SslperfError
from sslperf.libs import fips, footprint, releases, sources, variants
from sslperf.libs.installed import MANIFEST, lib_from_manifest, libs_root
from sslperf.libs.model import (RUSTLS_ARCHIVE, RUSTLS_HEADER, Lib, harness_backend, prefix_linkage,
                                version_from_string)
from sslperf.libs.sources import Source
from sslperf.proc import require_tool, run

# Bump when the build steps change, so that older cache entries are not reused.
RECIPE = 2

COMPILE_LINE = re.compile(r"\s-c\s.*-o\s+\S+\.o\b|\s-o\s+\S+\.o\s.*\s-c\s")
_NINJA_STATUS = re.compile(r"^\[(\d+)/(\d+)\]")
_UNSUPPORTED = re.compile(r"Unsupported options?:\s*(.+)")


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
        path = require_tool(program, "to compile the library" if not programs else
                            f"to compile the library (`apt-get install {program.rstrip('+')}`)")
        banner = run([path, "--version"], timeout=30).output.splitlines()
        target = run([path, "-dumpmachine"], timeout=30).output.strip()
        identity[role] = f"{os.path.realpath(path)} | {banner[0] if banner else '?'} | {target}"
    return identity


def compiler_launcher() -> str | None:
    """ccache, when installed (SSLPERF_CCACHE=0 turns it off): a build then
    compiles only what differs from an earlier one — the neighbouring commits
    of a bisect, the unchanged files of another release — into the same
    objects the compiler would make. It is not part of the cache key."""
    if os.environ.get("SSLPERF_CCACHE", "1") == "0":
        return None
    return shutil.which("ccache")


def _launcher_version() -> str | None:
    launcher = compiler_launcher()
    if launcher is None:
        return None
    said = run([launcher, "--version"], timeout=30).output.splitlines()
    return said[0] if said else launcher


def _launcher_env(workdir: Path) -> dict[str, str]:
    """ccache's settings for a build in `workdir`: its own store in sslperf's
    cache (or SSLPERF_CCACHE_DIR, which the test command keeps outside the
    checkout, as a CI keeps its compiler cache between runs), and every path
    under `workdir` (the source copied to src/, the build in build/) taken
    relative, so the same file of another build — another commit of a bisect,
    another release — reads the same to ccache."""
    if compiler_launcher() is None:
        return {}
    store = os.environ.get("SSLPERF_CCACHE_DIR") or str(paths.subdir("ccache"))
    return {"CCACHE_DIR": store, "CCACHE_BASEDIR": str(workdir), "CCACHE_NOHASHDIR": "1", "CCACHE_MAXSIZE": "4G"}


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
    cmake = request.source.build_system == "cmake"

    workdir = Path(tempfile.mkdtemp(dir=paths.subdir("tmp"), prefix="build-"))
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
            builder = {"cmake": _CMakeBuild, "cargo": _CargoBuild,
                       "autotools": _AutotoolsBuild}.get(request.source.build_system, _OpenSSLBuild)
            compiled = True
            plan = builder(request, source_root, workdir, home / "prefix", log, progress, phases).run()
            staged = workdir / "out"
            staged.mkdir()
            (workdir / "destdir" / str(home / "prefix").lstrip("/")).rename(staged / "prefix")
            progress.phase("probe")
            manifest = _manifest(request, key, compiler, plan, staged / "prefix", phases, started, log)
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
        shutil.rmtree(workdir, ignore_errors=True)
        if compiled:                 # finished, failed or stopped: the compilers ran, the load average shows it
            record_build(lib_name(request))


def _keep_log(log_path: Path, home: Path) -> Path | None:
    if not log_path.exists():
        return None
    kept = paths.subdir("logs") / f"{home.name}-{dt.datetime.now():%Y%m%d-%H%M%S}.log"
    shutil.copy2(log_path, kept)
    return kept


class _Job:
    """Shared steps of a build: run a step, fail with the log's tail."""

    def __init__(self, request: BuildRequest, source_root: Path, workdir: Path, final_prefix: Path,
                 log: IO[str], progress: Progress, phases: dict[str, float]):
        self.request = request
        self.src = source_root
        self.build_dir = workdir / "build"
        self.build_dir.mkdir()
        self.destdir = workdir / "destdir"
        self.final_prefix = final_prefix
        self.log = log
        self.progress = progress
        self.phases = phases
        self.name = lib_name(request)

    def step(self, phase: str, cmd: list, timeout: float, *, total: int | None = None,
             on_line=None, env: dict | None = None, cwd: Path | None = None) -> str:
        self.progress.phase(phase, total)
        mark = time.monotonic()
        result = run(cmd, cwd=cwd or self.build_dir, timeout=timeout, log=self.log, on_line=on_line,
                     env={**os.environ, **_launcher_env(self.build_dir.parent), **(env or {})})
        self.phases[phase] = self.phases.get(phase, 0.0) + time.monotonic() - mark
        if result.returncode != 0:
            self.fail(phase, result.output)
        return result.output

    def fail(self, phase: str, output: str) -> None:
        rejected = _UNSUPPORTED.search(output)
        if rejected:
            raise BuildFailed(
                f"{self.request.source.flavor} {self.request.source.version} rejects the configure "
                f"option(s) {rejected.group(1).strip()} of the build `{self.name}`.",
                hint="Drop that option (or the variant that adds it); `sslperf libs variants` lists "
                "what each variant sets.",
            )
        tail = "\n".join("    " + line for line in output.rstrip().splitlines()[-20:])
        raise BuildFailed(f"The {phase} step of the build `{self.name}` failed. Last lines of the log:\n{tail}")


class _OpenSSLBuild(_Job):
    """OpenSSL's Configure + make. The crates.io copies carry no test tree,
    hence `no-tests`, and not the helpers for shared objects and loadable
    modules, hence `no-shared` and (3.x) `no-module`."""

    def run(self) -> variants.ConfigurePlan:
        perl = require_tool("perl", "by OpenSSL's Configure")
        make = require_tool("make", "to build OpenSSL")
        chosen = variants.lookup(self.request.variants, "openssl")
        features = variants.known_features(self.src / "Configure")
        plan = variants.plan(chosen, features, self.request.configure_options, self.request.cflags)
        fips_module = "fips" in self.request.variants
        if fips_module:
            fips.check_source(self.src, self.request.source.version)
        # Crates 3.2+ lack util/providers.num, so 3.x providers go into libcrypto (no-module); the FIPS
        # module is a loadable module by definition, so the fips variant keeps modules on.
        fixed = ["no-shared"] + [f"no-{f}" for f in ("module", "tests") if f in features
                                 and not (f == "module" and fips_module)]
        configure = [perl, self.src / "Configure", _openssl_target(), f"--prefix={self.final_prefix}",
                     f"--openssldir={self.final_prefix / 'ssl'}", "--libdir=lib", *fixed,
                     *plan.options, *plan.cflags]
        plan.options = fixed + plan.options
        launcher = compiler_launcher()
        cc = variants.compilers(chosen, "openssl").get("cc") or os.environ.get("CC", "cc")
        self.step("configure", configure, 600, env={"CC": f"{launcher} {cc}" if launcher else cc})
        makefile = (self.build_dir / "Makefile").read_text(errors="replace")
        target = "build_sw" if re.search(r"^build_sw:", makefile, re.M) else "all"
        dry = run([make, "-n", target], cwd=self.build_dir, timeout=300, keep_output=True)
        total = sum(1 for line in dry.output.splitlines() if COMPILE_LINE.search(line)) or None

        def count(line: str) -> None:
            if COMPILE_LINE.search(line):
                self.progress.advance()

        self.step("compile", [make, f"-j{self.request.jobs}", target], 3600, total=total, on_line=count)
        self.step("install", [make, "install_sw", f"DESTDIR={self.destdir}"], 900)
        if fips_module:
            for argv in fips.install_steps(make, self.destdir):
                self.step("install", argv, 900)
            staged = self.destdir / str(self.final_prefix).lstrip("/")
            output = self.step("self-test", fips.self_test(staged), 300)
            if not fips.passed(output):
                self.fail("self-test", output)
        return plan


class _CMakeBuild(_Job):
    """BoringSSL, AWS-LC and LibreSSL: CMake + Ninja, static libraries."""

    def run(self) -> variants.ConfigurePlan:
        cmake = require_tool("cmake", f"to build {self.request.source.flavor}")
        ninja = require_tool("ninja", f"to build {self.request.source.flavor}")
        chosen = variants.lookup(self.request.variants, self.request.source.flavor)
        plan = variants.plan(chosen, None, self.request.configure_options, self.request.cflags)
        flags = [f for f in plan.cflags if not re.fullmatch(r"-O[0-9sz]", f)]
        level = next((f for f in plan.cflags if re.fullmatch(r"-O[0-9sz]", f)), None)
        settings = [
            "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_INSTALL_PREFIX={self.final_prefix}",
            "-DCMAKE_INSTALL_LIBDIR=lib", "-DBUILD_SHARED_LIBS=OFF", "-DBUILD_TESTING=OFF",
            *_flavor_settings(self.request.source.flavor, self.src),
            *plan.cmake, *plan.options,
        ]
        programs = variants.compilers(chosen, self.request.source.flavor)
        if programs:
            cc, cxx = (require_tool(programs[r], f"to compile {self.request.source.flavor} (`apt-get install clang`)")
                       for r in ("cc", "cxx"))
            settings += [f"-DCMAKE_C_COMPILER={cc}", f"-DCMAKE_CXX_COMPILER={cxx}", f"-DCMAKE_ASM_COMPILER={cc}"]
        if flags:
            settings += [f"-DCMAKE_C_FLAGS={' '.join(flags)}", f"-DCMAKE_CXX_FLAGS={' '.join(flags)}"]
        if compiler_launcher():
            settings += [f"-DCMAKE_{lang}_COMPILER_LAUNCHER={compiler_launcher()}" for lang in ("C", "CXX")]
        if level:   # Release's own -O3 would come last and win, so replace it
            settings += [f"-DCMAKE_C_FLAGS_RELEASE={level} -DNDEBUG", f"-DCMAKE_CXX_FLAGS_RELEASE={level} -DNDEBUG"]
        plan.cmake = settings
        offline = _go_env(self.request.source.flavor)
        self.step("configure", [cmake, "-G", "Ninja", "-S", self.src, "-B", self.build_dir, *settings], 600,
                  env=offline)
        seen = [0]

        def count(line: str) -> None:
            match = _NINJA_STATUS.match(line)
            if match:
                done, total = int(match.group(1)), int(match.group(2))
                if seen[0] == 0:
                    self.progress.phase("compile", total)
                self.progress.advance(done - seen[0])
                seen[0] = done

        self.step("compile", [ninja, "-C", self.build_dir, f"-j{self.request.jobs}"], 3600, on_line=count,
                  env=offline)
        self.step("install", [cmake, "--install", self.build_dir], 900, env={"DESTDIR": str(self.destdir)})
        return plan


class _CargoBuild(_Job):
    """rustls-ffi: cargo builds its static library, with the dependencies its Cargo.lock pins (fetched from
    crates.io), into the work directory; the crate carries its C header."""

    def run(self) -> variants.ConfigurePlan:
        cargo = require_tool("cargo", "to build rustls-ffi")
        chosen = variants.lookup(self.request.variants, self.request.source.flavor)
        plan = variants.plan(chosen, None, self.request.configure_options, self.request.cflags)
        features = variants.cargo_features(chosen)
        manifest = ["--manifest-path", str(self.src / "Cargo.toml")]
        self.step("fetch", [cargo, "fetch", "--locked", *manifest], 900)
        target = self.build_dir / "target"
        seen = [0]

        def count(line: str) -> None:
            if line.lstrip().startswith("Compiling "):
                seen[0] += 1
                self.progress.advance()

        plan.options = ["--no-default-features", "--features", ",".join(features), *plan.options]
        self.step("compile", [cargo, "build", "--release", "--locked", "--lib", *manifest, "--target-dir", str(target),
                              f"-j{self.request.jobs}", *plan.options], 3600, on_line=count,
                  env={"CARGO_TERM_COLOR": "never", "CARGO_TERM_PROGRESS_WHEN": "never"})
        prefix = self.destdir / str(self.final_prefix).lstrip("/")
        (prefix / "lib").mkdir(parents=True)
        (prefix / "include").mkdir()
        shutil.copy2(target / "release" / "librustls_ffi.a", prefix / RUSTLS_ARCHIVE)
        shutil.copy2(self.src / "src" / "rustls.h", prefix / RUSTLS_HEADER)
        return plan


class _AutotoolsBuild(_Job):
    """wolfSSL: its autogen.sh and configure (the crate carries configure.ac, not configure), make, a static
    library. The configure options are sslperf's (variants.WOLFSSL_CONFIGURE), not the crate's."""

    def run(self) -> variants.ConfigurePlan:
        make = require_tool("make", "to build wolfSSL")
        for tool in ("autoreconf", "libtoolize"):
            require_tool(tool, "to configure wolfSSL (its autogen.sh)")
        chosen = variants.lookup(self.request.variants, self.request.source.flavor)
        plan = variants.plan(chosen, None, self.request.configure_options, self.request.cflags)
        plan.options = variants.wolfssl_configure(chosen) + plan.options
        level = next((f for f in plan.cflags if re.fullmatch(r"-O[0-9sz]", f)), "-O3")
        cflags = " ".join([level, *(f for f in plan.cflags if not re.fullmatch(r"-O[0-9sz]", f))])
        # autogen.sh writes into the tree: build from a copy in the work directory
        tree = Path(shutil.copytree(self.src, self.build_dir / "src", symlinks=True))
        self.step("configure", ["sh", "./autogen.sh"], 600, cwd=tree)
        cc = variants.compilers(chosen, "wolfssl").get("cc")
        self.step("configure", ["sh", "./configure", f"--prefix={self.final_prefix}", *plan.options], 600,
                  cwd=tree, env={"CFLAGS": cflags, **({"CC": require_tool(cc, "to compile wolfSSL")} if cc else {})})
        seen = [0]

        def count(line: str) -> None:
            if line.lstrip().startswith("CC "):
                seen[0] += 1
                self.progress.advance()

        self.step("compile", [make, f"-j{self.request.jobs}"], 3600, on_line=count, cwd=tree)
        self.step("install", [make, "install", f"DESTDIR={self.destdir}"], 900, cwd=tree)
        plan.cflags = cflags.split()
        return plan


def _go_env(flavor: str) -> dict[str, str]:
    """How Go builds a FIPS module's tools. AWS-LC FIPS: from the standard library only, never from the
    network. BoringSSL FIPS: its go.mod names a newer Go than Debian's, which Go fetches from its module proxy
    (checksummed against its checksum database) as the go.mod asks, once, into Go's own cache."""
    if flavor == "boringssl-fips":
        return {"GOTOOLCHAIN": "auto", "GOFLAGS": "-mod=mod"}
    return {"GOPROXY": "off", "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod"}


def _flavor_settings(flavor: str, src: Path) -> list[str]:
    if flavor == "boringssl-fips":
        # BoringSSL's FIPS build as its crate makes it: clang for C, C++ and assembly, and Go for the delocator and
        # the integrity hash injected into the module.
        # (variants.compilers names clang for it.)
        require_tool("go", "to build BoringSSL's FIPS module (its delocate and inject_hash tools)")
        return ["-DFIPS=1"]
    if flavor == "aws-lc-fips":
        # The FIPS module is built as the validated source says: its delocator and hash injector are Go
        # programs and its generated assembly comes from Perl, so both are needed here.
        require_tool("go", "to build AWS-LC's FIPS module (its delocate and inject_hash tools)")
        require_tool("perl", "to build AWS-LC's FIPS module")
        return ["-DFIPS=1", f"-DBUILD_TOOL={'ON' if (src / 'tool').is_dir() else 'OFF'}"]
    if flavor == "aws-lc":
        # The crate ships pre-generated sources, so neither Go nor Perl is needed.
        return ["-DDISABLE_GO=ON", "-DDISABLE_PERL=ON",
                f"-DBUILD_TOOL={'ON' if (src / 'tool').is_dir() else 'OFF'}"]
    if flavor == "libressl":
        return ["-DLIBRESSL_TESTS=OFF", "-DLIBRESSL_APPS=ON"]
    return []


def _openssl_target() -> str:
    machine = platform.machine()
    return {"x86_64": "linux-x86_64", "aarch64": "linux-aarch64", "arm64": "linux-aarch64",
            "ppc64le": "linux-ppc64le", "s390x": "linux64-s390x", "riscv64": "linux64-riscv64",
            "i686": "linux-x86", "armv7l": "linux-armv4"}.get(machine, "linux-generic64")


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
    result = footprint.probe(linkage, backend=backend)
    if flavor == "openssl" and request.source.version not in result.version_string:
        raise BuildFailed(f"The build reports `{result.version_string}`, not OpenSSL {request.source.version}.")
    lib_dir = staged_prefix / "lib"
    files = {}
    stems = {"rustls": ("librustls_ffi",), "wolfssl": ("libwolfssl",)}.get(backend, ("libcrypto", "libssl"))
    for stem in stems:
        archive = lib_dir / f"{stem}.a"
        measured = footprint.file_footprint(archive)
        measured.path = f"lib/{archive.name}"
        files[stem] = asdict(measured)
    tools = {}
    for tool, args in (("openssl", ["version"]), ("bssl", None)):
        binary = staged_prefix / "bin" / tool
        if binary.exists():
            tools[tool] = run([binary, *args], timeout=60).output.strip() if args else "present"
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
        "compiler_launcher": _launcher_version(),
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
