"""Where a case spends its time: run one case of the harness, through the
harness client, under `perf record` or callgrind, and read the tool's report
(parse.py) into a Profile.

Only the harness's timed loop is profiled (sslperf_profiled_loop in
harness/profile.c): callgrind collects inside that function alone, and perf
starts with its events off and the harness switches them on around the loop
through perf's control fifo. Setup (keys, contexts, the checked first
operation) is left out either way.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from sslperf import tempdirs, userfiles
from sslperf.errors import SslperfError
from sslperf.libs.model import Lib
from sslperf.measure import certificates, harness_client
from sslperf.measure.perf import perf_problem  # noqa: F401  (profiling's callers ask it here)
from sslperf.profiling.model import LOOP_FUNCTION, Profile
from sslperf.profiling.parse import parse_callgrind_annotate, parse_perf_report

PERF_FREQUENCY = 999          # Hz; odd, so it does not beat with periodic work
_PERF_SAMPLES = re.compile(r"\((\d+) samples\)")


def choose_tool(requested: str) -> tuple[str, str]:
    """(tool, why it was chosen). `auto` takes perf when `perf record` works
    here (it samples real time, so it sees what the CPU does), else callgrind
    (instructions counted on a simulated CPU: slow, but needs no counters)."""
    valgrind = shutil.which("valgrind") and shutil.which("callgrind_annotate")
    if requested == "callgrind":
        if not valgrind:
            raise SslperfError("valgrind (with callgrind_annotate) is not installed.",
                               hint="Install it with `sudo apt-get install valgrind`, or use --tool perf.")
        return "callgrind", "asked for with --tool callgrind"
    problem = perf_problem()
    if requested == "perf":
        if problem:
            raise SslperfError(f"perf cannot record here: {problem}.", hint=_perf_hint(problem, bool(valgrind)))
        return "perf", "asked for with --tool perf"
    if problem is None:
        return "perf", "`perf record` works here"
    if valgrind:
        return "callgrind", f"perf cannot record here ({problem})"
    raise SslperfError(f"Neither perf nor valgrind can profile here: {problem}, and valgrind is not installed.",
                       hint="Install valgrind (`sudo apt-get install valgrind`) — it needs no kernel support — "
                            "or perf (`sudo apt-get install linux-perf`; on Ubuntu `linux-tools-generic`).")


def _perf_hint(problem: str, have_valgrind: bool) -> str:
    other = " or use --tool callgrind" if have_valgrind else ""
    if "not installed" in problem:
        return f"Install it with `sudo apt-get install linux-perf` (Ubuntu: `linux-tools-generic`){other}."
    return ("Allow it with `sudo sysctl kernel.perf_event_paranoid=1` (containers also need the perf_event_open "
            f"syscall allowed){other}.")


def file_names(lib_name: str, tool: str) -> list[str]:
    """The files a profile of `lib_name` with `tool` leaves: the raw profile and the tool's text reports."""
    stem = file_stem(lib_name)
    if tool == "perf":
        return [f"{stem}.perf.data", f"{stem}.perf-report.txt"]
    return [f"{stem}.callgrind.out", f"{stem}.callgrind-self.txt", f"{stem}.callgrind-inclusive.txt"]


def check_outputs(out: Path, force: bool, libs: list[Lib], tool: str) -> None:
    """Refused unless every file a profile of `libs` leaves in `out` may be written there (userfiles' rule)."""
    for name in [n for lib in libs for n in file_names(lib.name, tool)] + ["profile.json"]:
        userfiles.check_file_target(out / name, force, str(out / name))


def file_stem(lib_name: str) -> str:
    """A library's name as a file name's stem (what a profile's files are named after)."""
    return re.sub(r"[^A-Za-z0-9._+-]", "_", lib_name)


def record_into(out: Path, force: bool, libs: list[Lib], case, tool: str, seconds: float,
                iterations: int | None, say=lambda text: None) -> list[Profile]:
    """Profile `case` (a case_ids.Case) on each of `libs` and keep the files
    in `out`. The tools write into a private directory; their files are
    moved into `out` under sslperf's rule for user files (nothing it did not
    write is replaced, unless `force`), all checked before the first profile
    starts."""
    check_outputs(out, force, libs, tool)
    profiles = []
    with tempfile.TemporaryDirectory(dir=out, prefix=".sslperf-profiling-") as staging, \
            certificates.for_cases(libs, [case]) as cert_dir:
        for lib in libs:
            say(f"  {lib.name}: {case.id}, {f'{iterations} operations' if iterations else f'{seconds:g} s'} …")
            profile = record(lib, case.id, tool, Path(staging), seconds, iterations, certificates.env(cert_dir))
            for name in file_names(lib.name, tool):
                userfiles.place(Path(staging) / name, out / name, force)
            profile.raw = str(out / Path(profile.raw).name)
            profile.reports = [str(out / Path(report).name) for report in profile.reports]
            profiles.append(profile)
    return profiles


def record(lib: Lib, case_id: str, tool: str, out_dir: Path, seconds: float, iterations: int | None,
           env: dict[str, str] | None = None) -> Profile:
    """Profile `case_id` on `lib` with `tool`, keeping the raw profile and
    the tool's text reports in `out_dir`."""
    binary = harness_client.harness_binary(lib)
    loop = ["--iters", str(iterations)] if iterations else ["--seconds", f"{seconds:g}"]
    args = ["profile", case_id, *loop]
    stem = out_dir / file_stem(lib.name)
    if tool == "perf":
        profile = _record_perf(lib, case_id, args, stem, env or {}, seconds)
    else:
        profile = _record_callgrind(lib, case_id, args, stem, env or {})
    profile.symbols = symbols_note(lib, binary)
    return profile


def _record_perf(lib: Lib, case_id: str, args: list[str], stem: Path, env: dict, seconds: float) -> Profile:
    perf = shutil.which("perf") or "perf"
    data = stem.with_name(stem.name + ".perf.data")
    # DWARF call graphs: -O3 code keeps no frame pointers, so only the unwind
    # tables give the callers, which the inclusive shares need.
    options = ["-e", "cpu-clock", "-F", str(PERF_FREQUENCY), "--call-graph", "dwarf", "-o", str(data)]
    with tempdirs.private_dir("perf") as tmp:
        controlled = _perf_has_control(perf)
        if controlled:      # events off until the harness enters its loop
            ctl, ack = Path(tmp) / "ctl", Path(tmp) / "ack"
            os.mkfifo(ctl)
            os.mkfifo(ack)
            options += ["-D", "-1", "--control", f"fifo:{ctl},{ack}"]
            env = {**env, "SSLPERF_PERF_CTL": f"{ctl},{ack}"}
        done = harness_client.call(lib, *args, timeout=seconds * 3 + 600, env=env,
                                   wrapper=(perf, "record", *options, "--"), ok_codes=None, merge_stderr=True)
    reply = _harness_reply(done, lib, case_id, "perf record")
    text = _tool_output([perf, "report", "-i", str(data), "--stdio", "--children", "--sort", "symbol", "-g", "none",
                         "--percent-limit", "0.05"], "perf report")
    report = stem.with_name(stem.name + ".perf-report.txt")
    report.write_text(text)
    functions, cpu_ns = parse_perf_report(text)
    samples = _PERF_SAMPLES.search("\n".join(done.other))
    if reply.get("perf_control"):
        scope = ("only the timed loop: the harness switched perf's events on when it entered the loop and off when "
                 "it left (perf --control), so setup is not in the profile")
    else:
        scope = ("the whole harness process, setup included (this perf cannot be switched on by the program); "
                 "the loop ran long enough that setup is a small part")
    return Profile(lib.name, lib.version_string, case_id, "perf", "CPU ns, from cpu-clock samples", cpu_ns,
                   reply["ops"], reply["wall_ns"], reply["cpu_ns"], scope, "", str(data), [str(report)], functions,
                   int(samples.group(1)) if samples else None)


def _perf_has_control(perf: str) -> bool:
    """perf ≥ 5.10 can be switched on and off by the program it runs."""
    try:
        usage = subprocess.run([perf, "record", "-h"], capture_output=True, text=True, timeout=30)
    except (subprocess.TimeoutExpired, OSError):
        return False
    return "--control" in usage.stdout + usage.stderr


def _record_callgrind(lib: Lib, case_id: str, args: list[str], stem: Path, env: dict) -> Profile:
    valgrind = shutil.which("valgrind") or "valgrind"
    annotate = shutil.which("callgrind_annotate") or "callgrind_annotate"
    raw = stem.with_name(stem.name + ".callgrind.out")
    done = harness_client.call(lib, *args, timeout=3600, env=env, ok_codes=None, merge_stderr=True,
                               wrapper=(valgrind, "--tool=callgrind", f"--callgrind-out-file={raw}",
                                        f"--toggle-collect={LOOP_FUNCTION}"))
    reply = _harness_reply(done, lib, case_id, "valgrind --tool=callgrind")
    texts = []
    for inclusive in ("no", "yes"):
        text = _tool_output([annotate, "--auto=no", "--threshold=99.9", f"--inclusive={inclusive}", str(raw)],
                            "callgrind_annotate")
        path = stem.with_name(f"{stem.name}.callgrind-{'inclusive' if inclusive == 'yes' else 'self'}.txt")
        path.write_text(text)
        texts.append((path, text))
    functions, instructions = parse_callgrind_annotate(texts[0][1], texts[1][1])
    scope = (f"only the timed loop: callgrind counted instructions inside {LOOP_FUNCTION} and what it calls "
             "(--toggle-collect), so setup is not in the profile")
    return Profile(lib.name, lib.version_string, case_id, "callgrind", "instructions", instructions, reply["ops"],
                   reply["wall_ns"], reply["cpu_ns"], scope, "", str(raw), [str(p) for p, _ in texts], functions)


def _tool_output(command: list[str], what: str) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=900)
    except subprocess.TimeoutExpired:
        raise SslperfError(f"`{what}` did not finish within 900 s and was stopped.",
                           hint="Profile for fewer --seconds; the raw profile is kept for a manual look.") from None
    if done.returncode != 0:
        raise SslperfError(f"`{what}` failed: {done.stderr.strip()[-300:]}")
    return done.stdout


def _harness_reply(output: harness_client.Output, lib: Lib, case_id: str, tool: str) -> dict:
    """The harness's one JSON line among the tool's own messages; when it
    gave none, the tool's last words (perf's about its permissions)."""
    for data in output.lines:
        if "type" in data:
            if data["type"] == "profiled":
                return data
            what = {"na": "is not available on", "unknown": "is not known to the harness of"}.get(data["type"],
                                                                                                  "failed on")
            hint = {"na": "Profile it on a library that has it.",
                    "unknown": "`sslperf speed --list` and `sslperf tls --list` show the cases."}.get(data["type"])
            raise SslperfError(f"`{case_id}` {what} {lib.name}: {data.get('reason', 'no reason given')}.", hint=hint)
    said = output.other[-6:]
    problem = next((line for line in said if "paranoid" in line or "ermission" in line), None)
    raise SslperfError(f"`{tool}` of `{case_id}` on {lib.name} gave no result. Its last words:\n"
                       + "\n".join("    " + line for line in said),
                       hint=_perf_hint(problem, True) if problem else None)


def symbols_note(lib: Lib, binary: Path) -> str:
    """Where the function names come from, and what that leaves out."""
    readelf = shutil.which("readelf")
    if readelf is None or lib.linkage is None:
        return "not checked (readelf is not installed)"
    if lib.linkage.static:
        sections = _sections(readelf, binary)
        if ".symtab" not in sections:
            return "the harness binary is stripped: only exported functions have names"
        if ".debug_info" in sections:
            return "symbol table and debug info (built with -g): real names, inlined functions located"
        return ("symbol table of the static library (no -g): real names; inlined functions count toward their "
                "callers. The `debug-symbols` variant adds -g at the same -O3.")
    objects = list(lib.info.get("shared_objects", {}).values())
    stripped = [Path(o).name for o in objects if ".symtab" not in _sections(readelf, Path(o))]
    if not stripped:
        return "symbol tables of the shared objects: real names"
    return (f"{', '.join(stripped)} stripped: only exported functions have names, internal ones count toward a "
            "neighbouring exported name (unless the distribution's -dbgsym package is installed). Profile a "
            "built library for real names, e.g. `sslperf libs build openssl-3.0+debug-symbols`.")


def _sections(readelf: str, path: Path) -> str:
    try:
        return subprocess.run([readelf, "-S", "-W", str(path)], capture_output=True, text=True, timeout=60).stdout
    except (subprocess.TimeoutExpired, OSError):
        return ""
