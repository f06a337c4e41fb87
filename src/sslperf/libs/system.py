"""The OpenSSL that the operating system ships, found through pkg-config or,
failing that, the compiler's default search paths."""

from __future__ import annotations

import shutil

from sslperf.errors import SslperfError
from sslperf.libs.footprint import Linkage, probe
from sslperf.libs.model import LINK_SYSTEM_LIBS, Lib, version_from_string
from sslperf.proc import run


def _pkg_config_linkage() -> tuple[Linkage, str] | None:
    pkg_config = shutil.which("pkg-config")
    if not pkg_config:
        return None
    cflags = run([pkg_config, "--cflags", "openssl"], timeout=30)
    libs = run([pkg_config, "--libs", "openssl"], timeout=30)
    if cflags.returncode != 0 or libs.returncode != 0:
        return None
    return Linkage(cflags.output.split(), libs.output.split() + LINK_SYSTEM_LIBS, static=False), "pkg-config openssl"


def find_system() -> Lib | None:
    """The system lib, or None when no OpenSSL development files are installed."""
    candidates = []
    found = _pkg_config_linkage()
    if found:
        candidates.append(found)
    candidates.append((Linkage([], ["-lssl", "-lcrypto", *LINK_SYSTEM_LIBS], static=False), "compiler default paths"))
    for linkage, how in candidates:
        try:
            result = probe(linkage)
        except SslperfError:
            continue
        info = {
            "version_string": result.version_string,
            "version_number": result.version_number,
            "found_by": how,
            "shared_objects": result.shared_objects,
            "program": {"text": result.text, "data": result.data, "bss": result.bss, "static": False},
        }
        version = version_from_string(result.library_version or result.version_string)
        return Lib("system", "system", result.flavor, version, linkage=linkage, info=info)
    return None
