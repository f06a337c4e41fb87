"""Where a case spends its time: run one case of the harness under `perf
record` or callgrind, read the tool's report into one model (function → self
and inclusive share of the profiled cost), and compare two libraries.

Only the harness's timed loop is profiled (sslperf_profiled_loop in
harness/profile.c): callgrind collects inside that function alone, and perf
starts with its events off and the harness switches them on around the loop
through perf's control fifo. Setup (keys, contexts, the checked first
operation) is left out either way.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from sslperf.errors import SslperfError
from sslperf.libs.model import Lib
from sslperf.proc import run

LOOP_FUNCTION = "sslperf_profiled_loop"
PERF_FREQUENCY = 999          # Hz; odd, so it does not beat with periodic work


@dataclass
class FunctionCost:
    name: str
    self_share: float           # % of the profiled cost spent in the function's own code
    inclusive_share: float      # % spent in it and in everything it calls


@dataclass
class Profile:
    lib: str
    version_string: str
    case: str
    tool: str                   # perf | callgrind
    unit: str                   # what `total` counts
    total: float                # cost of the whole profiled loop, in `unit`
    ops: int                    # operations the loop did
    wall_ns: int                # the loop's wall and CPU time (under callgrind: slowed down)
    cpu_ns: int
    scope: str                  # what was profiled, in words
    symbols: str                # how the names were found, in words
    raw: str                    # the tool's own output file
    reports: list[str]          # the tool's text reports that were parsed
    functions: list[FunctionCost] = field(default_factory=list)
    samples: int | None = None  # perf only

    @property
    def cost_per_op(self) -> float:
        return self.total / self.ops if self.ops else 0.0

    def function(self, name: str) -> FunctionCost | None:
        return next((f for f in self.functions if f.name == name), None)

    def top_self(self, n: int) -> list[FunctionCost]:
        return sorted(self.functions, key=lambda f: -f.self_share)[:n]

    def top_inclusive(self, n: int) -> list[FunctionCost]:
        """By inclusive share, without the frames around the whole loop (main,
        the loop, the case's run function: ~100% everywhere, they say nothing)."""
        loop = self.function(LOOP_FUNCTION)
        ceiling = (loop.inclusive_share if loop else 100.0) - 1.0     # perf loses a few stacks
        inner = [f for f in self.functions if f.inclusive_share < ceiling]
        return sorted(inner, key=lambda f: -f.inclusive_share)[:n]

    def to_dict(self) -> dict:
        return {**asdict(self), "cost_per_op": self.cost_per_op}

    @classmethod
    def from_dict(cls, data: dict) -> Profile:
        data = {k: v for k, v in data.items() if k != "cost_per_op"}
        return cls(**{**data, "functions": [FunctionCost(**f) for f in data.get("functions", [])]})


# ---- names -------------------------------------------------------------

_CLONE_SUFFIX = re.compile(r"(\.(constprop|isra|part|cold|lto_priv|localalias)(\.\d+)?)+$")


def function_name(raw: str) -> str:
    """One name per function whichever tool saw it: no symbol version
    (`free@GLIBC_2.2.5`), no GCC clone suffix (`.constprop.0`, `.cold`: they
    differ between builds of the same code), no perf `(inlined)` mark and no
    callgrind recursion depth (`f'2`)."""
    name = raw.strip()
    name = re.sub(r" \(inlined\)$", "", name)
    name = re.sub(r"'\d+$", "", name)
    name = name.split("@", 1)[0] if not name.startswith("@") else name
    return _CLONE_SUFFIX.sub("", name) or raw.strip()


def merge(entries: list[tuple[str, float, float]]) -> list[FunctionCost]:
    """(raw name, self %, inclusive %) → one FunctionCost per function. Self
    shares add up (a function split over files or clones is still one
    function); the inclusive share is the largest, as the parts' inclusive
    costs overlap. Callgrind's deeper recursion entries (`f'2`) count their
    callees again, so they give an inclusive share only when nothing else does."""
    merged: dict[str, list[float]] = {}
    recursive_only: dict[str, float] = {}
    for raw, self_share, inclusive in entries:
        name = function_name(raw)
        slot = merged.setdefault(name, [0.0, 0.0])
        slot[0] += self_share
        if re.search(r"'\d+$", raw.strip()):
            recursive_only[name] = max(recursive_only.get(name, 0.0), inclusive)
        else:
            slot[1] = max(slot[1], inclusive)
    out = []
    for name, (self_share, inclusive) in merged.items():
        if inclusive == 0.0 and name in recursive_only:
            inclusive = min(recursive_only[name], 100.0)
        if re.fullmatch(r"0x[0-9a-f]+", name):      # no symbol: as a caller, only an unwinding artefact
            inclusive = self_share
        out.append(FunctionCost(name, round(self_share, 4), round(max(inclusive, self_share), 4)))
    return sorted(out, key=lambda f: (-f.self_share, -f.inclusive_share, f.name))


# ---- parsing the tools' reports ---------------------------------------------

_PERF_ROW = re.compile(r"^\s*(\d+(?:\.\d+)?)%\s+(\d+(?:\.\d+)?)%\s+\[(.)\]\s+(.+?)(?:\s{2,}.*)?$")
_PERF_EVENT_COUNT = re.compile(r"^# Event count \(approx\.\):\s*(\d+)", re.M)
_PERF_SAMPLES = re.compile(r"\((\d+) samples\)")


def parse_perf_report(text: str) -> tuple[list[FunctionCost], int]:
    """`perf report --stdio --children --sort symbol -g none`: rows of
    `Children% Self% [.] symbol`. Returns the functions and the event count
    (for cpu-clock: CPU nanoseconds)."""
    entries = []
    for line in text.splitlines():
        match = _PERF_ROW.match(line)
        if match and not line.lstrip().startswith("#"):
            children, self_share, _, symbol = match.groups()
            entries.append((symbol, float(self_share), float(children)))
    if not entries:
        raise SslperfError("perf report gave no functions: the profile is empty.",
                           hint="Run for longer (--seconds) or look at the raw perf.data with `perf report -i`.")
    count = _PERF_EVENT_COUNT.search(text)
    return merge(entries), int(count.group(1)) if count else 0


_CG_ROW = re.compile(r"^\s*([\d,]+)\s+\(\s*(\d+(?:\.\d+)?)%\)\s+(.+?)(?:\s+\[[^\]]*\])?\s*$")
_CG_TOTAL = re.compile(r"^\s*([\d,]+)(?:\s+\([^)]*\))?\s+PROGRAM TOTALS", re.M)


def _callgrind_rows(text: str, inclusive: bool) -> dict[str, float]:
    """function → share. One function can have several rows: code from
    several source files (inlined headers) or several objects (`(below
    main)`); their own costs add up, their inclusive costs overlap."""
    rows: dict[str, float] = {}
    for line in text.splitlines():
        match = _CG_ROW.match(line)
        if match and "PROGRAM TOTALS" not in line:
            _, share, where = match.groups()
            function = where.split(":", 1)[1] if ":" in where else where     # file:function
            before = rows.get(function, 0.0)
            rows[function] = max(before, float(share)) if inclusive else before + float(share)
    return rows


def parse_callgrind_annotate(self_text: str, inclusive_text: str) -> tuple[list[FunctionCost], int]:
    """`callgrind_annotate` without and with `--inclusive=yes`: rows of
    `Ir (share%)  file:function [object]`. Returns the functions and the
    instructions of the whole profiled part."""
    total = _CG_TOTAL.search(self_text)
    if not total or int(total.group(1).replace(",", "")) == 0:
        raise SslperfError("callgrind counted no instructions in the profiled loop.",
                           hint=f"The harness function {LOOP_FUNCTION} may have been renamed or inlined; "
                                "rebuild the harness (it is recompiled when its sources change).")
    own, inclusive = _callgrind_rows(self_text, False), _callgrind_rows(inclusive_text, True)
    entries = [(name, own.get(name, 0.0), inclusive.get(name, own.get(name, 0.0)))
               for name in dict.fromkeys([*own, *inclusive])]
    return merge(entries), int(total.group(1).replace(",", ""))


# ---- comparing two profiles ------------------------------------------------------


@dataclass
class ShareChange:
    name: str
    a_self: float
    b_self: float
    a_inclusive: float
    b_inclusive: float
    same_shares: tuple[str, ...] = ()   # other functions with these very shares (one call chain)

    @property
    def self_change(self) -> float:
        return self.b_self - self.a_self

    @property
    def inclusive_change(self) -> float:
        return self.b_inclusive - self.a_inclusive


def _by_comparison_name(p: Profile) -> dict[str, tuple[set[str], float, float]]:
    """OpenSSL 3.0 renamed many functions to an `_ex` form that takes a
    library context, and the old name only calls it
    (`X509_load_cert_crl_file` → `X509_load_cert_crl_file_ex`). To compare
    versions, X and X_ex are one function: self shares added, the larger
    inclusive share kept."""
    out: dict[str, tuple[set[str], float, float]] = {}
    for f in p.functions:
        key = re.sub(r"_ex$", "", f.name)
        names, self_share, inclusive = out.get(key, (set(), 0.0, 0.0))
        out[key] = (names | {f.name}, self_share + f.self_share, max(inclusive, f.inclusive_share))
    return out


def changes(a: Profile, b: Profile) -> list[ShareChange]:
    """Every function seen in either profile, with its shares in both (a
    function absent from one profile has 0% there)."""
    in_a, in_b = _by_comparison_name(a), _by_comparison_name(b)
    out = []
    for key in dict.fromkeys([*in_a, *in_b]):
        names_a, self_a, incl_a = in_a.get(key, (set(), 0.0, 0.0))
        names_b, self_b, incl_b = in_b.get(key, (set(), 0.0, 0.0))
        names = names_a | names_b
        name = next(iter(names)) if len(names) == 1 else f"{key}(_ex)"
        out.append(ShareChange(name, round(self_a, 4), round(self_b, 4), incl_a, incl_b))
    return out


def changed_most(a: Profile, b: Profile, n: int, by: str = "self") -> list[ShareChange]:
    """The `n` functions whose share moved most, in percentage points, by
    self share or (`by="inclusive"`) inclusive share. By inclusive share, a
    call chain whose members all have the same shares (A calls only B, B
    only C: `SSL_CTX_load_verify_locations` → … → `by_file_ctrl_ex`) is one
    row, named by the member with the largest self share."""
    if by == "self":
        ranked = sorted(changes(a, b), key=lambda c: (-abs(c.self_change), c.name))
        return [c for c in ranked if abs(c.self_change) > 0][:n]
    chains: dict[tuple[float, float], list[ShareChange]] = {}
    for c in changes(a, b):
        if abs(c.inclusive_change) > 0:
            chains.setdefault((round(c.a_inclusive, 2), round(c.b_inclusive, 2)), []).append(c)
    rows = []
    for members in chains.values():
        members.sort(key=lambda c: (-(c.a_self + c.b_self), c.name))
        head = members[0]
        rows.append(ShareChange(head.name, head.a_self, head.b_self, head.a_inclusive, head.b_inclusive,
                                tuple(c.name for c in members[1:])))
    return sorted(rows, key=lambda c: (-abs(c.inclusive_change), c.name))[:n]


def comparison(a: Profile, b: Profile, n: int) -> dict:
    """What `--vs` prints, as data."""
    row = lambda c: {"function": c.name, "a_self": c.a_self, "b_self": c.b_self,    # noqa: E731
                     "self_change_pp": round(c.self_change, 4), "a_inclusive": c.a_inclusive,
                     "b_inclusive": c.b_inclusive, "inclusive_change_pp": round(c.inclusive_change, 4),
                     "same_shares": list(c.same_shares)}
    return {"a": a.lib, "b": b.lib, "unit": a.unit,
            "cost_per_op": {a.lib: a.cost_per_op, b.lib: b.cost_per_op},
            "cost_ratio": b.cost_per_op / a.cost_per_op if a.cost_per_op else None,
            "changed_most_self": [row(c) for c in changed_most(a, b, n, "self")],
            "changed_most_inclusive": [row(c) for c in changed_most(a, b, n, "inclusive")]}


# ---- choosing and running the tool --------------------------------------------------


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


def perf_problem() -> str | None:
    """Why `perf record` cannot sample here, or None when it can. The
    software cpu-clock event is tried, which works on VMs without counters."""
    perf = shutil.which("perf")
    if not perf:
        return "perf is not installed"
    with tempfile.TemporaryDirectory(prefix="sslperf-perf-probe-") as tmp:
        try:
            probe = subprocess.run([perf, "record", "-q", "-e", "cpu-clock", "-o", str(Path(tmp) / "probe.data"),
                                    "--", "true"], capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            return "`perf record` did not finish a trivial recording within 60 s"
        except OSError as exc:
            return f"perf cannot be started ({exc.strerror})"
    if probe.returncode != 0:
        said = [line.strip() for line in (probe.stderr + probe.stdout).splitlines() if line.strip()]
        reason = next((line for line in said if "paranoid" in line or "ermission" in line), said[-1] if said else "")
        return f"`perf record` failed ({reason[:200]})" if reason else "`perf record` failed"
    return None


def record(lib: Lib, case_id: str, tool: str, out_dir: Path, seconds: float, iterations: int | None,
           env: dict[str, str] | None = None) -> Profile:
    """Profile `case_id` on `lib` with `tool`, keeping the raw profile and
    the tool's text reports in `out_dir`."""
    from sslperf.native import harness_binary

    binary = harness_binary(lib)
    loop = ["--iters", str(iterations)] if iterations else ["--seconds", f"{seconds:g}"]
    command = [str(binary), "profile", case_id, *loop]
    stem = out_dir / re.sub(r"[^A-Za-z0-9._+-]", "_", lib.name)
    environment = {**os.environ, **(env or {})}
    if tool == "perf":
        profile = _record_perf(lib, case_id, command, stem, environment, seconds)
    else:
        profile = _record_callgrind(lib, case_id, command, stem, environment)
    profile.symbols = symbols_note(lib, binary)
    return profile


def _record_perf(lib: Lib, case_id: str, command: list[str], stem: Path, env: dict, seconds: float) -> Profile:
    perf = shutil.which("perf") or "perf"
    data = stem.with_name(stem.name + ".perf.data")
    # DWARF call graphs: -O3 code keeps no frame pointers, so only the unwind
    # tables give the callers, which the inclusive shares need.
    options = ["-e", "cpu-clock", "-F", str(PERF_FREQUENCY), "--call-graph", "dwarf", "-o", str(data)]
    with tempfile.TemporaryDirectory(prefix="sslperf-perf-") as tmp:
        controlled = _perf_has_control(perf)
        if controlled:      # events off until the harness enters its loop
            ctl, ack = Path(tmp) / "ctl", Path(tmp) / "ack"
            os.mkfifo(ctl)
            os.mkfifo(ack)
            options += ["-D", "-1", "--control", f"fifo:{ctl},{ack}"]
            env = {**env, "SSLPERF_PERF_CTL": f"{ctl},{ack}"}
        result = run([perf, "record", *options, "--", *command], timeout=seconds * 3 + 600, env=env)
    reply = _harness_reply(result.output, lib, case_id, "perf record")
    text = _tool_output([perf, "report", "-i", str(data), "--stdio", "--children", "--sort", "symbol", "-g", "none",
                         "--percent-limit", "0.05"], "perf report")
    report = stem.with_name(stem.name + ".perf-report.txt")
    report.write_text(text)
    functions, cpu_ns = parse_perf_report(text)
    samples = _PERF_SAMPLES.search(result.output)
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


def _record_callgrind(lib: Lib, case_id: str, command: list[str], stem: Path, env: dict) -> Profile:
    valgrind = shutil.which("valgrind") or "valgrind"
    annotate = shutil.which("callgrind_annotate") or "callgrind_annotate"
    raw = stem.with_name(stem.name + ".callgrind.out")
    result = run([valgrind, "--tool=callgrind", f"--callgrind-out-file={raw}", f"--toggle-collect={LOOP_FUNCTION}",
                  *command], timeout=3600, env=env)
    reply = _harness_reply(result.output, lib, case_id, "valgrind --tool=callgrind")
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


def _harness_reply(output: str, lib: Lib, case_id: str, tool: str) -> dict:
    """The harness's one JSON line among the tool's own messages."""
    for line in output.splitlines():
        if line.startswith('{"type"'):
            data = json.loads(line)
            if data["type"] == "profiled":
                return data
            what = {"na": "is not available on", "unknown": "is not known to the harness of"}.get(data["type"],
                                                                                                  "failed on")
            hint = {"na": "Profile it on a library that has it.",
                    "unknown": "`sslperf speed --list` and `sslperf tls --list` show the cases."}.get(data["type"])
            raise SslperfError(f"`{case_id}` {what} {lib.name}: {data.get('reason', 'no reason given')}.", hint=hint)
    said = [line for line in output.splitlines() if line.strip()][-6:]
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
