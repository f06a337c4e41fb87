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
