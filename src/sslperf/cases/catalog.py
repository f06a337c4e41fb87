"""The case catalog: every family's algorithms, operations, sizes, id templates and API cases, as the harness's C
tables define them (`harness list`, harness/core/main.c). It is data in the package (catalog.json), written from
those tables when they change (`python -m sslperf.measure.catalog_build`, and a test checks the file against a
freshly compiled harness), so reading or parsing a case id needs no compiler and no library.

The table names do not depend on the library the harness is compiled against: a library that lacks an algorithm
answers n/a when the case is prepared.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

PATH = Path(__file__).with_name("catalog.json")


@functools.cache
def load() -> dict:
    """The catalog as the harness prints it (see harness/core/main.c `list`)."""
    return json.loads(PATH.read_text())


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
