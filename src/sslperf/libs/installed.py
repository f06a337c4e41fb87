"""Libraries in hand: the system one, every build in the cache, and prefixes
the user registered with `sslperf libs add`. Names resolve here: an exact
name first, then a short name (`openssl-3.3+minimal`) to the newest build
that fits it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from sslperf import paths, suggest
from sslperf.errors import SslperfError, UnknownLibrary
from sslperf.libs import manifests, releases, versions
from sslperf.libs.footprint import probe
from sslperf.libs.manifests import MANIFEST
from sslperf.libs.model import Lib, prefix_linkage, version_from_string
from sslperf.libs.releases import parse_name
from sslperf.libs.system import find_system
from sslperf.libs.variants import canonical_names

PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,99}")    # a registered name is also a path segment


def libs_root() -> Path:
    return paths.subdir("libs")


def _registry_file() -> Path:
    return paths.data_dir() / "registered.json"


class DamagedBuild(SslperfError):
    """A directory in libs/ whose build.json is not a build's: it is skipped
    where the libraries in hand are listed, and `libs remove NAME` deletes it."""

    def __init__(self, home: Path, name: str, reason: str):
        super().__init__(f"The build `{name}` in {home} is damaged: its {MANIFEST} {reason}, so it "
                         "cannot be used.",
                         hint=f"Remove it with `sslperf libs remove {name}`, then build or import it again.")
        self.home, self.name, self.reason = home, name, reason

    def __reduce__(self):
        return type(self), (self.home, self.name, self.reason)


def lib_from_manifest(home: Path) -> Lib | None:
    """The build in `home`; None if it has no build.json (being removed); DamagedBuild
    if its build.json cannot be read or is not a build's (manifests.problem)."""
    try:
        manifest = json.loads((home / MANIFEST).read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:         # UnicodeDecodeError is a ValueError
        reason = f"cannot be read ({exc.strerror or exc})" if isinstance(exc, OSError) else "is not JSON"
        raise DamagedBuild(home, _name_of(home, None), reason) from None
    reason = manifests.problem(manifest)
    if reason:
        raise DamagedBuild(home, _name_of(home, manifest.get("name") if isinstance(manifest, dict) else None), reason)
    prefix = home / "prefix"
    return Lib(manifest["name"], "built", manifest["flavor"], manifest["version"],
               tuple(manifest.get("variants") or ()), prefix, prefix_linkage(prefix, manifest["flavor"]),
               manifest, home)


def _name_of(home: Path, said: object) -> str:
    """What a damaged build is called: the name its build.json gives, else the one its
    directory was made from (build.home_for: NAME-KEY12), else the directory's."""
    if isinstance(said, str) and PLAIN_NAME.fullmatch(said):
        return said
    made = re.fullmatch(r"(.+)-[0-9a-f]{12}", home.name)
    return made.group(1) if made and PLAIN_NAME.fullmatch(made.group(1)) else home.name


def scan_built() -> tuple[list[Lib], list[DamagedBuild]]:
    """The builds in libs/, and the damaged ones among its directories: one damaged
    entry is reported (`damaged_builds`), never what stops every verb."""
    found, damaged = [], []
    for home in sorted(libs_root().iterdir()):
        try:
            lib = lib_from_manifest(home) if (home / MANIFEST).exists() else None
        except DamagedBuild as exc:
            damaged.append(exc)
            continue
        if lib is not None:
            found.append(lib)
    # A damaged entry is named by its directory where its name would also mean another build.
    taken = [lib.name for lib in found] + [entry.name for entry in damaged]
    damaged = [DamagedBuild(e.home, e.home.name, e.reason) if taken.count(e.name) > 1 else e for e in damaged]
    return found, damaged


def built_libs() -> list[Lib]:
    return scan_built()[0]


def damaged_builds() -> list[DamagedBuild]:
    """Directories of libs/ that hold a build.json that is not a build's, each with its reason."""
    return scan_built()[1]


def _read_registry() -> dict[str, dict]:
    path = _registry_file()
    return json.loads(path.read_text()) if path.exists() else {}


def registered_libs() -> list[Lib]:
    out = []
    for name, entry in _read_registry().items():
        prefix = Path(entry["prefix"])
        out.append(Lib(name, "registered", entry["flavor"], entry["version"], (), prefix,
                       prefix_linkage(prefix, entry["flavor"]), entry))
    return out


def all_libs(include_system: bool = True) -> list[Lib]:
    system = find_system() if include_system else None
    return ([system] if system else []) + registered_libs() + built_libs()


def find(text: str) -> Lib:
    """The library a user means by `text`."""
    if text == "system":
        system = find_system()
        if system is None:
            raise UnknownLibrary(
                "No system OpenSSL was found: pkg-config does not know `openssl` and the compiler "
                "cannot link -lssl -lcrypto.",
                hint="Install the development files with `sudo apt-get install libssl-dev pkg-config`.",
            )
        return system
    built, damaged = scan_built()
    candidates = registered_libs() + built
    for lib in candidates:
        if lib.name == text:
            return lib
    for entry in damaged:                 # named, it is said why it is not in hand
        if entry.name == text:
            raise entry
    parse_name(text)                      # a malformed name is its own error
    matching = [lib for lib in candidates if _means(text, lib)]
    if matching:
        return max(matching, key=lambda lib: (versions.sort_key(lib.version), lib.info.get("built_at", "")))
    names = (["system"] if find_system() is not None else []) + [lib.name for lib in candidates]
    raise _not_in_hand(text, names, candidates)


def _not_in_hand(text: str, names: list[str], candidates: list[Lib]) -> UnknownLibrary:
    """No library in hand is `text`: what is in hand, the names close to it (in hand first, then on offer), and
    how to get it — a build only of a name that is on offer."""
    if not names:
        have = "no library is in hand yet"
    elif len(names) == 1:
        have = f"the only library in hand is {names[0]}"
    else:
        have = f"libraries in hand: {', '.join(names)}"
    # Each library once, by its spelling closest to `text`: its name, or for a build its series (openssl-3.6).
    spellings = {**{name: name for name in names},
                 **{_short_name(lib): lib.name for lib in candidates if lib.kind == "built"}}
    near: list[str] = []
    for spelling in suggest.close(text, spellings, n=6, cutoff=suggest.CUTOFF_LONG):        # closest first
        if all(spellings[other] != spellings[spelling] for other in near):
            near.append(spelling)
    near = near[:3]
    name = parse_name(text)
    register = "register an installed one with `sslperf libs add NAME --prefix DIR`"
    offered = releases.on_offer(name)
    if offered:             # the name is right, only not built: what is near it in hand is an alternative
        also = f" (or use {suggest.either(near)}, in hand)" if near else ""
        return UnknownLibrary(f"No built or registered library is called `{text}` ({have}).",
                              hint=f"Build it with `sslperf libs build {text}`{also}, or {register}.")
    offers = []
    for offered_name in releases.close_offers(name):     # one already in hand is said as in hand
        resolved = [lib.name for lib in candidates if _means(offered_name, lib)]
        if not resolved:
            offers.append(offered_name)
        elif offered_name not in near and not any(spellings.get(n) in resolved for n in near):
            near.append(offered_name)
    said = [f"Did you mean {suggest.either(near)}?"] if near else []
    if offers:
        build = f"`sslperf libs build {offers[0]}`" if len(offers) == 1 else "`sslperf libs build NAME`"
        said.append(f"{'Or' if near else 'Did you mean'} {suggest.either(offers)} (on offer, not built yet: {build})?")
    if offered is None:       # the index cannot be read: say where to look, not what to build
        said.append(f"`sslperf libs available` lists what can be built (`sslperf libs build NAME`), or {register}.")
    else:
        said.append(f"`{text}` is not on offer to build either (`sslperf libs available` lists what is); "
                    f"{register}.")
    return UnknownLibrary(f"No built or registered library is called `{text}` ({have}).", hint=" ".join(said))


def _short_name(lib: Lib) -> str:
    """The name a user would give a build by its series: `openssl-3.6+minimal` for openssl-3.6.3+minimal."""
    return f"{lib.flavor}-{versions.series(lib.version)}" + "".join(f"+{v}" for v in lib.variants)


def _means(text: str, lib: Lib) -> bool:
    """Whether the short name `text` (openssl-3, openssl-3.0+Os) resolves to `lib`'s flavor/version/variants."""
    try:
        name = parse_name(text)
    except SslperfError:
        return False
    return (lib.kind == "built" and lib.flavor == name.flavor and lib.variants == canonical_names(name.variants)
            and (name.version is None or versions.matches(name.version, lib.version)))


def register(name: str, prefix: Path) -> Lib:
    """Record an installed prefix under `name`, after checking it works."""
    if not PLAIN_NAME.fullmatch(name) or ".." in name:
        shown = name.encode("unicode_escape").decode("ascii")[:80]
        raise SslperfError(f"`{shown}` cannot name a library: a name is letters, digits and `.`, `_`, `+`, `-` "
                           "(no `/`, no `..`, no spaces), at most 100 characters, starting with a letter or digit; "
                           "it becomes part of paths in sslperf's cache.", hint="e.g. `sslperf libs add distro-3.0 "
                           "--prefix /opt/openssl-3.0`.")
    prefix = prefix.expanduser().resolve()
    if name == "system" or any(lib.name == name for lib in built_libs()):
        raise SslperfError(f"The name `{name}` is taken; choose another with `sslperf libs add OTHER --prefix …`.")
    linkage = prefix_linkage(prefix, "openssl")
    if linkage is None:
        raise SslperfError(
            f"{prefix} does not look like an installed OpenSSL-family library: it needs "
            "include/openssl/ssl.h and lib/ (or lib64/) with libssl and libcrypto.",
            hint="Pass the directory given as --prefix when the library was installed.",
        )
    result = probe(linkage)
    if result.flavor != "openssl":
        linkage = prefix_linkage(prefix, result.flavor)
    entry = {
        "prefix": str(prefix),
        "flavor": result.flavor,
        "version": version_from_string(result.library_version or result.version_string),
        "version_string": result.version_string,
        "version_number": result.version_number,
        "program": {"text": result.text, "data": result.data, "bss": result.bss, "static": linkage.static},
    }
    registry = _read_registry()
    registry[name] = entry
    _registry_file().write_text(json.dumps(registry, indent=2) + "\n")
    return Lib(name, "registered", entry["flavor"], entry["version"], (), prefix, linkage, entry)


def remove(text: str) -> Lib:
    """Delete a built lib from the cache, or forget a registered prefix: by
    its exact name only, never by a short name that may mean another build."""
    if text == "system":
        raise SslperfError("The system OpenSSL belongs to the operating system; sslperf cannot remove it.")
    built, damaged = scan_built()
    candidates = registered_libs() + built
    exact = [lib for lib in candidates if lib.name == text]
    broken = [entry for entry in damaged if text in (entry.name, entry.home.name)]
    if not exact and broken:
        _delete_home(broken[0].home)
        return Lib(broken[0].name, "built", "", "", home=broken[0].home)
    if not exact:
        meant = [lib.name for lib in candidates if lib.name.startswith(text) or _means(text, lib)]
        if meant:
            raise SslperfError(f"`{text}` is not the exact name of a library; it could mean "
                               f"{', '.join(sorted(meant))}. Nothing was removed.",
                               hint="Give the exact name shown by `sslperf libs list`.")
        find(text)            # raises the usual "no such library" error
    lib = exact[0]
    if lib.kind == "registered":
        registry = _read_registry()
        registry.pop(lib.name, None)
        _registry_file().write_text(json.dumps(registry, indent=2) + "\n")
    else:
        assert lib.home is not None
        _delete_home(lib.home)
    return lib


def _delete_home(home: Path) -> None:
    # Rename first so that a half-deleted directory never looks like a lib.
    doomed = paths.subdir("tmp") / f"removing-{home.name}"
    home.rename(doomed)
    shutil.rmtree(doomed, ignore_errors=True)
