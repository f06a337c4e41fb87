"""A portable build cache: built libraries packed into one file where they
were built and installed from it elsewhere ("one machine builds, the fleet
reuses"). A bundle is a gzip'd tar. gzip, not xz: zlib is in every Python
(lzma is optional), and it writes a bundle in under a second and unpacks it
fastest; xz makes the file about 45% smaller, but a few MB is not what an
import waits for (docs/benchmarks.md). First comes bundle.json — per library
its build key and what the key is made of, the machine and C library it was
built for, the absolute paths its files name, and every file (sha256, size,
mode), directory and link — then the library homes.
`install` checks all of it before anything is placed, unpacks into a private
directory of the cache, makes the build name its new place (`_relocate`) and
moves each home into libs/ with one rename, as a build does: a refused or
interrupted import leaves nothing that looks installed."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import io
import json
import os
import platform
import re
import stat
import tarfile
import tempfile
import time
import zlib
from pathlib import Path, PurePosixPath
from typing import BinaryIO

import sslperf
from sslperf import paths, tempdirs, userfiles
from sslperf.errors import SslperfError
from sslperf.libs import installed, manifests, relocation
from sslperf.libs.build import compiler_identity
from sslperf.libs.installed import MANIFEST, lib_from_manifest, libs_root
from sslperf.libs.model import Lib, is_bssl

FORMAT, FORMAT_VERSION, INDEX = "sslperf-bundle", 1, "bundle.json"
MAX_BYTES = 4 << 30        # unpacked; a build home is 10-300 MiB: a guard against a bomb, not a real limit
MAX_MEMBERS = 50_000       # a build home has a few hundred members, mostly headers
IN_HAND = "in_hand_before_import"
# tarfile's own guard (3.11.4+): a second line behind the checks here, which do not rely on it.
_FILTER = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
_KEY_FIELDS = ("flavor", "version", "variants", "origin", "source_digest", "recipe", "configure_options", "cflags",
               "cmake_settings", "compiler")
_BUILD = manifests.part(_KEY_FIELDS, required=("flavor", "version"))
_ENTRY = manifests.part(("machine", "libc", "build_seconds"), required=("machine", "libc"))


class BundleRefused(SslperfError):
    """A library that cannot be exported, or a bundle that cannot be installed here, and why."""


def machine() -> str:
    found = platform.machine()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(found.lower(), found)


def libc() -> dict:
    try:
        name, version = os.confstr("CS_GNU_LIBC_VERSION").split()
    except (AttributeError, ValueError, OSError):
        name, version = platform.libc_ver()
    return {"name": name or "unknown", "version": version or ""}


def was_in_hand(lib: Lib) -> bool:
    """Whether `install` kept `lib` because the same build (its key) was already in hand."""
    return bool(lib.info.get(IN_HAND))


def export(libs: list[Lib], out: Path | BinaryIO, force: bool = False) -> dict:
    """Write one bundle of `libs` (each built by sslperf) to a binary stream or
    a file (replaced only under userfiles' rule: sslperf wrote it, or `force`).
    Returns the bundle.json written."""
    foreign = [lib for lib in libs if lib.kind != "built" or lib.home is None or lib.base is not None]
    if foreign:
        raise BundleRefused(
            f"Only libraries sslperf built can be exported; {', '.join(f'`{x.name}` ({x.kind})' for x in foreign)} "
            "belongs to this machine's own install, not to sslperf's cache. Nothing was written.",
            hint="On the other machine use its own system OpenSSL, or register its copy with `sslperf libs add NAME "
                 "--prefix DIR`; export built ones, e.g. `sslperf libs export openssl-3.6 --out libs.tar.gz`.")
    if len({lib.home for lib in libs}) != len(libs):
        raise BundleRefused("The same library is named twice; name each library once.")
    entries = [_describe(lib) for lib in libs]
    if sum(f["size"] for e in entries for f in e["files"].values()) > MAX_BYTES:
        raise BundleRefused(f"These libraries hold more than {MAX_BYTES >> 30} GiB, more than an import accepts.",
                            hint="Export them one at a time.")
    index = {"format": FORMAT, "version": FORMAT_VERSION, "sslperf_version": sslperf.__version__,
             "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "libs": entries}
    if not isinstance(out, (str, Path)):
        _write(out, libs, index)
        return index
    out = Path(out)              # written whole beside it, then renamed over it: never half a bundle
    handle, staged = tempfile.mkstemp(dir=Path(os.path.abspath(out)).parent, prefix=f".{out.name}.")
    try:
        with os.fdopen(handle, "wb") as stream:
            mask = os.umask(0)
            os.umask(mask)
            os.fchmod(stream.fileno(), 0o666 & ~mask)
            _write(stream, libs, index)
        userfiles.place(Path(staged), out, force)
    except BaseException as exc:
        Path(staged).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise BundleRefused(f"Cannot write the bundle to {out}: {userfiles.why(exc, out)}.",
                                hint="Nothing was written there; choose another place with --out.") from None
        raise
    return index


def _describe(lib: Lib) -> dict:
    """The bundle.json entry of one built library."""
    home, info = lib.home, lib.info
    if not info.get("key") or not (home / MANIFEST).is_file():
        raise BundleRefused(f"{lib.name} has no build manifest at {home / MANIFEST}; it cannot be exported.",
                            hint=f"Rebuild it with `sslperf libs build {lib.name} --force`.")
    # The absolute paths its files may name: its prefix (as pkg-config's file spells what Configure was given,
    # should the cache have been reached by another spelling since) and, if imported, what a binary kept or got.
    pc = home / "prefix" / "lib" / "pkgconfig" / "libcrypto.pc"
    baked = re.findall(r"^prefix=(/\S+)", pc.read_text(errors="replace"), re.M) if pc.is_file() else []
    names = sorted({str(home / "prefix"), *baked, *info.get("relocated", {}).get("names", [])}, key=len, reverse=True)
    files, dirs, links = {}, [], {}
    for root, dirnames, filenames in os.walk(home):
        for name in sorted(dirnames + filenames):
            path = Path(root, name)
            rel, mode = path.relative_to(home).as_posix(), os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                links[rel] = os.readlink(path)
            elif stat.S_ISDIR(mode):
                dirs.append(rel)
            elif stat.S_ISREG(mode):
                files[rel] = {**_scan(path, names), "mode": stat.S_IMODE(mode) & 0o777}
            else:
                raise BundleRefused(f"{path} is not a file, directory or link; {lib.name} cannot be exported.")
    for rel, target in links.items():
        if not _inside(rel, target, links):
            raise BundleRefused(f"The link {home / rel} → {target} leads out of {lib.name}'s home; a bundle "
                                "carries nothing outside it.", hint="Rebuild the library.")
    return {"name": lib.name, "home": home.name, "key": info["key"], "build": {k: info.get(k) for k in _KEY_FIELDS},
            "build_seconds": info.get("build_seconds"), "machine": info.get("machine") or machine(),
            "libc": info.get("libc") or libc(), "paths": names, "files": files, "dirs": dirs, "links": links}


def _scan(path: Path, names: list[str]) -> dict:
    """sha256 and size of a file, and whether it names one of `names` (blocks overlap by a name)."""
    digest, size, found, tail = hashlib.sha256(), 0, False, b""
    needles = [os.fsencode(n) for n in names]
    with open(path, "rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
            found = found or any(n in tail + block for n in needles)
            tail = (tail + block)[-len(needles[0]):]
    return {"sha256": digest.hexdigest(), "size": size, "names_paths": found}


def _write(stream: BinaryIO, libs: list[Lib], index: dict) -> None:
    now = int(time.time())

    def member(name: str, kind: bytes, mode: int, size: int = 0, link: str = "") -> tarfile.TarInfo:
        info = tarfile.TarInfo(name)
        info.type, info.mode, info.size, info.linkname, info.mtime = kind, mode, size, link, now
        return info

    with tarfile.open(fileobj=stream, mode="w:gz", compresslevel=6, format=tarfile.PAX_FORMAT) as tar:
        data = json.dumps(index, indent=1).encode()
        tar.addfile(member(INDEX, tarfile.REGTYPE, 0o644, len(data)), io.BytesIO(data))
        for lib, e in zip(libs, index["libs"]):
            for rel in e["dirs"]:
                tar.addfile(member(f"{e['home']}/{rel}", tarfile.DIRTYPE, 0o755))
            for rel, file in e["files"].items():
                with open(lib.home / rel, "rb") as source:
                    tar.addfile(member(f"{e['home']}/{rel}", tarfile.REGTYPE, file["mode"], file["size"]), source)
            for rel, target in e["links"].items():
                tar.addfile(member(f"{e['home']}/{rel}", tarfile.SYMTYPE, 0o777, link=target))


def install(bundle: Path | BinaryIO) -> list[Lib]:
    """Install the libraries of a bundle (a file or a binary stream), in its
    order. Everything is checked before anything is placed; a library whose
    build key is already in hand is kept as it is (`was_in_hand`)."""
    named = isinstance(bundle, (str, Path))
    try:
        source = open(bundle, "rb") if named else contextlib.nullcontext(bundle)
    except OSError as exc:
        raise BundleRefused(f"Cannot read {bundle}: {userfiles.why(exc, Path(bundle))}.",
                            hint="Give the file `sslperf libs export` wrote.") from None
    where = str(bundle) if named else "The bundle"
    work = tempdirs.make("import", cache=True)     # beside libs/: one rename away
    try:
        try:
            with source as stream, tarfile.open(fileobj=stream, mode="r|*") as tar:
                entries = _read_index(tar, where)
                here = _check_here(entries, where)
                _unpack(tar, entries, work, where)
            built, damaged = installed.scan_built()
            in_hand = {lib.info.get("key") for lib in built}
            _check_free(entries, in_hand, damaged, where)
            for e in entries:
                if e["key"] not in in_hand:
                    _relocate(e, work / e["home"], libs_root() / e["home"] / "prefix", here)
        except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
            if isinstance(exc, OSError) and exc.errno:
                raise BundleRefused(f"Cannot unpack {where} into {work.parent}: {userfiles.why(exc, work)}.",
                                    hint="Nothing was installed; free some space or set SSLPERF_CACHE_DIR.") from None
            raise _refuse(where, f"it is not a whole, readable sslperf bundle ({exc})") from None
        return [_place(e, work / e["home"]) for e in entries]
    finally:
        tempdirs.remove(work)


def _check_free(entries: list[dict], in_hand: set, damaged: list[installed.DamagedBuild], where: str) -> None:
    """Refuse, before anything is placed, a library whose place in libs/ a damaged build holds."""
    held = {entry.home.name: entry for entry in damaged}
    for e in entries:
        if e["key"] not in in_hand and e["home"] in held:
            entry = held[e["home"]]
            raise _refuse(where, f"{e['name']}'s place, {entry.home}, holds a damaged build (its {MANIFEST} "
                                 f"{entry.reason})", hint=f"Remove it with `sslperf libs remove {entry.name}` and "
                                                         "import the bundle again.")


def _refuse(where: str, reason: str, hint: str | None = None) -> BundleRefused:
    return BundleRefused(f"{where} is refused: {reason}. Nothing was installed.",
                         hint=hint or "Export it again with `sslperf libs export` where it was built.")


def _read_index(tar: tarfile.TarFile, where: str) -> list[dict]:
    first = tar.next()
    if first is None or first.name != INDEX or not first.isreg() or first.size > 16 << 20:
        raise _refuse(where, f"it does not begin with a {INDEX}, so it is not an sslperf bundle")
    try:
        index = json.loads(tar.extractfile(first).read())
    except ValueError:
        index = None
    if not isinstance(index, dict) or (index.get("format"), index.get("version")) != (FORMAT, FORMAT_VERSION):
        said = (index.get("format"), index.get("version")) if isinstance(index, dict) else "not JSON"
        raise _refuse(where, f"its {INDEX} is not an sslperf bundle of format {FORMAT_VERSION} ({said})",
                      hint="Export it with the same sslperf version as imports it.")
    entries = index.get("libs")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise _refuse(where, f"its {INDEX} lists no libraries")
    for e in entries:
        reason = _malformed(e)
        if reason:
            raise _refuse(where, f"its {INDEX} entry {str(e.get('name'))[:100]!r} {reason}")
    if len({e["home"] for e in entries}) != len(entries):
        raise _refuse(where, "it lists one library twice")
    if sum(f["size"] for e in entries for f in e["files"].values()) > MAX_BYTES or \
            sum(len(e["files"]) + len(e["dirs"]) + len(e["links"]) for e in entries) > MAX_MEMBERS:
        raise _refuse(where, f"it declares more than {MAX_BYTES >> 30} GiB or {MAX_MEMBERS:,} members")
    return entries


def _malformed(e: dict) -> str | None:
    """What is wrong with one library's entry, or None."""
    if not (isinstance(e.get("name"), str) and re.fullmatch(r"[0-9a-f]{64}", str(e.get("key")))):
        return "has no name or build key"
    # The home is the one a build of this name and key gets (build.home_for): a bundle chooses no path.
    if e.get("home") != f"{re.sub(r'[^A-Za-z0-9._+-]', '_', e['name'])}-{e['key'][:12]}":
        return f"names its home {str(e.get('home'))[:100]!r}, not the one its name and key give"
    shapes = {"files": dict, "links": dict, "dirs": list, "paths": list}
    if not all(isinstance(e.get(k), t) for k, t in shapes.items()) or \
            not all(isinstance(p, str) and p.startswith("/") for p in e["paths"]):
        return "lacks the files, directories, links or paths"
    # What of the build it carries, and where it was built, as its build.json would hold them (the same schema).
    reason = manifests.problem(e, _ENTRY) or manifests.problem(e["build"], _BUILD, within="build")
    if reason:
        return reason
    for rel in [*e["files"], *e["dirs"], *e["links"]]:
        if not isinstance(rel, str) or not _safe(rel):
            return f"lists the path {str(rel)[:200]!r}: absolute, with `..`, or not plain"
    for rel, f in e["files"].items():
        if not (isinstance(f, dict) and isinstance(f.get("sha256"), str) and isinstance(f.get("size"), int)
                and isinstance(f.get("mode"), int) and f["size"] >= 0 and 0 <= f["mode"] <= 0o777):
            return f"describes {rel[:200]!r} without a sha256, a size and a plain mode"
    for rel, target in e["links"].items():
        if not isinstance(target, str) or not _inside(rel, target, e["links"]):
            return f"has a link {rel[:200]!r} → {str(target)[:200]!r} that leads out of the library's home"
    return None if MANIFEST in e["files"] and "prefix" in e["dirs"] else f"has no {MANIFEST} or prefix/"


def _safe(name: str) -> bool:
    """A plain relative path: not absolute, no `..`, `.` or empty parts, no NUL."""
    path = PurePosixPath(name)
    return name not in ("", ".") and name == path.as_posix() and not path.is_absolute() \
        and ".." not in path.parts and "\0" not in name


def _inside(rel: str, target: str, links: dict) -> bool:
    """Whether the link `rel` → `target` stays in its library's home, walked as the kernel
    resolves it: relative, never above the home, and through no other link (whose own
    target would make a later `..` climb from somewhere else)."""
    if not target or target.startswith("/") or "\0" in target:
        return False
    at, parts = rel.split("/")[:-1], [p for p in target.split("/") if p not in ("", ".")]
    for i, part in enumerate(parts):
        if part == "..":
            if not at:
                return False
            at.pop()
        else:
            at.append(part)
            if i < len(parts) - 1 and "/".join(at) in links:
                return False
    return True


def _check_here(entries: list[dict], where: str) -> dict:
    """Refuse what this machine cannot link or run; returns its compiler, to record."""
    ours, arch, refusals = libc(), machine(), []
    try:
        here = compiler_identity(cmake=any(is_bssl(str(e["build"].get("flavor"))) for e in entries))
    except SslperfError:              # no compiler: nothing is linked here until there is one
        here = {}
    for e in entries:
        theirs = e["libc"]
        if e["machine"] != arch:
            refusals.append(f"{e['name']} was built for {e['machine']}, this machine is {arch}")
        elif theirs.get("name") != ours["name"] or ours["name"] == "unknown":
            refusals.append(f"{e['name']} was built against {theirs.get('name')} {theirs.get('version')}, this "
                            f"machine has {ours['name']} {ours['version']}: another C library")
        elif _numbers(ours["version"]) < _numbers(str(theirs.get("version"))):
            # Its objects may call the newer C library's symbols, and its tools need it to start at all.
            refusals.append(f"{e['name']} needs {ours['name']} {theirs['version']} or later, this machine has "
                            f"{ours['version']}")
        else:
            refusals += [r for r in [_compiler_refusal(e, here)] if r]
    if refusals:
        raise _refuse(where, "; ".join(refusals), hint="Build them here with `sslperf libs build NAME`, or export "
                      "them from a machine like this one (same architecture, the same or an older C library).")
    return here


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version))


def _compiler_refusal(e: dict, here: dict) -> str | None:
    """The builder's compiler matters only where its output meets this machine's toolchain:
    an -flto build's objects hold that compiler version's own intermediate code, which only
    it can link. Otherwise objects for the same machine and C library link with any
    compiler (the harness is compiled here; a C++ runtime that lacks something BoringSSL's
    objects use says so as that link fails), and measuring the builder's code is the point
    of reusing its build; its compiler stays in the manifest, shown by `libs info`."""
    build = e["build"]
    banner = lambda identity: (str(identity).split(" | ") + ["?"])[1]  # noqa: E731
    theirs, ours = banner((build.get("compiler") or {}).get("cc")), banner(here.get("cc"))
    flags = [str(f) for k in ("cflags", "configure_options", "cmake_settings") for f in build.get(k) or []]
    if here and any("-flto" in f for f in flags) and theirs != ours:
        return (f"{e['name']} was built with -flto by `{theirs}`, whose intermediate code only that compiler "
                f"links; this machine's is `{ours}`")
    return None


def _unpack(tar: tarfile.TarFile, entries: list[dict], work: Path, where: str) -> None:
    """Each member a path listed once, of its listed type and size, through no link; each
    file hashed as written; nothing listed missing."""
    homes, seen = {e["home"]: e for e in entries}, set()
    while (member := tar.next()) is not None:     # not `for … in tar`, which starts again at bundle.json
        home, _, rel = member.name.partition("/")
        e = homes.get(home)
        if len(seen) >= MAX_MEMBERS or e is None or not rel or not _safe(member.name) or member.name in seen:
            raise _refuse(where, f"its member {member.name[:200]!r} is not a path it lists once (absolute, with "
                                 "`..`, outside its libraries or repeated)")
        seen.add(member.name)
        parts, listed = rel.split("/"), e["files"].get(rel)
        if any("/".join(parts[:i]) in e["links"] for i in range(1, len(parts))):
            raise _refuse(where, f"its member {member.name[:200]!r} lies under a link")
        plain = member.type in (tarfile.REGTYPE, tarfile.AREGTYPE)
        if not ((plain and listed and member.size == listed["size"] and member.mode & 0o7777 == listed["mode"])
                or (member.isdir() and rel in e["dirs"]) or (member.issym() and e["links"].get(rel) == member.linkname)):
            kind = {tarfile.REGTYPE: "a file", tarfile.AREGTYPE: "a file", tarfile.DIRTYPE: "a directory",
                    tarfile.SYMTYPE: "a link", tarfile.LNKTYPE: "a hard link", tarfile.CHRTYPE: "a device",
                    tarfile.BLKTYPE: "a device", tarfile.FIFOTYPE: "a pipe"}.get(member.type, "of an odd type")
            raise _refuse(where, f"its member {member.name[:200]!r} is {kind} its {INDEX} does not list as such "
                                 "(type, size and mode)")
        try:
            tar.extract(member, work, set_attrs=False, **_FILTER)
        except tarfile.FilterError as exc:
            raise _refuse(where, f"tarfile's data filter refused {member.name[:200]!r}: {exc}") from None
        if listed:
            with open(work / member.name, "rb") as written:
                digest = hashlib.file_digest(written, "sha256").hexdigest()
            if digest != listed["sha256"] or (work / member.name).stat().st_size != listed["size"]:
                raise _refuse(where, f"{member.name} does not have the sha256 its {INDEX} lists: it was damaged or "
                                     "changed after the export")
    for e in entries:
        missing = sorted({f"{e['home']}/{r}" for r in [*e["files"], *e["dirs"], *e["links"]]} - seen)
        if missing:
            raise _refuse(where, f"it lacks {len(missing)} listed member(s), e.g. {missing[0][:200]!r}: it was cut "
                                 "short")
        try:
            manifest = json.loads((work / e["home"] / MANIFEST).read_text())
        except ValueError:
            manifest = None
        reason = "is not JSON" if manifest is None else manifests.problem(manifest)
        if reason:          # checked as every reader of the libraries in hand checks it, before it is placed
            raise _refuse(where, f"{e['name']}'s {MANIFEST} {reason}")
        if (manifest.get("name"), manifest.get("key")) != (e["name"], e["key"]):
            raise _refuse(where, f"{e['name']}'s {MANIFEST} names another build than its {INDEX} entry")
        for rel, file in e["files"].items():         # plain permissions, never group or other write
            os.chmod(work / e["home"] / rel, (file["mode"] | 0o600) & 0o755)
        for rel in e["dirs"]:                         # tarfile makes them 0o700 until it would set attributes
            os.chmod(work / e["home"] / rel, 0o755)


def _relocate(e: dict, staged: Path, prefix: Path, here: dict) -> None:
    """Make a moved build name its new place (libs.relocation). Linking needs none of it (prefix_linkage takes
    every path from where the home is now), nor does a FIPS run (the harness names the module's directory and its
    fipsmodule.cnf, which holds no path)."""
    files = [rel for rel, file in e["files"].items() if file["names_paths"]]
    done, names = relocation.rewrite(staged, files, [os.fsencode(p) for p in e["paths"]], prefix)
    manifest = json.loads((staged / MANIFEST).read_text())
    manifest.update(machine=e["machine"], libc=e["libc"],
                    relocated={"from": e["paths"], "to": str(prefix), **done, "names": sorted(names)},
                    imported={"at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                              "sslperf_version": sslperf.__version__, "compiler_here": here})
    (staged / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")


def _place(e: dict, staged: Path) -> Lib:
    """Move one checked library into libs/ with one rename, under its build's lock."""
    with paths.locked(f"build-{e['key'][:32]}"):
        for lib in installed.built_libs():
            if lib.info.get("key") == e["key"]:
                return dataclasses.replace(lib, info={**lib.info, IN_HAND: True})
        target = libs_root() / e["home"]
        try:
            staged.rename(target)
        except OSError as exc:
            raise BundleRefused(f"Cannot install {e['name']} at {target}: {userfiles.why(exc, target)}.",
                                hint=f"If {target} is left from something else, remove it and import again.") from None
    lib = lib_from_manifest(target)
    assert lib is not None
    return lib
