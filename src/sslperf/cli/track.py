"""`sslperf track`: measure the new commits of a branch, commit by commit."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import click
from rich.markup import escape

from sslperf import track as tracking
from sslperf.cli.common import make_console, open_store
from sslperf.cli.options import placement_options
from sslperf.errors import SslperfError
from sslperf.measure import plan, suites

console = make_console()


@click.command()
@click.option("--git", "git_repo", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="A local clone of the library (OpenSSL, BoringSSL, AWS-LC or LibreSSL).")
@click.option("--branch", default="HEAD", show_default=True, help="The branch (or any revision) to track.")
@click.option("--limit", type=click.IntRange(1, 1000), default=5, show_default=True,
              help="Commits built and measured in this call, at most (newest first; the next call goes on).")
@click.option("--depth", type=click.IntRange(1, 100_000), default=200, show_default=True,
              help="How many first-parent commits back to look for ones not measured yet.")
@click.option("--case", "case_ids", multiple=True, help="A case to measure (repeatable; default: the quick suite).")
@click.option("--filter", "patterns", multiple=True, help="Keep cases whose id matches this glob or substring.")
@click.option("--metric", type=click.Choice(["both", "wall", "instructions"]), default=None,
              help="What to measure on each commit (default: both where valgrind is installed, else wall).")
@click.option("-j", "--jobs", type=click.IntRange(1, 256), default=None, help="Parallel compile jobs of a build.")
@placement_options
@click.argument("argv", nargs=-1, type=click.UNPROCESSED, metavar="[-- COMMAND ARG…]")
@click.pass_context
def track(ctx, git_repo, branch, limit, depth, case_ids, patterns, metric, jobs, cpu, no_pin, fixed_layout,
          processes, argv) -> None:
    """Build and measure the commits of a branch this host has not measured
    yet, newest first, at most --limit per call: the chosen cases with wall
    time and with instruction counts, one stored run per commit and metric.
    Safe from cron or a CI schedule: a commit measured before is not
    measured again, one that does not build is skipped with its reason and
    not tried again, and a call stopped half way is finished by the next.
    `sslperf regressions` then finds where the series changed.

    \b
    Examples:
      sslperf track --git ~/src/openssl --branch master --limit 3
      sslperf track --git ~/src/openssl --case tls/handshake/tls1.3/x25519/ecdsa-p256/shared --metric instructions
      sslperf track --git ~/src/openssl --case tls/serve/nginx/new/tls1.3/x25519/rsa-2048 --metric wall
      sslperf track --git ~/src/openssl --metric wall -- curl -s -o /dev/null --version
    """
    cases, options, variants = _cases(tuple(argv), case_ids, patterns)
    metrics = tracking.metrics(metric, cases, bool(shutil.which("valgrind")))
    quick = suites.DEPTHS["quick"]
    settings = {m: plan.settings(quick.target_ms, quick.samples, cpu, no_pin, processes, None, m, fixed_layout)
                for m in metrics}
    store = open_store(ctx)
    request = tracking.TrackRequest(git_repo.expanduser(), branch, cases, settings, limit, depth, jobs, options,
                                    variants)

    @contextlib.contextmanager
    def building(commit):
        console.print(f"building {commit.sha[:10]} {escape(commit.subject)} ({commit.date[:10]}) …")
        yield

    def built(outcome, cached: bool) -> None:
        if outcome.skipped:
            console.print(f"[yellow]skipped {outcome.commit.sha[:10]}:[/] {escape(outcome.skipped[:400])}",
                          soft_wrap=True)
        else:
            console.print(f"  {escape(outcome.lib)}: " + ("cached build" if cached else
                                                         f"built in {outcome.build_seconds:.0f} s"))

    def measuring(commit, what: str) -> None:
        count = len(tracking.measurable(cases, what))
        console.print(f"  measuring {count} case(s): {'instructions' if what == 'instructions' else 'wall time'}")

    outcomes, left = tracking.track(request, store, tracking.Events(building, built, measuring))
    measured = [o for o in outcomes if not o.skipped]
    if not outcomes:
        console.print(f"Nothing to do: the newest {depth} commit(s) of {escape(branch)} are measured on this host.")
        return
    build_s = sum(o.build_seconds for o in outcomes)
    measure_s = sum(o.measure_seconds for o in outcomes)
    console.print(f"Tracked {len(measured)} commit(s) of {escape(branch)}, skipped {len(outcomes) - len(measured)}; "
                  f"building {build_s:.0f} s, measuring {measure_s:.0f} s; {left} commit(s) left for the next call. "
                  "`sslperf regressions` finds where the series changed.")
    if not measured:
        raise SslperfError("No commit of this call could be built, so nothing was measured.",
                           hint="The reasons are above; those commits are not tried again.")


def _cases(argv: tuple[str, ...], case_ids, patterns) -> tuple[list, dict, tuple[str, ...]]:
    """(the cases, their modes' options, the variants every commit is built with): the chosen cases, or your
    command after `--` (an exec case: each commit built with its shared libraries, the command run against them)."""
    if argv:
        from sslperf.measure import exec_plan
        from sslperf.measure.modes import program

        if case_ids or patterns:
            raise SslperfError("A command after `--` is the one case tracked; --case and --filter cannot be given "
                               "with it. Nothing was built or measured.", hint="Track them in separate calls.")
        return [exec_plan.case_of(argv, verb="sslperf track")], {"exec": program.Options(argv)}, ("shared",)
    cases = suites.select([suites.parse_case(c) for c in case_ids] if case_ids else suites.suite("quick"), patterns)
    return cases, {}, ()
