"""The case catalog, read from the harness (`harness list`), which prints it
from the same C tables its families prepare cases from: adding an algorithm
is one edit to one C table, and Python learns of it here.

The table names do not depend on the library the harness is compiled
against (a library that lacks an algorithm answers n/a when the case is
prepared), so one harness — the system library's, else any installed one —
serves for the catalog. It is cached on disk by the harness source digest.
"""

from __future__ import annotations

import functools
import json

from sslperf import paths
from sslperf.errors import SslperfError
from sslperf.libs import installed
from sslperf.libs.model import harness_backend
from sslperf.measure import harness_client


@functools.cache
def load() -> dict:
    """The catalog as the harness prints it (see harness/main.c `list`)."""
    cached = paths.subdir("harness") / f"catalog-{harness_client.source_digest()[:16]}.json"
    try:
        return json.loads(cached.read_text())
    except (OSError, ValueError):
        pass
    lib = _reference_lib()
    catalog = harness_client.call(lib, "list", timeout=120).last
    if catalog.get("type") != "catalog":
        raise SslperfError(f"The harness for {lib.name} did not print its case catalog (got {str(catalog)[:100]}).")
    tmp = cached.with_suffix(".tmp")
    tmp.write_text(json.dumps(catalog))
    tmp.replace(cached)
    return catalog


def _reference_lib():
    # The catalog is the OpenSSL-API backend's tables; another backend answers n/a for what it lacks.
    libs = [lib for lib in installed.all_libs() if lib.linkage is not None and harness_backend(lib.flavor) == "openssl"]
    if not libs:
        raise SslperfError("No library to compile the harness against, so sslperf cannot list its cases.",
                           hint="Install the system OpenSSL headers (`sudo apt-get install libssl-dev`) or build "
                                "one with `sslperf libs build openssl-3.6`.")
    return libs[0]


def names(family: str) -> tuple[str, ...]:
    """The algorithm names of a primitive family (cipher, digest, mac, sig, kex, kem, keygen)."""
    return tuple(a["name"] for a in load()[family]["algorithms"])


def operations(family: str) -> tuple[str, ...]:
    return tuple(load()[family].get("operations", ()))


def workloads(family: str) -> tuple[str, ...]:
    return tuple(load()[family].get("workloads", ("record",)))


def aeads() -> tuple[str, ...]:
    return tuple(a["name"] for a in load()["cipher"]["algorithms"] if a.get("aead"))


def needs(family: str, name: str) -> str | None:
    """What a library needs for this algorithm, where the catalog says."""
    return next((a.get("needs") for a in load()[family]["algorithms"] if a["name"] == name), None)


def api_cases() -> list[dict]:
    """{id, topic, title, alternatives} per API-pattern case, in suite order."""
    return list(load()["api"]["cases"])


def tls() -> dict:
    """protocols, groups [{name, tls13_only}], certs [{name}], contexts, resumption."""
    return load()["tls"]


def afalg() -> list[dict]:
    """{name, kernel, kind, operation} per algorithm the afalg family knows (harness/afalg.c)."""
    return list(load()["afalg"]["algorithms"])
