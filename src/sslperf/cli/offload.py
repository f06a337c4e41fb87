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


def _sizes(ctx, param, value: str) -> list[int]:
    """The --sizes list as the other verbs parse it, capped at one AF_ALG request."""
    from sslperf.offload_bench import MAX_SIZE
    from sslperf.suites import parse_sizes

    sizes = sorted(set(parse_sizes(value)))
    if sizes[-1] > MAX_SIZE:
        raise click.BadParameter(f"each size from 1 to {MAX_SIZE} bytes (one AF_ALG request)")
    return sizes


@offload.command("bench")
@click.option("--lib", "lib_name", default="system", show_default=True, help="The userspace library to compare with.")
@click.option("--alg", "algorithms", multiple=True, metavar="ALG",
              help="An algorithm to time (repeatable): aes-128-cbc aes-256-cbc aes-128-ctr aes-256-ctr aes-128-gcm "
                   "aes-256-gcm sha1 sha256 sha512 (default: all).")
@click.option("--sizes", default="16,64,256,1024,8192,16384", show_default=True, callback=_sizes,
              help="Request sizes in bytes, comma-separated.")
@click.option("--seconds", default=0.5, show_default=True, type=click.FloatRange(0.01, 60),
              help="Time per algorithm, size and side.")
@click.option("--user-only", is_flag=True, help="Time only the library (works without AF_ALG; no thresholds).")
@click.option("--from", "recording", type=click.Path(dir_okay=False, path_type=Path),
              help="Analyse recorded JSON lines (from `offload bench --json` elsewhere) instead of measuring.")
@click.option("--engine", type=click.Choice(["afalg", "devcrypto"]), default="afalg", show_default=True)
@click.option("--config-out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the engine's openssl.cnf section with the measured thresholds to this file ('-': stdout).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the raw JSON lines and the analysis as a last line (a recording --from can read).")
def bench_cmd(lib_name: str, algorithms: tuple[str, ...], sizes: list[int], seconds: float, user_only: bool,
              recording: Path | None, engine: str, config_out: Path | None, as_json: bool) -> None:
    """Time each cipher and digest through the kernel (AF_ALG: one request
    per operation, socket bound and keyed once) against the library (EVP),
    per request size, in elapsed and in CPU time — kernel work done for the
    process is system time, and an asynchronous hardware driver's work shows
    only in elapsed time. The kernel's output is checked against the
    library's before timing. Per algorithm, the size from which the kernel
    wins at every larger size is the threshold; --config-out writes the
    afalg (CIPHERS = AES-128-CBC:1024, …) or devcrypto section from it,
    with nothing for algorithms whose driver never wins.

    \b
    Where AF_ALG is missing (many containers and VMs) it says so and exits 2;
    record elsewhere and analyse here:
      sslperf offload bench --json > bench.jsonl          # on the target
      sslperf offload bench --from bench.jsonl --config-out afalg.cnf
    """
    from sslperf import offload as kernel
    from sslperf import offload_bench
    from sslperf.errors import SslperfError

    unknown = sorted(set(algorithms) - set(offload_bench.ALGORITHMS))
    if unknown:
        raise click.BadParameter(f"unknown: {', '.join(unknown)} (one of {' '.join(offload_bench.ALGORITHMS)})",
                                 param_hint="--alg")
    if recording:
        try:
            text, source = recording.read_text(), str(recording)
        except OSError as exc:
            raise SslperfError(f"Cannot read {recording}: {exc.strerror}.") from None
    else:
        from sslperf.libs import installed

        lib = installed.find(lib_name)
        chosen = [a for a in offload_bench.ALGORITHMS if a in algorithms] or list(offload_bench.ALGORITHMS)
        if not as_json and (user_only or kernel.probe_af_alg([]).available):
            console.print(f"timing {len(chosen)} algorithms × {len(sizes)} sizes × {seconds:g} s"
                          f"{'' if user_only else ' on each side'} with {escape(lib.name)} …", style="dim")
        text = offload_bench.run_harness(lib, chosen, sizes, seconds, "user" if user_only else "both")
        source = f"the harness for {lib.name}"
    bench = offload_bench.parse_lines(text, source)
    if bench.side == "both" and not bench.af_alg:
        raise offload_bench.unavailable(bench)
    config = offload_bench.engine_section(bench, engine) if config_out else None
    if as_json:
        for line in bench.lines:
            click.echo(json.dumps(line))
        click.echo(json.dumps(offload_bench.to_json(bench)))
    else:
        _show_bench(bench)
    if config_out and str(config_out) == "-":
        click.echo(config, nl=False)
    elif config_out:
        try:
            config_out.write_text(config)
        except OSError as exc:
            raise SslperfError(f"Cannot write {config_out}: {exc.strerror}.") from None
        if not as_json:
            console.print(f"wrote the {engine} section to {escape(str(config_out))}")


def _show_bench(bench) -> None:
    from sslperf.offload_bench import verdict

    def rate(value: float | None) -> str:
        return "" if value is None else f"{value / 1e6:,.1f}"

    timings = [t for a in bench.algorithms.values() for t in [*a.kernel.values(), *a.user.values()]]
    with_cpu = any(t.cpu_ns for t in timings)
    with_kernel = bench.measured_kernel
    title = f"AF_ALG against {bench.library}" if with_kernel else f"{bench.library}, library side only"
    table = Table(title=f"{escape(title)}: MB/s" + (" per elapsed and per CPU second" if with_cpu else ""))
    columns = ["algorithm", "size", "kernel", "library", "kernel/library"] if with_kernel else \
        ["algorithm", "size", "library"]
    if with_cpu:
        columns += ["kernel per CPU s", "library per CPU s", "kernel sys"] if with_kernel else ["library per CPU s"]
    for column in columns:
        table.add_column(column, justify="left" if column == "algorithm" else "right")
    for alg in bench.algorithms.values():
        for i, size in enumerate(alg.sizes or [None]):
            k, u = alg.kernel.get(size), alg.user.get(size)
            ratio = f"{k.wall_rate / u.wall_rate:.2f}x" if k and u else ""
            if k and u and k.wall_rate > u.wall_rate:
                ratio = f"[bold green]{ratio}[/]"
            kernel = [rate(k.wall_rate if k else None)] if with_kernel else []
            row = [alg.name if i == 0 else "", str(size or ""), *kernel, rate(u.wall_rate if u else None)]
            row += [ratio] if with_kernel else []
            if with_cpu and with_kernel:
                sys_share = f"{k.sys_ns / k.cpu_ns:.0%}" if k and k.cpu_ns and k.sys_ns is not None else ""
                row += [rate(k.cpu_rate if k else None), rate(u.cpu_rate if u else None), sys_share]
            elif with_cpu:
                row += [rate(u.cpu_rate if u else None)]
            table.add_row(*row)
        table.add_section()
    console.print(table)
    for alg in bench.algorithms.values():
        if not with_kernel and alg.status == "ok":
            continue
        driver = alg.driver or {}
        about = escape(alg.kernel_name) + (f", driver {escape(driver['driver'])}" if driver.get("driver") else "") \
            + (f", {driver['kind']}" if driver.get("kind") else "")
        console.print(f"{alg.name} ({about}): {escape(verdict(alg))}")
    if not with_kernel:
        why = f"AF_ALG is not available here ({escape(bench.reason)})" if not bench.af_alg else "--user-only"
        console.print(f"[yellow]Only the library was timed[/]: {why}; there is no crossover to find.")
