"""The one description of a library that every part of sslperf uses: what
it is, where it lives, and how to compile a program against it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from sslperf.libs.footprint import Linkage

LINK_SYSTEM_LIBS = ["-pthread", "-ldl", "-lm"]
# BoringSSL and its fork AWS-LC: C++ runtime, EVP_AEAD, no openssl.cnf, [A|B] cipher groups.
BSSL_FLAVORS = ("boringssl", "boringssl-fips", "aws-lc", "aws-lc-fips")


# Libraries whose API is not OpenSSL's: the harness backend (a directory under harness/) that speaks it.
BACKENDS = {"rustls": "rustls", "wolfssl": "wolfssl"}


def harness_backend(flavor: str) -> str:
    """The harness backend for `flavor`: its own, or the OpenSSL API's."""
    return BACKENDS.get(flavor, "openssl")


def is_bssl(flavor: str) -> bool:
    """Whether `flavor` is BoringSSL or AWS-LC (the one place that decides it)."""
    return flavor in BSSL_FLAVORS


@dataclass
class Lib:
    name: str
    kind: str                     # "system", "built" or "registered"
    flavor: str
    version: str
    variants: tuple[str, ...] = ()
    prefix: Path | None = None
    linkage: Linkage | None = None
    info: dict = field(default_factory=dict)   # build manifest or probe facts
    home: Path | None = None      # cache directory of a built lib
    # A view of a library run differently (libs.fips.with_module): the
    # library it is a view of (its harness binary is that one's), and what
    # its harness processes get in their environment.
    base: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    # How a measurement request names a view (measure.request.name_of): `openssl-3.6.3:fips=openssl-3.1.2+fips`,
    # or a second column of one library, `system#2`; None for a library its name finds.
    spec: str | None = None

    @property
    def variant_label(self) -> str:
        return "+".join(self.variants) if self.variants else "default"

    @property
    def version_string(self) -> str:
        return self.info.get("version_string", "")


def find_lib_dir(prefix: Path) -> Path | None:
    """The directory under `prefix` that holds libcrypto (lib or lib64)."""
    for name in ("lib", "lib64"):
        candidate = prefix / name
        if any(candidate.glob("libcrypto.*")):
            return candidate
    return None


RUSTLS_ARCHIVE = "lib/librustls_ffi.a"
RUSTLS_HEADER = "include/rustls.h"
WOLFSSL_ARCHIVE = "lib/libwolfssl.a"
WOLFSSL_HEADER = "include/wolfssl/ssl.h"


def prefix_linkage(prefix: Path, flavor: str) -> Linkage | None:
    """Static archives when the prefix has them (the harness links statically),
    else the shared objects with an rpath so no LD_LIBRARY_PATH is needed."""
    if harness_backend(flavor) == "rustls":
        if not ((prefix / RUSTLS_ARCHIVE).exists() and (prefix / RUSTLS_HEADER).exists()):
            return None
        return Linkage([f"-I{prefix / 'include'}"], [str(prefix / RUSTLS_ARCHIVE), *LINK_SYSTEM_LIBS], static=True)
    if harness_backend(flavor) == "wolfssl":
        if not ((prefix / WOLFSSL_ARCHIVE).exists() and (prefix / WOLFSSL_HEADER).exists()):
            return None
        # options.h says how the library was configured; every file must see it first
        return Linkage([f"-I{prefix / 'include'}", "-DWOLFSSL_USE_OPTIONS_H"],
                       [str(prefix / WOLFSSL_ARCHIVE), *LINK_SYSTEM_LIBS], static=True)
    lib_dir = find_lib_dir(prefix)
    if lib_dir is None or not (prefix / "include" / "openssl" / "ssl.h").exists():
        return None
    extra = ["-lstdc++"] if is_bssl(flavor) else []
    if (lib_dir / "libssl.a").exists() and (lib_dir / "libcrypto.a").exists():
        return Linkage([f"-I{prefix / 'include'}"],
                       [str(lib_dir / "libssl.a"), str(lib_dir / "libcrypto.a"), *extra, *LINK_SYSTEM_LIBS],
                       static=True)
    return Linkage([f"-I{prefix / 'include'}"],
                   [f"-L{lib_dir}", f"-Wl,-rpath,{lib_dir}", "-lssl", "-lcrypto", *extra, *LINK_SYSTEM_LIBS],
                   static=False)


def version_from_string(version_string: str, fallback: str = "unknown") -> str:
    """`OpenSSL 3.0.19 27 Jan 2026` → `3.0.19`; `LibreSSL 3.8.2` → `3.8.2`."""
    match = re.search(r"\b(\d+\.\d+\.\d+[a-z]?)\b", version_string)
    return match.group(1) if match else fallback
