"""Making a build's files name the prefix it now lives at, without moving a byte of a binary. OpenSSL bakes its
prefix into text files (pkg-config's .pc, c_rehash), rewritten freely, and into binaries: OPENSSLDIR, ENGINESDIR
and MODULESDIR in libcrypto.a, bin/openssl and legacy.so (where a default openssl.cnf, CA files, engines and modules
are looked for). There a path is overwritten in place when the new one is no longer, padded with `/` (a path reads
`//` as `/`); a longer one is kept, and recorded. The FIPS module is never touched: the MAC in its fipsmodule.cnf
covers its bytes. Two callers: every OpenSSL build, configured for one shared prefix and moved to its home
(libs.build_systems), and an imported bundle, built at another machine's home (libs.bundle)."""

from __future__ import annotations

import functools
import mmap
import os
from collections.abc import Iterable
from pathlib import Path

from sslperf.libs import fips

TEXT_MAX = 1 << 20         # a file this small with no NUL byte is text (.pc, c_rehash) and is rewritten freely


def padded(prefix: Path, length: int) -> bytes:
    """`prefix` (…/libs/HOME/prefix) spelled in `length` bytes: extra `/` before HOME."""
    return os.fsencode(f"{prefix.parents[1]}{'/' * (1 + length - len(os.fsencode(prefix)))}{prefix.parent.name}/prefix")


def naming(home: Path, needles: list[bytes]) -> list[str]:
    """The files under `home`'s prefix/ (as `prefix/...`) that contain one of `needles` (a build's are tens of MiB)."""
    found = []
    for path in sorted((home / "prefix").rglob("*")):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if any(needle in data for needle in needles):
                found.append(path.relative_to(home).as_posix())
    return found


def rewrite(home: Path, files: Iterable[str], needles: list[bytes],
            prefix: Path) -> tuple[dict[str, list[str]], set[str]]:
    """Make `files` (relative to `home`, under prefix/) name `prefix` where they name one of `needles`. Returns
    which files were rewritten (text), patched (binaries) or kept (a binary holding a needle shorter than
    `prefix`), and every spelling of a path the files now hold."""
    new = os.fsencode(prefix)
    needles = [needle for needle in needles if needle != new]
    done: dict[str, list[str]] = {"rewritten": [], "patched": [], "kept": []}
    names = {str(prefix)}
    for rel in files:
        if not (needles and rel.startswith("prefix/")):
            continue
        path = home / rel
        data = path.read_bytes() if path.stat().st_size <= TEXT_MAX else b"\0"
        if b"\0" not in data:
            path.write_bytes(functools.reduce(lambda text, needle: text.replace(needle, new), needles, data))
            done["rewritten"].append(rel)
            continue
        with open(path, "r+b") as handle, mmap.mmap(handle.fileno(), 0) as view:
            present = [n for n in needles if view.find(n) != -1]
            fits = [n for n in present if len(n) >= len(new) and rel != f"prefix/{fips.MODULE}"]
            names.update(os.fsdecode(n) for n in present if n not in fits)
            if present:
                done["kept" if len(fits) < len(present) else "patched"].append(rel)
            for needle in fits:
                spelled = padded(prefix, len(needle))
                names.add(os.fsdecode(spelled))
                at = view.find(needle)
                while at != -1:
                    view[at:at + len(needle)] = spelled
                    at = view.find(needle, at + len(needle))
    return done, names
