"""The one spelling of a function's name, whichever tool printed it (perf, callgrind, the lock interposer's
backtraces), so that profiles and contention sites of two builds name the same function alike."""

from __future__ import annotations

import re

_CLONE_SUFFIX = re.compile(r"(\.(constprop|isra|part|cold|lto_priv|localalias)(\.\d+)?)+$")


def function_name(raw: str) -> str:
    """One name per function whichever tool saw it: no symbol version
    (`free@GLIBC_2.2.5`), no GCC clone suffix (`.constprop.0`, `.cold`: they
    differ between builds of the same code), no perf `(inlined)` mark and no
    callgrind recursion depth (`f'2`)."""
    name = raw.strip()
    name = re.sub(r" \(inlined\)$", "", name)
    name = re.sub(r"'\d+$", "", name)
    name = name.split("@", 1)[0] if not name.startswith("@") else name
    return _CLONE_SUFFIX.sub("", name) or raw.strip()
