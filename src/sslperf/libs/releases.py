"""The releases on offer: which library flavors sslperf can build, the versions their
sources offer, and how a short name such as `openssl-3.3+minimal` resolves.

A name is FLAVOR[-VERSION][+VARIANT…]. VERSION may be a prefix (`3.3` is the
newest 3.3.x on offer); no VERSION means the newest release. For BoringSSL
and AWS-LC, which have no release numbers of their own on crates.io, VERSION
is the version of the `boring-sys` / `aws-lc-sys` / `wolfssl-sys` crate that carries them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sslperf import suggest
from sslperf.errors import SslperfError, UnknownLibrary
from sslperf.libs import crates, variants, versions


@dataclass(frozen=True)
class Flavor:
    name: str
    title: str
    crate: str
    crate_subdir: str          # where the library's source tree sits in the crate
    build_system: str          # "openssl" (Configure + make), "cmake" or "cargo"

    def library_version(self, release: crates.CrateRelease) -> str:
        # openssl-src writes the OpenSSL version as build metadata: 300.3.2+3.3.2
        if self.build_system == "openssl" and release.build_metadata:
            return release.build_metadata
        return release.semver


FLAVORS: dict[str, Flavor] = {
    f.name: f
    for f in (
        Flavor("openssl", "OpenSSL", "openssl-src", "openssl", "openssl"),
        Flavor("boringssl", "BoringSSL", "boring-sys", "deps/boringssl", "cmake"),
        Flavor("aws-lc", "AWS-LC", "aws-lc-sys", "aws-lc", "cmake"),
        # AWS-LC's FIPS module (the validated source, built with -DFIPS=1; needs Go and Perl).
        Flavor("aws-lc-fips", "AWS-LC FIPS", "aws-lc-fips-sys", "aws-lc", "cmake"),
        # BoringSSL's FIPS module: the same source built with -DFIPS=1 by clang (its integrity check and delocation).
        Flavor("boringssl-fips", "BoringSSL FIPS", "boring-sys", "deps/boringssl", "cmake"),
        # rustls through its C API; VERSION is rustls-ffi's (0.15.7 carries rustls 0.23.46).
        Flavor("rustls", "rustls (rustls-ffi)", "rustls-ffi", ".", "cargo"),
        # wolfSSL from the source the wolfssl-sys crate carries, configured by sslperf (autotools);
        # VERSION is the crate's (5.3.0 carries wolfSSL 5.9.4).
        Flavor("wolfssl", "wolfSSL", "wolfssl-sys", "wolfssl-src", "autotools"),
    )
}
# Flavors that can be built from a local directory, tarball or git tag too.
SOURCE_FLAVORS = ("openssl", "libressl", "boringssl", "aws-lc")


@dataclass(frozen=True)
class LibName:
    flavor: str
    version: str | None = None
    variants: tuple[str, ...] = field(default_factory=tuple)

    @property
    def base(self) -> str:
        return f"{self.flavor}-{self.version}" if self.version else self.flavor

    def __str__(self) -> str:
        return self.base + "".join(f"+{v}" for v in self.variants)


def parse_name(text: str) -> LibName:
    """Split `openssl-3.3+minimal+Os` into flavor, version and variants.
    Names of other flavors (`system`, user-registered names) keep the whole
    base as their flavor."""
    base, *variant_parts = text.strip().split("+")
    if not base or any(not v for v in variant_parts):
        raise UnknownLibrary(
            f"`{text}` is not a library name.",
            hint="Names look like `openssl-3.3`, `openssl-1.1.1w+minimal`, `boringssl` or `system`; "
            "see `sslperf libs available`.",
        )
    for flavor in sorted(set(FLAVORS) | set(SOURCE_FLAVORS), key=len, reverse=True):
        if base == flavor:
            return LibName(flavor, None, tuple(variant_parts))
        if base.startswith(flavor + "-") and base[len(flavor) + 1:][:1].isdigit():
            return LibName(flavor, base[len(flavor) + 1:], tuple(variant_parts))
    return LibName(base, None, tuple(variant_parts))


@dataclass(frozen=True)
class Release:
    """One library version that a source offers."""

    flavor: str
    version: str
    crate: crates.CrateRelease

    @property
    def origin(self) -> str:
        return f"crate {self.crate.crate} {self.crate.crate_version}"

    @property
    def digest(self) -> str:
        return self.crate.cksum


def offered(flavor: str, refresh: bool = False) -> list[Release]:
    """Every version of `flavor` on crates.io, oldest first; where several
    crate versions carry the same library version, the newest crate wins."""
    spec = FLAVORS[flavor]
    chosen: dict[str, crates.CrateRelease] = {}
    for release in crates.releases(spec.crate, refresh=refresh):
        if release.yanked or (spec.build_system == "openssl" and not release.build_metadata):
            continue   # the first openssl-src crates did not say which OpenSSL they carry
        version = spec.library_version(release)
        current = chosen.get(version)
        if current is None or versions.sort_key(release.semver) > versions.sort_key(current.semver):
            chosen[version] = release
    ordered = sorted(chosen, key=versions.sort_key)
    return [Release(flavor, v, chosen[v]) for v in ordered]


def series_summary(found: list[Release]) -> str:
    """`1.1.1w, 3.0.8, 3.1.4, …`: the newest version of each minor series."""
    newest: dict[str, str] = {}
    for release in found:   # oldest first, so the last one of a series wins
        newest[versions.series(release.version)] = release.version
    return ", ".join(newest.values())


def resolve(name: LibName) -> Release:
    """The release that `name` means, or an error listing what exists (and the names on offer close to it)."""
    if name.flavor not in FLAVORS:
        raise UnknownLibrary(
            f"`{name.base}` is not a library sslperf knows how to fetch.",
            hint=_meant(name) + f"Known flavors: {', '.join(FLAVORS)} (plus `system` and names added with "
            "`sslperf libs add`); `sslperf libs available` lists every version.",
        )
    found = offered(name.flavor)
    version = versions.newest_matching(name.version, [r.version for r in found])
    if version is None:
        title = FLAVORS[name.flavor].title
        raise UnknownLibrary(
            f"No {title} version matches `{name.version}`.",
            hint=_meant(name) + f"Versions on offer (newest of each series): {series_summary(found)}. "
            "`sslperf libs available` lists them all.",
        )
    return next(r for r in found if r.version == version)


def on_offer(name: LibName) -> bool | None:
    """Whether `sslperf libs build NAME` would find `name`'s release (and take its variants); None when the
    index can be neither read nor fetched (offline, with no cached copy), so that nobody can tell."""
    if name.flavor not in FLAVORS:
        return False
    try:
        variants.lookup(name.variants, name.flavor)
    except SslperfError:
        return False
    try:
        found = offered(name.flavor)
    except SslperfError:
        return None
    return versions.newest_matching(name.version, [r.version for r in found]) is not None


def close_offers(name: LibName) -> list[str]:
    """Names on offer close to `name` (one that is not): its flavor, version and variants each replaced by the
    close ones sslperf knows (`opensll-3.6` → openssl-3.6, `openssl-3.6.9` → openssl-3.6.3, `+minmal` →
    +minimal), keeping only names whose release is on offer and that take their variants."""
    if name.flavor in FLAVORS:
        flavors, version = [name.flavor], name.version
    else:               # parse_name keeps a base it does not know whole: `opensll-3.6`
        typed = re.fullmatch(r"(.+?)(?:-(\d.*))?", name.flavor)
        flavors, version = suggest.close(typed.group(1), FLAVORS, n=2), typed.group(2)
    kinds = [[v] if v in variants.VARIANTS else suggest.close(v, variants.VARIANTS, n=1) for v in name.variants]
    if not all(kinds):
        return []           # a variant like no other: no name on offer means it
    out = []
    for flavor in flavors:
        try:
            found = [r.version for r in offered(flavor)]
        except SslperfError:
            continue        # offline, and no copy of the index: nothing to offer from it
        if version is None or versions.newest_matching(version, found):
            shown = [version]
        else:
            series = {versions.series(v, semver=FLAVORS[flavor].build_system == "cmake") for v in found}
            shown = suggest.close(version, [*series, *found], n=1)
        for v in shown:
            chosen = tuple(kind[0] for kind in kinds)
            candidate = LibName(flavor, v, chosen)
            if str(candidate) != str(name) and on_offer(candidate):
                out.append(str(candidate))
    return out[:3]


def _meant(name: LibName) -> str:
    """`Did you mean `x`? ` for the names on offer close to `name`, or ""."""
    found = close_offers(name)
    return f"Did you mean {suggest.either(found)}? " if found else ""


def by_series(flavor: str, found: list[Release]) -> dict[str, list[Release]]:
    """`found` (releases of `flavor`, oldest first) grouped by series (3.0, 3.6 …; BoringSSL and AWS-LC: semver)."""
    from sslperf.libs import versions

    series: dict[str, list[Release]] = {}
    for release in found:
        series.setdefault(versions.series(release.version, semver=FLAVORS[flavor].build_system == "cmake"),
                          []).append(release)
    return series
