"""What several verbs share: the store chosen with --db, finding the
libraries, the private certificate directory, measuring into the store and
printing the result."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path

import click

from sslperf.errors import SslperfError

CA_CERTIFICATES = 150


def open_store(ctx: click.Context):
    """The Store for this invocation (opened once; --db or SSLPERF_DB, else SQLite in the data dir)."""
    from sslperf.store import Store

    root = ctx.find_root()
    root.ensure_object(dict)
    if "store" not in root.obj:
        root.obj["store"] = Store(root.obj.get("db"))
    return root.obj["store"]


def measure(ctx: click.Context, libs, cases, settings, source: str, extra_settings: dict | None = None,
            extra_env: dict | None = None, no_store: bool = False, progress=None):
    """Run `cases` on `libs`, keeping each finished case in the store as it
    ends (unless `no_store`); an interrupted run keeps what it measured and
    stays marked incomplete. Returns the Run."""
    from sslperf.runner import Runner

    store = None if no_store else open_store(ctx)
    runner = Runner(libs, settings, extra_settings, extra_env)
    run = runner.run
    try:
        if store:
            store.begin(run, source=source)
        runner.measure(cases, progress, on_measurement=(lambda m: store.add(run.id, m)) if store else None)
    finally:
        runner.close()
        if store:
            store.finish(run)
    return run


def find_libs(names: tuple[str, ...]):
    """The libraries named (default: the system one), each once."""
    from sslperf.libs import installed

    libs = [installed.find(name) for name in (names or ("system",))]
    if len({lib.name for lib in libs}) != len(libs):
        raise SslperfError("The same library is named twice; name each library once.")
    return libs


@contextmanager
def certificates(lib):
    """A private directory (0700) with the ~150-certificate CA bundle, a key
    and a certificate, made by `lib`'s own harness; removed afterwards."""
    from sslperf.native import harness_binary

    workdir = Path(tempfile.mkdtemp(prefix="sslperf-certs-"))
    try:
        made = subprocess.run([str(harness_binary(lib)), "mkcerts", str(workdir), str(CA_CERTIFICATES)],
                              capture_output=True, text=True, timeout=300)
        if made.returncode != 0:
            raise SslperfError(f"Making the test certificates with {lib.name} failed: {made.stderr.strip()[-300:]}")
        yield workdir
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def show(run, as_json: bool, console, metric: str = "wall") -> None:
    if as_json:
        click.echo(json.dumps(run.to_dict(), indent=1))
        return
    from sslperf.report.terminal import print_run

    print_run(run, console, metric)


def list_cases(cases) -> None:
    """`--list`: the case ids, one a line."""
    for case in cases:
        click.echo(case.id)
