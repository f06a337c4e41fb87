"""The user's own program against each library (`sslperf exec -- CMD …`): the command run with the library's
libssl and libcrypto put first on the dynamic loader's path (libs.loader), `runs` times per library per round, the
libraries interleaved by the scheduler. A sample is one run: its wall time, its CPU time (user + system, from the
kernel's accounting of the run's whole process tree, wait4), and beside it the user and system time apart and the
largest resident set. Before anything is timed, every library's first run goes under the loader's trace, and must
load libssl and libcrypto from that library (else the run is refused: libs.loader says why); each later pass's first
warm-up run is traced again, so every pass shows the library it timed was the one mapped. A run that fails is
reported with its exit status and last lines, never timed. Commands are argv lists, never given to a shell;
`{lib}` in any of them is the library's name. With --server (measure.exec_servers) the runs talk to a server on
127.0.0.1, whose CPU time per run is recorded; in the reverse (`--server nginx:{lib}`) each library serves and the
command keeps its own libraries, so nothing is put on its loader's path and nothing is traced."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import threading
from dataclasses import dataclass
from pathlib import Path

from sslperf import figures, tempdirs
from sslperf.errors import SslperfError
from sslperf.libs import loader
from sslperf.libs.model import Lib
from sslperf.cases.ids import Case, make
from sslperf.measure import compiled, exec_servers, servers
from sslperf.measure.modes import base
from sslperf.results import Measurement

OUTPUT_TAIL = 2000          # the bytes of a failing run's output its result keeps
RUNONE = Path(__file__).parents[1] / "runone.c"


@dataclass(frozen=True)
class Options:
    command: tuple[str, ...] = ()       # the program and its arguments
    runs: int = 10                      # timed runs per library per round
    warmup: int = 1                     # untimed runs per library before each pass's first round
    prepare: tuple[str, ...] = ()       # before every run, untimed (hyperfine's --prepare)
    setup: tuple[str, ...] = ()         # once per library before its first run (hyperfine's --setup)
    cleanup: tuple[str, ...] = ()       # once per library after its last run (hyperfine's --cleanup)
    timeout: float = 600                # seconds one run may take
    server: str | None = None           # LIB, nginx:LIB or haproxy:LIB (LIB may be {lib}): measure.exec_servers


def case(name: str) -> Case:
    return make("exec", program=name)


PLACEHOLDERS = ("{lib}", "{port}", "{ca}")
SERVER_PLACEHOLDERS = ("{port}", "{ca}")


def substituted(argv: tuple[str, ...], lib: Lib, server: dict[str, str] | None = None) -> list[str]:
    """`argv` with `{lib}` the library's name and, with a server, `{port}` and `{ca}` its port and CA file."""
    values = {"{lib}": lib.name, **(server or {})}
    out = []
    for arg in argv:
        for key, value in values.items():
            arg = arg.replace(key, value)
        out.append(arg)
    return out


class Session(base.Session):
    def __init__(self, mode, ctx, cases):
        super().__init__(mode, ctx, cases)
        self.links: dict[str, Path] = {}
        self.work = tempdirs.make("exec")
        self.loaded: dict[str, loader.Loaded] = {}
        self.set_up: list[Lib] = []          # the libraries whose --setup ran: each gets its --cleanup
        self.held = contextlib.ExitStack()
        self.servers: dict[str, exec_servers.Serving] = {}      # per library: the server its runs talk to
        spec = exec_servers.parse(self.options.server) if self.options.server else None
        # The reverse (--server nginx:{lib}): each library serves, and the command runs with its own libraries.
        self.client_fixed = spec is not None and spec.follows
        try:
            if not self.options.command:
                raise SslperfError("An exec request names no command to run. Nothing was run.",
                                   hint="Give the command after `--`.")
            if spec is not None and not spec.follows:
                fixed = self.held.enter_context(exec_servers.serving(spec))
                self.servers = {lib.name: fixed for lib in ctx.libs}
            self.starter = runone()
            for n, lib in enumerate(ctx.libs):
                if self.client_fixed:
                    self.servers[lib.name] = self.held.enter_context(exec_servers.serving(spec, lib))
                else:
                    self.links[lib.name] = loader.linked(loader.shared_dir(lib), self.work / f"lib{n}")
                self.set_up.append(lib)
                self._step(self.options.setup, lib, "--setup")
                if not self.client_fixed:
                    self.loaded[lib.name] = loader.check(self._argv(lib), lib, env=self._env(lib),
                                                         timeout=self.options.timeout)
        except BaseException:
            self.close()
            raise
        ctx.run.settings["exec"] = {"command": list(self.options.command), "runs": self.options.runs,
                                    "server": self.options.server, "warmup": self.options.warmup,
                                    "loaded": {name: loaded.describe() for name, loaded in self.loaded.items()},
                                    "servers": {name: serving.said for name, serving in self.servers.items()}}

    def _argv(self, lib: Lib, argv: tuple[str, ...] | None = None) -> list[str]:
        """The command (or `argv`) for `lib`'s runs: its placeholders filled."""
        serving = self.servers.get(lib.name)
        return substituted(self.options.command if argv is None else argv, lib, serving.values if serving else None)

    def _env(self, lib: Lib) -> dict[str, str]:
        if self.client_fixed:           # the command as it is: its own libraries, none of the server's settings
            return {**os.environ, **self.ctx.env}
        return loader.loader_env(self.links[lib.name], {**os.environ, **self.ctx.env, **lib.env})

    def _step(self, argv: tuple[str, ...], lib: Lib, what: str) -> None:
        """A set-up, prepare or clean-up command (untimed); refused in one paragraph when it fails."""
        if not argv:
            return
        result = run_once(self.starter, self._argv(lib, argv), self._env(lib), self.options.timeout)
        if result.status != 0:
            raise SslperfError(f"The {what} command `{' '.join(argv)}` failed for {lib.name} ({result.said()}); "
                               f"nothing more was run. Its last lines:\n{result.tail()}",
                               hint=f"Run the {what} command by hand until it succeeds.")

    def _result(self, case: Case, lib: Lib) -> Measurement:
        """A result of `case` on `lib`, its note the loader's answer (which libssl and libcrypto the runs mapped), or
        in the reverse the server that `lib` was."""
        if self.client_fixed:
            return Measurement.of(case, lib.name, unit="ops", note=f"server: {self.servers[lib.name].said}")
        return Measurement.of(case, lib.name, unit="ops", note=f"loaded {self.loaded[lib.name].describe()}")

    def prepare(self, case: Case, libs: list[Lib]) -> base.Prepared:
        results = {lib.name: self._result(case, lib) for lib in libs}
        for lib in libs:
            self._warm(lib, traced=False)
        return base.Prepared(results, self.passes)

    def reprepare(self, case: Case, libs: list[Lib]) -> dict[str, str]:
        refused = {}
        for lib in libs:
            try:
                self._warm(lib, traced=True)
            except SslperfError as failed:
                refused[lib.name] = failed.message
        return refused

    def _warm(self, lib: Lib, traced: bool) -> None:
        """The pass's warm-up runs; the first under the loader's trace when `traced` (the first pass's was the
        check itself)."""
        for n in range(self.options.warmup):
            self._step(self.options.prepare, lib, "--prepare")
            if traced and n == 0 and not self.client_fixed:
                loader.check(self._argv(lib), lib, env=self._env(lib), timeout=self.options.timeout)
            else:
                run_once(self.starter, self._argv(lib), self._env(lib), self.options.timeout)

    def take(self, case: Case, lib: Lib) -> Measurement:
        m = self._result(case, lib)
        m.figures = {figures.USER_CPU: [], figures.SYSTEM_CPU: [], figures.MAX_RSS: []}
        serving = self.servers.get(lib.name)
        if serving is not None:
            m.figures[figures.RUN_SERVER_CPU] = []
        argv, env = self._argv(lib), self._env(lib)
        for _ in range(self.options.runs):
            self._step(self.options.prepare, lib, "--prepare")
            before = servers.group_cpu_ns(serving.group) if serving is not None else 0
            result = run_once(self.starter, argv, env, self.options.timeout)
            if serving is not None:
                m.figures[figures.RUN_SERVER_CPU].append(servers.group_cpu_ns(serving.group) - before)
            if result.status != 0:
                m.status, m.reason = "error", f"a run {result.said()}; it was not timed. Last lines: {result.tail()}"
                return m
            m.ops.append(1)
            m.wall_ns.append(result.wall_ns)
            m.cpu_ns.append(result.user_ns + result.system_ns)
            m.figures[figures.USER_CPU].append(result.user_ns)
            m.figures[figures.SYSTEM_CPU].append(result.system_ns)
            m.figures[figures.MAX_RSS].append(result.max_rss)
        return m

    def close(self) -> None:
        try:
            for lib in self.set_up if self.options.cleanup else ():
                run_once(self.starter, self._argv(lib, self.options.cleanup), self._env(lib), self.options.timeout)
        finally:
            try:
                self.held.close()
            finally:
                tempdirs.remove(self.work)


@dataclass(frozen=True)
class Ran:
    """One run of a command: how it ended (an exit status, or minus the signal), its times and output's end."""
    status: int
    wall_ns: int
    user_ns: int
    system_ns: int
    max_rss: int            # bytes
    output: bytes
    timed_out: bool = False

    def said(self) -> str:
        if self.timed_out:
            return "did not finish in time and was stopped"
        return f"exited with {self.status}" if self.status >= 0 else f"was killed by signal {-self.status}"

    def tail(self) -> str:
        return "\n".join("    " + line for line in self.output.decode(errors="replace").rstrip().splitlines()[-8:])


def run_once(starter: Path, argv: list[str], env: dict[str, str], timeout: float,
             wrapper: tuple[str, ...] = ()) -> Ran:
    """`argv` once, started and timed by runone (measure/runone.c: a small C starter, so that neither sslperf's
    Python nor its memory is in the run's figures), in its own process group (killed whole after `timeout` s); its
    stdout and stderr kept to their last OUTPUT_TAIL bytes in a file, so a chatty program is not slowed by a pipe
    nobody reads. The program is looked up on PATH before anything starts. The times and max RSS are the kernel's
    for the process and every descendant it waited for (wait4). With a `wrapper` (a counter: its program's path
    first), the wrapper runs the program, named by its path."""
    program = shutil.which(argv[0], path=env.get("PATH", os.defpath))
    if program is None:
        raise SslperfError(f"Cannot run `{argv[0]}`: it is not a program on PATH.",
                           hint="Check that the program exists and is executable.")
    with tempdirs.private_dir("exec-run") as where:
        out_path, report = where / "output", where / "report"
        with open(out_path, "wb") as out:
            actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, out.fileno(), 1),
                       (os.POSIX_SPAWN_DUP2, out.fileno(), 2)]
            expired, spawned = threading.Event(), []

            def stop() -> None:
                expired.set()
                try:
                    os.killpg(spawned[0], signal.SIGKILL)
                except (IndexError, ProcessLookupError):
                    pass
            timer = threading.Timer(timeout, stop)
            timer.start()
            try:
                started = [wrapper[0], *wrapper, program, *argv[1:]] if wrapper else [program, *argv]
                spawned.append(os.posix_spawn(starter, [str(starter), str(report), *started], env,
                                              file_actions=actions, setpgroup=0))
                os.waitpid(spawned[0], 0)
            finally:
                timer.cancel()
        size = out_path.stat().st_size
        with open(out_path, "rb") as f:
            f.seek(max(0, size - OUTPUT_TAIL))
            tail = f.read()
        fields = report.read_text().split() if report.exists() else []
    if len(fields) != 5:
        return Ran(-signal.SIGKILL if expired.is_set() else 127, 0, 0, 0, 0, tail, expired.is_set())
    status, wall, user, system, rss_kib = (int(f) for f in fields)
    return Ran(status, wall, user, system, rss_kib * 1024, tail, expired.is_set())


def runone() -> Path:
    """measure/runone.c compiled once per source (cached), like the lock interposer."""
    return compiled.helper(RUNONE, "exec", "runone", ["-O2"], "sslperf's starter of your command (measure/runone.c)")


MODE = base.Mode("exec", "your program, run against each library", ("exec",), base.OPENSSL_ONLY,
                 (figures.USER_CPU, figures.SYSTEM_CPU, figures.MAX_RSS, figures.RUN_SERVER_CPU),
                 ("wall", "cpu", "instructions"), Session,
                 options=Options, auto_metric="wall",      # what users feel; counting is asked for by name
                 lacks="needs a library with OpenSSL's shared libssl and libcrypto")
