"""What `libs list` and `libs info` show, as plain data: one record per
library, which the terminal tables and the JSON output both read."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from sslperf.libs import loader
from sslperf.libs.footprint import file_footprint
from sslperf.libs.model import Lib

# (key, label) of the footprint figures, in display order.
FOOTPRINT_FIGURES = (
    ("libcrypto_bytes", "libcrypto file size"),
    ("libssl_bytes", "libssl file size"),
    ("libcrypto_code", "libcrypto text+data"),
    ("libssl_code", "libssl text+data"),
    ("program_text", "minimal TLS program: text"),
    ("program_data", "minimal TLS program: data+bss"),
)


def origin(lib: Lib) -> str:
    if lib.kind == "system":
        return f"operating system (found by {lib.info.get('found_by', '?')})"
    if lib.kind == "registered":
        return f"registered prefix {lib.prefix}"
    return f"built from {lib.info.get('origin', '?')}"


def footprint(lib: Lib) -> dict:
    """File sizes and code sizes of libcrypto/libssl and of the probe program."""
    info = lib.info
    files: dict[str, dict] = {}
    if lib.kind == "built":
        files = {k: v for k, v in info.get("footprint", {}).items() if k in ("libcrypto", "libssl")}
        program = info.get("footprint", {}).get("program", {})
    else:
        program = info.get("program", {})
        for stem in ("libcrypto", "libssl"):
            path = _library_file(lib, stem)
            if path is not None:
                files[stem] = asdict(file_footprint(path))
    figures: dict[str, int | None] = {}
    for stem in ("libcrypto", "libssl"):
        entry = files.get(stem)
        figures[f"{stem}_bytes"] = entry["bytes"] if entry else None
        figures[f"{stem}_code"] = entry["text"] + entry["data"] if entry else None
    figures["program_text"] = program.get("text")
    figures["program_data"] = (program.get("data", 0) + program.get("bss", 0)) if program else None
    kinds = {stem: ("static archive" if str(e["path"]).endswith(".a") else "shared object")
             for stem, e in files.items()}
    return {"figures": figures, "files": {k: v["path"] for k, v in files.items()}, "kinds": kinds,
            "program_linkage": "static" if program.get("static") else "dynamic"}


def _library_file(lib: Lib, stem: str) -> Path | None:
    for soname, path in lib.info.get("shared_objects", {}).items():
        if soname.startswith(stem + ".so"):
            return Path(path)
    if lib.prefix is not None:
        for sub in ("lib", "lib64"):
            for candidate in (lib.prefix / sub / f"{stem}.a", lib.prefix / sub / f"{stem}.so"):
                if candidate.exists():
                    return candidate.resolve()
    return None


def record(lib: Lib, with_footprint: bool = True) -> dict:
    """Everything known about `lib`, JSON-ready."""
    info = lib.info
    out = {
        "name": lib.name,
        "kind": lib.kind,
        "flavor": lib.flavor,
        "version": lib.version,
        "version_string": lib.version_string,
        "variant": lib.variant_label,
        "origin": origin(lib),
        "prefix": str(lib.prefix) if lib.prefix else None,
        "static": lib.linkage.static if lib.linkage else None,
        "linkages": loader.linkages(lib),
        "configure_options": info.get("configure_options"),
        "skipped_options": info.get("skipped_options"),
        "cflags": info.get("cflags"),
        "cmake_settings": info.get("cmake_settings"),
        "compiler": info.get("compiler"),
        "build_seconds": info.get("build_seconds"),
        "phase_seconds": info.get("phase_seconds"),
        "built_at": info.get("built_at"),
        "tools": info.get("tools"),
    }
    if with_footprint:
        out["footprint"] = footprint(lib)
    return out


def change(value: int | None, base: int | None) -> str:
    """`-33%` style change of `value` against `base`."""
    if value is None or not base:
        return ""
    pct = (value - base) / base * 100
    if abs(pct) < 0.05:
        return "±0%"
    return f"{pct:+.0f}%" if abs(pct) >= 1 else f"{pct:+.1f}%"


def comparable(base: dict, other: dict, figure: str) -> bool:
    """A static archive is not compared with a shared object, nor a static
    program with a dynamic one: the difference would be the linkage."""
    if figure.startswith("program"):
        return base["program_linkage"] == other["program_linkage"]
    stem = figure.split("_")[0]
    return base["kinds"].get(stem) == other["kinds"].get(stem)
