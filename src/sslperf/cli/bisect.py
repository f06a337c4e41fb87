"""`sslperf bisect`: which release (or commit) changed a case, and why."""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

import click
from rich.markup import escape

from sslperf.bisect import probe, render
from sslperf.errors import SslperfError
from sslperf.untrusted import shorten, visible
from sslperf.bisect import space as spaces
from sslperf.cli.common import held, make_console, refuse_unstored, store_unless
from sslperf.cli.progress import steps
from sslperf.cli.options import Finite, finite, placement_options
from sslperf.libs import installed
from sslperf.measure import environment, limits, plan, suites
from sslperf.noise.applied import floor_for
from sslperf.profiling.explain import available as can_profile
from sslperf.profiling.render import print_explanation

console = make_console()
progress_console = make_console(stderr=True)


@click.command()
@click.argument("case_id", metavar="CASE")
@click.argument("argv", nargs=-1, type=click.UNPROCESSED, metavar="[-- COMMAND ARG…]")
@click.option("--good", required=True, help="The release (or, with --git, the revision) where the case is as wanted.")
@click.option("--bad", required=True, help="The release (or revision) where it is not. Either may be the older.")
@click.option("--git", "git_repo", type=click.Path(file_okay=False, path_type=Path),
              help="Bisect the first-parent commits between --good and --bad of this local clone instead of "
                   "releases.")
@click.option("--metric", type=click.Choice(["auto", "instructions", "wall", "cpu"]), default="auto",
              show_default=True,
              help="What decides each step. auto: instructions counted by callgrind when valgrind is installed "
                   "(deterministic, so small steps are found; every case runs in memory on one CPU), else wall "
                   "time.")
@click.option("--threshold", type=Finite(0, 100),
              help="Smallest change in % a step may call (default 1 for instructions, 2 for time); the machine's "
                   "measured noise floor is used when larger.")
@click.option("--alpha", type=Finite(0, 1, min_open=True, max_open=True), default=0.05, show_default=True)
@click.option("--time", "time_ms", type=finite(limits.TIME_MS),
              help="Target wall time of one sample, in ms (time metrics; default 30); of a threads case, how long "
                   "every thread runs in a round and in each run that explains a step (default 2000 and 1000).")
@click.option("--samples", type=click.IntRange(3, limits.SAMPLES.high), default=10, show_default=True,
              help="Samples per library in a step (time metrics).")
@click.option("--explain/--no-explain", default=True, show_default=True,
              help="Profile the two sides of each found step with callgrind and show the functions whose share "
                   "moved most.")
@click.option("--top", type=click.IntRange(1, 100), default=10, show_default=True, help="Functions per table.")
@click.option("-j", "--jobs", type=click.IntRange(1, 256), default=None, help="Parallel compile jobs of a build.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON instead of tables.")
@click.option("--no-store", is_flag=True, help="Do not keep the bisect in the results store.")
@placement_options
@click.pass_context
def bisect(ctx, case_id, argv, good, bad, git_repo, metric, threshold, alpha, time_ms, samples, explain, top, jobs,
           as_json, no_store, cpu, no_pin, fixed_layout, processes) -> None:
    """Find the release (or commit) between --good and --bad where CASE
    changed: a binary search that builds each midpoint (cached) and measures
    it against both ends of its interval in one interleaved, pinned run. A
    change in several steps is found step by step with each one's share; a
    history that is not monotonic is shown, not guessed at. Then the two
    sides of the change are profiled to say which functions moved.

    \b
    Examples:
      sslperf bisect api/ssl-ctx/new --good openssl-3.0.0 --bad openssl-3.0.8
      sslperf bisect cipher/aes-128-gcm/encrypt/16 --good openssl-1.1.1w --bad openssl-3.0.8 --metric wall
      sslperf bisect api/ssl-ctx/new --git ~/src/openssl --good openssl-3.0.0 --bad openssl-3.0.1
      sslperf bisect exec --good openssl-3.0.8+shared --bad openssl-3.6.3+shared -- curl -s --version
    """
    started = time.monotonic()
    case, options = _case_and_options(case_id, tuple(argv), time_ms)
    jobs = jobs or os.cpu_count() or 1
    metric, why = probe.choose_metric(metric, case)
    # Commits an exec case runs against are built +shared (releases are named with it by the user).
    space = (spaces.commits_between(git_repo, good, bad, jobs, ("shared",) if case.family == "exec" else ())
             if git_repo else spaces.releases_between(good, bad, jobs))
    threshold = probe.DEFAULT_THRESHOLD[metric] if threshold is None else threshold
    settings = plan.settings(time_ms or probe.SAMPLE_MS, samples, cpu, no_pin, processes, None, metric, fixed_layout)
    store = store_unless(ctx, no_store)
    floors, floor_note = floor_for(store, {environment.capture().get("host")}, metric)
    judge = probe.Judge(metric, threshold / 100, alpha, floors)
    out = progress_console if as_json else console
    built = {lib.name for lib in installed.built_libs()}
    for line in render.space_lines(space, case.id, built):
        out.print(escape(line), soft_wrap=True)
    out.print(f"metric: {metric} ({escape(why)}); {escape(floor_note)}", style="dim", soft_wrap=True)
    result = probe.bisect(space, case, settings, judge,
                          _TerminalEvents(out, [p.label.split(" ")[0] for p in space.points]), store, options)
    if explain and not as_json:
        _explain(result, out)
    seconds = time.monotonic() - started
    if as_json:
        click.echo(json.dumps({**result.as_dict(), "run_id": result.run.id if result.run else None,
                               "wall_seconds": round(seconds, 1)}, indent=1))
    else:
        render.print_result(result, console)
        _print_explanations(result, top)
        render.print_costs(result, seconds, console)
        if result.run is not None and held(result.run, store):
            console.print(f"[dim]stored as run {escape(result.run.id)} (`sslperf runs show {escape(result.run.id)}`, "
                          f"`sslperf report {escape(result.run.id)}`)[/dim]")
    if result.run is not None:
        refuse_unstored(result.run, store)


def _case_and_options(case_id: str, argv: tuple[str, ...], time_ms) -> tuple:
    """CASE, or `exec` with the user's command after `--` (each step runs it against the step's two or three
    libraries, as `sslperf exec` does: build the ends with +shared)."""
    if case_id == "exec":
        from sslperf.measure import exec_plan
        from sslperf.measure.modes import program

        case = exec_plan.case_of(argv, verb="sslperf bisect exec")
        return case, {"exec": program.Options(argv)}
    if argv:
        raise SslperfError(f"`{shorten(visible(' '.join(argv[:3])), 60)}` follows the case {shorten(visible(case_id), 80)}: "
                           "only an `exec` bisect "
                           "takes a command. Nothing was built or measured.",
                           hint="sslperf bisect exec --good openssl-3.0.8+shared --bad openssl-3.6.3+shared -- CMD …")
    case = suites.parse_case(case_id)
    return case, probe.mode_options(case, time_ms)


def _explain(result, out) -> None:
    if not any(b.kind == "step" for b in result.outcome.boundaries):
        return
    if probe.explained_by_contention(result.case):
        out.print("explaining each step by its two sides' contention (lock waits, CPU shares) …", style="dim")
        probe.explain(result)
        return
    if result.case.startswith("exec/"):
        out.print("Not explained here: `sslperf exec --lib OLDER --lib NEWER --profile 5 -- COMMAND` on a step's two "
                  "sides profiles your program under each and names the library's functions whose share moved.",
                  style="yellow")
        return
    if not probe.profiled(result.case):
        out.print("Not explained: a loopback case runs a server and a client process, which callgrind does not "
                  "profile together; `sslperf profile` on the in-memory handshake or transfer case of the same "
                  "group and suite shows the library's side.", style="yellow")
        return
    if not can_profile():
        out.print("Not explained: profiling the two sides needs valgrind (callgrind).", style="yellow")
        return
    out.print("profiling both sides of each step with callgrind …", style="dim")
    probe.explain(result)


def _print_explanations(result, top: int) -> None:
    from sslperf.scale.render import contention_lines

    for boundary, a, b in result.contentions:
        label = lambda i: result.label(i).split(" ")[0]     # noqa: E731
        console.print(f"[bold]Why {escape(label(boundary.before))} → {escape(label(boundary.after))}[/] "
                      f"(contention at {a.threads} threads against 1, each side):")
        for side in (a, b):
            for line in contention_lines(side.as_dict()):
                console.print("  " + line, soft_wrap=True)
    for boundary, a, b in result.explanations:
        label = lambda i: result.label(i).split(" ")[0]     # noqa: E731
        console.print(f"[bold]Why {escape(label(boundary.before))} → {escape(label(boundary.after))}[/] "
                      "(callgrind, the harness loop only; shares of all instructions):")
        console.print("  " + render.explained_line(result, boundary, (a, b)), soft_wrap=True)
        print_explanation(a, b, top, console)


class _TerminalEvents:
    """Builds with a progress bar, a line per step as it ends."""

    def __init__(self, out, labels: list[str]):
        self.out = out
        self.labels = labels
        self.bar = None                    # the measuring steps of the step going on
        self.task = None

    @contextlib.contextmanager
    def building(self, label: str):
        with steps(self.out, f"building {label}") as progress:
            yield progress

    def built(self, build) -> None:
        if build.problem:
            self.out.print(f"[yellow]skipped {escape(build.name)}:[/] {escape(build.problem[:400])}", soft_wrap=True)
        elif not build.cached:
            self.out.print(f"built {escape(build.name)} in {build.seconds:.0f} s")

    def measuring(self, labels: list[str], longer: bool) -> None:
        self.out.print(f"measuring {', '.join(escape(x.split(' ')[0]) for x in labels)}"
                       f"{' again, longer' if longer else ''} …", style="dim")

    def measured(self, what: str, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = steps(self.out, "measuring", prefix=False).__enter__()
        self.bar.update(what, done, total)

    def step(self, step) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None
        self.out.print(escape(render.step_line(self.labels.__getitem__, step)), soft_wrap=True)
