"""Library sources from crates.io: `openssl-src` (OpenSSL 1.1.1 … 4.x),
`boring-sys` (BoringSSL) and `aws-lc-sys` (AWS-LC).

The list of versions comes from the crates.io sparse index (cached for a day,
used stale when offline); a crate is downloaded with `cargo fetch`, checked
against the index's sha256 and unpacked into sslperf's cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from sslperf import paths, tempdirs
from sslperf.errors import SslperfError
from sslperf.proc import require_tool, run

INDEX_URL = os.environ.get("SSLPERF_CRATES_INDEX", "https://index.crates.io")
INDEX_MAX_AGE_S = 24 * 3600


@dataclass(frozen=True)
class CrateRelease:
    crate: str
    crate_version: str   # e.g. 300.3.2+3.3.2
    cksum: str           # sha256 of the .crate file, from the index
    yanked: bool

    @property
    def semver(self) -> str:
        return self.crate_version.split("+", 1)[0]

    @property
    def build_metadata(self) -> str | None:
        return self.crate_version.split("+", 1)[1] if "+" in self.crate_version else None


def _index_url(crate: str) -> str:
    name = crate.lower()
    if len(name) <= 2:
        prefix = str(len(name))
    elif len(name) == 3:
        prefix = f"3/{name[0]}"
    else:
        prefix = f"{name[:2]}/{name[2:4]}"
    return f"{INDEX_URL}/{prefix}/{name}"


def releases(crate: str, refresh: bool = False) -> list[CrateRelease]:
    """All published versions of `crate`, from a cached copy of its index file."""
    cached = paths.subdir("crates-index") / f"{crate}.jsonl"
    fresh = cached.exists() and time.time() - cached.stat().st_mtime < INDEX_MAX_AGE_S
    if refresh or not fresh:
        try:
            with urllib.request.urlopen(_index_url(crate), timeout=30) as response:
                body = response.read().decode()
            tmp = cached.with_suffix(".tmp")
            tmp.write_text(body)
            tmp.replace(cached)
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            if not cached.exists():
                raise SslperfError(
                    f"Cannot read the crates.io index for `{crate}` ({exc}), and there is no cached copy.",
                    hint="Check the network connection to index.crates.io, or build from a local "
                    "source directory or tarball instead (`sslperf libs build --source-dir`).",
                ) from None
    out = []
    for line in cached.read_text().splitlines():
        if line.strip():
            entry = json.loads(line)
            out.append(CrateRelease(crate, entry["vers"], entry["cksum"], bool(entry.get("yanked"))))
    return out


def _cargo_home() -> Path:
    return Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))


def fetch(release: CrateRelease) -> Path:
    """Download `release` with cargo and unpack it into the cache; return the
    unpacked crate directory. A second call returns the cached copy."""
    dest = paths.subdir("sources") / f"{release.crate}-{release.crate_version}"
    marker = dest / ".sslperf-cksum"
    if marker.exists() and marker.read_text().strip() == release.cksum:
        return dest
    with paths.locked(f"source-{release.crate}-{release.crate_version}"):   # another process may unpack it too
        if marker.exists() and marker.read_text().strip() == release.cksum:
            return dest
        return _unpack(release, dest)


def _unpack(release: CrateRelease, dest: Path) -> Path:
    crate_file = _cargo_fetch(release)
    digest = hashlib.sha256(crate_file.read_bytes()).hexdigest()
    if digest != release.cksum:
        raise SslperfError(
            f"The downloaded {crate_file.name} has sha256 {digest}, but the crates.io index says {release.cksum}.",
            hint=f"Delete {crate_file} and run the command again.",
        )
    staging = tempdirs.make("unpack", cache=True)
    try:
        with tarfile.open(crate_file) as archive:
            paths.unpack(archive, staging)
        unpacked = staging / f"{release.crate}-{release.crate_version}"
        if not unpacked.is_dir():
            raise SslperfError(f"{crate_file.name} does not contain the expected top directory.")
        (unpacked / ".sslperf-cksum").write_text(release.cksum + "\n")
        if dest.exists():
            shutil.rmtree(dest)
        unpacked.rename(dest)
    finally:
        tempdirs.remove(staging)
    return dest


def _cargo_fetch(release: CrateRelease) -> Path:
    cargo = require_tool("cargo", "to fetch library sources from crates.io")
    pattern = f"{release.crate}-{release.crate_version}.crate"
    found = sorted((_cargo_home() / "registry" / "cache").glob(f"*/{pattern}"))
    if found:
        return found[0]
    with tempdirs.private_dir("cargo", cache=True) as tmp:
        project = Path(tmp)
        (project / "lib.rs").write_text("")
        (project / "Cargo.toml").write_text(
            '[package]\nname = "sslperf-fetch"\nversion = "0.0.0"\nedition = "2021"\n'
            '[lib]\npath = "lib.rs"\n'
            f'[dependencies]\n{release.crate} = "={release.semver}"\n'
        )
        result = run([cargo, "fetch", "--quiet"], cwd=project, timeout=900)
        if result.returncode != 0:
            raise SslperfError(
                f"`cargo fetch` of {release.crate} {release.crate_version} failed:\n"
                + "\n".join(result.output.strip().splitlines()[-10:]),
                hint="Check the network connection to crates.io and run the command again.",
            )
    found = sorted((_cargo_home() / "registry" / "cache").glob(f"*/{pattern}"))
    if not found:
        raise SslperfError(f"cargo reported success but {pattern} is not in {_cargo_home()}/registry/cache.")
    return found[0]
