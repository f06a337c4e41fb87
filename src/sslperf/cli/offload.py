"""`sslperf offload`: kernel crypto drivers and the afalg/devcrypto engines
(parse, call sslperf.offload, print)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from click.core import ParameterSource
from rich.markup import escape

from sslperf import userfiles
from sslperf.cli.progress import steps
from sslperf.cli.common import make_console, write_output
from sslperf.cli.options import finite, int_range, out_file_option, placement_options
from sslperf.measure import limits

console = make_console()
err_console = make_console(stderr=True)


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
    from sslperf.errors import SslperfError
    from sslperf.offload import drivers, render

    text = None
    if source:
        text = userfiles.read(source, drivers.MAX_PROC_CRYPTO, "copy of /proc/crypto").decode("utf-8", "replace")
    if text is not None and not drivers.parse(text):
        raise SslperfError(f"{source} holds no /proc/crypto entry (blocks of `name : …` and `driver : …` lines).",
                           hint="Give a copy of /proc/crypto from the machine you want to examine "
                           "(`cat /proc/crypto > crypto.txt` there).")
    report = drivers.scan(text)
    if as_json:
        click.echo(json.dumps(report, indent=1))
        return
    if not report["available"]:
        raise SslperfError(f"No kernel crypto information: {report['reason']}.")
    render.print_scan(report, show_all, console)


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
    Example (the AF_ALG engine write-up's Marvell CESA figures):
      openssl speed -evp aes-256-cbc -elapsed -engine afalg > kernel.txt   # CIPHERS=AES-256-CBC:0
      OPENSSL_CONF=/ openssl speed -evp aes-256-cbc -elapsed > user.txt
      sslperf offload config kernel.txt user.txt >> openssl.cnf
    """
    from sslperf import importers
    from sslperf.errors import SslperfError
    from sslperf.offload import config, render

    runs = [importers.parse(userfiles.read(path, importers.MAX_INPUT_BYTES, "openssl speed output"),
                            source_name=str(path)) for path in (kernel_output, user_output)]
    results = config.crossovers(*runs)
    if not results:
        raise SslperfError("The two outputs have no cipher measured at the same sizes in both.",
                           hint="Run the same `openssl speed -evp CIPHER -elapsed` with and without the engine.")
    render.print_crossovers(results, console)
    click.echo(config.engine_config(results, engine), nl=False)


def _sizes(ctx, param, value: str) -> list[int]:
    """The --sizes list as the other verbs parse it, capped at one AF_ALG request."""
    from sslperf.measure.suites import parse_sizes
    from sslperf.offload.bench import MAX_SIZE

    sizes = sorted(set(parse_sizes(value)))
    if sizes[-1] > MAX_SIZE:
        raise click.BadParameter(f"each size from 1 to {MAX_SIZE} bytes (one AF_ALG request)")
    return sizes


# What a run read with --from was measured with already.
MEASURING = ("algorithms", "sizes", "time_ms", "samples", "cpu", "no_pin", "fixed_layout", "processes", "user_only",
             "no_store")


@offload.command("bench")
@click.option("--lib", "lib_name", help="The library to compare the kernel with (default: system; with --from, the "
                                        "run's).")
@click.option("--alg", "algorithms", multiple=True, metavar="ALG",
              help="An algorithm to time (repeatable): aes-128-gcm aes-256-gcm aes-128-cbc aes-256-cbc aes-128-ctr "
                   "aes-256-ctr sha1 sha256 sha384 sha512 (default: all).")
@click.option("--sizes", default="16,64,256,1024,8192,16384", show_default=True, callback=_sizes,
              help="Request sizes in bytes, comma-separated.")
@click.option("--time", "time_ms", type=finite(limits.TIME_MS), default=20, show_default=True,
              help="Target wall time of one sample, in ms.")
@click.option("--samples", type=int_range(limits.SAMPLES), default=10, show_default=True,
              help="Samples per algorithm, size and side, spread over the worker processes.")
@placement_options
@click.option("--user-only", is_flag=True, help="Time only the library (works without AF_ALG; no thresholds).")
@click.option("--from", "source", metavar="RUN|FILE",
              help="Analyse a run instead of measuring: a stored run's id, unique prefix or `latest`, or a file from "
                   "`sslperf runs export ID --out run.json` or this command's --json (made where AF_ALG works).")
@click.option("--engine", type=click.Choice(["afalg", "devcrypto"]), default="afalg", show_default=True)
@out_file_option("Write the engine's openssl.cnf section with the measured thresholds to this file ('-': stdout).",
                 dash=True, name="--config-out")
@click.option("--json", "as_json", is_flag=True,
              help="Print the run as `sslperf runs export` writes it, with the analysis under \"analysis\" "
                   "(what --from reads back).")
@click.option("--no-store", is_flag=True, help="Do not keep the run in the results store.")
@click.pass_context
def bench_cmd(ctx, lib_name: str | None, algorithms: tuple[str, ...], sizes: list[int], time_ms: float, samples: int,
              cpu: int | None, no_pin: bool, fixed_layout: bool, processes: int | None, user_only: bool,
              source: str | None, engine: str, config_out: Path | None, force: bool, as_json: bool,
              no_store: bool) -> None:
    """Time each cipher and digest through the kernel (AF_ALG: one request
    per operation, socket bound and keyed once) against the library (EVP),
    per request size, as ordinary cases (afalg/ALG/OP/SIZE/kernel|user) of
    the interleaved, pinned runner: the run is stored and `runs show`,
    `compare` and `report` read it like any other. The kernel's output is
    checked against the library's before timing. Both elapsed and CPU time
    are kept: kernel work done for the process is CPU time too, and an
    asynchronous hardware driver's work shows only in elapsed time. Per
    algorithm the threshold is the size from which the kernel wins clearly
    — the kernel/library ratio's 95% CI above 1 — at that size and every
    larger one (interpolated on the medians down to the next size only
    where that one is a clear loss); where it is not clear it claims
    nothing and says "not clearly". --config-out writes the afalg (CIPHERS
    = AES-128-CBC:1024, …) or devcrypto section from it, with nothing for
    algorithms whose driver never wins.

    \b
    Where AF_ALG is missing (many containers and VMs) it says so and exits 2;
    measure elsewhere and analyse here:
      sslperf offload bench --json > run.json           # on the target
      sslperf offload bench --from run.json --config-out afalg.cnf
    """
    from sslperf.cli.common import held, open_store, refuse_nothing_measured, refuse_unstored, store_unless
    from sslperf.libs import installed
    from sslperf.measure import plan
    from sslperf.offload import bench as afalg_bench
    from sslperf.offload import render

    if source:
        given = [name for name in MEASURING if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE]
        if given:
            option = next(p.opts[0] for p in ctx.command.params if p.name == given[0])
            raise click.BadParameter(f"a run read with --from has the cases and settings it was measured with; "
                                     f"{option} is for measuring", param_hint="--from")
        run = afalg_bench.load(source, lambda: open_store(ctx))
        bench = afalg_bench.analyse(run, lib_name)
    else:
        known = afalg_bench.algorithm_names()
        unknown = sorted(set(algorithms) - set(known))
        if unknown:
            raise click.BadParameter(f"unknown: {', '.join(unknown)} (one of {' '.join(known)})", param_hint="--alg")
        lib = installed.find(lib_name or "system")
        if not user_only:
            afalg_bench.require_af_alg()
        settings = plan.settings(time_ms, samples, cpu, no_pin, processes, fixed_layout=fixed_layout)
        cases = afalg_bench.cases([a for a in known if a in algorithms] or list(known), sizes, user_only)
        store = store_unless(ctx, no_store)
        with steps(err_console, "compiling the harness", prefix=False) as progress:
            run = afalg_bench.measure(lib, cases, settings, store, progress)
        bench = afalg_bench.analyse(run, lib.name)
    config = afalg_bench.engine_section(bench, engine) if config_out else None
    if as_json:
        click.echo(json.dumps(afalg_bench.export(bench), indent=1))
    else:
        render.print_bench(bench, console)
        if not source:
            console.print(f"[dim]{len(cases)} cases with {escape(lib.name)}"
                          + ("; not stored (--no-store)" if no_store else
                             f"; stored as run {run.id}" if held(run, store) else "") + "[/dim]")
    if config_out:
        write_output(config_out, config, f"the {engine} section", force=force)
        if str(config_out) != "-" and not as_json:
            console.print(f"wrote the {engine} section to {escape(str(config_out))}")
    if not source:
        refuse_unstored(run, store)
        refuse_nothing_measured(run, held(run, store))
