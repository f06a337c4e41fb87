"""A Windows probe's results (probe.windows): each library's `openssl.exe speed` output, every round of it, read as
`sslperf import` reads `openssl speed` (importers), one run with a column per library; what ran it (Wine, where
Windows was not the system) recorded beside the machine. Wine runs the code on the CPU itself, so, unlike qemu's,
those timings are the CPU's: the run is comparable with a native one, and says how it was made."""

from __future__ import annotations

import re

from sslperf import importers
from sslperf.errors import SslperfError
from sslperf.results import Run
from sslperf.untrusted import shorten, visible

OUTPUT = re.compile(r"(speed|version|digest)-\d+\.txt")
SHA256 = re.compile(r"^\s*((?:[0-9a-fA-F]{2} ?){32})\s*$", re.M)      # certutil's line: the digest, spaced or not


class Refused(SslperfError):
    """A results archive that is not what a probe of this sslperf wrote."""


def run(manifest: dict, machine: dict[str, str], files: dict[str, bytes], where: str) -> Run:
    merged: Run | None = None
    for lib in manifest["libs"]:
        said = SHA256.search(files.get(f"digest-{lib['index']}.txt", b"").decode(errors="replace"))
        if said and said.group(1).replace(" ", "").lower() != lib["sha256"]:    # no certutil (Wine): not checked
            raise Refused(f"{where}: the openssl.exe of {lib['name']} that ran on {visible(machine.get('host', '?'))} "
                          "is not the one the probe carried (its sha256 differs). Nothing was imported.",
                          hint="Import the results run.cmd wrote, as it wrote them.")
        text = files.get(f"speed-{lib['index']}.txt")
        if text is None:
            raise Refused(f"{where}: the output of {lib['name']}'s openssl.exe speed (speed-{lib['index']}.txt) is "
                          "missing. Nothing was imported.", hint="Import the results run.cmd wrote, whole.")
        try:
            one = importers.parse(text, None, lib["name"], f"{where}:speed-{lib['index']}.txt",
                                  _host(machine))
        except SslperfError as failed:
            raise Refused(f"{where}: {lib['name']}'s openssl.exe speed output is not one sslperf reads "
                          f"({shorten(visible(failed.message), 200)}). Nothing was imported.",
                          hint="Import the results run.cmd wrote, as it wrote them.") from None
        if merged is None:
            merged = one
        else:
            merged.libs += one.libs
            merged.measurements += one.measurements
            merged.warnings += one.warnings
    assert merged is not None
    runner = machine.get("runner", "").strip()
    merged.settings = {**merged.settings, "source": "sslperf probe", "probe": manifest["probe"],
                       "target": manifest["target"], "rounds": (manifest.get("windows") or {}).get("rounds"),
                       "speed": (manifest.get("windows") or {}).get("speed")}
    merged.environment = {**merged.environment, "cpu_model": machine.get("cpu_model"),
                          "cpus": int(machine["cpus"]) if machine.get("cpus", "").isdigit() else None,
                          "probe": {"id": manifest["probe"], "target": manifest["target"], "system": "Windows",
                                    "pinning": "none (openssl.exe speed, one process)",
                                    **({"runner": f"{runner}: the Windows program's code ran on this CPU, its "
                                                  "system calls through Wine"} if runner else {})}}
    return merged


def _host(machine: dict[str, str]) -> str | None:
    host = machine.get("host", "").strip()
    return host if host and re.fullmatch(r"[\w.-]{1,64}", host) else None
