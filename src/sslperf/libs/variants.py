"""Named build variants and the configure options each one means on a given
source tree.

Variants combine with `+` (`openssl-3.3+nistp+minimal+Os` is the OpenSSL
tuning talk's "minimal TLS" build). The `minimal` list is the talk's; each
version accepts only some of those `no-*` options, so the list is filtered
against the `@disablables` table of that version's own `Configure` script and
the options it does not know are recorded as skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sslperf import suggest
from sslperf.errors import BuildFailed, SslperfError
from sslperf.libs import targets

# The OpenSSL tuning talk, "Minimal TLS implementation with reasonable compatibility and performance".
MINIMAL_DISABLE = (
    "argon2 aria async bf blake2 camellia cast cmp cms comp deprecated des dgram dh dsa "
    "ec2m engine gost http idea legacy md4 mdc2 multiblock nextprotoneg ocb ocsp quic rc2 "
    "rc4 rmd160 scrypt seed siphash siv sm2 sm3 sm4 srp srtp ts whirlpool"
).split()


@dataclass(frozen=True)
class Variant:
    name: str
    summary: str
    configure: tuple[str, ...] = ()     # OpenSSL Configure options
    optional: bool = False              # drop options the version does not know, instead of failing
    cflags: tuple[str, ...] = ()        # extra compiler flags, every flavor
    opt_level: str | None = None        # replaces the default -O3
    cmake: tuple[str, ...] = ()         # -D settings for CMake-built flavors
    openssl_only: bool = False
    cargo_features: tuple[str, ...] = ()   # rustls-ffi's cargo features
    rustls_only: bool = False
    wolfssl: tuple[str, ...] = ()           # wolfSSL configure options (a variant with none does not apply)
    compiler: str | None = None             # "clang": clang and clang++ instead of $CC/$CXX (cc, c++)

# wolfSSL's configure for every build: TLS 1.3 and 1.2 with the groups, certificates and suites the TLS cases use,
# tickets, DTLS 1.2 and 1.3, the primitives the wolfCrypt families measure, and the speed-relevant code this CPU can
# run (the assembly options are what the `no-asm` variant takes away).
WOLFSSL_CONFIGURE = ("--enable-static", "--disable-shared", "--enable-tls13", "--enable-curve25519",
                     "--enable-ed25519", "--enable-aesgcm", "--enable-chacha", "--enable-poly1305", "--enable-sni",
                     "--enable-supportedcurves", "--enable-session-ticket", "--enable-sp=yes,4096", "--enable-mlkem",
                     "--enable-mldsa", "--enable-sha3", "--enable-dtls", "--enable-dtls13", "--enable-harden",
                     "--enable-keygen", "--disable-examples", "--disable-crypttests", "--disable-benchmark")
WOLFSSL_ASM = ("--enable-sp-asm", "--enable-intelasm", "--enable-aesni")

# rustls-ffi's crypto provider when no variant names one: aws-lc-rs, as the crate's default. Its `prefer-post-quantum`
# default is left off (the pq-first variant), so rustls negotiates X25519 as the other libraries' x25519 rows do.
RUSTLS_DEFAULT_FEATURES = ("aws-lc-rs",)
RUSTLS_PROVIDERS = ("ring", "aws-lc-rs")


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant("default", "the library's own defaults (-O3, assembly on)"),
        Variant(
            "minimal",
            "the OpenSSL tuning talk's minimal TLS build: disables the algorithms and features a TLS server rarely needs",
            configure=tuple(f"no-{f}" for f in MINIMAL_DISABLE),
            optional=True,
            openssl_only=True,
        ),
        Variant("Os", "optimise for size (-Os instead of -O3)", opt_level="-Os", wolfssl=("CFLAGS",)),
        Variant("O2", "-O2 instead of -O3", opt_level="-O2", wolfssl=("CFLAGS",)),
        Variant(
            "nistp",
            "enable-ec_nistp_64_gcc_128: fast constant-time P-224/P-256/P-521 (64-bit little-endian only)",
            configure=("enable-ec_nistp_64_gcc_128",),
            openssl_only=True,
        ),
        Variant("no-asm", "C code only, no assembly: shows what the assembly is worth",
                configure=("no-asm",), cmake=("-DOPENSSL_NO_ASM=1",), wolfssl=("--disable-asm",)),
        Variant("debug-symbols", "-O3 with -g, so profiles name real functions", cflags=("-g",), wolfssl=("CFLAGS",)),
        Variant("clang", "compiled by clang instead of the system's cc (gcc): the compiler's share of a difference, "
                "e.g. beside boringssl-fips, which only clang builds", compiler="clang", wolfssl=("CC",)),
        Variant("fips", "enable-fips: OpenSSL 3.x with its FIPS provider module (fips.so), self-tested by "
                "`openssl fipsinstall` at build time; run it with `--provider fips` (also inside another 3.x "
                "library: `--fips-module`)", configure=("enable-fips",), openssl_only=True),
        Variant("shared", "shared libssl and libcrypto beside the static ones, for `sslperf exec` (a program given the "
                "library through the dynamic loader); the harness still links the static ones. OpenSSL and the "
                "CMake-built libraries (BoringSSL and AWS-LC name theirs libssl.so without a version: only programs "
                "built against them can be given them)"),
        Variant("ktls", "enable-ktls: kernel TLS (SSL_OP_ENABLE_KTLS) for `sslperf tls --transfer --loopback`; "
                "used only where the kernel has the tls module", configure=("enable-ktls",), openssl_only=True),
        Variant("aarch64", "cross-compiled for 64-bit ARM Linux by Debian's cross tool chain "
                "(gcc-aarch64-linux-gnu): measured on an ARM machine by a probe (`sslperf probe build`), never here; "
                "its check runs under qemu-user", openssl_only=True),
        Variant("mingw", "cross-compiled for 64-bit Windows by MinGW-w64 (gcc-mingw-w64-x86-64), as seed 003 built "
                "openssl.exe: measured on Windows by a probe (its `openssl.exe speed`), never here; its check runs "
                "under Wine", openssl_only=True),
        Variant("ring", "rustls with the ring crypto provider", cargo_features=("ring",), rustls_only=True),
        Variant("aws-lc-rs", "rustls with the aws-lc-rs crypto provider (the default)", cargo_features=("aws-lc-rs",),
                rustls_only=True),
        Variant("pq-first", "rustls: X25519MLKEM768 as the first key exchange (the crate's prefer-post-quantum; "
                "aws-lc-rs only)", cargo_features=("aws-lc-rs", "prefer-post-quantum"), rustls_only=True),
    )
}


def lookup(names: tuple[str, ...], flavor: str) -> list[Variant]:
    """The Variant objects for `names`, checked for typos and conflicts."""
    chosen = []
    for name in names:
        variant = VARIANTS.get(name)
        if variant is None:
            meant = suggest.did_you_mean(name, VARIANTS)
            raise SslperfError(
                f"`{name}` is not a build variant.",
                hint=(f"{meant} " if meant else "") + f"Variants: {', '.join(VARIANTS)}; combine them with `+`, "
                "e.g. `openssl-3.3+minimal+Os`.",
            )
        if variant.openssl_only and flavor != "openssl":
            raise SslperfError(
                f"The `{name}` variant uses OpenSSL's Configure options and does not apply to {flavor}.",
                hint="For CMake-built libraries use `Os`, `O2`, `no-asm`, `debug-symbols` or `shared`.",
            )
        if flavor == "wolfssl" and not variant.wolfssl and name != "default":
            raise SslperfError(
                f"The `{name}` variant does not apply to wolfssl.",
                hint="wolfSSL builds take `no-asm` (without its Intel assembly, AES-NI and SP assembly), `Os`, "
                "`O2` or `debug-symbols`.",
            )
        if (flavor == "rustls") != variant.rustls_only and name != "default":
            raise SslperfError(
                f"The `{name}` variant does not apply to {flavor}.",
                hint="rustls builds take `ring`, `aws-lc-rs` or `pq-first` (its crypto provider, built by cargo); "
                "the other variants are for the C libraries.",
            )
        chosen.append(variant)
    providers = {f for v in chosen for f in v.cargo_features if f in RUSTLS_PROVIDERS}
    if len(providers) > 1:
        raise SslperfError(f"Variants {' and '.join(sorted(providers))} each choose rustls' crypto provider; pick one.",
                           hint="`pq-first` needs aws-lc-rs (ring has no ML-KEM).")
    crossed = [v.name for v in chosen if v.name in targets.CROSS]     # built for another machine (libs.targets)
    if len(crossed) > 1:
        raise SslperfError(f"Variants {' and '.join(crossed)} each choose the machine the build runs on; pick one.")
    levels = {v.opt_level for v in chosen if v.opt_level}
    if len(levels) > 1:
        raise SslperfError(f"Variants {' and '.join(sorted(levels))} both set the optimisation level; pick one.")
    return [v for v in chosen if v.name != "default"]


def canonical_names(names: tuple[str, ...]) -> tuple[str, ...]:
    """Variant names in the table's order, duplicates and `default` dropped,
    so `+Os+minimal` and `+minimal+Os` are the same build (and rustls' default
    provider, `aws-lc-rs`, is the build without it)."""
    order = list(VARIANTS)
    unique = {n for n in names if n not in ("default", "aws-lc-rs")}
    return tuple(sorted(unique, key=lambda n: order.index(n) if n in order else len(order)))


_DISABLABLES = re.compile(r"my\s+@disablables\s*=\s*\((.*?)\);", re.S)


def known_features(configure_script: Path) -> set[str]:
    """The feature names that `no-X` / `enable-X` accept in this Configure."""
    text = configure_script.read_text(errors="replace")
    block = _DISABLABLES.search(text)
    if not block:
        # The tree's fault, like a failing configure step: a bisect or track skips such a commit.
        raise BuildFailed(f"Cannot find the @disablables table in {configure_script}; is this an OpenSSL source tree?")
    return set(re.findall(r'"([A-Za-z0-9_\-]+)"', block.group(1)))


def applies_to(variant: Variant) -> str:
    """Which libraries take `variant`, as `libs variants` lists it (lookup() enforces the same)."""
    if variant.name == "default":
        return "all"
    if variant.openssl_only:
        return "OpenSSL"
    if variant.rustls_only:
        return "rustls"
    return "all but rustls" if variant.wolfssl else "OpenSSL, BoringSSL, AWS-LC, LibreSSL"


def wolfssl_configure(chosen: list[Variant]) -> list[str]:
    """wolfSSL's configure options for these variants (CFLAGS go through ConfigurePlan.cflags)."""
    extra = [o for v in chosen for o in v.wolfssl if o not in ("CFLAGS", "CC")]
    asm = [] if "--disable-asm" in extra else list(WOLFSSL_ASM)
    return [*WOLFSSL_CONFIGURE, *asm, *extra]


def compilers(chosen: list[Variant], flavor: str) -> dict[str, str]:
    """The C and C++ compilers a build uses in place of $CC and $CXX, or {} for those. BoringSSL's FIPS module is
    always clang's: its build requires it."""
    if flavor == "boringssl-fips" or any(v.compiler == "clang" for v in chosen):
        return {"cc": "clang", "cxx": "clang++"}
    target = targets.of([v.name for v in chosen])
    if target is not None:
        return {"cc": f"{target.tools}gcc", "cxx": f"{target.tools}g++"}
    return {}


def cargo_features(chosen: list[Variant]) -> list[str]:
    """rustls-ffi's cargo features for these variants (its provider, and whether post-quantum comes first)."""
    features = [f for v in chosen for f in v.cargo_features]
    if not any(f in RUSTLS_PROVIDERS for f in features):
        features = [*RUSTLS_DEFAULT_FEATURES, *features]
    return list(dict.fromkeys(features))


@dataclass
class ConfigurePlan:
    options: list[str]          # Configure options, in order
    cflags: list[str]           # compiler flags (appended to Configure's own)
    skipped: list[str]          # optional options this version does not know
    cmake: list[str]


def plan(variants: list[Variant], features: set[str] | None, extra_options: list[str],
         extra_cflags: list[str]) -> ConfigurePlan:
    """Options for a build of these variants. `features` is the version's
    Configure table (None for CMake flavors)."""
    options: list[str] = []
    skipped: list[str] = []
    cmake: list[str] = []
    cflags: list[str] = []
    for variant in variants:
        for option in variant.configure:
            feature = option.split("-", 1)[1]
            if features is not None and feature not in features:
                if variant.optional:
                    skipped.append(option)
                    continue
                raise SslperfError(
                    f"This OpenSSL version rejects `{option}` (asked for by the `{variant.name}` variant): "
                    "its Configure does not know that feature.",
                    hint="Choose another variant or version; `sslperf libs variants` describes each.",
                )
            if option not in options:
                options.append(option)
        cmake.extend(variant.cmake)
        cflags.extend(variant.cflags)
        if variant.opt_level:
            cflags.append(variant.opt_level)
    options.extend(o for o in extra_options if o not in options)
    cflags.extend(extra_cflags)
    return ConfigurePlan(options, cflags, skipped, cmake)
