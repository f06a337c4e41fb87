"""`sslperf tls`: what TLS costs, one subcommand per measurement — handshake (in memory; the default), loopback,
transfer, memory, threads and quic — each with only its own options and its own --list. The flag spellings of
before (`tls --loopback`, `--quic`, `--threads` …) still work: they are read as the subcommand they meant, and the
new spelling is said once."""

from __future__ import annotations

import click
from rich.markup import escape

from sslperf.cli import legacy_tls
from sslperf.cli import common
from sslperf.cli import no_such_command
from sslperf.cli.common import make_console
from sslperf.cli.options import (depth_options, details_option, finite, int_range, out_file_option,
                                 placement_options, provider_options, run_options)
from sslperf.measure import limits

console = make_console()
err_console = make_console(stderr=True)


class TlsGroup(click.Group):
    """`tls` alone runs the in-memory handshakes; old flag spellings become their subcommand."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        translated, said = legacy_tls.translate(args, self.commands)
        if said:
            err_console.print(f"[yellow]note:[/] {escape(said)}", soft_wrap=True)
        if translated and translated[0] not in self.commands and not translated[0].startswith("-") \
                and not ctx.resilient_parsing:             # no subcommand takes an argument: a mistyped one
            raise no_such_command(ctx, translated[0], list(self.commands))
        if not translated or translated[0] not in self.commands and translated[0] not in ("--help", "-h"):
            translated = ["handshake", *translated]        # the default subcommand, options and all
        return super().parse_args(ctx, translated)


def _listing(options: list):
    def wrap(command):
        for decorate in reversed(options):
            command = decorate(command)
        return command
    return wrap


_libs = [click.option("--lib", "-l", "lib_names", multiple=True, help="Library to measure (repeatable; default: "
                      "system)."),
         click.option("--filter", "patterns", multiple=True, help="Keep cases whose id matches this glob or "
                      "substring."),
         click.option("--case", "case_ids", multiple=True, help="Measure exactly this case (repeatable)."),
         click.option("--list", "list_only", is_flag=True, help="List the cases this command would run, and stop.")]
_output = [click.option("--json", "as_json", is_flag=True, help="Print the run as JSON instead of tables."),
           details_option,
           out_file_option("Also write the run as JSON here."),
           click.option("--no-store", is_flag=True, help="Do not keep the run in the results store.")]
_rounds = click.option("--rounds", type=int_range(limits.ROUNDS), default=3, show_default=True,
                       help="Rounds, each with fresh processes, every library once per round in turn (A B, B A …).")
_server_lib = click.option("--server-lib", help="Library of the loopback server (default: the same as the client), "
                                                "so the client side of a version change is seen alone.")


@click.group(cls=TlsGroup)
def tls() -> None:
    """What TLS costs: handshakes in memory (the default), over loopback, bulk transfer, memory per connection,
    threads and QUIC. Every subcommand interleaves its libraries in rounds and checks each handshake for the
    version, group and cipher asked for.

    \b
    Examples (the curl 1.1.1 → 3.0 regression: 3.0 made new connections slower):
      sslperf tls --lib openssl-1.1.1w --lib openssl-3.0 --lib openssl-3.6
      sslperf tls loopback --lib openssl-1.1.1w --lib openssl-3.0
      sslperf tls loopback --client both --lib openssl-3.0.2 --lib openssl-3.1.3
      sslperf tls transfer --lib openssl-3.6 --lib boringssl
      sslperf tls memory --lib openssl-1.1.1w --lib openssl-3.6
      sslperf tls threads --threads 1,2 --lib openssl-3.0 --lib openssl-3.6
      sslperf tls quic --lib openssl-3.5 --lib openssl-3.6
    """


@tls.command()
@run_options(50, 10)
@depth_options("Nine cases: as deployed (each library's default groups) beside pinned, the curl pattern, groups, "
               "resumption.",
               "Every protocol × group × certificate × SSL_CTX reuse.")
@_listing(_libs[2:])
@provider_options
@placement_options
@click.pass_context
def handshake(ctx, **options) -> None:
    """Full and resumed TLS 1.2/1.3 handshakes in memory (client and server in one process), per group and
    certificate, with a shared client SSL_CTX or a new one with a CA load per connection (what curl did)."""
    common.measure(ctx, "tls handshake", console, err_console, options["metric"])


@tls.command()
@_listing(_libs)
@click.option("--requests", type=int_range(limits.REQUESTS), default=10, show_default=True,
              help="GETs per library per round (3 rounds of 10: the 30 the curl regression report timed).")
@_rounds
@click.option("--client", "client_kind", type=click.Choice(["harness", "curl", "both"]), default="harness",
              show_default=True, help="Who makes the requests: the harness's curl-like client (a new and a shared "
              "SSL_CTX), a real curl built against each library (one process per request, timed by its -w), or "
              "both side by side.")
@click.option("--curl", "curl_spec", metavar="VERSION", help="With --client curl/both: which curl (e.g. 8.17; curl "
              "8.18 and later need OpenSSL 3.0).")
@_server_lib
@_listing(_output)
@provider_options
@click.pass_context
def loopback(ctx, **options) -> None:
    """Real HTTPS GETs over 127.0.0.1: time to connect, to a finished handshake and to the whole response."""
    common.measure(ctx, "tls loopback", console, err_console)


@tls.command()
@run_options(50, 10, "Target wall time of one sample in ms (with --tcp: how long each round writes).")
@depth_options("One write size per cipher suite.", "Every protocol × suite × write size.")
@_listing(_libs[2:])
@click.option("--tcp", is_flag=True, help="Over a real loopback TCP connection, kernel TLS off and on, a fresh "
              "server and client per round.")
@click.option("--rounds", type=int_range(limits.ROUNDS), help="With --tcp: rounds (default 3).")
@provider_options
@placement_options
@click.pass_context
def transfer(ctx, **options) -> None:
    """Bulk transfer after one handshake (SSL_write/SSL_read), per protocol, cipher suite and write size, the
    sending and receiving CPU apart."""
    common.measure(ctx, "tls transfer", console, err_console, "wall" if options["tcp"] else options["metric"])


@tls.command()
@_listing(_libs)
@click.option("--connections", default="100,1000", show_default=True,
              help="How many connections at once (a comma-separated list).")
@_listing(_output)
@provider_options
@click.pass_context
def memory(ctx, **options) -> None:
    """Bytes the library holds per established connection (client and server apart) and the peak during the
    handshake, with N pairs taken through the handshake in lockstep."""
    common.measure(ctx, "tls memory", console, err_console)


@tls.command()
@_listing(_libs)
@click.option("--threads", "thread_list", metavar="N,N,…", default="1,2", show_default=True,
              help="Thread counts (each count's rate and its scaling efficiency).")
@click.option("--thread-seconds", type=finite(limits.THREAD_SECONDS), default=2.0, show_default=True,
              help="How long every thread count runs, per round.")
@click.option("--thread-mode", type=click.Choice(("shared", "own", "libctx")), default="shared", show_default=True,
              help="shared: handshakes on one SSL_CTX pair shared by all threads; own: each thread its own "
                   "contexts; libctx: also its own OSSL_LIB_CTX (OpenSSL 3.0+).")
@click.option("--transfer", is_flag=True, help="Bulk transfer cases (the quick transfer suite) instead of "
              "handshakes, when no --case is given.")
@_rounds
@_listing(_output)
@provider_options
@click.pass_context
def threads(ctx, **options) -> None:
    """Handshakes across threads (`sslperf scale` sweeps any case and explains the curve)."""
    common.measure(ctx, "tls threads", console, err_console)


@tls.command()
@_listing(_libs)
@click.option("--requests", type=int_range(limits.REQUESTS), default=10, show_default=True,
              help="GETs per library per round.")
@_rounds
@click.option("--path", "net_path", metavar="SETTINGS", help="Over an emulated network path, e.g. "
              "rtt=50ms,jitter=2ms,loss=1% (sslperf's user-space UDP relay; results are compared only with the "
              "same path).")
@click.option("--transfer", is_flag=True, help="Instead: bulk transfer on one QUIC stream beside TLS 1.3 over TCP.")
@click.option("--time", "time_ms", type=finite(limits.TIME_MS), default=250, show_default=True,
              help="With --transfer: how long each round writes, in ms.")
@click.option("--memory", "memory_", is_flag=True, help="Instead: bytes per QUIC connection beside TLS 1.3's.")
@click.option("--connections", default="100,1000", show_default=True, help="With --memory: connections at once.")
@click.option("--clients", "client_threads", metavar="N,N,…", help="Instead: GETs from N client threads at once.")
@_server_lib
@_listing(_output)
@click.pass_context
def quic(ctx, **options) -> None:
    """QUIC over loopback UDP (OpenSSL 3.5+'s own stack) beside TLS 1.3 over TCP: GETs each on a new connection
    (default), bulk transfer, memory per connection, or N clients at once."""
    common.measure(ctx, "tls quic", console, err_console)
