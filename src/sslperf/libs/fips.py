"""OpenSSL's FIPS provider: building the module (the `fips` variant),
installing it with its self-tested configuration, and running a library
with a FIPS module — its own, or another build's (the validated 3.0.8 or
3.1.2 module inside a newer library, as the OpenSSL tuning talk advises).

A build with `enable-fips` installs `lib/ossl-modules/fips.so`; then the
build's own `openssl fipsinstall` runs the module's self-tests and writes
`ssl/fipsmodule.cnf` (the module's MAC and the test results). A failing
self-test fails the build. At run time the harness loads a private
configuration that includes that file and activates only the FIPS and base
providers, with fips=yes as the default property, and refuses to run if the
module does not come up: never a silent fall-back to the default provider.
"""

from __future__ import annotations

import atexit
import dataclasses
from pathlib import Path

from sslperf import tempdirs
from sslperf.errors import SslperfError
from sslperf.libs import installed, versions
from sslperf.libs.model import Lib

MODULE = Path("lib/ossl-modules/fips.so")
MODULE_CONFIG = Path("ssl/fipsmodule.cnf")
# What OpenSSL's FIPS module build needs beyond the library's own sources.
BUILD_HELPERS = ("util/mkdef.pl", "util/mk-fipsmodule-cnf.pl", "util/providers.num")
VALIDATED = ("3.0.8", "3.0.9", "3.1.2")          # the releases whose modules carry a FIPS 140 certificate


def check_source(source_root: Path, version: str) -> None:
    """Refuse, before configuring, a tree that cannot build the FIPS module."""
    if versions.sort_key(version) < versions.sort_key("3.0.0"):
        raise SslperfError(f"The fips variant needs OpenSSL 3.0 or later; {version} has no providers.",
                           hint=f"Build one of the validated modules instead, e.g. openssl-{VALIDATED[0]}+fips.")
    missing = [name for name in BUILD_HELPERS if not (source_root / name).exists()]
    if missing:
        raise SslperfError(
            f"The source of OpenSSL {version} lacks {', '.join(missing)}, which OpenSSL's Configure needs to "
            "build the FIPS module (the openssl-src crate strips them from 3.2 on; its 3.0.x and 3.1.x copies "
            "have them).",
            hint=f"Build a 3.0 or 3.1 module (the validated ones are {', '.join(VALIDATED)}: "
                 f"openssl-{VALIDATED[-1]}+fips) and load it into this version with "
                 "`--provider fips --fips-module openssl-3.1.2+fips`; or build from a full release tarball "
                 "with --tarball.")


def install_steps(make: str, destdir: Path) -> list[list[str]]:
    """The make targets that install the module beside the libraries."""
    return [[make, "install_fips", f"DESTDIR={destdir}"]]


def self_test(staged_prefix: Path) -> list[str]:
    """`openssl fipsinstall` on the staged module: runs its self-tests and writes its fipsmodule.cnf."""
    return [str(staged_prefix / "bin" / "openssl"), "fipsinstall", "-module", str(staged_prefix / MODULE),
            "-out", str(staged_prefix / MODULE_CONFIG)]


def passed(output: str) -> bool:
    return "INSTALL PASSED" in output


def has_module(lib: Lib) -> bool:
    return lib.prefix is not None and (lib.prefix / MODULE).exists() and (lib.prefix / MODULE_CONFIG).exists()


_CONFIG_DIRS: list[Path] = []


def _private_dir() -> Path:
    """A directory only this user can read, removed when sslperf exits."""
    path = tempdirs.make("fips")
    if not _CONFIG_DIRS:
        atexit.register(lambda: [tempdirs.remove(p) for p in _CONFIG_DIRS])
    _CONFIG_DIRS.append(path)
    return path


def config_text(module_lib: Lib) -> str:
    """The configuration the harness loads: the module's own fipsmodule.cnf,
    the FIPS and base providers only (base: key encoders and decoders)."""
    return (f"config_diagnostics = 1\nopenssl_conf = openssl_init\n"
            f".include {module_lib.prefix / MODULE_CONFIG}\n\n"
            "[openssl_init]\nproviders = provider_sect\n\n"
            "[provider_sect]\nfips = fips_sect\nbase = base_sect\n\n"
            "[base_sect]\nactivate = 1\n")


def with_module(lib: Lib, module_lib: Lib) -> Lib:
    """`lib` run with the FIPS module of `module_lib` (a +fips build, maybe `lib` itself)."""
    if lib.base is not None:
        raise SslperfError(f"{lib.name} already runs with a FIPS module; name each module once.",
                           hint="Use either NAME:fips=MODULE or --provider fips --fips-module MODULE, not both.")
    if lib.flavor not in ("openssl", "system") or versions.sort_key(lib.version) < versions.sort_key("3.0.0"):
        raise SslperfError(f"{lib.name} cannot load a FIPS provider: only OpenSSL 3.0 and later have providers.",
                           hint="Leave it out of --provider fips runs, or measure it with --provider default.")
    if not has_module(module_lib):
        raise SslperfError(f"{module_lib.name} has no FIPS module ({MODULE} and {MODULE_CONFIG}).",
                           hint=f"Build one with the fips variant: `sslperf libs build openssl-{VALIDATED[-1]}+fips`.")
    config = _private_dir() / "openssl-fips.cnf"
    config.write_text(config_text(module_lib))
    name = f"{lib.name}:fips-{module_lib.version}"
    env = {**lib.env, "SSLPERF_FIPS_CONFIG": str(config), "OPENSSL_CONF": str(config),
           "OPENSSL_MODULES": str(module_lib.prefix / MODULE.parent)}
    return dataclasses.replace(lib, name=name, env=env, base=lib.base or lib.name,
                               spec=f"{lib.name}:fips={module_lib.name}")


def columns(names: tuple[str, ...], providers: tuple[str, ...] = (), fips_modules: tuple[str, ...] = ()) -> list[Lib]:
    """The libraries named (default: the system one) as a run's columns, each
    once, under each provider asked for. A name may carry its provider:
    `openssl-3.6:fips` (its own FIPS module) or
    `openssl-3.6:fips=openssl-3.0.8+fips` (another build's)."""
    libs = [from_spec(name, installed.find) if ":" in name else installed.find(name) for name in names or ("system",)]
    if len({lib.name for lib in libs}) != len(libs):
        raise SslperfError("The same library is named twice; name each library once.")
    if not providers and not fips_modules:
        return libs
    providers = providers or ("fips",)
    if fips_modules and "fips" not in providers:
        raise SslperfError("--fips-module applies to --provider fips, which was not asked for.",
                           hint="Add --provider fips (and --provider default to compare with the default provider).")
    return provider_views(libs, providers, [installed.find(name) for name in fips_modules])


def from_spec(name: str, find) -> Lib:
    """`NAME:fips` (the library's own module) or `NAME:fips=LIB` (that +fips build's module), from --lib."""
    base, _, spec = name.partition(":")
    kind, _, module = spec.partition("=")
    if kind != "fips":
        raise SslperfError(f"`{name}` names no provider sslperf knows after the `:`.",
                           hint="Write NAME:fips (its own FIPS module) or NAME:fips=openssl-3.1.2+fips (another "
                                "build's module).")
    lib = find(base)
    return with_module(lib, find(module) if module else lib)


def provider_views(libs: list[Lib], providers: tuple[str, ...], modules: list[Lib]) -> list[Lib]:
    """The columns of a run: each library under each provider asked for —
    `default` as it is, `fips` with each --fips-module (or, without one, its
    own module)."""
    views: list[Lib] = []
    for lib in libs:
        for provider in providers or ("default",):
            if provider == "default":
                views.append(lib)
                continue
            chosen = modules or [lib]
            views += [with_module(lib, module) for module in chosen]
    names = [v.name for v in views]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise SslperfError(f"The run would measure {', '.join(duplicated)} twice.",
                           hint="Name each library and FIPS module once.")
    return views


def describe(provider: dict) -> str:
    """`FIPS module 3.0.8 (OpenSSL FIPS Provider; 2 self-tests passed as it loaded)`."""
    text = f"FIPS module {provider.get('version', '?')} ({provider.get('description', '')}"
    if "self_tests_passed" in provider:
        text += f"; {provider['self_tests_passed']} self-tests passed as it loaded"
    if "self_test" in provider:            # AWS-LC: BORINGSSL_self_test(), its known-answer tests run again
        text += f"; its self-test {provider['self_test']}"
    return text + ")"
