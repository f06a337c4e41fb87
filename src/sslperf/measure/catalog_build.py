"""Writes the case catalog (sslperf/cases/catalog.json) from the harness's C tables: `harness list` on a harness
compiled against the system OpenSSL (else any installed OpenSSL-API library). Run it after editing a table:

    python -m sslperf.measure.catalog_build

tests/test_catalog.py compares the file with a freshly compiled harness's list, so a table edited without this is
a failing test, not a case id that cannot be parsed."""

from __future__ import annotations

import json
import sys

from sslperf.cases import catalog
from sslperf.errors import SslperfError
from sslperf.libs import installed
from sslperf.libs.model import harness_backend
from sslperf.measure import harness_client


def from_harness() -> dict:
    """The catalog the harness prints, as a fresh compile of its tables has it."""
    lib = _reference_lib()
    listed = harness_client.call(lib, "list", timeout=120).last
    if listed.get("type") != "catalog":
        raise SslperfError(f"The harness for {lib.name} did not print its case catalog (got {str(listed)[:100]}).")
    return listed


def text(listed: dict) -> str:
    return json.dumps(listed, indent=1) + "\n"


def _reference_lib():
    # The catalog is the OpenSSL-API backend's tables; another backend answers n/a for what it lacks.
    libs = [lib for lib in installed.all_libs() if lib.linkage is not None and harness_backend(lib.flavor) == "openssl"]
    if not libs:
        raise SslperfError("No library to compile the harness against, so sslperf cannot list its cases.",
                           hint="Install the system OpenSSL headers (`sudo apt-get install libssl-dev`) or build "
                                "one with `sslperf libs build openssl-3.6`.")
    return libs[0]


if __name__ == "__main__":
    catalog.PATH.write_text(text(from_harness()))
    print(f"wrote {catalog.PATH}", file=sys.stderr)
