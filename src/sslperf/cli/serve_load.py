"""`sslperf serve-load`: nginx and HAProxy built against each library, under load from wrk."""

from __future__ import annotations

import click

from sslperf.cli import common
from sslperf.cli.common import make_console
from sslperf.cli.options import details_option, finite, int_range, out_file_option
from sslperf.measure import limits
from sslperf.serve_load import SCENARIOS, SERVERS

console = make_console()
err_console = make_console(stderr=True)


@click.command("serve-load")
@click.option("--lib", "-l", "lib_names", multiple=True, help="Library to build the servers against (repeatable).")
@click.option("--server", "servers", multiple=True, type=click.Choice(SERVERS),
              help="Server (repeatable; default nginx).")
@click.option("--scenario", "scenarios", multiple=True, type=click.Choice(list(SCENARIOS)),
              help="new: a new connection and full handshake per request; resumed: a new connection per request "
                   "resuming the last session; keepalive: requests on open connections (repeatable; default new "
                   "and keepalive).")
@click.option("--protocol", "protocols", multiple=True, type=click.Choice(["tls1.3", "tls1.2"]),
              help="TLS version (repeatable; default tls1.3).")
@click.option("--group", "groups", multiple=True, help="Key-exchange group (repeatable; default x25519).")
@click.option("--cert", "certs", multiple=True,
              help="Server certificate (repeatable; default rsa-2048, whose signature keeps the server the busier "
                   "side).")
@click.option("--case", "case_ids", multiple=True, help="Measure exactly this case, e.g. "
              "tls/serve/nginx/new/tls1.3/x25519/rsa-2048 (repeatable).")
@click.option("--list", "list_only", is_flag=True, help="List the cases that would run, and stop.")
@click.option("--connections", type=int_range(limits.SERVE_CONNECTIONS), default=64, show_default=True,
              help="Connections wrk keeps busy at once.")
@click.option("--seconds", type=finite(limits.SERVE_SECONDS), default=5, show_default=True,
              help="Timed load per round.")
@click.option("--warmup", type=finite(limits.SERVE_WARMUP), default=1, show_default=True,
              help="Load before each timed period.")
@click.option("--rounds", "round_count", type=int_range(limits.SERVE_ROUNDS), default=5, show_default=True,
              help="Rounds per case; each round runs every library once, in turn (the CI is across rounds).")
@click.option("--server-cpus", metavar="N,N,…", help="CPUs for the server, one worker each (default: the first).")
@click.option("--client-cpus", metavar="N,N,…", help="CPUs for wrk, one thread each (default: the others).")
@click.option("--port", type=int_range(limits.PORT), help="Port on 127.0.0.1 (default: a free one per round).")
@click.option("--server-version", metavar="VERSION",
              help="The server's version, e.g. 1.22 (default: the newest Debian's suites carry).")
@click.option("--metric", type=click.Choice(["wall", "cpu"]), default="wall", show_default=True,
              help="What the star marks: requests per second (wall) or requests per server CPU second (cpu).")
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON instead of tables.")
@details_option
@out_file_option("Also write the run as JSON here.")
@click.option("--no-store", is_flag=True, help="Do not keep the run in the results store.")
@click.pass_context
def serve_load(ctx, **options) -> None:
    """Real servers built against each library (nginx and HAProxy from Debian's source packages, linked
    statically, cached), each on 127.0.0.1 with a generated configuration, loaded by wrk: requests/s,
    handshakes/s, the server's CPU per request and the latency percentiles, with CIs across rounds interleaved
    across libraries. Each round is checked: one GET's body and protocol, no failed requests, and the server's
    own log says every request resumed (resumed) or none did (new).

    Two CPUs cannot show many-core contention: the server and the client get one each, and the run records
    which. When the client is the busier side, the rate is the client's; the server's CPU per request still
    tells the libraries apart (`--metric cpu`).

    \b
    Examples (an nginx 10% slower after an OpenSSL upgrade):
      sslperf serve-load --lib openssl-1.1.1w --lib openssl-3.0 --lib openssl-3.6
      sslperf serve-load --server nginx --server haproxy --scenario resumed --lib openssl-3.5 --lib openssl-3.6
      sslperf bisect tls/serve/nginx/new/tls1.3/x25519/rsa-2048 --good openssl-3.0.8 --bad openssl-3.6.3
    """
    common.measure(ctx, "serve-load", console, err_console, options["metric"])
