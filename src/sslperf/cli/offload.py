"""`sslperf offload`: kernel crypto drivers and the afalg/devcrypto engines
(parse, call sslperf.offload, print)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from click.core import ParameterSource
from rich.markup import escape

from sslperf import userfiles
from sslperf.cli.common import Finite, make_console, out_file_option, write_output

console = make_console()


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


@offload.command("bench")
@click.option("--lib", "lib_name", default="system", show_default=True, help="The userspace library to compare with.")
@click.option("--alg", "algorithms", multiple=True, metavar="ALG",
              help="An algorithm to time (repeatable): aes-128-cbc aes-256-cbc aes-128-ctr aes-256-ctr aes-128-gcm "
                   "aes-256-gcm sha1 sha256 sha512 (default: all).")
@click.option("--sizes", default="16,64,256,1024,8192,16384", show_default=True, callback=_sizes,
              help="Request sizes in bytes, comma-separated.")
@click.option("--seconds", default=0.5, show_default=True, type=Finite(0.01, 60),
              help="Time per algorithm, size and side, shared among the rounds.")
@click.option("--rounds", default=5, show_default=True, type=click.IntRange(1, 100),
              help="Fresh harness runs, one after the other, each for --seconds / ROUNDS per size and side: "
                   "the samples behind each median and its 95% CI.")
@click.option("--user-only", is_flag=True, help="Time only the library (works without AF_ALG; no thresholds).")
@click.option("--from", "recording", type=click.Path(dir_okay=False, path_type=Path),
              help="Analyse recorded JSON lines (from `offload bench --json` elsewhere) instead of measuring.")
@click.option("--engine", type=click.Choice(["afalg", "devcrypto"]), default="afalg", show_default=True)
@out_file_option("Write the engine's openssl.cnf section with the measured thresholds to this file ('-': stdout).",
                 dash=True, name="--config-out")
@click.option("--json", "as_json", is_flag=True,
              help="Print the raw JSON lines and the analysis as a last line (a recording --from can read).")
def bench_cmd(lib_name: str, algorithms: tuple[str, ...], sizes: list[int], seconds: float, rounds: int,
              user_only: bool, recording: Path | None, engine: str, config_out: Path | None, force: bool,
              as_json: bool) -> None:
    """Time each cipher and digest through the kernel (AF_ALG: one request
    per operation, socket bound and keyed once) against the library (EVP),
    per request size, in elapsed and in CPU time — kernel work done for the
    process is system time, and an asynchronous hardware driver's work shows
    only in elapsed time. The kernel's output is checked against the
    library's before timing. The harness runs --rounds times (fresh
    processes, every algorithm, size and side in each), so each figure is a
    median over rounds with its 95% CI. Per algorithm the threshold is the
    size from which the kernel wins clearly — its CI above the library's —
    at that size and every larger one (interpolated on the medians down to
    the next size only where that one is a clear loss); where the CIs
    overlap it claims nothing and says "not clearly". --config-out writes
    the afalg (CIPHERS = AES-128-CBC:1024, …) or devcrypto section from it,
    with nothing for algorithms whose driver never wins.

    \b
    Where AF_ALG is missing (many containers and VMs) it says so and exits 2;
    record elsewhere and analyse here:
      sslperf offload bench --json > bench.jsonl          # on the target
      sslperf offload bench --from bench.jsonl --config-out afalg.cnf
    """
    from sslperf.offload import bench as afalg_bench
    from sslperf.offload import drivers, render

    if recording and click.get_current_context().get_parameter_source("rounds") == ParameterSource.COMMANDLINE:
        raise click.BadParameter("a recording has the rounds it was made with", param_hint="--rounds")
    if seconds / rounds < 0.001:
        raise click.BadParameter(f"--seconds {seconds:g} over {rounds} rounds leaves under 1 ms per size and side "
                                 "in each round, too short to time", param_hint="--rounds")
    # The harness's table, from its catalog; a recording alone is read without it (nothing to compile).
    known = afalg_bench.algorithm_names() if algorithms or not recording else ()
    unknown = sorted(set(algorithms) - set(known))
    if unknown:
        raise click.BadParameter(f"unknown: {', '.join(unknown)} (one of {' '.join(known)})", param_hint="--alg")
    if recording:
        text = userfiles.read(recording, afalg_bench.MAX_RECORDING, "recording of `offload bench --json`")
        text, source = text.decode("utf-8", errors="replace"), str(recording)
    else:
        from sslperf.libs import installed

        lib = installed.find(lib_name)
        chosen = [a for a in known if a in algorithms] or list(known)
        progress = None
        if not as_json and (user_only or drivers.probe_af_alg([]).available):
            console.print(f"timing {len(chosen)} algorithms × {len(sizes)} sizes × {rounds} rounds of "
                          f"{seconds / rounds:g} s{'' if user_only else ' on each side'} with {escape(lib.name)} …",
                          style="dim")
            progress = lambda r: console.print(f"round {r} of {rounds}", style="dim")   # noqa: E731
        text = afalg_bench.run_harness(lib, chosen, sizes, seconds, "user" if user_only else "both", rounds,
                                       progress)
        source = f"the harness for {lib.name}"
    bench = afalg_bench.parse_lines(text, source)
    if bench.side == "both" and not bench.af_alg:
        raise afalg_bench.unavailable(bench)
    config = afalg_bench.engine_section(bench, engine) if config_out else None
    if as_json:
        for line in bench.lines:
            if line["type"] != "afalg-analysis":              # a recording's old analysis: a new one follows
                click.echo(json.dumps(line))
        click.echo(json.dumps(afalg_bench.to_json(bench)))
    else:
        render.print_bench(bench, console)
    if config_out:
        write_output(config_out, config, f"the {engine} section", force=force)
        if str(config_out) != "-" and not as_json:
            console.print(f"wrote the {engine} section to {escape(str(config_out))}")

