"""`sslperf measure-request FILE`: run a measurement request written as JSON — what `sslperf fleet` sends each
machine (measure.request.Request) — into the store, as the verb that made it would have run it."""

from __future__ import annotations

from pathlib import Path

import click

from sslperf.cli import common
from sslperf.cli.common import make_console

console = make_console()
err_console = make_console(stderr=True)


@click.command("measure-request", hidden=True)
@click.argument("request_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_context
def measure_request(ctx, request_file: Path) -> None:
    """Run the request in REQUEST_FILE (JSON, as `sslperf fleet` sends it) into the store."""
    from sslperf.measure.request import Request

    request = Request.from_json(request_file.read_text())
    common.deliver_request(ctx, request, console, err_console, "wall", as_json=False, out=None, force=False,
                           no_store=False)
