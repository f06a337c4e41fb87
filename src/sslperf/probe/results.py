"""A probe's results archive (what driver.sh wrote on the target) as a run: read in memory, never unpacked; taken
only when its manifest is, byte for byte, one this sslperf built (archive.probes_dir) and the harnesses the target
ran are the ones it names (their digests, where the target had sha256sum); then every sample line is checked
against the manifest's libraries and cases. A results archive that fails any check is refused whole: nothing of it
is stored."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import tarfile
from dataclasses import asdict

from sslperf import figures, negotiation
from sslperf.cases.ids import parse as parse_case
from sslperf.errors import SslperfError
from sslperf.measure import contention
from sslperf.measure.environment import CRYPTO_FLAGS
from sslperf.measure.modes import in_memory, threads
from sslperf.measure.scheduler import merge
from sslperf.probe import windows, windows_results
from sslperf.probe.windows_results import Refused
from sslperf.probe.archive import FORMAT, probes_dir
from sslperf.results import LibInfo, Measurement, Run
from sslperf.untrusted import shorten, visible
from sslperf.verdict import run_noise

MAX_BYTES = 256 << 20       # a results archive of a long probe run is a few MiB
FILES = ("manifest.json", "machine.tsv", "samples.tsv", "log.txt", "profiles.tsv")
PROFILE = re.compile(r"perf-\d+-\d+-[\w.+-]+\.txt")      # `perf script` of a sweep's run (driver.sh)
LOCKS = "not measured: a probe's statically linked harness cannot load the lock interposer"
HINT = "Import the results archive run.sh wrote, as it wrote it, on the machine whose sslperf built the probe."




def is_results(data: bytes) -> bool:
    """Whether `data` looks like a probe's results archive (a gzip'd tar holding a manifest.json)."""
    try:
        return any(n.endswith("/manifest.json") or n == "manifest.json" for n in _members(data))
    except Refused:
        return False


def read(data: bytes, where: str) -> Run:
    """The run a probe's results archive holds, checked (see the module)."""
    files = _members(data)
    missing = [name for name in FILES[:2] if name not in files]
    if missing:
        raise Refused(f"{where} is not a probe's results archive: it lacks {', '.join(missing)}.", hint=HINT)
    manifest = _manifest(files["manifest.json"], where)
    machine = _machine(files["machine.tsv"].decode(errors="replace"))
    if manifest["target"] == windows.TARGET:
        return windows_results.run(manifest, machine, files, where)
    if "samples.tsv" not in files:
        raise Refused(f"{where} is not a probe's results archive: it lacks samples.tsv.", hint=HINT)
    _digests(manifest, machine, where)
    run = _run(manifest, machine, files["samples.tsv"].decode(errors="replace"), where)
    if "profiles.tsv" in files:
        run.settings["contention"] = _contention(manifest, files, where)
    return run


def _members(data: bytes) -> dict[str, bytes]:
    """The archive's files by their name inside its one top directory; only regular files, only those FILES."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            found: dict[str, bytes] = {}
            for member in tar.getmembers():
                name = member.name.split("/", 1)[-1] if "/" in member.name else member.name
                if member.isfile() and (name in FILES or windows_results.OUTPUT.fullmatch(name)
                                        or PROFILE.fullmatch(name)) and name not in found:
                    found[name] = tar.extractfile(member).read()
            return found
    except (tarfile.TarError, OSError, EOFError, gzip.BadGzipFile) as exc:
        raise Refused(f"The file is not a gzip'd tar archive ({shorten(visible(str(exc)), 80)}).", hint=HINT) from None


def _manifest(data: bytes, where: str) -> dict:
    digest = hashlib.sha256(data).hexdigest()
    try:
        manifest = json.loads(data)
        probe = str(manifest["probe"])
    except (ValueError, KeyError, TypeError):
        raise Refused(f"{where}: its manifest.json is not a probe's manifest.", hint=HINT) from None
    kept = probes_dir() / f"{probe}.json" if probe.replace("-", "").isalnum() else None
    if kept is None or not kept.is_file():
        raise Refused(f"{where} names probe {shorten(visible(probe), 40)}, which this sslperf did not build (no "
                      f"manifest of that probe in {probes_dir()}). Nothing was imported.", hint=HINT)
    if hashlib.sha256(kept.read_bytes()).hexdigest() != digest or manifest.get("format") != FORMAT:
        raise Refused(f"{where}: its manifest differs from the one probe {probe} was built with (it was changed "
                      "after the build). Nothing was imported.", hint=HINT)
    return manifest


def _machine(text: str) -> dict[str, str]:
    facts = {}
    for line in text.splitlines():
        key, _, value = line.partition("\t")
        facts.setdefault(key, value)
    return facts


def _digests(manifest: dict, machine: dict[str, str], where: str) -> None:
    """Each harness the target ran has the digest the manifest names (where the target could say)."""
    for lib in manifest["libs"]:
        seen = machine.get(f"digest_{lib['index']}", "")
        if seen and not seen.startswith("none") and seen != lib["sha256"]:
            raise Refused(f"{where}: the harness of {lib['name']} that ran on {visible(machine.get('host', '?'))} is "
                          "not the one the probe carried (its sha256 differs). Nothing was imported.", hint=HINT)


def _run(manifest: dict, machine: dict[str, str], samples: str, where: str) -> Run:
    libs = {str(lib["index"]): lib for lib in manifest["libs"]}
    cases = {case_id: parse_case(case_id) for case_id in manifest["cases"]}
    swept = any(case.family == "threads" for case in cases.values())
    modes = sorted({"threads" if case.family == "threads" else "in-memory" for case in cases.values()})
    settings = {**manifest.get("labels", {}), **manifest["settings"], "modes": modes, "source": "sslperf probe",
                "probe": manifest["probe"], "target": manifest["target"]}
    run = Run.new(settings, _environment(manifest, machine))
    if "in-memory" not in modes:        # no worker was pinned: the sweeps place their threads themselves
        run.environment.pop("pinned_cpu")
    if swept:           # where the sweeps' threads ran (as measure/modes/threads.py records it)
        cpus = [int(c) for c in machine.get("thread_cpus", "").split(",") if c.isdigit()]
        run.environment["placement"] = {"thread_cpus": cpus,
                                        "threads_pinned": bool((manifest.get("threads") or {}).get("pin", True))}
        run.warnings += threads.oversubscribed(list(cases.values()), len(cpus)) if cpus else []
    # A thread count's results are ready from the start, as threads.Session.prepare makes them (no harness asked).
    results: dict[tuple[str, str], Measurement] = {
        (case_id, lib["name"]): threads.ready(case, lib["name"]) for case_id, case in cases.items()
        if case.family == "threads" for lib in manifest["libs"]}
    clocks: list[int] = []
    for number, line in enumerate(samples.splitlines(), 1):
        parts = line.split("\t", 8)
        try:
            kind, pass_, round_, index, case_id, pid, begun, retaken, raw = parts
            reply = json.loads(raw)
            lib = libs[index]
            pass_number, round_number, process = int(pass_), int(round_), int(pid or 0)
            begun_ns, retaken_count = int(begun or 0), int(retaken or 0)
            if kind != "info" and case_id not in cases or not isinstance(reply, dict):
                raise ValueError
        except (ValueError, KeyError):
            raise Refused(f"{where}: line {number} of samples.tsv is not one run.sh writes "
                          f"({shorten(visible(line), 80)!r}). Nothing was imported.", hint=HINT) from None
        if kind == "info":
            run.libs.append(LibInfo(lib["name"], lib["flavor"], lib["version"], str(reply.get("version_string", "")),
                                    lib["variant"], "built", reply.get("ia32cap")))
            continue
        key = (case_id, lib["name"])
        if kind == "prepared" and pass_number == 0:
            results[key] = _prepared(cases[case_id], lib["name"], reply)
        elif key not in results or results[key].status != "ok":
            continue
        elif kind == "sample":          # a round: its samples, or why it failed (merge keeps either)
            clocks.append(begun_ns)
            case = cases[case_id]
            unit, size = results[key].unit, results[key].bytes_per_op
            got = threads.round_of(case, lib["name"], reply) if case.family == "threads" else \
                in_memory.round_of(case, lib["name"], reply, unit, size, process, retaken_count)
            merge(results[key], got, round_number, begun_ns, pass_number)
        elif reply.get("type") not in ("prepared", "calibrated", "samples", "released"):
            # a later pass's preparation, a calibration or a warm-up that failed: the case fails on the library
            why = str(reply.get("reason") or "no reason given")
            results[key].status = "error"
            results[key].reason = f"ready in an earlier pass, then: {why}" if kind == "prepared" else why
    start = min(clocks, default=0)
    for m in results.values():       # the rounds' starts from the first round's, as the scheduler counts them
        if figures.START in (m.figures or {}):
            m.figures[figures.START] = [s - start for s in m.figures[figures.START]]
    run.measurements = [results[(case_id, lib["name"])] for case_id in cases for lib in manifest["libs"]
                        if (case_id, lib["name"]) in results]
    flags = [] if machine.get("pinned_cpu", "").isdigit() else ["workers not pinned (no taskset on the target)"]
    run.environment["noise"] = run_noise.summarise(run, flags)
    run.started = machine.get("started") or run.started       # when the target began, not when it was imported
    run.finished = machine.get("finished") or run.started
    run.complete, run.state = True, "complete"
    return run


def _contention(manifest: dict, files: dict[str, bytes], where: str) -> list[dict]:
    """Why each library's largest count scales as it does, from the target's CPU profiles (contention.growing), in
    the form `sslperf scale` records (scale.render reads it)."""
    libs = {str(lib["index"]): lib["name"] for lib in manifest["libs"]}
    profiles: dict[tuple[str, str, str], dict[int, str]] = {}
    for line in files["profiles.tsv"].decode(errors="replace").splitlines():
        parts = line.split("\t")
        if len(parts) != 5 or parts[0] not in libs or not parts[3].isdigit() or parts[4] not in files:
            raise Refused(f"{where}: a line of profiles.tsv is not one run.sh writes ({shorten(visible(line), 80)!r}). "
                          "Nothing was imported.", hint=HINT)
        profiles.setdefault((libs[parts[0]], parts[1], parts[2]), {})[int(parts[3])] = parts[4]
    found = []
    for (lib, case, mode), by_count in profiles.items():
        n = max(by_count)
        entry = {"lib": lib, "case": case, "mode": mode, "threads": n, "locks": LOCKS}
        try:
            one, _ = contention.leaves_and_callers(files[by_count[1]].decode(errors="replace"))
            at_n, callers = contention.leaves_and_callers(files[by_count[n]].decode(errors="replace"))
        except (KeyError, SslperfError) as problem:
            entry["problem"] = f"the target's CPU profiles are not usable ({getattr(problem, 'message', problem)})"
        else:
            entry["growing"] = [asdict(g) | {"grew": g.grew} for g in contention.growing(one, at_n, callers)[:8]]
            entry["cpu_profile"] = ("perf record -e cpu-clock with DWARF call graphs on the target: each function's "
                                    "self share of all threads' samples")
        found.append(entry)
    return found


def _prepared(case, lib: str, reply: dict) -> Measurement:
    if reply.get("type") == "prepared":
        return Measurement.of(case, lib, unit=reply.get("unit", "ops"), bytes_per_op=int(reply.get("bytes_per_op") or 0),
                              note=reply.get("note"), negotiated=negotiation.recorded(reply))
    status = "n/a" if reply.get("type") == "na" else "error"
    return Measurement.of(case, lib, status, str(reply.get("reason") or "no reason given"))


def _environment(manifest: dict, machine: dict[str, str]) -> dict:
    flags = set(machine.get("cpu_flags", "").split())
    load = [float(x) for x in machine.get("loadavg_before", "").split()[:3] if _number(x)]
    during = [float(v.split()[0]) for k, v in machine.items() if k.startswith("loadavg_pass_") and v and
              _number(v.split()[0])]
    pinned = machine.get("pinned_cpu", "")
    # Run by an emulator (qemu-user), or by a machine that is not the probe's target (binfmt_misc's qemu): the
    # timings are the emulator's, marked so, and never compared with a native run's (compare refuses it).
    target_machine = str(manifest["target"]).split("-")[0]
    emulated = None
    if machine.get("emulator") or (machine.get("machine") and machine["machine"] != target_machine):
        emulated = (f"emulated: {manifest['target']} code under {machine.get('emulator') or 'an emulator'} on "
                    f"{machine.get('machine') or '?'}")
    return {"host": machine.get("host") or "unknown", "time": machine.get("started"), "machine": machine.get("machine"),
            "cpu_model": machine.get("cpu_model"), "cpus": int(machine["cpus"]) if machine.get("cpus", "").isdigit()
            else None, "cpu_flags": sorted(flags & set(CRYPTO_FLAGS)), "kernel": machine.get("kernel"),
            "governor": machine.get("governor") or None, "loadavg": load, "mask": None, "virtualized": "hypervisor"
            in flags, "pinned_cpu": int(pinned) if pinned.isdigit() else None,
            "probe": {"id": manifest["probe"], "target": manifest["target"], "system": machine.get("system"),
                      **({"emulated": emulated} if emulated else {}),
                      "pinning": "taskset" if pinned.isdigit() else pinned, "loadavg_during": during,
                      "loadavg_after": machine.get("loadavg_after"), "seconds": machine.get("seconds")}}


def _number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False
