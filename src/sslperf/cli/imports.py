"""`sslperf import`: other tools' benchmark output into the store."""

from __future__ import annotations

import click
from rich.markup import escape

from sslperf.cli.common import make_console, open_store
from sslperf import userfiles
from sslperf.errors import SslperfError
from sslperf.importers import FORMATS

console = make_console()


@click.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--lib-name", help="Name for the library the output came from (default: from its version line).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Force the format instead of detecting it.")
@click.option("--host", metavar="NAME",
              help="The machine the output came from, as the store names hosts (for `report --hosts` and "
                   "`--history`); default: none recorded.")
@click.option("--show", is_flag=True, help="Print the imported tables.")
@click.pass_context
def import_cmd(ctx, files, lib_name, fmt, host, show) -> None:
    """Import `openssl speed` (tables or -mr; OpenSSL 1.1.1 … 4.x, LibreSSL),
    `bssl speed` (text or -json; BoringSSL, AWS-LC), Google Benchmark JSON
    (BoringSSL's bssl_bench, or any Google Benchmark program) or wolfCrypt's
    benchmark (text or -csv) output as a run; or the results archive of a
    probe this sslperf built (`sslperf probe build`), checked against its
    manifest.

    \b
    Examples:
      openssl speed -seconds 1 rsa2048 ecdsap256 > speed.txt; sslperf import speed.txt
      bssl speed -json > bssl.json; sslperf import bssl.json --lib-name boringssl-prod --host c7g-large
      bssl_bench --benchmark_format=json > bench.json; sslperf import bench.json --lib-name boringssl-main
      ./wolfcrypt/benchmark/benchmark -csv > wolf.csv; sslperf import wolf.csv
      sslperf import - < pasted.txt
      sslperf import sslperf-probe-20261129-101500-1a2b3c4d/results.tar.gz
    """
    from sslperf import importers
    from sslperf.probe import results as probe_results

    store = open_store(ctx)
    parsed = []
    for name in files:       # parse everything first: a bad file imports nothing
        text = userfiles.read(name, max(importers.MAX_INPUT_BYTES, probe_results.MAX_BYTES),
                              "benchmark tool's output or probe's results archive")
        try:
            if fmt is None and probe_results.is_results(text):     # what a probe measured (sslperf probe build)
                parsed.append((name, probe_results.read(text, name)))
                continue
            if len(text) > importers.MAX_INPUT_BYTES:
                text = userfiles.read(name, importers.MAX_INPUT_BYTES, "benchmark tool's output")
            parsed.append((name, importers.parse(text, fmt, lib_name, name, host)))
        except SslperfError as exc:
            if name not in exc.message:          # line errors already name the file
                exc.message = f"{name}: {exc.message}"
            raise
    for name, run in parsed:
        store.save(run, run.settings.get("source", "import"))
        ok = sum(1 for m in run.measurements if m.status == "ok")
        console.print(f"imported {escape(name)} ({run.settings.get('format') or run.settings.get('source')}): {ok} results for "
                      f"{escape(', '.join(lib.name for lib in run.libs))} as run {escape(run.id)}")
        if show:
            from sslperf.report.terminal import print_run
            from sslperf.scale import render

            print_run(run, console)
            for found in run.settings.get("contention") or []:     # a probe's sweep: why it scales as it does
                for line in render.contention_lines(found):
                    console.print(line, soft_wrap=True)

