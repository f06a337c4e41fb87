"""Importers: the output of `openssl speed` (OpenSSL 1.0.2 … 4.x, LibreSSL),
`bssl speed` (BoringSSL, AWS-LC), Google Benchmark JSON (BoringSSL's
`bssl_bench`, or any Google Benchmark program) and wolfCrypt's benchmark (text
or -csv) as an sslperf `Run`.

    run = parse(text)                      # the format is detected
    run = parse(text, fmt="openssl-mr", lib_name="openssl-3.6.3", source_name="speed.txt")

Every figure becomes a Measurement with status "ok", the reported rate in
`reported_rates` (bytes/s with `bytes_per_op` = the block size, or op/s) and
no samples of our own. Case ids follow `sslperf.measure.suites` where sslperf has the
case (`cipher/aes-128-gcm/encrypt/16/speed-compat`, `sig/rsa-2048/sign`,
`kex/x25519/derive`, `kem/ml-kem-768/encaps` …) and the same shape otherwise
(`digest/md5/16/speed-compat`, `sig/ecdsa-brainpoolp256r1/sign`,
`pke/rsa-2048/encrypt`, `other/rand/16/speed-compat`; every id fits a template of the harness's
catalog, measure.case_ids). The text is read entirely before
anything is returned: a damaged or unknown line inside the result section
raises ImportFailed (an SslperfError) naming the line, and nothing is
half-imported.

Whatever the input, `parse` returns a Run or raises ImportFailed, and a
returned Run holds only what the store and every exporter can keep
(`_common`'s bounds): block sizes 1 … 2^31-1 bytes, integers counted before
they are converted (no 4300-digit ValueError), rates finite and within
1e-9 … 1e15 per second, names without control characters and within the
store's column lengths, JSON no deeper than 8 levels (no RecursionError).
The text is decoded once (`_common.decode`): bytes that are not UTF-8 become
U+FFFD, the same for standard input as for a file, with a warning.
"""

from __future__ import annotations

import re

from sslperf.importers._common import (DAMAGED, MAX_CASE, MAX_INPUT_BYTES, MAX_VERSION, Builder, ImportFailed,
                                       check_lines, check_name, decode, flavor_from_name)
from sslperf.importers import gbench, wolfcrypt
from sslperf.importers.bssl_speed import DEBUG, TEXT, detect_flavor, parse_json, parse_text
from sslperf.importers.openssl_mr import MrParser
from sslperf.importers.openssl_speed import HEADERS, NOISE, SYM_HEADER, TextParser, parse_version
from sslperf.results import LibInfo, Run

FORMATS = ("openssl-text", "openssl-mr", "libressl-text", "bssl-text", "bssl-json", "gbench-json", "wolfcrypt-text",
           "wolfcrypt-csv")
SOURCE = {"openssl-text": "openssl speed", "openssl-mr": "openssl speed", "libressl-text": "openssl speed",
          "bssl-text": "bssl speed", "bssl-json": "bssl speed", "gbench-json": "Google Benchmark",
          "wolfcrypt-text": "wolfCrypt benchmark", "wolfcrypt-csv": "wolfCrypt benchmark"}
JSON_FORMATS = ("bssl-json", "gbench-json")
MR_LINE = re.compile(r"^\+(H|F\d*):")

__all__ = ["FORMATS", "MAX_INPUT_BYTES", "ImportFailed", "detect_format", "parse"]


def _json_list(text: str) -> bool:
    """Whether `text` is shaped like `bssl speed -json` output (a list, after an optional debug line)."""
    stripped = text.lstrip("\ufeff \t\r\n")
    body = stripped[len(DEBUG):].lstrip() if stripped.startswith(DEBUG) else stripped
    return body.startswith("[") and ('"description"' in body or '"numCalls"' in body)


def detect_format(text: str) -> str:
    """Which tool and output style `text` is: one of FORMATS."""
    if _json_list(text):
        return "bssl-json"
    if gbench.looks_like(text):
        return "gbench-json"
    if wolfcrypt.looks_like(text):
        return "wolfcrypt-csv" if any(wolfcrypt.CSV_SYM_HEADER.match(line) or wolfcrypt.CSV_ASYM_HEADER.match(line)
                                      for line in text.splitlines()) else "wolfcrypt-text"
    lines = [line.strip() for line in text.splitlines()]
    if any(TEXT.match(line) for line in lines):
        return "bssl-text"
    versions = [v for line in lines if not NOISE.match(line) and (v := parse_version(line))]
    tables = any(line == SYM_HEADER for line in lines) or any(
        p.match(raw) for raw in text.splitlines() for p in HEADERS.values())
    if tables or (versions and not any(MR_LINE.match(line) for line in lines)):
        return "libressl-text" if versions and versions[0][0] == "libressl" else "openssl-text"
    if any(MR_LINE.match(line) for line in lines):
        return "openssl-mr"
    raise ImportFailed(
        "This text is not output of `openssl speed` or `bssl speed` that sslperf can import: it has no result "
        "table of openssl speed (\"The 'numbers' are in 1000s of bytes per second processed.\", the sign/verify "
        "or op/s tables), no `+H:`/`+F:` line of `openssl speed -mr`, no `Did … operations in …us` line of "
        "`bssl speed`, no JSON list of `bssl speed -json`, no Google Benchmark JSON object and no "
        "`wolfCrypt Benchmark (block bytes …)` line of wolfCrypt's benchmark.",
        hint="Import the output as the tool printed it (standard output, with standard error for -mr), "
        "or name the format with --format.")


def parse(text: str | bytes, fmt: str | None = None, lib_name: str | None = None, source_name: str = "-",
          host: str | None = None) -> Run:
    """`text` (the output of openssl speed or bssl speed, as str or as the
    bytes read) as a complete Run, recorded as measured on `host` when given;
    ImportFailed for anything else."""
    where = "standard input" if source_name == "-" else source_name
    if fmt is not None and fmt not in FORMATS:
        raise ImportFailed(f"`{fmt}` is not an import format.", hint=f"Formats: {', '.join(FORMATS)}.")
    if lib_name and (problem := check_name(lib_name, "the library name", MAX_CASE)):
        raise ImportFailed(f"{problem}.", hint="Name the library with a short name, such as openssl-3.6.3-prod.")
    if host is not None and (problem := check_name(host, "the host name", MAX_CASE) or
                             ("the host name is empty" if not host.strip() else None)):
        raise ImportFailed(f"{problem}.", hint="Name the host as the store names hosts, such as c7g-large.")
    text, replaced = decode(text, where)
    if fmt not in JSON_FORMATS and not (fmt is None and (_json_list(text) or gbench.looks_like(text))):
        check_lines(text, where)             # JSON is read by a tokenizer, line breaks or not
    fmt = fmt or detect_format(text)
    builder = Builder(lib="")
    if replaced:
        builder.warnings.append(f"{where}: {replaced} place{'s' if replaced > 1 else ''} in the text "
                                f"{'were' if replaced > 1 else 'was'} not UTF-8 and read as U+FFFD.")
    environment: dict = {}
    if fmt == "gbench-json":
        bssl, environment = gbench.parse(text, where, builder)
        flavor = flavor_from_name(lib_name) or ("boringssl" if bssl else "unknown")
        executable = environment.get("tool_executable", "")
        if not lib_name:
            builder.warnings.append("Google Benchmark's JSON does not name the library; recorded as "
                                    f"`{'boringssl' if bssl else 'gbench'}` (name it with --lib-name).")
        lib = LibInfo(lib_name or ("boringssl" if bssl else "gbench"), flavor, "", "", "unknown", "imported")
        environment = {**environment, "tool": "bssl_bench" if bssl else executable.rsplit("/", 1)[-1][:80]}
    elif fmt in ("wolfcrypt-text", "wolfcrypt-csv"):
        version, csv, environment = wolfcrypt.parse(text, where, builder)
        if csv != (fmt == "wolfcrypt-csv"):
            raise ImportFailed(f"{where}: this is wolfCrypt's benchmark {'with' if csv else 'without'} -csv, not "
                               f"the format {fmt}.", hint="Leave the format out to have it detected.")
        if version and (problem := check_name(version, "the version", MAX_VERSION)):
            raise ImportFailed(f"{where}: {problem}.", hint=DAMAGED)
        name = lib_name or (f"wolfssl-{version}" if version else "wolfssl")
        lib = LibInfo(name, flavor_from_name(lib_name) or "wolfssl", version or "", f"wolfSSL {version}" if version
                      else "", "unknown", "imported")
    elif fmt in ("bssl-text", "bssl-json"):
        descriptions, environment = (parse_text if fmt == "bssl-text" else parse_json)(text, where, builder)
        flavor = flavor_from_name(lib_name) or detect_flavor(descriptions)
        if flavor is None:
            flavor = "boringssl"
            builder.warnings.append("The output does not show whether the bssl tool was BoringSSL's or AWS-LC's; "
                                    "recorded as BoringSSL (name the library with --lib-name).")
        lib = LibInfo(lib_name or flavor, flavor, "", "", "unknown", "imported")
    elif fmt == "openssl-mr":
        MrParser(text, where, builder).parse()
        flavor = flavor_from_name(lib_name) or "openssl"
        m = re.match(rf"^[a-z-]+?-(\d\S{{0,{MAX_VERSION - 1}}})$", lib_name or "")
        version = m.group(1) if m else ""
        if not lib_name:
            builder.warnings.append("openssl speed -mr prints no version line; the library is recorded as "
                                    "`openssl` (name it with --lib-name).")
        lib = LibInfo(lib_name or "openssl", flavor, version, "", "unknown", "imported")
    else:
        parser = TextParser(text, where, builder)
        parser.parse()
        flavor, version, version_string = parser.version
        if fmt == "libressl-text" and flavor != "libressl" or fmt == "openssl-text" and flavor == "libressl":
            raise ImportFailed(f"{where}: the version line says {version_string!r}, not the format {fmt}.",
                               hint="Leave the format out to have it detected.")
        environment = parser.environment
        name = lib_name or (f"{flavor}-{version}" if version else flavor)
        ia32cap = re.search(r"OPENSSL_ia32cap=(\S+)", environment.get("cpuinfo", ""))
        if ia32cap and len(ia32cap.group(1)) > MAX_CASE:
            raise ImportFailed(f"{where}: the CPUINFO line's OPENSSL_ia32cap value has {len(ia32cap.group(1))} "
                               f"characters; openssl prints two to five hexadecimal words (sslperf keeps at most "
                               f"{MAX_CASE}).", hint=DAMAGED)
        lib = LibInfo(name, flavor, version, version_string, "unknown", "imported",
                      ia32cap.group(1) if ia32cap else None)
    for measurement in builder.measurements.values():
        measurement.lib = lib.name
    settings = {"source": SOURCE[fmt], "format": fmt, "file": source_name}
    if host is not None:
        environment = {**environment, "host": host}
    return builder.run(settings, environment, lib)
