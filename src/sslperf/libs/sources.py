"""Where a library's source comes from: a crates.io release (the default),
a local directory, a release tarball checked against a sha256, or a git tag.
Every source has a digest, which is part of the build cache key."""

from __future__ import annotations

import hashlib
import re
import shutil
import tarfile
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sslperf import paths, tempdirs
from sslperf.errors import SslperfError
from sslperf.libs import crates, releases
from sslperf.proc import require_tool, run, run_ok


@dataclass
class Source:
    flavor: str
    version: str
    digest: str
    origin: str
    materialize: Callable[[], Path]   # returns the source tree, fetching it if needed

    @property
    def build_system(self) -> str:
        flavor = releases.FLAVORS.get(self.flavor)
        return flavor.build_system if flavor else "openssl" if self.flavor == "openssl" else "cmake"


def from_release(release: releases.Release) -> Source:
    flavor = releases.FLAVORS[release.flavor]
    return Source(release.flavor, release.version, release.digest, release.origin,
                  lambda: crates.fetch(release.crate) / flavor.crate_subdir)


def detect(root: Path) -> tuple[str, str]:
    """(flavor, version) of a source tree, from the files each project keeps
    its version in."""
    version_dat = root / "VERSION.dat"
    if version_dat.exists():
        fields = dict(re.findall(r"^(\w+)=\"?([^\"\n]*)\"?", version_dat.read_text(), re.M))
        version = f"{fields['MAJOR']}.{fields['MINOR']}.{fields['PATCH']}"
        if fields.get("PRE_RELEASE_TAG"):
            version += f"-{fields['PRE_RELEASE_TAG']}"
        return "openssl", version
    opensslv = root / "include" / "openssl" / "opensslv.h"
    text = opensslv.read_text(errors="replace") if opensslv.exists() else ""
    if match := re.search(r'LIBRESSL_VERSION_TEXT\s+"LibreSSL ([^"\s]+)"', text):
        return "libressl", match.group(1)
    if match := re.search(r'OPENSSL_VERSION_TEXT\s+"OpenSSL ([^"\s]+)', text):
        return "openssl", match.group(1)
    base_h = root / "include" / "openssl" / "base.h"
    base = base_h.read_text(errors="replace") if base_h.exists() else ""
    if match := re.search(r'AWSLC_VERSION_NUMBER_STRING\s+"([^"]+)"', base):
        return "aws-lc", match.group(1)
    if "OPENSSL_IS_BORINGSSL" in base:
        return "boringssl", "0"   # BoringSSL has no version number; the digest tells builds apart
    raise SslperfError(
        f"{root} is not an OpenSSL, LibreSSL, BoringSSL or AWS-LC source tree (no VERSION.dat, "
        "include/openssl/opensslv.h or include/openssl/base.h with a version).",
        hint="Point --source-dir at the top of the library's source, where Configure or CMakeLists.txt is.",
    )


def tree_digest(root: Path) -> str:
    """sha256 over every file's relative path and contents (not .git)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def from_directory(root: Path) -> Source:
    root = root.expanduser().resolve()
    if not root.is_dir():
        raise SslperfError(f"{root} is not a directory.", hint="Give --source-dir an unpacked source tree.")
    flavor, version = detect(root)
    digest = tree_digest(root)
    if flavor == "boringssl":
        version = f"0-{digest[:8]}"
    return Source(flavor, version, digest, f"directory {root}", lambda: root)


def from_tarball(location: str, sha256: str) -> Source:
    """A release tarball (a file or an http(s) URL) whose sha256 must match."""
    sha256 = sha256.lower().strip()
    if not re.fullmatch(r"[0-9a-f]{64}", sha256):
        raise SslperfError(f"`{sha256}` is not a sha256 (64 hex digits).",
                           hint="Copy the checksum published next to the tarball.")
    unpacked = paths.subdir("sources") / f"tarball-{sha256[:16]}"
    if not (unpacked / ".sslperf-ok").exists():
        archive = _obtain_tarball(location)
        try:
            is_tar = tarfile.is_tarfile(archive)
        except (OSError, EOFError, tarfile.TarError):
            is_tar = False
        if not is_tar:
            raise SslperfError(f"{location} is not a tarball: {_what_it_is(archive)}, which neither tar nor its "
                               "gzip, bzip2 or xz decompressors can read.",
                               hint="Give a release tarball (.tar.gz, .tar.xz) and its published sha256, e.g. "
                               "openssl-3.4.1.tar.gz; nothing was built.")
        actual = hashlib.sha256(archive.read_bytes()).hexdigest()
        if actual != sha256:
            raise SslperfError(f"{location} has sha256 {actual}, not the {sha256} given.",
                               hint="The file is damaged or not the release you meant; nothing was built.")
        staging = tempdirs.make("tarball", cache=True)
        try:
            try:
                with tarfile.open(archive) as tar:
                    paths.unpack(tar, staging)
            except (tarfile.TarError, OSError, EOFError) as exc:
                reason = " ".join(str(exc).split()) or type(exc).__name__     # one paragraph, whatever tar says
                raise SslperfError(f"{location} is not a readable tarball ({reason}).",
                                   hint="Give a release tarball (.tar.gz, .tar.xz) and its sha256; nothing was "
                                   "built.") from None
            tops = [p for p in staging.iterdir() if p.is_dir()]
            root = tops[0] if len(tops) == 1 else staging
            (root / ".sslperf-ok").write_text(sha256 + "\n")
            if unpacked.exists():
                shutil.rmtree(unpacked)
            root.rename(unpacked)
        finally:
            tempdirs.remove(staging)
    flavor, version = detect(unpacked)
    return Source(flavor, version, sha256, f"tarball {location}", lambda: unpacked)


def _obtain_tarball(location: str) -> Path:
    if urllib.parse.urlparse(location).scheme in ("http", "https"):
        target = paths.subdir("downloads") / Path(urllib.parse.urlparse(location).path).name
        try:
            with urllib.request.urlopen(location, timeout=120) as response, open(target, "wb") as out:
                shutil.copyfileobj(response, out)
        except OSError as exc:
            raise SslperfError(f"Cannot download {location}: {exc}.",
                               hint="Download it by hand and pass the file instead.") from None
        return target
    path = Path(location).expanduser()
    if path.is_dir():
        raise SslperfError(f"The tarball {path} is a directory.",
                           hint="Give the .tar.gz file itself, or build an unpacked tree with --source-dir.")
    if not path.is_file():
        raise SslperfError(f"The tarball {path} does not exist.", hint="Check the path.")
    return path


def _what_it_is(path: Path) -> str:
    """A few words on what a file that is not a tarball holds."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError as exc:
        return f"it cannot be read ({exc.strerror})"
    if not head:
        return "it is empty"
    if head.startswith(b"PK\x03\x04"):
        return "it is a zip archive"
    if b"\0" not in head:
        try:
            head.decode("utf-8")
            return "it holds text"
        except UnicodeDecodeError:
            pass
    return "its contents are not an archive"


def from_git(url: str, tag: str) -> Source:
    """A shallow clone of `tag`; the digest is the commit it points to."""
    git = require_tool("git", "to clone a library's repository")
    slug = hashlib.sha256(f"{url}@{tag}".encode()).hexdigest()[:16]
    clone = paths.subdir("sources") / f"git-{slug}"
    if not (clone / ".git").exists():
        staging = tempdirs.make("git", cache=True)
        # `--`: a URL that starts with a dash is a URL, never an option to git
        result = run([git, "clone", "--quiet", "--depth", "1", f"--branch={tag}", "--", url, staging / "tree"],
                     timeout=1800)
        if result.returncode != 0:
            tempdirs.remove(staging)
            raise SslperfError(f"`git clone --branch {tag} {url}` failed: {result.output.strip()[-400:]}",
                               hint="Check the URL and that the tag exists (`git ls-remote --tags URL`).")
        (staging / "tree").rename(clone)
        tempdirs.remove(staging)
    commit = run_ok([git, "-C", clone, "rev-parse", "HEAD"], timeout=30).strip()
    flavor, version = detect(clone)
    if flavor == "boringssl":
        version = f"0-{commit[:8]}"
    return Source(flavor, version, commit, f"git {url} {tag}", lambda: clone)
