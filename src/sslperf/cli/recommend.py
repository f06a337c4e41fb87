"""`sslperf recommend`: argued TLS server settings for one library, from
stored runs or from the few quick cases it measures itself."""

from __future__ import annotations

import json

import click
from rich.markup import escape

from sslperf.cli.common import make_console, open_store, store_unless, write_output
from sslperf.cli.progress import steps
from sslperf.cli.options import out_file_option
from sslperf.errors import SslperfError
from sslperf.recommend import advise, decide, reuse
from sslperf.recommend.snippets import FORMATS, as_dict, render

console = make_console()
err_console = make_console(stderr=True)


@click.command()
@click.option("--lib", "-l", "lib_name", default="system", show_default=True, help="The server's library.")
@click.option("--clients", type=click.Choice(sorted(decide.CLIENT_PROFILES)), default="mixed", show_default=True,
              help="Who connects: mixed, mobile (no AES instructions) or desktop (AES-NI).")
@click.option("--min-security", type=click.Choice([str(f) for f in decide.FLOORS]), default="128",
              show_default=True, help="Security floor in bits; nothing below it is offered, whatever its speed.")
@click.option("--compat", is_flag=True, help="Also an RSA certificate for clients without ECDSA (dual certificates).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--from-run", "run_ids", multiple=True, metavar="RUN",
              help="Use these stored runs (repeatable); cases they lack are measured now. Without it, the newest "
                   "complete run of the library on this host from the last 7 days that holds every case needed is "
                   "reused (and named).")
@click.option("--fresh", is_flag=True, help="Measure every figure anew instead of reusing a recent run.")
@out_file_option("Write the snippet here too.")
@click.option("--json", "as_json", is_flag=True, help="Print the advice and its figures as JSON.")
@click.option("--no-store", is_flag=True, help="Do not keep what is measured in the results store (nor reuse a "
                                                "run from it unless --from-run names one).")
@click.option("--fips", is_flag=True,
              help="A server that must run the FIPS provider: measure and advise through the FIPS module only, "
                   "and say what that costs (e.g. no ChaCha20-Poly1305 for clients without AES instructions).")
@click.option("--fips-module", metavar="LIB",
              help="With --fips: the +fips build whose module to load (default: the library's own), e.g. "
                   "openssl-3.1.2+fips inside an OpenSSL 3.6.")
@click.pass_context
def recommend(ctx, lib_name, clients, min_security, compat, fmt, run_ids, fresh, out, force, as_json, no_store,
              fips, fips_module) -> None:
    """Turn measured costs into TLS server settings: the AEAD order (AES-GCM
    or ChaCha20 first, from the measured ratio with and without AES
    instructions), key exchange groups by measured cost, the certificate
    type, signature algorithms and resumption, each argued with its numbers,
    as text or a ready-to-paste nginx, HAProxy, Apache or openssl.cnf snippet.
    Every string is checked against the library itself before it is printed.
    Options the measurements do not tell apart are said to tie, and ordered
    by a stated rule; noisy evidence is warned of. A recent run of the
    library that holds every case needed is reused (and named); --fresh
    measures anew.

    \b
    Examples:
      sslperf recommend
      sslperf recommend --lib openssl-3.6 --format nginx
      sslperf recommend --fresh
      sslperf recommend --clients mobile --format openssl-cnf --out tls.cnf
      sslperf recommend --lib boringssl --compat --format nginx
      sslperf recommend --lib openssl-3.6 --fips --fips-module openssl-3.1.2+fips --format nginx
    """
    floor = int(min_security)
    lib, plain = advise.server_lib(lib_name, fips, fips_module, fmt)        # checked before measuring anything
    chosen = reuse.choose(open_store(ctx) if run_ids or not no_store else None, lib, floor, run_ids, fresh)
    with steps(err_console, "measuring", prefix=False) as progress:
        advised = advise.advise(lib, plain, fips, clients, floor, compat, chosen.runs, store_unless(ctx, no_store),
                                progress)
    result, figures = advised.result, advised.figures
    snippet = render(result, fmt)
    if out:
        try:
            write_output(out, snippet, "the snippet", "The snippet is printed below instead.", force)
        except SslperfError:
            click.echo(snippet, nl=False)
            raise
    click.echo(json.dumps(as_dict(result, figures), indent=1) if as_json else snippet, nl=as_json)
    if figures.sources:
        err_console.print(f"[dim]{escape(chosen.describe(figures.sources))}"
                          + (f"; snippet written to {escape(str(out))}" if out else "") + "[/dim]")
