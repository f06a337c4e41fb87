"""What several verbs share: the store chosen with --db, finding the
libraries, measuring into the store and printing the result."""

from __future__ import annotations

import json

import click

from sslperf.errors import SslperfError


WIDE = 10_000      # columns when output is not a terminal: tables take the width their content needs


def make_console(stderr: bool = False):
    """The verbs' console: no syntax highlighting and no emoji codes, so user
    text such as `root:x:0:0` prints as it is; long lines are not cut. When
    the output is not a terminal (a pipe, a file, a CI log) tables are as
    wide as their content instead of being cut to 80 columns; COLUMNS, when
    set, still decides the width."""
    import os

    from rich.console import Console

    console = Console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)
    if not console.is_terminal and not (os.environ.get("COLUMNS") or "").strip().isdigit():
        console.width = WIDE
    return console


def plural(count: int, word: str, many: str | None = None) -> str:
    """`1 library`, `2 libraries`, `34 cases`."""
    if count == 1:
        return f"{count} {word}"
    return f"{count:,} {many or (word[:-1] + 'ies' if word.endswith('y') else word + 's')}"


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
    """The libraries named (default: the system one), each once. A name may
    carry the provider its column runs under: `openssl-3.6:fips` (its own
    FIPS module) or `openssl-3.6:fips=openssl-3.0.8+fips` (another build's)."""
    from sslperf.libs import fips, installed

    libs = []
    for name in names or ("system",):
        libs.append(fips.from_spec(name, installed.find) if ":" in name else installed.find(name))
    if len({lib.name for lib in libs}) != len(libs):
        raise SslperfError("The same library is named twice; name each library once.")
    return libs


def show(run, as_json: bool, console, metric: str = "wall") -> None:
    if as_json:
        click.echo(json.dumps(run.to_dict(), indent=1))
        return
    from sslperf.report.terminal import print_run

    print_run(run, console, metric)


def provider_options(command):
    """--provider / --fips-module: which provider serves each library's algorithms."""
    command = click.option("--fips-module", "fips_modules", multiple=True, metavar="LIB",
                           help="With --provider fips: load the FIPS module of this +fips build (repeatable), e.g. "
                                "the validated openssl-3.1.2+fips module inside an OpenSSL 3.6 library; default: "
                                "each library's own module.")(command)
    command = click.option("--provider", "providers", multiple=True, type=click.Choice(["default", "fips"]),
                           help="Measure under this provider (repeatable: each library once per provider). fips: "
                                "only the FIPS module (self-tested as it loads) and fips=yes; a case it does not "
                                "offer is n/a.")(command)
    return command


def with_providers(libs, providers: tuple[str, ...], fips_modules: tuple[str, ...]):
    """The libraries as the run's columns: each under each provider asked for."""
    if not providers and not fips_modules:
        return libs
    from sslperf.libs import fips, installed

    providers = providers or ("fips",)
    if fips_modules and "fips" not in providers:
        raise SslperfError("--fips-module applies to --provider fips, which was not asked for.",
                           hint="Add --provider fips (and --provider default to compare with the default provider).")
    return fips.provider_views(libs, providers, [installed.find(name) for name in fips_modules])


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
    import os
    import stat

    if value is None:
        return value
    what = f"{param.opts[0] if param is not None and param.opts else '--out'} {value}"
    try:
        mode = value.stat().st_mode
    except OSError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise SslperfError(f"Cannot use {what}: it is a directory; give a file name.", hint=NOTHING_DONE)
    if mode is not None and not stat.S_ISREG(mode):      # /dev/null, a pipe: writable or not, nothing to make
        if not os.access(value, os.W_OK):
            raise SslperfError(f"Cannot use {what}: it cannot be written by this user.", hint=NOTHING_DONE)
        return value
    _writable_dir(value.parent, what)
    if mode is not None and not os.access(value, os.W_OK):
        raise SslperfError(f"Cannot use {what}: the file exists and cannot be written by this user.",
                           hint=NOTHING_DONE)
    return value


def output_dir(ctx, param, value):
    """Click callback for --out DIR: made if missing, and writable."""
    if value is not None:
        _writable_dir(value, f"{param.opts[0] if param is not None and param.opts else '--out'} {value}")
    return value


NOTHING_DONE = "Choose a place you can write to; this was checked before any work, so nothing was done yet."


def _writable_dir(path, what: str) -> None:
    """`path` made if missing, then really written to (a probe file, removed
    at once): permissions, read-only mounts and pseudo-filesystems such as
    /proc all show up here rather than after a long run."""
    import tempfile

    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise SslperfError(f"Cannot use {what}: {_nearest_file(path)} is a file, so no directory can be made "
                           "under it.", hint=NOTHING_DONE) from None
    except OSError as exc:
        raise SslperfError(f"Cannot use {what}: cannot make the directory {path} ({_why(exc, path)}).",
                           hint=NOTHING_DONE) from None
    try:
        with tempfile.TemporaryFile(dir=path, prefix=".sslperf-probe-"):
            pass
    except OSError as exc:
        raise SslperfError(f"Cannot use {what}: the directory {path} cannot be written ({_why(exc, path)}).",
                           hint=NOTHING_DONE) from None


def _nearest_file(path):
    """The first part of `path` that exists and is not a directory (the reason no directory can be made)."""
    for parent in [path, *path.parents]:
        if parent.exists():
            return parent
    return path


def _why(exc: OSError, path) -> str:
    import errno

    if exc.errno == errno.ENOTDIR:
        return f"{_nearest_file(path)} is a file, not a directory"
    if exc.errno == errno.EROFS:
        return "a read-only file system"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ENOENT and str(path).startswith(("/proc", "/sys")):
        return "a kernel pseudo-filesystem, which holds no files of yours"
    return exc.strerror or str(exc)


def write_output(path, text: str, what: str, kept: str | None = None) -> None:
    """Write `text` to a user's output file; a failure (the disk filled, the
    directory went away since it was checked) is one paragraph that says
    what is kept and where."""
    try:
        path.write_text(text)
    except OSError as exc:
        raise SslperfError(f"Cannot write {what} to {path}: {_why(exc, path)}.",
                           hint=kept or "Choose another place with --out.") from None


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
