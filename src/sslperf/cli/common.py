"""What several verbs share: the store chosen with --db, finding the
libraries, measuring into the store and printing the result."""

from __future__ import annotations

import json
import math
from pathlib import Path

import click

from sslperf import userfiles
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


def show(run, as_json: bool, console, metric: str = "wall", stored: bool = True) -> None:
    """The run as tables or JSON; then, when every case failed, that said
    last (exit 1), so neither a reader nor a script takes it for a
    measurement. A run whose cases are all n/a is an answer (the library has
    none of them), not a failure."""
    if as_json:
        click.echo(json.dumps(run.to_dict(), indent=1))
    else:
        from sslperf.report.terminal import print_run

        print_run(run, console, metric)
    refuse_nothing_measured(run, stored)


def refuse_nothing_measured(run, stored: bool = True) -> None:
    from sslperf.errors import NothingMeasured

    failed = [m for m in run.measurements if m.status not in ("ok", "n/a")]
    if not failed or any(m.status == "ok" for m in run.measurements):
        return
    first = failed[0]
    kept = (f"The run is kept as {run.id} with each case's reason (`sslperf runs show {run.id}`)." if stored
            else "The run was not stored (--no-store).")
    what = (f"every one of its {len(run.measurements)} results failed" if len(failed) == len(run.measurements)
            else f"{len(failed)} of its {len(run.measurements)} results failed and the others are n/a")
    raise NothingMeasured(f"Nothing was measured: {what}. The first, {first.case} on {first.lib}: "
                          f"{first.reason or 'no reason given'}.", hint=kept)


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


class OutputPath(click.ParamType):
    """A path to write to; never empty (an empty --out would mean the working directory)."""
    name = "path"

    def __init__(self, directory: bool = False, dash: bool = False):
        self.directory, self.dash = directory, dash

    def convert(self, value, param, ctx):
        if isinstance(value, Path):
            return value
        if not str(value).strip():
            self.fail("an empty path names no file or directory; give one, e.g. "
                      + ("--out report/" if self.directory else "--out run.json"), param, ctx)
        if self.dash and value == "-":
            return value
        return Path(value)


def force_option(command):
    """--force, processed before --out (eager) so that --out's check knows it."""
    return click.option("--force", is_flag=True, is_eager=True,
                        help="Replace output files that exist though sslperf did not write them (or that were "
                             "changed since).")(command)


def out_file_option(help_text: str, dash: bool = False, name: str = "--out"):
    """--out FILE with --force: the file is checked before any work — sslperf
    replaces only a file it wrote itself, never writes through a symbolic
    link, and needs a directory it can write to — so a long run is never lost
    to a bad output path."""
    def callback(ctx, param, value):
        if value is not None and value != "-":
            userfiles.check_file_target(value, bool(ctx.params.get("force")), f"{param.opts[0]} {value}")
        return value

    def wrap(command):
        command = click.option(name, type=OutputPath(dash=dash), callback=callback, help=help_text)(command)
        return force_option(command)
    return wrap


def out_dir_callback(ctx, param, value):
    """Click callback for --out DIR: made if missing, and writable (the files in it are checked as they are written)."""
    if value is not None:
        name = param.opts[0] if param is not None and param.opts else "--out"
        userfiles.writable_dir(value, f"{name} {value}")
    return value


def write_output(path, text: str, what: str, kept: str | None = None, force: bool = False) -> None:
    """Write `text` to a user's output file (userfiles' rule); a failure (the
    disk filled, the directory went away, a file appeared there since it was
    checked) is one paragraph that says what is kept and where."""
    if str(path) == "-":
        click.echo(text, nl=False)
        return
    try:
        userfiles.write(path, text, force)
    except userfiles.Refused as exc:
        raise SslperfError(f"Cannot write {what} to {path}: {exc.message}",
                           hint=kept or exc.hint) from None
    except OSError as exc:
        raise SslperfError(f"Cannot write {what} to {path}: {userfiles._why(exc, path)}.",
                           hint=kept or "Choose another place with --out.") from None


class Finite(click.FloatRange):
    """A float option: a finite number within its range (`nan` passes plain
    range checks, since every comparison with it is false)."""

    def convert(self, value, param, ctx):
        number = value if isinstance(value, float) else click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!s} is not a finite number", param, ctx)
        return super().convert(number, param, ctx)


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
        command = click.option("--thread-seconds", type=Finite(0.1, 60), default=2.0, show_default=True,
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
