"""`sslperf exec`: the user's own command run against each library through the dynamic loader."""

from __future__ import annotations

import click

from sslperf.cli import common
from sslperf.cli.common import make_console
from sslperf.cli.options import (OutputPath, checked_target, details_option, finite, int_range, out_dir_callback,
                                 out_file_option)
from sslperf.measure import limits
from sslperf.errors import SslperfError

console = make_console()
err_console = make_console(stderr=True)


@click.command("exec", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--lib", "-l", "lib_names", multiple=True,
              help="Library to give the program (repeatable; default system). It needs shared libssl and libcrypto.")
@click.option("--runs", type=int_range(limits.EXEC_RUNS), default=10, show_default=True,
              help="Timed runs per library in each round.")
@click.option("--rounds", type=int_range(limits.ROUNDS), default=5, show_default=True,
              help="Rounds; each runs every library in turn, the order reversed every other round.")
@click.option("--warmup", type=int_range(limits.EXEC_WARMUP), default=1, show_default=True,
              help="Untimed runs per library before its first round of each pass (the first is traced by the "
                   "loader).")
@click.option("--prepare", metavar="CMD", help="Run before every run, untimed (split into words, no shell).")
@click.option("--setup", metavar="CMD", help="Run once per library before its first run.")
@click.option("--cleanup", metavar="CMD", help="Run once per library after its last run.")
@click.option("--server", metavar="[nginx:|haproxy:]LIB",
              help="Start a server on 127.0.0.1 for the run (TLS 1.3, a certificate for localhost): sslperf's own "
                   "HTTPS server of LIB, or nginx or HAProxy built against LIB. `{port}` and `{ca}` in the commands "
                   "are its port and CA file. It stays the same while the program's library changes; with {lib} "
                   "as LIB each library serves in turn and the program keeps its own libraries (the reverse).")
@click.option("--name", metavar="NAME", help="The case's name (default: the program and a digest of the command).")
@click.option("--timeout", type=finite(limits.EXEC_TIMEOUT), default=600, show_default=True,
              help="Seconds one run may take.")
@click.option("--metric", type=click.Choice(["wall", "cpu", "instructions"]), default="wall", show_default=True,
              help="What the verdicts rest on: each run's wall time, its CPU time (user + system), or its "
                   "user-space instructions, counted instead of timed (perf where the CPU's counter can be read, "
                   "else callgrind; every process of the run; barely moved by a busy machine).")
@click.option("--export-json", "hyperfine_out", type=OutputPath(), callback=checked_target,
              help="Also write the results in hyperfine's --export-json format here.")
@click.option("--profile", "profile_runs", type=click.IntRange(1, 1000), metavar="RUNS",
              help="After the run, record RUNS runs of the command under each library with perf (cpu-clock "
                   "sampling, call graphs) and print the functions whose share moved against the first library, "
                   "each named with the object it lives in (libcrypto.so.3, libssl.so.3, the program).")
@click.option("--profile-out", type=OutputPath(directory=True), callback=out_dir_callback,
              help="Directory for --profile's perf.data and reports [default: sslperf-profile/TIME-exec-NAME].")
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON instead of tables.")
@details_option
@out_file_option("Also write the run as JSON here.")
@click.option("--no-store", is_flag=True, help="Do not keep the run in the results store.")
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def exec_cmd(ctx, **options) -> None:
    """Your own program, measured against each library: the command after `--` runs with the library's libssl and
    libcrypto put first on the dynamic loader's path, --runs times per library in each of --rounds rounds, the
    libraries interleaved. Each run's wall time, CPU time (user + system of the whole process tree) and largest
    resident set are recorded; verdicts use the one rule, the run is stored like any other.

    Before anything is timed, the loader's own trace (LD_DEBUG=files) must show the program loading libssl and
    libcrypto from each library; a static program, one that bundles its own TLS, one built for another soname or
    needing a newer symbol version is refused, and a failing run is reported, never timed. `{lib}` in any
    command is the library's name; with --server, `{port}` and `{ca}` are its server's port and CA file.

    \b
    Examples:
      sslperf exec --lib system --lib openssl-3.6+shared --server system -- curl -s -o /dev/null --cacert {ca} \\
          --resolve localhost:{port}:127.0.0.1 https://localhost:{port}/
      sslperf exec --lib openssl-3.0.8+shared --lib openssl-3.6+shared --runs 20 -- \\
          python3 -c "import ssl; ssl.create_default_context()"
      sslperf exec --lib system --export-json hyperfine.json -- psql -c 'select 1'
    """
    from rich.markup import escape

    from sslperf.report import export

    from sslperf.measure import exec_servers

    if options["profile_runs"] and options["server"] and exec_servers.parse(options["server"]).follows:
        raise SslperfError("--profile records the command under each library, and with --server …{lib} the "
                           "command's library does not change (each library serves instead). Nothing was run.",
                           hint="Leave out --profile, or give the server a fixed library.")
    if options["metric"] == "instructions" and options["hyperfine_out"]:
        raise SslperfError("--export-json writes hyperfine's format, which holds times, and --metric instructions "
                           "counts the runs instead of timing them. Nothing was run.",
                           hint="Leave out one of them (`sslperf runs export --format json` keeps the counts).")
    run = common.measure(ctx, "exec", console, err_console, options["metric"])
    if run is not None and options["profile_runs"]:
        _profile(ctx, run, options)
    if run is not None and options["hyperfine_out"]:
        common.write_output(options["hyperfine_out"], export.to_hyperfine(run), "the hyperfine export",
                            force=options["force"])
        shown = err_console if options["as_json"] else console
        shown.print(f"[dim]hyperfine's JSON written to {escape(str(options['hyperfine_out']))}[/dim]")


def _profile(ctx, run, options) -> None:
    """--profile: each library's perf profile of the command (against the same --server, started again), and what
    moved against the first library."""
    import contextlib
    import os
    import time
    from pathlib import Path

    from rich.markup import escape

    from sslperf.measure import verbs
    from sslperf.measure import exec_servers
    from sslperf.measure.modes import program as modes_program
    from sslperf.profiling import program, render
    from sslperf.profiling.diff import changed_most

    request = verbs.from_params("exec", ctx.params)
    libs, (case,) = request.resolve()
    out = options["profile_out"] or out_dir_callback(
        None, None, Path("sslperf-profile") / f"{time.strftime('%Y%m%d-%H%M%S')}-{case.id.replace('/', '_')}")
    out.mkdir(parents=True, exist_ok=True)
    shown = err_console if options["as_json"] else console
    command = request.options["exec"]
    profiles = []
    with contextlib.ExitStack() as held:
        spec = exec_servers.parse(command.server) if command.server else None
        server = held.enter_context(exec_servers.serving(spec)).values if spec else None
        for lib in libs:
            shown.print(f"[dim]profiling {options['profile_runs']} runs under {escape(lib.name)} with perf …[/dim]")
            profiles.append(program.record(lib, modes_program.substituted(command.command, lib, server),
                                           options["profile_runs"], out, {**os.environ, **lib.env}))
    (first, first_objects), top = profiles[0], 12
    for other, objects in profiles[1:]:
        where = {**first_objects, **objects}
        render.print_explanation(first, other, top, shown)
        named = [c for c in changed_most(first, other, top, "inclusive") if program.in_the_library(c.name, where)]
        if named:
            shown.print("  the library's own among them: " + ", ".join(
                f"{escape(c.name)} ({escape(program.library_of(c.name, where))}, {c.inclusive_change:+.1f} points)"
                for c in named))
        else:
            shown.print("  none of the functions that moved most is the library's own: the difference is in the "
                        "program, the loader or the kernel", style="yellow")
    shown.print(f"[dim]perf.data and reports: {escape(str(out))}[/dim]")
