"""A small C helper of sslperf's own (the lock interposer, exec's starter) compiled once per source: kept in the
cache under a name with the source's digest, so a changed source is compiled again and an unchanged one never."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sslperf import paths, tempdirs
from sslperf.errors import SslperfError
from sslperf.proc import require_tool, run


def helper(source: Path, where: str, name: str, flags: list[str], what: str, libs: tuple[str, ...] = ()) -> Path:
    """`source` compiled with `flags` into the cache's `where`/NAME-DIGEST (`name` may end in a suffix, `.so`)."""
    stem, dot, suffix = name.partition(".")
    target = paths.subdir(where) / f"{stem}-{hashlib.sha256(source.read_bytes()).hexdigest()[:16]}{dot}{suffix}"
    if target.exists():
        return target
    cc = require_tool("cc", f"to compile {what}")
    with tempdirs.private_dir(stem, cache=True) as work:
        made = Path(work) / name
        done = run([cc, "-std=c11", *flags, "-o", str(made), str(source), *libs], timeout=120)
        if done.returncode != 0:
            raise SslperfError(f"{what[0].upper()}{what[1:]} does not compile here: {done.output.strip()[-300:]}")
        made.rename(target)
    return target
