"""The options several verbs declare alike, each in one place: what a
measuring verb takes (libraries, filter, sample time, metric, output), where
its workers run, which provider serves a library, thread scaling, and the
types that check a value before anything runs (finite numbers, output paths
sslperf may write)."""

from __future__ import annotations

import math
from pathlib import Path

import click

from sslperf import userfiles
from sslperf.measure import limits


class Finite(click.FloatRange):
    """A float option: a finite number within its range (`nan` passes plain
    range checks, since every comparison with it is false)."""

    def convert(self, value, param, ctx):
        number = value if isinstance(value, float) else click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!s} is not a finite number", param, ctx)
        return super().convert(number, param, ctx)


def int_range(bound: limits.Bound) -> click.IntRange:
    """A whole-number option within one of measure.limits' bounds (what a request is held to as well)."""
    return click.IntRange(int(bound.low), int(bound.high))


def finite(bound: limits.Bound) -> Finite:
    """A finite number option within one of measure.limits' bounds."""
    return Finite(bound.low, bound.high)


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


def checked_target(ctx, param, value):
    """An output file's option, checked before any work (see out_file_option); --force must be declared too."""
    if value is not None and value != "-":
        userfiles.check_file_target(value, bool(ctx.params.get("force")), f"{param.opts[0]} {value}")
    return value


def out_file_option(help_text: str, dash: bool = False, name: str = "--out"):
    """--out FILE with --force: the file is checked before any work — sslperf
    replaces only a file it wrote itself, never writes through a symbolic
    link, and needs a directory it can write to — so a long run is never lost
    to a bad output path."""
    callback = checked_target

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


METRIC_HELP = ("What the tables show: wall or CPU time (both are recorded), or instructions per operation "
               "counted by valgrind inside the loop only (the deterministic tier, for CI gates and bisects; "
               "measured instead of time, one count per worker process).")


details_option = click.option("--details", is_flag=True,
                              help="Under each figure, the lines behind it (each side's CPU, latency percentiles, "
                                   "descstat lines); the tables are then wider than 120 columns.")


def run_options(time_ms: float | None, samples: int | None, time_help: str = "Target wall time of one sample, in ms."):
    """What speed, api and tls take alike: the libraries, a filter, the
    sample time and count (None: the depth decides), the metric, JSON on
    standard output or in a file, and whether to keep the run."""
    def wrap(command):
        for decorate in reversed((
            click.option("--lib", "-l", "lib_names", multiple=True,
                         help="Library to measure (repeatable; default: system)."),
            click.option("--filter", "patterns", multiple=True,
                         help="Keep cases whose id matches this glob or substring."),
            click.option("--time", "time_ms", type=finite(limits.TIME_MS), default=time_ms,
                         show_default=time_ms is not None, help=time_help),
            click.option("--samples", type=int_range(limits.SAMPLES), default=samples,
                         show_default=samples is not None, help="Samples per case and library."),
            click.option("--metric", type=click.Choice(["wall", "cpu", "instructions"]), default="wall",
                         show_default=True, help=METRIC_HELP),
            click.option("--json", "as_json", is_flag=True, help="Print the run as JSON instead of tables."),
            details_option,
            out_file_option("Also write the run as JSON here."),
            click.option("--no-store", is_flag=True, help="Do not keep the run in the results store."),
        )):
            command = decorate(command)
        return command
    return wrap


def depth_options(quick_help: str, full_help: str):
    """--quick / --full: the suite's depth, given to the command as `depth` (None when
    neither is given). Two flags of one destination would let click keep the last of
    them; each is its own flag here, and asked for both the command is refused (exit 2)."""
    def callback(ctx, param, given):
        chosen = ctx.params.setdefault("depth", None)
        if given:
            if chosen not in (None, param.name):
                raise click.UsageError("--quick and --full choose the suite's depth; give one of them "
                                       "(neither: the default depth).", ctx)
            ctx.params["depth"] = param.name

    def wrap(command):
        command = click.option("--full", "full", is_flag=True, expose_value=False, callback=callback,
                               help=full_help)(command)
        return click.option("--quick", "quick", is_flag=True, expose_value=False, callback=callback,
                            help=quick_help)(command)
    return wrap


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


def placement_options(command):
    """--cpu / --no-pin / --processes: where and in how many processes the workers run."""
    command = click.option("--processes", type=int_range(limits.PROCESSES),
                           help="Worker processes per case and library (default 5; for --metric instructions, "
                                "one count each: 1 for a library whose inputs are deterministic, else 3); the "
                                "samples are spread over them, so the CI covers what differs between "
                                "processes.")(command)
    command = click.option("--fixed-layout", is_flag=True,
                           help="Turn off address-space randomisation in the workers, so every process has the same "
                                "memory layout: steadier run-to-run figures of one library (a CI gate), but a "
                                "comparison of two libraries then rests on one layout each.")(command)
    command = click.option("--no-pin", is_flag=True,
                           help="Let the workers float between CPUs (not recommended: more run-to-run swing).")(command)
    command = click.option("--cpu", type=int, metavar="N",
                           help="Pin the workers to CPU N (default: the last CPU this process may use).")(command)
    return command


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
        command = click.option("--thread-seconds", type=finite(limits.THREAD_SECONDS), default=2.0, show_default=True,
                               help="How long each thread count runs, per round.")(command)
        command = click.option("--threads", "thread_list", metavar="N,N,…",
                               help=f"Instead: {what} with these thread counts (e.g. 1,2,4), each count's rate and "
                                    "its scaling efficiency (rate at N / N × rate at 1).")(command)
        return command
    return wrap
