"""The steps of a build, one class per build system: OpenSSL's Configure and make, CMake and Ninja (BoringSSL,
AWS-LC, LibreSSL), cargo (rustls-ffi) and autotools (wolfSSL). Each runs its steps in the build's private
directory, shows its phases (configure, compile n/N, install) as it goes, installs with DESTDIR into a staging
tree, and fails with the log's last lines; libs.build chooses one, keys, stages and probes the result."""

from __future__ import annotations

import os
import platform
import re
import shutil
import time
from pathlib import Path
from typing import IO

from sslperf.errors import BuildFailed
from sslperf import paths
from sslperf.libs import fips, targets, variants
from sslperf.libs.model import RUSTLS_ARCHIVE, RUSTLS_HEADER
from sslperf.proc import require_tool, run

# Every OpenSSL build is configured for this one prefix, then moved to its home (libs.relocation rewrites the
# paths its files name): OPENSSLDIR, ENGINESDIR and MODULESDIR are -D options of every libcrypto object, so only
# then do two builds of one source (a bisect's neighbouring commits) compile with the same lines, and ccache finds
# each unchanged object directly (1.1.1w's libraries again: 7 CPU-s, against 30 with a prefix of their own, 73 with no
# ccache; docs/benchmarks.md).
# Under / (only root can create it) and longer than any home, so that a binary's copy is overwritten in place.
BUILD_PREFIX = Path("/sslperf-build-prefix-" + "_" * 210) / "prefix"
VERSION_SCRIPT = Path(__file__).with_name("version_script.pl")   # see _own_version_scripts
COMPILE_LINE = re.compile(r"\s-c\s.*-o\s+\S+\.o\b|\s-o\s+\S+\.o\s.*\s-c\s")
_UNSUPPORTED = re.compile(r"Unsupported options?:\s*(.+)")
_NINJA_STATUS = re.compile(r"^\[(\d+)/(\d+)\]")


def compiler_launcher() -> str | None:
    """ccache, when installed (SSLPERF_CCACHE=0 turns it off): a build then
    compiles only what differs from an earlier one — the neighbouring commits
    of a bisect, the unchanged files of another release — into the same
    objects the compiler would make. It is not part of the cache key."""
    if os.environ.get("SSLPERF_CCACHE", "1") == "0":
        return None
    return shutil.which("ccache")


def launcher_version() -> str | None:
    launcher = compiler_launcher()
    if launcher is None:
        return None
    said = run([launcher, "--version"], timeout=30).output.splitlines()
    return said[0] if said else launcher


def launcher_env(workdir: Path) -> dict[str, str]:
    """ccache's settings for a build in `workdir`: its own store in sslperf's
    cache (or SSLPERF_CCACHE_DIR, which the test command keeps outside the
    checkout, as a CI keeps its compiler cache between runs), and every path
    under `workdir` (the source copied to src/, the build in build/) taken
    relative, so the same file of another build — another commit of a bisect,
    another release — reads the same to ccache."""
    if compiler_launcher() is None:
        return {}
    store = os.environ.get("SSLPERF_CCACHE_DIR") or str(paths.subdir("ccache"))
    # Depend mode: a miss costs the compile alone (not a preprocessor run besides, +38% on OpenSSL 1.1.1w) and a
    # hit is found from the compile line and the headers' contents; the headers' times are not checked because
    # every build copies its source and generates headers just before it compiles (ccache would otherwise take
    # each header for one being written, and skip the direct lookup for every file).
    return {"CCACHE_DIR": store, "CCACHE_BASEDIR": str(workdir), "CCACHE_NOHASHDIR": "1", "CCACHE_MAXSIZE": "4G",
            "CCACHE_DEPEND": "1", "CCACHE_SLOPPINESS": "include_file_ctime,include_file_mtime"}


def job(request, source_root: Path, workdir: Path, final_prefix: Path, log: IO[str], progress, phases: dict,
        launcher_env: dict[str, str], name: str) -> "_Job":
    """The build system's job for `request` (OpenSSL's Configure unless the source says otherwise)."""
    kind = {"cmake": _CMakeBuild, "cargo": _CargoBuild, "autotools": _AutotoolsBuild}.get(
        request.source.build_system, _OpenSSLBuild)
    return kind(request, source_root, workdir, final_prefix, log, progress, phases, launcher_env, name)


class _Job:
    """Shared steps of a build: run a step, fail with the log's tail."""

    def __init__(self, request, source_root: Path, workdir: Path, final_prefix: Path, log: IO[str], progress,
                 phases: dict[str, float], launcher_env: dict[str, str], name: str):
        self.request = request
        self.src = source_root
        self.build_dir = workdir / "build"
        self.build_dir.mkdir()
        self.destdir = workdir / "destdir"
        self.final_prefix = final_prefix
        self.prefix = final_prefix              # what the build is configured for (installed under destdir/)
        self.log = log
        self.progress = progress
        self.phases = phases
        self.name = name
        self.launcher_env = launcher_env        # the compiler cache's settings (libs.build)

    def step(self, phase: str, cmd: list, timeout: float, *, total: int | None = None,
             on_line=None, env: dict | None = None, cwd: Path | None = None) -> str:
        self.progress.phase(phase, total)
        mark = time.monotonic()
        result = run(cmd, cwd=cwd or self.build_dir, timeout=timeout, log=self.log, on_line=on_line,
                     env={**os.environ, **self.launcher_env, **(env or {})})
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
    modules, hence `no-shared` and (3.x) `no-module`. Configured for
    BUILD_PREFIX, then moved to its home (libs.build)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.prefix = BUILD_PREFIX

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
        shared = "shared" in self.request.variants
        fixed = ([] if shared else ["no-shared"]) + [f"no-{f}" for f in ("module", "tests") if f in features
                                                     and not (f == "module" and fips_module)]
        target = targets.of(self.request.variants)
        configure = [perl, self.src / "Configure", target.configure if target else _openssl_target(),
                     f"--prefix={self.prefix}",
                     f"--openssldir={self.prefix / 'ssl'}", "--libdir=lib", *fixed,
                     *plan.options, *plan.cflags]
        plan.options = fixed + plan.options
        launcher = compiler_launcher()
        cc = variants.compilers(chosen, "openssl").get("cc") or os.environ.get("CC", "cc")
        cross = {tool.upper(): target.tool(tool) for tool in ("ar", "ranlib", "nm")} if target else {}
        if target and target.exe:
            cross["RC"] = target.tool("windres")        # Windows resources (the version info in openssl.exe)
        self.step("configure", configure, 600, env={"CC": f"{launcher} {cc}" if launcher else cc, **cross})
        if shared and not (self.src / "util" / "mkdef.pl").exists():
            _own_version_scripts(self.build_dir / "Makefile")
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
            staged = self.destdir / str(self.prefix).lstrip("/")
            output = self.step("self-test", fips.self_test(staged), 300)
            if not fips.passed(output):
                self.fail("self-test", output)
        return plan


def _own_version_scripts(makefile: Path) -> None:
    """A shared build of a source without OpenSSL's util/mkdef.pl (the openssl-src crate strips it from 3.2 on): the
    Makefile's rules for libcrypto.ld and libssl.ld call sslperf's own writer of the same version scripts instead."""
    text = makefile.read_text(errors="replace")
    makefile.write_text(text.replace("$(SRCDIR)/util/mkdef.pl", str(VERSION_SCRIPT)))


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
        self._install_by_hand()
        if "shared" in self.request.variants:
            self._shared(cmake, ninja, settings, offline)
        return plan

    def _install_by_hand(self) -> None:
        """A BoringSSL snapshot without install rules (boring-sys 4's: `cmake --install` installs nothing): what its
        later rules install, copied from the build — the archives, the public headers and the `bssl` tool."""
        prefix = self.destdir / str(self.final_prefix).lstrip("/")
        if (prefix / "lib" / "libssl.a").exists():
            return
        archives = {p.name: p for p in sorted(self.build_dir.rglob("lib*.a")) if p.name in ("libssl.a", "libcrypto.a")}
        # The headers: include/ of the tree, or of its src/ (the layout of BoringSSL's generated CMake wrapper).
        include = next((d for d in (self.src / "include", self.src / "src" / "include") if (d / "openssl").is_dir()),
                       None)
        if len(archives) != 2 or include is None:
            self.fail("install", f"`cmake --install` installed no libssl.a, and the build has no libssl.a, libcrypto.a "
                                 f"and include/openssl to copy (archives found: {', '.join(archives) or 'none'})")
        (prefix / "lib").mkdir(parents=True, exist_ok=True)
        for name, archive in archives.items():
            shutil.copy2(archive, prefix / "lib" / name)
        shutil.copytree(include, prefix / "include", dirs_exist_ok=True)
        tool = next((p for p in self.build_dir.rglob("bssl") if p.is_file() and os.access(p, os.X_OK)), None)
        if tool is not None:
            (prefix / "bin").mkdir(exist_ok=True)
            shutil.copy2(tool, prefix / "bin" / "bssl")

    def _shared(self, cmake: str, ninja: str, settings: list[str], env: dict[str, str] | None) -> None:
        """The `shared` variant: the same sources built again as shared libssl and libcrypto (position-independent,
        so nothing of the static build is reused), put beside the static archives the harness links."""
        if self.request.source.flavor.endswith("-fips"):
            raise BuildFailed(f"The `shared` variant is not built for {self.request.source.flavor}: its FIPS module "
                              "is validated as the static build makes it.",
                              hint=f"Build {self.request.source.flavor.removesuffix('-fips')}+shared instead.")
        shared = self.build_dir.parent / "build-shared"
        again = [s for s in settings if not s.startswith("-DBUILD_SHARED_LIBS=")]
        self.step("configure", [cmake, "-G", "Ninja", "-S", self.src, "-B", shared, *again, "-DBUILD_SHARED_LIBS=ON",
                                "-DCMAKE_SKIP_BUILD_RPATH=ON"], 600, env=env)
        self.step("compile", [ninja, "-C", shared, f"-j{self.request.jobs}", "ssl", "crypto"], 3600, env=env)
        lib_dir = self.destdir / str(self.final_prefix).lstrip("/") / "lib"
        lib_dir.mkdir(parents=True, exist_ok=True)
        made = sorted(p for p in shared.rglob("lib*.so*") if p.name.split(".so")[0] in ("libssl", "libcrypto"))
        if not {p.name.split(".so")[0] for p in made} >= {"libssl", "libcrypto"}:
            self.fail("compile", f"the shared build made no libssl and libcrypto shared objects in {shared}")
        for found in made:          # the files and the soname links between them, as the build made them
            target = lib_dir / found.name
            if found.is_symlink():
                target.symlink_to(os.readlink(found))
            else:
                shutil.copy2(found, target)


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
