"""`sslperf recommend`: argued TLS server settings for one library, from
stored runs or from the few quick cases it measures itself."""

from __future__ import annotations

import contextlib
import json

import click
from rich.markup import escape

from sslperf.cli.common import find_libs, make_console, measure, open_store, out_file_option, write_output
from sslperf.measure.session import certificates
from sslperf.errors import SslperfError
from sslperf.recommend import decide, evidence
from sslperf.recommend.check import LibraryCheck
from sslperf.recommend.snippets import FORMATS, as_dict, refuse_unreadable, render

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
              help="Use these stored runs (repeatable); cases they lack are measured now.")
@out_file_option("Write the snippet here too.")
@click.option("--json", "as_json", is_flag=True, help="Print the advice and its figures as JSON.")
@click.option("--no-store", is_flag=True, help="Do not keep what is measured in the results store.")
@click.option("--fips", is_flag=True,
              help="A server that must run the FIPS provider: measure and advise through the FIPS module only, "
                   "and say what that costs (e.g. no ChaCha20-Poly1305 for clients without AES instructions).")
@click.option("--fips-module", metavar="LIB",
              help="With --fips: the +fips build whose module to load (default: the library's own), e.g. "
                   "openssl-3.1.2+fips inside an OpenSSL 3.6.")
@click.pass_context
def recommend(ctx, lib_name, clients, min_security, compat, fmt, run_ids, out, force, as_json, no_store, fips,
              fips_module) -> None:
    """Turn measured costs into TLS server settings: the AEAD order (AES-GCM
    or ChaCha20 first, from the measured ratio with and without AES
    instructions), key exchange groups by measured cost, the certificate
    type, signature algorithms and resumption, each argued with its numbers,
    as text or a ready-to-paste nginx, HAProxy, Apache or openssl.cnf snippet.
    Every string is checked against the library itself before it is printed.

    \b
    Examples:
      sslperf recommend
      sslperf recommend --lib openssl-3.6 --format nginx
      sslperf recommend --clients mobile --format openssl-cnf --out tls.cnf
      sslperf recommend --lib boringssl --compat --format nginx
      sslperf recommend --lib openssl-3.6 --fips --fips-module openssl-3.1.2+fips --format nginx
    """
    floor = int(min_security)
    (lib,) = find_libs((lib_name,))
    default_lib = lib
    if fips_module and not fips:
        raise SslperfError("--fips-module applies to --fips, which was not given.", hint="Add --fips.")
    if fips:
        from sslperf.libs import fips as fips_modules
        from sslperf.libs import installed

        lib = fips_modules.with_module(lib, installed.find(fips_module) if fips_module else lib)
    refuse_unreadable(lib.name, lib.flavor, fmt)      # before measuring anything
    runs = [open_store(ctx).load(run_id) for run_id in run_ids]
    with _progress() as bar:
        task = bar.add_task("measuring", total=None)

        def report(what: str, done: int, total: int) -> None:
            bar.update(task, description=escape(what), completed=done, total=total)

        def measure_on(target):
            def measure_now(cases, settings, with_certificates: bool):
                with certificates(target) if with_certificates else contextlib.nullcontext() as workdir:
                    env = {"SSLPERF_CERT_DIR": str(workdir)} if workdir else None
                    return measure(ctx, [target], cases, settings, "sslperf recommend", {"suite": "recommend"}, env,
                                   no_store, report)
            return measure_now

        figures = evidence.gather(lib, floor, runs, measure_on(lib), no_store)
        fips_cost = evidence.masked_aeads(default_lib, measure_on(default_lib)) if fips else None
    checker = LibraryCheck(lib)
    try:
        result = decide.decide(figures, lib.name, lib.flavor, lib.version_string or lib.version, clients, floor,
                               compat, checker.accepts)
    except ValueError as exc:
        raise SslperfError(f"sslperf cannot recommend settings for {lib.name}: {exc}.",
                           hint="Check `sslperf speed --quick --lib ...` runs on this library.") from None
    if fips:
        from sslperf.recommend.fips import cost_point

        result.points.insert(0, cost_point(lib.name, figures, fips_cost))
    checker.verify(result)
    snippet = render(result, fmt)
    if out:
        try:
            write_output(out, snippet, "the snippet", "The snippet is printed below instead.", force)
        except SslperfError:
            click.echo(snippet, nl=False)
            raise
    if as_json:
        click.echo(json.dumps(as_dict(result, figures), indent=1))
        return
    click.echo(snippet, nl=False)
    if figures.sources:
        err_console.print(f"[dim]figures from run(s) {', '.join(figures.sources)}"
                          + (f"; snippet written to {escape(str(out))}" if out else "") + "[/dim]")


def _progress():
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=err_console, transient=True, disable=not err_console.is_terminal)
