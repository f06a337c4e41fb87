"""A server's source from Debian's source packages: apt itself fetches it, with sslperf's own list of `deb-src`
lines in a private apt state directory (the machine's apt configuration is not touched), so the Release files'
signatures are checked by the archive keyring as for any install, and `dpkg-source` unpacks it with Debian's
patches applied. The unpacked tree is cached per package version; its digest is part of a server build's key.

The suites come from SSLPERF_DEBIAN_SUITES (default bookworm bookworm-updates) on SSLPERF_DEBIAN_MIRROR (default
Debian's own), the same variables the container's base image reads."""

from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from sslperf import paths, tempdirs
from sslperf.errors import SslperfError
from sslperf.proc import require_tool, run

MIRROR = "http://deb.debian.org/debian"
SUITES = "bookworm bookworm-updates"
LISTS_MAX_AGE_S = 24 * 3600       # the index of source packages is read again after a day


@dataclass(frozen=True)
class SourcePackage:
    package: str
    version: str         # Debian's version, e.g. 1.22.1-9+deb12u9
    tree: Path           # unpacked, Debian's patches applied

    @property
    def upstream(self) -> str:
        """The upstream version: 1.22.1."""
        return re.sub(r"^\d+:", "", self.version).rsplit("-", 1)[0]


def _apt_options(state: Path) -> list[str]:
    return ["-o", f"Dir::Etc::SourceList={state / 'sources.list'}", "-o", f"Dir::Etc::SourceParts={state / 'parts'}",
            "-o", f"Dir::State::Lists={state / 'lists'}", "-o", f"Dir::Cache={state / 'cache'}",
            "-o", "Dir::State::status=/dev/null", "-o", "APT::Sandbox::User=root", "-q"]


def _state() -> Path:
    """sslperf's own apt directory, its lists brought up to date when older than a day or the sources changed."""
    mirror = os.environ.get("SSLPERF_DEBIAN_MIRROR", MIRROR)
    suites = os.environ.get("SSLPERF_DEBIAN_SUITES", SUITES).split()
    state = paths.subdir("apt-sources")
    for sub in ("lists/partial", "parts", "cache/archives/partial"):
        (state / sub).mkdir(parents=True, exist_ok=True)
    wanted = "".join(f"deb-src {mirror} {suite} main\n" for suite in suites)
    listing = state / "sources.list"
    updated = state / "updated"
    same = listing.exists() and listing.read_text() == wanted
    if not same or not updated.exists() or time.time() - updated.stat().st_mtime > LISTS_MAX_AGE_S:
        listing.write_text(wanted)
        updated.unlink(missing_ok=True)
        apt_get = require_tool("apt-get", "to fetch a server's Debian source package")
        result = run([apt_get, *_apt_options(state), "update"], timeout=600)
        if result.returncode != 0 or re.search(r"^(E|W): ", result.output, re.M):
            raise SslperfError(f"apt could not read the source package lists of {mirror} ({' '.join(suites)}): "
                               f"{_last_lines(result.output)}",
                               hint="Check that the machine reaches Debian's archive, or set SSLPERF_DEBIAN_MIRROR "
                                    "to a mirror it reaches; nothing was built.")
        updated.write_text("")
    return state


def _last_lines(output: str, count: int = 4) -> str:
    return " ".join(line.strip() for line in output.strip().splitlines()[-count:])


def versions(package: str) -> list[str]:
    """The versions of `package` the configured suites offer, newest first (apt's order)."""
    state = _state()
    apt_cache = require_tool("apt-cache", "to find a server's Debian source package")
    result = run([apt_cache, *_apt_options(state), "showsrc", "--only-source", package], timeout=120)
    found = re.findall(r"^Version: (\S+)", result.output, re.M)
    if not found:
        suites = os.environ.get("SSLPERF_DEBIAN_SUITES", SUITES)
        raise SslperfError(f"Debian ({suites}) has no source package `{package}`.",
                           hint="Set SSLPERF_DEBIAN_SUITES to suites that carry it.")
    compare = require_tool("dpkg", "to order Debian versions")
    ordered: list[str] = []
    for version in dict.fromkeys(found):      # apt lists each suite's; newest first by dpkg's rules
        at = next((i for i, v in enumerate(ordered)
                   if run([compare, "--compare-versions", version, "gt", v], timeout=30).returncode == 0),
                  len(ordered))
        ordered.insert(at, version)
    return ordered


def choose(package: str, wanted: str | None = None) -> str:
    """The Debian version of `package` to build: the newest, or the newest whose upstream version is `wanted` or
    starts with it (`1.22`); an error naming the versions on offer when none is."""
    offered = versions(package)
    chosen = next((v for v in offered if wanted is None or _upstream(v) == wanted
                   or _upstream(v).startswith(wanted.rstrip(".") + ".")), None)
    if chosen is None:
        suites = os.environ.get("SSLPERF_DEBIAN_SUITES", SUITES)
        raise SslperfError(f"No {package} matching `{wanted}` in Debian's source packages ({suites}); nothing was "
                           "built or measured.",
                           hint=f"On offer: {', '.join(_upstream(v) + ' (' + v + ')' for v in offered)}; give one "
                                "of those with --server-version, or leave it out for the newest.")
    return chosen


def fetch(package: str, wanted: str | None = None) -> SourcePackage:
    """The newest source of `package` (or the newest whose upstream version starts with `wanted`, e.g. `1.22`),
    unpacked with Debian's patches, from the cache when it was fetched before."""
    chosen = choose(package, wanted)
    home = paths.subdir("sources") / f"debian-{package}-{chosen.replace(':', '_')}"
    if (home / ".sslperf-ok").exists():
        return SourcePackage(package, chosen, home)
    state = _state()
    apt_get = require_tool("apt-get", "to fetch a server's Debian source package")
    require_tool("dpkg-source", "to unpack a Debian source package")
    work = tempdirs.make(f"debian-{package}", cache=True)
    try:
        result = run([apt_get, *_apt_options(state), "source", f"{package}={chosen}"], timeout=900, cwd=work)
        trees = [p for p in work.iterdir() if p.is_dir()]
        if result.returncode != 0 or len(trees) != 1:
            raise SslperfError(f"apt could not fetch and unpack the Debian source of {package} {chosen}: "
                               f"{_last_lines(result.output)}",
                               hint="The archive may be unreachable or the version withdrawn; try again later, or "
                                    "set SSLPERF_DEBIAN_SUITES to another suite.")
        (trees[0] / ".sslperf-ok").write_text(chosen + "\n")
        if home.exists():
            shutil.rmtree(home)
        trees[0].rename(home)
    finally:
        tempdirs.remove(work)
    return SourcePackage(package, chosen, home)


def _upstream(version: str) -> str:
    return re.sub(r"^\d+:", "", version).rsplit("-", 1)[0]
