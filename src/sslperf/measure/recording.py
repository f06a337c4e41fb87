"""Recording a measured run, the one way every mode does it: a new run with
the machine's facts and each library's own account of itself, kept in the
store as it goes (begun before the first case, each result added as it
ends, finished even when interrupted), then the measuring loop.

    run = recording.new_run(libs, {"suite": "tls-memory"})
    recording.record(run, store, "sslperf tls", lambda keep: ... keep(measurement) ...)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sslperf.errors import SslperfError
from sslperf.libs import arrivals
from sslperf.libs.model import Lib
from sslperf.measure import environment
from sslperf.measure.harness_client import Worker
from sslperf.results import LibInfo, Measurement, Run

Keep = Callable[[Measurement], None]


def lib_info(lib: Lib, reply: dict) -> LibInfo:
    """What a library says about itself (the harness's `info`), as the run records it."""
    return LibInfo(lib.name, reply.get("flavor", lib.flavor), lib.version, reply.get("version_string", ""),
                   lib.variant_label, lib.kind, reply.get("ia32cap"))


def new_run(libs: list[Lib], settings: dict, mask: str | None = None) -> Run:
    """A run of `libs` with this machine's facts (the CPU mask in force among them) and what each library reports
    of itself, the FIPS module a column runs with included."""
    run = Run.new(settings, environment.capture(mask))
    for lib in libs:
        with Worker(lib, environment.mask_env(mask)) as worker:
            reply = worker.request("info", timeout=60).data
        run.libs.append(lib_info(lib, reply))
        if reply.get("provider"):      # the FIPS module this column ran with, as it describes itself
            run.environment.setdefault("providers", {})[lib.name] = reply["provider"]
    return run


def record(run: Run, store, source: str, measure: Callable[[Keep], None]) -> Run:
    """Measure into `run` (`measure` calls `keep` with each finished result)
    while `store` (None: nowhere) keeps it as it goes; see `recorded`."""
    with recorded(run, store, source) as keep:
        measure(keep)
    return run


@contextmanager
def recorded(run: Run, store, source: str) -> Iterator[Keep]:
    """Keep `run` in `store` (None: nowhere) while it is measured; yields the
    function that adds one finished measurement. An interrupted run keeps
    what it measured and stays marked incomplete.

    `run.state` is "running" from the start, then "complete" (and
    `run.complete` true) when the block ends normally, "interrupted" on
    Ctrl-C (KeyboardInterrupt, SystemExit) and "crashed" on any other
    exception, which is re-raised once the state is recorded; `run.finished`
    is set in every case.

    A store that fails does not lose what is measured: if it refuses the
    start, that error is raised before anything is measured; during the run
    a refused result stays in `run` and the store writes it again at the
    end (see Store). If that last write fails too, the run goes on as
    measured (printed, --json, --out) with a warning saying what the store
    lacks; it does not become an error, and an exception from the block
    wins over it."""
    def keep(measurement: Measurement) -> None:
        if measurement.status == "n/a":      # a version that predates the algorithm says so, not "cannot make"
            lib = next((lib for lib in run.libs if lib.name == measurement.lib), None)
            if lib is not None:
                measurement.reason = arrivals.reason(lib.flavor, lib.version, measurement.case, measurement.reason)
        run.measurements.append(measurement)
        if store:
            store.add(run.id, measurement)

    run.state = "running"
    interrupted = None
    if store:
        store.begin(run, source=source)
    try:
        yield keep
        run.state, run.complete = "complete", True
    except (KeyboardInterrupt, SystemExit) as stopped:
        run.state = "interrupted"
        stopped.sslperf_run = (run, bool(store))        # for the CLI's message: which run, what is kept
        interrupted = stopped
        raise
    except BaseException:
        run.state = "crashed"
        raise
    finally:
        run.finished = run.finished or dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        if store:
            try:
                store.finish(run)
            except SslperfError as exc:
                run.warnings.append(f"The results store does not hold all of this run: {exc.message} "
                                    "Everything measured is in this output; keep it with --out or --json.")
                if interrupted is not None:     # the CLI's message then says nothing is kept
                    interrupted.sslperf_run = (run, False)


def interrupted_run(exc: BaseException | None) -> tuple[Run | None, bool]:
    """The run a Ctrl-C stopped (found on the exception or what it wraps,
    e.g. click's Abort) and whether it went to a store; (None, False) if none."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        found = getattr(exc, "sslperf_run", None)
        if found:
            return found
        exc = exc.__cause__ or exc.__context__
    return None, False
