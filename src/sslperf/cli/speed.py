"""`sslperf speed`: the primitives suite."""

from __future__ import annotations

import click

from sslperf.cli import common
from sslperf.cli.common import make_console
from sslperf.cli.options import depth_options, placement_options, provider_options, run_options, thread_options
from sslperf.measure import environment

console = make_console()
err_console = make_console(stderr=True)


@click.command()
@run_options(None, None, "Target wall time of one sample, in ms (default: the depth's).")
@depth_options("A core set of cases, ~20 ms samples (under a minute).",
               "Every case, longer samples, all key generations.")
@click.option("--sizes", help="Extra buffer sizes for ciphers, digests and MACs, e.g. 1350,4096.")
@click.option("--workload", type=click.Choice(["record", "speed-compat", "both"]),
              help="record (the default): what a TLS stack does (same on every lib); speed-compat: each version's "
                   "own `openssl speed` loop; both: side by side. With --case, applied to the encryption and digest "
                   "cases given (others are refused).")
@click.option("--case", "case_ids", multiple=True, help="Measure exactly this case (repeatable).")
@click.option("--cpu-mask", type=click.Choice(sorted(environment.MASKS)),
              help="Pretend the CPU lacks instructions (via OPENSSL_ia32cap): no-aesni shows what a client "
                   "without AES-NI gets.")
@click.option("--list", "list_only", is_flag=True, help="List the cases that would run, and stop.")
@provider_options
@thread_options(("own", "libctx"), "own", "the chosen cases (choose a few with --case or --filter)")
@placement_options
@click.pass_context
def speed(ctx, **options) -> None:
    """Measure ciphers, AEADs, digests, MACs, signatures, key exchange and
    KEMs of one or more libraries in one interleaved run.

    \b
    Examples:
      sslperf speed --quick
      sslperf speed --quick --lib system --lib openssl-1.1.1w --lib openssl-3.6
      sslperf speed --quick --lib openssl-3.6 --cpu-mask no-aesni
      sslperf speed --lib openssl-3.0 --filter 'cipher/aes-128-gcm/encrypt/*' --workload both
      sslperf speed --case cipher/aes-128-gcm/encrypt/16384 --threads 1,2 --lib openssl-3.0 --lib openssl-3.6
      sslperf speed --quick --lib openssl-3.6 --provider default --provider fips --fips-module openssl-3.1.2+fips
    """
    common.measure(ctx, "speed", console, err_console, "wall" if options["thread_list"] else options["metric"])
