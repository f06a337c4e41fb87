"""Libraries in hand: the system one, every build in the cache, and prefixes
the user registered with `sslperf libs add`. Names resolve here: an exact
name first, then a short name (`openssl-3.3+minimal`) to the newest build
that fits it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from sslperf import paths
from sslperf.errors import SslperfError, UnknownLibrary
from sslperf.libs import versions
from sslperf.libs.footprint import probe
from sslperf.libs.model import Lib, prefix_linkage, version_from_string
from sslperf.libs.releases import parse_name
from sslperf.libs.system import find_system
from sslperf.libs.variants import canonical_names

MANIFEST = "build.json"

PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,99}")    # a registered name is also a path segment


def libs_root() -> Path:
    return paths.subdir("libs")


def _registry_file() -> Path:
    return paths.data_dir() / "registered.json"


def lib_from_manifest(home: Path) -> Lib | None:
    try:
        manifest = json.loads((home / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    prefix = home / "prefix"
    return Lib(manifest["name"], "built", manifest["flavor"], manifest["version"],
               tuple(manifest.get("variants", ())), prefix, prefix_linkage(prefix, manifest["flavor"]),
               manifest, home)


def built_libs() -> list[Lib]:
    found = [lib_from_manifest(home) for home in sorted(libs_root().iterdir()) if (home / MANIFEST).exists()]
    return [lib for lib in found if lib is not None]


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
    candidates = registered_libs() + built_libs()
    for lib in candidates:
        if lib.name == text:
            return lib
    parse_name(text)                      # a malformed name is its own error
    matching = [lib for lib in candidates if _means(text, lib)]
    if matching:
        return max(matching, key=lambda lib: (versions.sort_key(lib.version), lib.info.get("built_at", "")))
    names = (["system"] if find_system() is not None else []) + [lib.name for lib in candidates]
    if not names:
        have = "no library is in hand yet"
    elif len(names) == 1:
        have = f"the only library in hand is {names[0]}"
    else:
        have = f"libraries in hand: {', '.join(names)}"
    raise UnknownLibrary(
        f"No built or registered library is called `{text}` ({have}).",
        hint=f"Build it with `sslperf libs build {text}`, or register an installed one with "
        f"`sslperf libs add NAME --prefix DIR`.",
    )


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
    candidates = registered_libs() + built_libs()
    exact = [lib for lib in candidates if lib.name == text]
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
        # Rename first so that a half-deleted directory never looks like a lib.
        doomed = paths.subdir("tmp") / f"removing-{lib.home.name}"
        lib.home.rename(doomed)
        shutil.rmtree(doomed, ignore_errors=True)
    return lib
