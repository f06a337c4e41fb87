"""What several verbs share: the store chosen with --db."""

from __future__ import annotations

import click


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
