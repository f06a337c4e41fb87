"""What several verbs share: the store chosen with --db, finding the
libraries, measuring into the store and printing the result."""

from __future__ import annotations

import json

import click

from sslperf.errors import SslperfError


def make_console(stderr: bool = False):
    """The verbs' console: no syntax highlighting and no emoji codes, so user
    text such as `root:x:0:0` prints as it is; long lines are not cut."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)


def open_store(ctx: click.Context):
    """The Store for this invocation (opened once; --db or SSLPERF_DB, else SQLite in the data dir)."""
    from sslperf.store import Store

    root = ctx.find_root()
    root.ensure_object(dict)
    if "store" not in root.obj:
        root.obj["store"] = Store(root.obj.get("db"))
    return root.obj["store"]


def measure(ctx: click.Context, libs, cases, settings, source: str, extra_settings: dict | None = None,
            extra_env: dict | None = None, no_store: bool = False, progress=None):
    """Run `cases` on `libs` into this invocation's store (unless `no_store`)."""
    from sslperf.measure.session import run_cases

    return run_cases(libs, cases, settings, None if no_store else open_store(ctx), source, extra_settings,
                     extra_env, progress)


def find_libs(names: tuple[str, ...]):
    """The libraries named (default: the system one), each once."""
    from sslperf.libs import installed

    libs = [installed.find(name) for name in (names or ("system",))]
    if len({lib.name for lib in libs}) != len(libs):
        raise SslperfError("The same library is named twice; name each library once.")
    return libs


def show(run, as_json: bool, console, metric: str = "wall") -> None:
    if as_json:
        click.echo(json.dumps(run.to_dict(), indent=1))
        return
    from sslperf.report.terminal import print_run

    print_run(run, console, metric)


def list_cases(cases) -> None:
    """`--list`: the case ids, one a line."""
    for case in cases:
        click.echo(case.id)


def placement_options(command):
    """--cpu / --no-pin / --processes: where and in how many processes the workers run."""
    command = click.option("--processes", type=click.IntRange(1, 100),
                           help="Worker processes per case and library (default 5; 3 for --metric instructions, "
                                "one count each); the samples are spread over them, so the CI covers what "
                                "differs between processes.")(command)
    command = click.option("--fixed-layout", is_flag=True,
                           help="Turn off address-space randomisation in the workers, so every process has the same "
                                "memory layout: steadier run-to-run figures of one library (a CI gate), but a "
                                "comparison of two libraries then rests on one layout each.")(command)
    command = click.option("--no-pin", is_flag=True,
                           help="Let the workers float between CPUs (not recommended: more run-to-run swing).")(command)
    command = click.option("--cpu", type=int, metavar="N",
                           help="Pin the workers to CPU N (default: the last CPU this process may use).")(command)
    return command


METRIC_HELP = ("What the tables show: wall or CPU time (both are recorded), or instructions per operation "
               "counted by valgrind inside the loop only (the deterministic tier, for CI gates and bisects; "
               "measured instead of time, one count per worker process).")
INSTRUCTIONS_BATCH_MS = 2.0       # native time of the counted batch: under valgrind it runs ~50× longer


def settings(time_ms: float, samples: int, cpu: int | None, no_pin: bool, processes: int | None,
             mask: str | None = None, metric: str = "wall", fixed_layout: bool = False):
    """The runner's Settings from the verbs' options (the CPU checked before anything runs)."""
    from sslperf.measure import instructions, pinning
    from sslperf.measure.runner import PROCESSES, Settings

    if metric == "instructions":
        instructions.valgrind()             # missing valgrind: say so before anything runs
        processes = processes or 3
        return Settings(INSTRUCTIONS_BATCH_MS, processes, mask, processes=processes,
                        cpu=pinning.choose(cpu, not no_pin), counter="instructions")
    return Settings(time_ms, samples, mask, processes=processes or PROCESSES, cpu=pinning.choose(cpu, not no_pin),
                    fixed_layout=fixed_layout)


def output_file(ctx, param, value):
    """Click callback for --out FILE: its directory is made if missing, and
    must be writable — checked before any work, so a long run is never lost
    to a bad output path."""
    if value is not None:
        _writable_dir(value.parent, f"--out {value}")
        if value.is_dir():
            raise SslperfError(f"--out {value} is a directory; give a file name.")
    return value


def output_dir(ctx, param, value):
    """Click callback for --out DIR: made if missing, and writable."""
    if value is not None:
        _writable_dir(value, f"--out {value}")
    return value


def _writable_dir(path, what: str) -> None:
    import os

    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SslperfError(f"Cannot use {what}: cannot make the directory {path} ({exc.strerror or exc}).",
                           hint="Choose a place you can write to; nothing was measured.") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise SslperfError(f"Cannot use {what}: the directory {path} is not writable.",
                           hint="Choose a place you can write to; nothing was measured.")


THREAD_MODE_HELP = ("With --threads: own — each thread prepares the case itself (its own keys and contexts; for "
                    "handshakes its own SSL_CTX pair, a pool of one per thread), the library's global state shared; "
                    "libctx — also its own OSSL_LIB_CTX (OpenSSL 3.0+, perftools' -l)")


def thread_options(modes: tuple[str, ...], default: str, what: str):
    """--threads / --thread-seconds / --thread-mode for a verb whose cases can run across threads."""
    def wrap(command):
        help_text = THREAD_MODE_HELP + ("; shared — TLS handshakes on one SSL_CTX pair shared by all threads."
                                        if "shared" in modes else ".")
        command = click.option("--thread-mode", type=click.Choice(modes), default=default, show_default=True,
                               help=help_text)(command)
        command = click.option("--thread-seconds", type=click.FloatRange(0.1, 60), default=2.0, show_default=True,
                               help="How long each thread count runs, per round.")(command)
        command = click.option("--threads", "thread_list", metavar="N,N,…",
                               help=f"Instead: {what} with these thread counts (e.g. 1,2,4), each count's rate and "
                                    "its scaling efficiency (rate at N / N × rate at 1).")(command)
        return command
    return wrap


def counts(text: str, option: str, most: int) -> list[int]:
    """`1,2,4` → [1, 2, 4]; anything else is a one-paragraph error."""
    try:
        found = sorted({int(part) for part in text.split(",")})
    except ValueError:
        found = []
    if not found or found[0] < 1 or found[-1] > most:
        raise SslperfError(f"`{text}` is not a list of counts between 1 and {most:,}, e.g. {option} 1,2,4.")
    return found


def run_across_threads(ctx, libs, cases, thread_list: str, seconds: float, mode: str, source: str, no_store: bool):
    """`cases` on `libs` with each thread count of `thread_list`, stored like any run."""
    from sslperf.measure.session import certificates, run_threads

    found = counts(thread_list, "--threads", 256)
    minutes = len(cases) * len(libs) * len(found) * 3 * seconds / 60
    if minutes > 10:
        raise SslperfError(f"--threads runs every case for {seconds:g} s per thread count, 3 rounds each: "
                           f"{len(cases)} cases on {len(libs)} libraries would take about {minutes:.0f} minutes.",
                           hint="Choose a few cases with --case or --filter (or fewer thread counts).")
    with certificates(libs[0]) as workdir:
        return run_threads(libs, cases, workdir, found, seconds, 3, None if no_store else open_store(ctx), mode,
                           source)
