"""What a build's build.json holds, field by field with its type: the one
check made wherever one comes from outside this process — a bundle's, before
anything of it is installed, and each one in libs/ as the libraries in hand
are read (a file edited by hand, left by an older sslperf or by an import
that predates this check). A field that every reader takes for granted
is required; the rest may be absent or null (an older build lacks some),
but never of another type. Fields this version does not know are kept."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

MANIFEST = "build.json"
KEY = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Record:
    """A JSON object: these fields (each of its spec), the required ones present."""
    fields: dict
    required: frozenset = field(default_factory=frozenset)


@dataclass(frozen=True)
class Each:
    """A JSON object whose every value is of one spec (keys are free text)."""
    spec: object


NUMBER = "number"          # int or float, never bool
TEXTS = [str]              # a list, each item of the spec inside

_FILE = Record({"path": str, "bytes": int, "text": int, "data": int, "bss": int},
               frozenset({"path", "bytes", "text", "data"}))
_PROGRAM = Record({"text": int, "data": int, "bss": int, "static": bool})
_RELOCATED = Record({"from": TEXTS, "to": str, "rewritten": TEXTS, "patched": TEXTS, "kept": TEXTS, "names": TEXTS},
                    frozenset({"from", "to", "rewritten", "patched", "kept", "names"}))

# The fields a bundle.json carries of the build (bundle._KEY_FIELDS) are among these.
BUILD = Record({
    "name": str, "flavor": str, "version": str, "key": str, "variants": TEXTS, "origin": str,
    "source_digest": str, "recipe": int, "configure_options": TEXTS, "skipped_options": TEXTS, "cflags": TEXTS,
    "cmake_settings": TEXTS, "compiler": Each(str), "compiler_launcher": str, "jobs": int,
    "phase_seconds": Each(NUMBER), "build_seconds": NUMBER, "built_at": str, "sslperf_version": str,
    "version_string": str, "version_number": int, "library_version": str, "tools": Each(str), "fips_module": str,
    "footprint": Record({"libcrypto": _FILE, "libssl": _FILE, "libwolfssl": _FILE, "librustls_ffi": _FILE,
                         "program": _PROGRAM}),
    # Written by `libs import`: the machine and C library it was built for, and where it was moved from.
    "machine": str, "libc": Record({"name": str, "version": str}), "relocated": _RELOCATED,
    "imported": Record({"at": str, "sslperf_version": str, "compiler_here": Each(str)}),
}, frozenset({"name", "flavor", "version"}))


def problem(manifest: object, spec: Record = BUILD, within: str = "") -> str | None:
    """What is wrong with a build.json's content (`has no …`, `gives … as …`), or None.
    `spec` may be a part of BUILD (`part`); `within` names where it lies in a larger file."""
    if not isinstance(manifest, dict):
        return f"gives {f'`{within}`' if within else 'its content'} as {_shown(manifest)}, not an object of fields"
    found = _problem(manifest, spec, f"{within}." if within else "")
    if found:
        return found
    named = f"{within}." if within else ""
    for name in ("name", "flavor", "version"):
        if name in spec.fields and manifest.get(name) is not None and not manifest[name].strip():
            return f"gives an empty `{named}{name}`"
    if "key" in spec.fields and manifest.get("key") is not None and not KEY.fullmatch(manifest["key"]):
        return f"gives `{named}key` as {_shown(manifest['key'])}, not 64 hex digits"
    return None


def part(names: tuple[str, ...], required: tuple[str, ...] = ()) -> Record:
    """The spec of some of a build.json's fields (what a bundle.json carries of it)."""
    return Record({name: BUILD.fields[name] for name in names}, frozenset(required))


def _problem(value: object, spec: object, where: str) -> str | None:
    if isinstance(spec, Record):
        if not isinstance(value, dict):
            return _wrong(where, value, "an object")
        missing = sorted(spec.required - value.keys())
        if missing:
            return f"has no `{where}{missing[0]}`"
        for name, inner in spec.fields.items():
            if value.get(name) is None:
                if name in spec.required:
                    return f"has no `{where}{name}` (it is null)"
                continue
            found = _problem(value[name], inner, f"{where}{name}.")
            if found:
                return found
        return None
    if isinstance(spec, Each):
        if not isinstance(value, dict):
            return _wrong(where, value, "an object")
        return next((p for k, v in value.items() if (p := _problem(v, spec.spec, f"{where}{k[:60]}."))), None)
    if isinstance(spec, list):
        if not isinstance(value, list):
            return _wrong(where, value, "a list")
        return next((p for i, v in enumerate(value) if (p := _problem(v, spec[0], f"{where}{i}."))), None)
    if spec == NUMBER:
        ok, wanted = isinstance(value, (int, float)) and not isinstance(value, bool), "a number"
    else:
        ok = isinstance(value, spec) and (spec is bool or not isinstance(value, bool))
        wanted = {str: "text", int: "a whole number", bool: "true or false"}[spec]
    return None if ok else _wrong(where, value, wanted)


def _wrong(where: str, value: object, wanted: str) -> str:
    return f"gives `{where.rstrip('.')}` as {_shown(value)}, not {wanted}"


def _shown(value: object) -> str:
    """A value as a message shows it: a container by its kind, anything else as JSON spells it, cut short."""
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "a list"
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 60 else text[:57] + "…"
