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
    from sslperf.measure import limits
    from sslperf.measure.request import Request

    with request_file.open("rb") as sent:        # what a request may hold and one byte more: never a whole device
        data = sent.read(limits.REQUEST_BYTES + 1)
    request = Request.from_json(data, str(request_file))
    if request.source == "sslperf noise":      # the A/A experiment: its runs, then the floors kept for this host
        from sslperf.cli import noise
        from sslperf.noise import floor

        runs, floors = floor.measure_floors(request, common.open_store(ctx))
        noise.show(runs, floors, 100 * float(request.labels.get("threshold", 0.02)), as_json=False)
        return
    common.deliver_request(ctx, request, console, err_console, "wall", as_json=False, out=None, force=False,
                           no_store=False)
