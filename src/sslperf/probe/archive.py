"""`sslperf probe build`: a request's libraries and cases as one archive that measures them where sslperf is not
installed — per library a statically linked harness, the POSIX sh driver (driver.sh, the scheduler's plan), the plan
as shell variables and a manifest (the probe's id, each harness's digest, the cases, the settings, sslperf's
version). The manifest is also kept in the data directory (`probes/ID.json`): `sslperf import` of a results archive
takes only one whose manifest is one of those, byte for byte (probe.results)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import io
import json
import platform
import shlex
import tarfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from sslperf import __version__, paths
from sslperf.cases.ids import Case
from sslperf.errors import SslperfError
from sslperf.libs import targets
from sslperf.libs.model import Lib, harness_backend
from sslperf.measure import certificates
from sslperf.measure.harness_client import harness_binary
from sslperf.measure.modes import in_memory, registry, threads
from sslperf.measure.request import Request
from sslperf.probe import windows

FORMAT = "sslperf-probe 1"
DRIVER = Path(__file__).with_name("driver.sh")
ANSWER_SECONDS = 600    # a harness that answers nothing this long is stopped (its library's case fails)
MAX_LIBS = 6            # the driver holds a descriptor per worker, and POSIX sh addresses 3 to 8 for them


@dataclass
class Built:
    path: Path
    manifest: dict


def _target(libs: list[Lib]) -> str:
    """The machine the probe's harnesses run on: the libraries' (a cross build's, libs.targets), else this one."""
    found = {(t.name if (t := targets.of(lib.variants)) else targets.native()) for lib in libs}
    if len(found) > 1:
        raise SslperfError(f"A probe runs on one kind of machine; these libraries are built for "
                           f"{' and '.join(sorted(str(f) for f in found))}. Nothing was built.",
                           hint="Build one probe per kind of machine.")
    (target,) = found
    if target is None:
        raise SslperfError(f"sslperf builds probes on x86_64 or aarch64 Linux; this machine is {platform.machine()}. "
                           "Nothing was built.", hint="Build the probe on an x86_64 Linux machine.")
    return target


def build(request: Request, out: Path, progress=lambda what: None) -> Built:
    """The probe archive of `request` (in-memory cases of built libraries) at `out`, and its manifest kept."""
    libs, cases = request.resolve()
    _refuse(libs, cases)
    target = _target(libs)
    described = [{"name": lib.name, "flavor": lib.flavor, "version": str(lib.version), "variant": lib.variant_label}
                 for lib in libs]
    if target == windows.TARGET:        # openssl.exe speed, run by run.cmd (probe.windows)
        progress("each library's openssl.exe")
        payload, plan = windows.files(libs, cases, request.settings.processes)
        return _archive(described, payload, {"windows": plan}, cases, request, target, out)
    harnesses = {}
    for index, lib in enumerate(libs):
        progress(f"a static harness for {lib.name}")
        harnesses[f"bin/{index}/sslperf-harness"] = harness_binary(lib, static=True).read_bytes()
    return write(described, harnesses, cases, request.settings, target, request.source, request.labels, out,
                 request.options.get("threads") or threads.Options())


def write(described: list[dict], harnesses: dict[str, bytes], cases: list[Case], settings, target: str, source: str,
          labels: dict, out: Path, swept: threads.Options | None = None) -> Built:
    """The archive of a probe of the libraries `described`, whose harnesses are `harnesses` (bin/INDEX/… → bytes;
    POSIX targets: run.sh drives them), at `out`; its manifest kept in probes_dir()."""
    swept = swept or threads.Options()
    driver = DRIVER.read_bytes()
    payload = {**harnesses, "run.sh": driver}
    request = Request(source, [d["name"] for d in described], [c.id for c in cases], settings, labels=labels)
    plan = {"threads": dataclasses.asdict(swept), "driver_sha256": hashlib.sha256(driver).hexdigest()}
    return _archive(described, payload, plan, cases, request, target, out,
                    lambda entries: _plan(entries, cases, settings, swept))


def _archive(described: list[dict], payload: dict[str, bytes], plan: dict, cases: list[Case], request: Request,
             target: str, out: Path, plan_sh=None) -> Built:
    """The archive: `payload` (each library's program under bin/INDEX/, the driver), the manifest naming each
    program's digest, and (POSIX targets) plan.sh; the manifest kept in probes_dir()."""
    probe_id = f"{dt.datetime.now(dt.timezone.utc):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:8]}"
    entries = []
    for index, lib in enumerate(described):
        name = next(n for n in payload if n.startswith(f"bin/{index}/"))
        entries.append({**lib, "index": index, "harness": name, "sha256": hashlib.sha256(payload[name]).hexdigest()})
    manifest = {"format": FORMAT, "probe": probe_id, "sslperf": __version__, "target": target,
                "built": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "source": request.source,
                "labels": request.labels, "libs": entries, "cases": [c.id for c in cases],
                "settings": request.settings.as_dict(), **plan}
    manifest_bytes = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    files = {**payload, "manifest.json": manifest_bytes}
    if plan_sh is not None:
        files["plan.sh"] = plan_sh(entries).encode()
    _write(out, f"sslperf-probe-{probe_id}", files)
    (probes_dir() / f"{probe_id}.json").write_bytes(manifest_bytes)
    return Built(out, manifest)


def probes_dir() -> Path:
    """Where the manifests of the probes this sslperf built are kept."""
    path = paths.data_dir() / "probes"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _refuse(libs: list[Lib], cases: list[Case]) -> None:
    other = [c.id for c in cases if registry.mode_of(c, "time") not in (in_memory.MODE, threads.MODE)]
    if other:
        raise SslperfError(f"A probe measures the in-memory cases (speed, api and in-memory TLS) and their thread "
                           "sweeps; "
                           f"{other[0]} is measured another way" + (f" (and {len(other) - 1} more)" if other[1:] else "")
                           + ". Nothing was built.", hint="Choose in-memory cases with --case or --suite.")
    if len(libs) > MAX_LIBS:
        raise SslperfError(f"A probe compares at most {MAX_LIBS} libraries; {len(libs)} were given. Nothing was built.",
                           hint="Build two probes, each with a few of them.")
    for lib in libs:
        if lib.kind != "built":
            raise SslperfError(f"{lib.name} is not a library sslperf built: a probe carries each library linked into "
                               "its harness, and only a built library's archives can be. Nothing was built.",
                               hint="Build it first, e.g. `sslperf libs build openssl-3.6`, and name that build.")
        if harness_backend(lib.flavor) != "openssl" or lib.env:
            raise SslperfError(f"{lib.name}: probes carry OpenSSL-API libraries whose harness needs no files beside "
                               "it (no FIPS module, no rustls or wolfSSL yet). Nothing was built.",
                               hint="Choose OpenSSL, BoringSSL, AWS-LC or LibreSSL builds without the fips variant.")


def _plan(entries: list[dict], cases: list[Case], settings, swept: threads.Options) -> str:
    """The plan as shell variables for driver.sh (every value quoted; the names and ids are sslperf's own)."""
    values = {
        "LIB_INDEXES": " ".join(str(e["index"]) for e in entries),
        "CASES": " ".join(c.id for c in cases),
        "PASSES": settings.processes,
        "SAMPLES": settings.samples,
        "TARGET_NS": int(settings.target_ms * 1e6),
        "RETAKES": in_memory.RETAKES,
        "FUTILE_RETAKES": in_memory.FUTILE_RETAKES,
        "MAX_CASE_NS": int(in_memory.MAX_CASE_SECONDS * 1e9),
        "MIN_SAMPLES": in_memory.MIN_SAMPLES,
        "CERTS": int(certificates.needed(cases)),
        "PEM": int(certificates.pem_needed(cases)),
        "CA_CERTIFICATES": certificates.CA_CERTIFICATES,
        "ANSWER_SECONDS": ANSWER_SECONDS,
        "THREAD_MS": swept.milliseconds,
        "THREAD_PIN": int(swept.pin),
        "ONE_THREAD_ROUNDS": swept.one_thread_rounds,
        "EXPLAIN": int(swept.explain and any(c.family == "threads" for c in cases)),
    }
    lines = ["# The plan of this probe, read by run.sh (written by `sslperf probe build`)."]
    lines += [f"{key}={shlex.quote(str(value))}" for key, value in values.items()]
    lines += [f"LIB_{e['index']}_BIN={shlex.quote(e['harness'])}" for e in entries]
    return "\n".join(lines) + "\n"


def _write(out: Path, top: str, files: dict[str, bytes]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with tarfile.open(partial, "w:gz") as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size, info.mode = len(data), 0o755 if name.endswith((".sh", ".cmd", ".exe", "harness")) else 0o644
            info.mtime = int(dt.datetime.now().timestamp())
            tar.addfile(info, io.BytesIO(data))
    partial.replace(out)
