"""`sslperf exec --metric instructions`: the user's command run as `sslperf exec` runs it (the library first on the
loader's path, proven by the loader's trace before anything is counted), each run counted instead of timed: the
user-space instructions of every process of the run, summed. The CPU's own counter (`perf stat -e instructions:u`,
which follows the run's children) where perf can open it, else callgrind (`--trace-children=yes`: one output file per
process). A count barely moves with the machine's load, so it answers on a busy machine; it is not the time users
feel (waiting for I/O or a server, and what each instruction costs, are outside it). The two counters are not one
scale: the verdict rule compares counts of one counter only."""

from __future__ import annotations

import shutil
from pathlib import Path

from sslperf import figures, tempdirs
from sslperf.errors import SslperfError
from sslperf.cases.ids import Case
from sslperf.libs.model import Lib
from sslperf.measure import instructions
from sslperf.measure.modes import base, program
from sslperf.proc import require_tool, run
from sslperf.results import Measurement

SAID = {"perf": "the CPU's own (perf stat -e instructions:u, every process of the run)",
        "callgrind": "callgrind (--trace-children=yes, every process of the run)"}
EVENT = "instructions:u"


class Session(program.Session):
    def __init__(self, mode, ctx, cases):
        counter, hardware = _choose()       # a counter that cannot count here is refused before anything runs
        super().__init__(mode, ctx, cases)
        self.counter = counter
        ctx.run.environment["instruction_counter"] = SAID[self.counter]
        ctx.run.environment["hardware_instruction_counter"] = hardware
        ctx.run.settings["exec"]["counter"] = self.counter

    def take(self, case: Case, lib: Lib) -> Measurement:
        m = self._result(case, lib)
        m.counter, m.deterministic = self.counter, False
        m.figures = {figures.INSTRUCTIONS: []}
        argv, env = self._argv(lib), self._env(lib)
        for _ in range(self.options.runs):
            self._step(self.options.prepare, lib, "--prepare")
            with tempdirs.private_dir("exec-count") as where:
                ran = program.run_once(self.starter, argv, env, self.options.timeout, _wrapper(self.counter, where))
                counted = _counted(self.counter, where) if ran.status == 0 else None
            if ran.status != 0:
                m.status, m.reason = "error", f"a run {ran.said()}; it was not counted. Last lines: {ran.tail()}"
                return m
            if counted is None:
                m.status, m.reason = "error", f"{self.counter} wrote no instruction count for a run of the command"
                return m
            m.ops.append(1)
            m.figures[figures.INSTRUCTIONS].append(counted)
        return m


def _wrapper(counter: str, where: Path) -> tuple[str, ...]:
    if counter == "perf":
        return (_perf(), "stat", "-x", ",", "-e", EVENT, "-o", str(where / "perf.csv"), "--")
    return (instructions.valgrind(), "--tool=callgrind", "--cache-sim=no", "--branch-sim=no", "--trace-children=yes",
            f"--callgrind-out-file={where}/callgrind.out.%p")


def _counted(counter: str, where: Path) -> int | None:
    """The run's instructions: perf's one line for the event, or the sum of callgrind's files (a file per process)."""
    if counter == "perf":
        return _perf_count(where / "perf.csv")
    totals = [instructions.total(part) for part in sorted(where.glob("callgrind.out.*"))]
    return sum(totals) if totals and None not in totals else None


def _perf_said(path: Path) -> tuple[str, str] | None:
    """(the value, the event) of `perf stat -x ,`'s line for the event: a count, or `<not supported>`; None when
    perf wrote no such line."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split(",")
        if len(fields) > 2 and fields[2].startswith(EVENT.split(":")[0]):
            return fields[0], fields[2]
    return None


def _perf_count(path: Path) -> int | None:
    """The count perf wrote for the event; None where it could not count."""
    said = _perf_said(path)
    return int(said[0]) if said and said[0].isdigit() else None


def _perf() -> str:
    return require_tool("perf", "to count instructions with the CPU's own counter")


def _choose() -> tuple[str, str]:
    """(the counter, what perf says of the CPU's counter): perf where it can count user-space instructions here (a
    PMU the kernel lets this user open), else callgrind; SSLPERF_INSTRUCTION_COUNTER=perf or callgrind chooses."""
    choice = instructions.counter_choice()
    reason = _perf_cannot()
    hardware = "present (perf stat)" if reason is None else reason
    if choice == "callgrind":
        return "callgrind", hardware
    if reason is None:
        return "perf", hardware
    if choice == "perf":
        raise SslperfError(f"{instructions.COUNTER_VARIABLE}=perf asks for the CPU's own instruction counter, but "
                           f"perf cannot count here: {reason}. Nothing was counted.",
                           hint="A VM without a virtual PMU or a container without perf_event access has none; unset "
                                "the variable (auto falls back to callgrind) or set it to callgrind.")
    instructions.valgrind()
    return "callgrind", hardware


def _perf_cannot() -> str | None:
    """Why perf cannot count user-space instructions of a program here, or None when it can."""
    perf = shutil.which("perf")
    if perf is None:
        return "perf is not installed"
    with tempdirs.private_dir("perf-check") as where:
        done = run([perf, "stat", "-x", ",", "-e", EVENT, "-o", str(where / "perf.csv"), "--", "true"], timeout=60)
        said = _perf_said(where / "perf.csv")
    if said is not None and said[0].isdigit():
        return None
    if said is not None:                    # `<not supported>,,instructions:u,…`
        return f"perf stat reads {said[0]} for {said[1]}"
    return " ".join(done.output.split())[-200:] or f"perf stat exited with {done.returncode}"


MODE = base.Mode("exec-instructions", "your program, its instructions counted against each library", ("exec",),
                 base.OPENSSL_ONLY, (figures.INSTRUCTIONS,), ("instructions",), Session, options=program.Options,
                 options_of="exec", lacks="needs a library with OpenSSL's shared libssl and libcrypto",
                 counter="instructions")
