"""`sslperf api`: how you call the library matters (the OpenSSL tuning talk)."""

from __future__ import annotations

import click
from rich.markup import escape

from sslperf.cli import common
from sslperf.cli.common import make_console
from sslperf.cli.options import placement_options, provider_options, run_options, thread_options
console = make_console()
err_console = make_console(stderr=True)


@click.command()
@run_options(20, 10)
@provider_options
@thread_options(("own", "libctx"), "own", "the chosen cases (choose a few with --filter)")
@placement_options
@click.pass_context
def api(ctx, **options) -> None:
    """µs per call of the same work done different ways: implicit vs explicit
    fetch, reused contexts and key schedules, HMAC context duplication, the
    cost of a fetch and of SSL_CTX_new, CA file vs hashed directory, PEM
    parsing. Libraries without the 3.x API run the closest equivalent (marked
    † and explained in --json) or show n/a.

    \b
    Example (the tuning talk's slides for three versions):
      sslperf api --lib openssl-1.1.1w --lib openssl-3.0 --lib openssl-3.6
      sslperf api --filter api/fetch/sha256 --threads 1,2 --thread-mode libctx --lib openssl-3.6
    """
    run = common.measure(ctx, "api", console, err_console, "wall" if options["thread_list"] else options["metric"])
    if not options["as_json"]:
        for note in sorted({m.note for m in run.measurements if m.note}):
            console.print(f"[dim]† {escape(note)}[/dim]")
