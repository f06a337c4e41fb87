"""The `sslperf` command: parse, call, print. Errors caused by input or the
environment are printed as one paragraph with advice, never a traceback."""

from __future__ import annotations

import importlib
import os
import signal
import sys

import click
from rich.markup import escape

import sslperf
from sslperf import suggest, tempdirs
from sslperf.cli.common import make_console
from sslperf.errors import SslperfError

err_console = make_console(stderr=True)
EXIT_BUG = 70           # an uncaught exception: sysexits' EX_SOFTWARE, never 1 (usage) or 2 (input)


# Each verb's module, imported when the verb is used: measuring and reporting pull in numpy, scipy,
# SQLAlchemy and matplotlib, which `sslperf runs list` or `sslperf libs list` should not wait for.
VERBS = {"libs": "libs:libs", "speed": "speed:speed", "api": "api:api", "tls": "tls:tls", "runs": "runs:runs",
         "compare": "compare:compare", "noise": "noise:noise", "report": "report:report",
         "import": "imports:import_cmd", "offload": "offload:offload", "profile": "profile:profile",
         "scale": "scale:scale", "bisect": "bisect:bisect", "track": "track:track", "regressions": "regressions:regressions_cmd", "recommend": "recommend:recommend",
         "fleet": "fleet:fleet", "serve-load": "serve_load:serve_load", "exec": "exec_cmd:exec_cmd", "probe": "probe:probe",
         "measure-request": "measure_request:measure_request"}


def get_verb(name: str) -> click.Command:
    module, attribute = VERBS[name].split(":")
    return getattr(importlib.import_module(f"sslperf.cli.{module}"), attribute)


def declared_params(command: str, **given) -> dict:
    """`command`'s parsed options ("tls loopback", "speed" …) as its click declaration has them with no arguments —
    each option's one declared default — and `given` over them: what measure.verbs.from_params takes, for callers
    that are not a command line (tests)."""
    verb, _, sub = command.partition(" ")
    declared = get_verb(verb)
    if sub:
        declared = declared.commands[sub]
    unknown = set(given) - {p.name for p in declared.params}
    if unknown:
        raise TypeError(f"{command} declares no {', '.join(sorted(unknown))}")
    return {**declared.make_context(command, [], resilient_parsing=True).params, **given}


class Verbs(click.Group):
    """The verbs, in the order listed; each imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(VERBS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return get_verb(name) if name in VERBS else None

    def resolve_command(self, ctx: click.Context, args: list[str]):
        name = click.utils.make_str(args[0])
        if name not in VERBS and not name.startswith("-") and not ctx.resilient_parsing:
            raise no_such_command(ctx, name, list(VERBS))
        return super().resolve_command(ctx, args)


def no_such_command(ctx: click.Context, name: str, names: list[str]) -> SslperfError:
    """A mistyped verb or subcommand: the close ones, then all of them (click's own error names none)."""
    meant = suggest.did_you_mean(name, names)
    return SslperfError(f"`{ctx.command_path}` has no command `{name}`.",
                        hint=(f"{meant} " if meant else "") + f"Its commands: {', '.join(names)} "
                        f"(`{ctx.command_path} --help` says what each does).")


@click.group(cls=Verbs, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             invoke_without_command=True)
@click.version_option(sslperf.__version__, prog_name="sslperf")
@click.option("--db", envvar="SSLPERF_DB", metavar="URL",
              help="Results store: sqlite:///path or postgresql://user@host/db "
                   "(default: SQLite in the user's data directory; env SSLPERF_DB).")
@click.pass_context
def cli(ctx: click.Context, db: str | None) -> None:
    """sslperf: a performance lab for OpenSSL-family crypto and TLS libraries.

    Build and cache OpenSSL 1.1.1 … 4.x, BoringSSL and AWS-LC in named
    variants, compare their footprints, measure them side by side (primitives,
    API patterns, TLS), keep every run, compare and report them, and explain
    the differences.

    `latest` (runs show, runs export, report, compare) is the newest complete
    run you made yourself (speed, api, tls or an import): not one that was
    interrupted or crashed, nor one another verb made for itself (recommend,
    noise, bisect, track). A run id always works.

    Exit codes: 0 success, 1 a run measured nothing (every case failed; the
    run is kept), 2 a usage error, bad input or environment,
    3 a build failed, 4 a regression (compare --fail-above), 70 a bug in
    sslperf (with its traceback), 130 interrupted.
    """
    ctx.ensure_object(dict)
    ctx.obj["db"] = db
    if ctx.invoked_subcommand is None:      # bare `sslperf`: the help, which is not an error
        click.echo(ctx.get_help())
        ctx.exit(0)


def main(argv: list[str] | None = None) -> None:
    # SIGTERM (a pod evicted, a fleet worker gone, `kill`) stops a run the way Ctrl-C does: what was measured
    # is kept and the run is marked interrupted, instead of a run left "running" forever.
    signal.signal(signal.SIGTERM, _terminated)
    if os.environ.get("SSLPERF_EXIT_WITH_PARENT"):
        _exit_with_parent()
    try:
        tempdirs.sweep()    # what a killed sslperf left in TMPDIR and the cache (its keys, a half-done import)
        cli.main(args=argv, prog_name="sslperf", standalone_mode=False)
    except SslperfError as exc:
        print_error(exc)
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:     # usage errors and bad option values
        exc.show()
        sys.exit(2)
    except (click.exceptions.Abort, KeyboardInterrupt) as exc:
        err_console.print(escape(interrupted_message(exc)), soft_wrap=True)
        sys.exit(130)
    except OSError as exc:              # a path the user gave that cannot be read or written
        where = f" {exc.filename}" if exc.filename else ""
        print_error(SslperfError(f"Cannot use{where}: {exc.strerror or exc}.",
                                 hint="Check the path and its permissions: a file or directory that exists and "
                                 "that this user can read, or write to for an output."))
        sys.exit(2)
    except Exception:                   # a bug in sslperf: say so, with the traceback to report
        import traceback

        traceback.print_exc()
        err_console.print(f"[bold red]internal error:[/] this is a bug in sslperf, not in your input; please "
                          f"report it with the traceback above. (exit code {EXIT_BUG})")
        sys.exit(EXIT_BUG)
    sys.exit(0)


def _terminated(signum, frame) -> None:
    raise KeyboardInterrupt


def _exit_with_parent() -> None:
    """Ask Linux for SIGTERM when the process that started us dies (a fleet
    worker killed mid-suite must not leave its measurement running)."""
    import ctypes

    parent = os.getppid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)     # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:          # it died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


def interrupted_message(exc: BaseException) -> str:
    """What Ctrl-C leaves: the run it stopped (if one was being measured), how
    many cases it kept, and how to see them."""
    from sslperf.measure.recording import interrupted_run

    run, stored = interrupted_run(exc)
    if run is None:
        return "interrupted."
    cases = len({m.case for m in run.measurements})
    kept = f"{cases} case{'' if cases == 1 else 's'}"
    if not stored:
        return (f"interrupted: run {run.id} had measured {kept}; it was not stored (--no-store or the store "
                "refused it), so nothing of it is kept.")
    if not cases:
        return f"interrupted: run {run.id} is kept in the store with no case measured yet."
    return (f"interrupted: run {run.id} is kept in the store with {kept} measured (each with the samples taken "
            f"so far); see them with `sslperf runs show {run.id}`.")


def print_error(exc: SslperfError) -> None:
    text = escape(exc.message) + (f" {escape(exc.hint)}" if exc.hint else "")
    err_console.print(f"[bold red]error:[/] {text}", soft_wrap=True)
