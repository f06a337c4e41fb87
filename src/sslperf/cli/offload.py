"""`sslperf offload`: kernel crypto drivers (seed 004)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

console = Console(highlight=False, soft_wrap=True)


@click.group()
def offload() -> None:
    """Kernel crypto: which drivers /proc/crypto offers and whether user
    space can reach them through AF_ALG (what the afalg engine uses)."""


@offload.command("scan")
@click.option("--all", "show_all", is_flag=True, help="List every driver, not only the one the kernel would pick.")
@click.option("--file", "source", type=click.Path(dir_okay=False, path_type=Path),
              help="Read a saved /proc/crypto (e.g. from the machine you deploy on) instead of this kernel's.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def scan_cmd(show_all: bool, source: Path | None, as_json: bool) -> None:
    """Per algorithm, the driver the kernel would use (highest priority that
    passed its self-test), whether it is hardware, CPU-accelerated or generic
    C, and whether AF_ALG can bind it here."""
    from sslperf import offload as kernel
    from sslperf.errors import SslperfError

    text = None
    if source:
        try:
            text = source.read_text()
        except OSError as exc:
            raise SslperfError(f"Cannot read {source}: {exc.strerror}.") from None
    report = kernel.scan(text)
    if as_json:
        click.echo(json.dumps(report, indent=1))
        return
    if not report["available"]:
        raise SslperfError(f"No kernel crypto information: {report['reason']}.")
    rows = report["drivers"] if show_all else report["chosen"]
    af_alg = report["af_alg"]
    table = Table(title=f"Kernel crypto drivers ({'all' if show_all else 'the one the kernel picks per algorithm'})")
    for column in ("algorithm", "type", "driver", "module", "priority", "kind", "async", "AF_ALG"):
        table.add_column(column)
    for d in rows:
        bind = af_alg["bindable"].get(d["name"])
        style = {"hardware": "bold green", "cpu-accelerated": "cyan"}.get(d["kind"], "")
        table.add_row(escape(d["name"]), d["type"], escape(d["driver"]), escape(d["module"]), str(d["priority"]),
                      f"[{style}]{d['kind']}[/]" if style else d["kind"], "yes" if d["is_async"] else "",
                      "" if bind is None else ("bindable" if bind else "no"))
    console.print(table)
    hardware = report["hardware"]
    console.print(f"hardware crypto drivers: {', '.join(hardware) if hardware else 'none — every algorithm is served '}"
                  + ("" if hardware else "by the CPU (generic C or its own instructions), which userspace "
                     "OpenSSL already uses at least as well"))
    if af_alg["available"]:
        console.print(f"AF_ALG: available; {sum(af_alg['bindable'].values())} of {len(af_alg['bindable'])} "
                      "user-reachable algorithms can be bound.")
    else:
        console.print(f"[yellow]AF_ALG: not available here[/]: {escape(af_alg['reason'])}. The afalg and "
                      "devcrypto engines cannot work on this machine, so `offload bench` has nothing to time; "
                      "the scan above still shows what the kernel has.")


@offload.command("config")
@click.argument("kernel_output", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("user_output", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--engine", type=click.Choice(["afalg", "devcrypto"]), default="afalg", show_default=True)
def config_cmd(kernel_output: Path, user_output: Path, engine: str) -> None:
    """Engine configuration from two `openssl speed -elapsed` outputs (or
    bssl/-mr outputs): one through the kernel engine with no software
    fallback, one without the engine. Per cipher, the request size from
    which the kernel driver wins is measured, and only winning ciphers are
    enabled, from that size on.

    \b
    Example (seed 004):
      openssl speed -evp aes-256-cbc -elapsed -engine afalg > kernel.txt   # CIPHERS=AES-256-CBC:0
      OPENSSL_CONF=/ openssl speed -evp aes-256-cbc -elapsed > user.txt
      sslperf offload config kernel.txt user.txt >> openssl.cnf
    """
    from sslperf import importers
    from sslperf import offload as kernel
    from sslperf.errors import SslperfError

    runs = []
    for path in (kernel_output, user_output):
        try:
            runs.append(importers.parse(path.read_text(), source_name=str(path)))
        except OSError as exc:
            raise SslperfError(f"Cannot read {path}: {exc.strerror}.") from None
    results = kernel.crossovers(*runs)
    if not results:
        raise SslperfError("The two outputs have no cipher measured at the same sizes in both.",
                           hint="Run the same `openssl speed -evp CIPHER -elapsed` with and without the engine.")
    for c in results:
        where = f"kernel wins from {c.threshold} bytes" if c.threshold is not None else "kernel never wins"
        detail = ", ".join(f"{s} B {k / u:.2f}x" for s, k, u in c.points)
        console.print(f"# {c.cipher}: {where} (kernel/userspace: {detail})", style="dim")
    click.echo(kernel.engine_config(results, engine), nl=False)
