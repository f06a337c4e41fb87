"""`sslperf probe build`: a self-contained archive that measures where sslperf is not installed."""

from __future__ import annotations

import click
from rich.markup import escape

from sslperf.cli.common import make_console
from sslperf.cli.options import OutputPath, checked_target, force_option, int_range
from sslperf.measure import limits

console = make_console(stderr=True)
SUITES = ("speed", "tls", "api")


@click.group()
def probe() -> None:
    """Self-contained probes: measure on machines where sslperf is not installed (many-core servers, boards)."""


@probe.command("build")
@click.option("--lib", "-l", "lib_names", multiple=True, required=True,
              help="A library sslperf built (repeatable, at most 6): its harness goes into the probe, statically "
                   "linked.")
@click.option("--case", "case_ids", multiple=True, help="Measure exactly this case (repeatable).")
@click.option("--suite", type=click.Choice(SUITES), default="speed", show_default=True,
              help="The in-memory suite to carry when no --case is given.")
@click.option("--quick", "depth", flag_value="quick", help="The suite's quick depth.")
@click.option("--full", "depth", flag_value="full", help="The suite's full depth.")
@click.option("--filter", "patterns", multiple=True, help="Keep cases whose id matches this glob or substring.")
@click.option("--time", "time_ms", type=float, help="Target wall time of one sample, in ms (default: the depth's).")
@click.option("--samples", type=int_range(limits.SAMPLES), help="Samples (rounds) per case and library.")
@click.option("--processes", type=int_range(limits.PROCESSES), help="Worker processes (passes) per case and library.")
@click.option("--threads", "thread_list", metavar="N,N,…",
              help="Sweep these thread counts instead (as `sslperf scale`: threads pinned one per CPU there).")
@click.option("--thread-mode", type=click.Choice(("own", "libctx", "shared")), default="own", show_default=True,
              help="With --threads: how the threads share the library (as `sslperf scale`).")
@click.option("--seconds", type=float, default=1.0, show_default=True,
              help="With --threads: how long every thread runs, per round.")
@click.option("--target", type=click.Choice(("x86_64-linux", "aarch64-linux", "x86_64-windows")),
              help="The machine the probe runs on (default: this kind); another one takes each library's cross "
                   "build (`+aarch64`, `+mingw`), built if missing.")
@click.option("--out", "-o", "out", required=True, type=OutputPath(), callback=checked_target,
              help="The probe archive to write (e.g. probe.tar.gz).")
@force_option
def build(lib_names, case_ids, suite, depth, patterns, time_ms, samples, processes, thread_list, thread_mode, seconds,
          target, out, force) -> None:
    """Build a probe: per library a statically linked harness, a POSIX sh driver that runs sslperf's plan (passes,
    rounds, alternating order, fresh pinned worker processes) and a manifest. On the target: `tar xzf probe.tar.gz
    && sh sslperf-probe-*/run.sh`; then `sslperf import` the results archive it writes here.

    \b
    Examples:
      sslperf probe build --lib openssl-1.1.1w --lib openssl-3.6 --quick -o probe.tar.gz
      sslperf probe build --lib openssl-3.0.8 --lib openssl-3.6 --suite tls --case tls/handshake/tls1.3/x25519/ecdsa-p256/shared -o tls-probe.tar.gz
      sslperf probe build --lib openssl-1.1.1w --lib openssl-3.6 --case tls/handshake/tls1.3/x25519/ecdsa-p256/shared --threads 1,2,4,8,16,32,64 --thread-mode shared -o sweep.tar.gz
      sslperf probe build --lib openssl-3.6 --target aarch64-linux --quick -o arm-probe.tar.gz
    """
    from pathlib import Path

    from sslperf.probe import archive, plans

    request = plans.request(lib_names, case_ids, suite, depth, patterns, time_ms, samples, processes, target,
                            thread_list, thread_mode, seconds)
    built = archive.build(request, Path(out), progress=lambda what: console.print(f"… {escape(what)}"))
    m = built.manifest
    libs = ", ".join(escape(lib["name"]) for lib in m["libs"])
    top = f"sslperf-probe-{escape(m['probe'])}"
    if "windows" in m:
        console.print(f"✓ probe {escape(m['probe'])} for {escape(m['target'])}: openssl.exe speed "
                      f"{escape(' / '.join(' '.join(a) for a in m['windows']['speed']))} of {libs}, "
                      f"{m['windows']['rounds']} rounds → {escape(str(out))}")
        console.print(f"  on Windows: tar -xf ARCHIVE && {top}\\run.cmd; then here: sslperf import "
                      f"{top}/results.tar.gz")
        return
    console.print(f"✓ probe {escape(m['probe'])} for {escape(m['target'])}: {len(m['cases'])} cases × {libs}, "
                  f"{m['settings']['processes']} passes × {m['settings']['samples']} rounds → {escape(str(out))}")
    console.print(f"  on the target: tar xzf ARCHIVE && sh {top}/run.sh; then here: sslperf import "
                  f"{top}/results.tar.gz")
