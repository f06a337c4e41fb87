"""A library matrix across the cluster: each library is built once per kind
of machine (architecture and libc) on a worker that lacks it, the builds of
different libraries running on different workers at once, and every other
worker of that kind gets the build as a bundle (libs.bundle), checked on
arrival. A library some worker already has is copied, not rebuilt."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sslperf.fleet import tasks
from sslperf.fleet.cluster import BUILD, FleetError, Machine, dask


@dataclass
class LibOutcome:
    """One library on one kind of machine."""
    name: str
    kind: str                                   # "x86_64 glibc 2.36", say
    source: str = ""                            # the worker it was built on or copied from
    built: bool = False
    seconds: float = 0.0
    copied_to: list[str] = field(default_factory=list)
    error: str | None = None


def take_inventory(client, workers: list[Machine], names: list[str]) -> dict[str, dict]:
    """Each worker's facts and which of `names` it has (tasks.inventory), by address."""
    futures = {m.address: client.submit(tasks.inventory, names, workers=[m.address], pure=False)
               for m in workers}
    return {address: future.result() for address, future in futures.items()}


def missing(client, workers: list[Machine], names: list[str]) -> list[tuple[Machine, str]]:
    """(worker, name) for every library in `names` a worker does not have."""
    found = take_inventory(client, workers, names)
    return [(m, name) for m in workers for name in names if not found[m.address]["has"].get(name)]


def build_matrix(client, workers: list[Machine], names: list[str],
                 progress: Callable[[str], None] = lambda what: None) -> list[LibOutcome]:
    """Make every library in `names` in hand on every worker in `workers`."""
    as_completed = dask().as_completed

    found = take_inventory(client, workers, names)
    kinds: dict[str, list[Machine]] = {}
    for machine in {m.address: m for m in workers}.values():
        facts = found[machine.address]
        kinds.setdefault(f"{facts['machine']} {facts['libc']}".strip(), []).append(machine)

    outcomes, pending, load = [], {}, {m.address: 0 for m in workers}
    for kind, machines in sorted(kinds.items()):
        for name in names:
            outcome = LibOutcome(name, kind)
            outcomes.append(outcome)
            holders = [m for m in machines if found[m.address]["has"].get(name)]
            if holders and found[holders[0].address]["has"][name]["kind"] != "built":
                lacking = [m.name for m in machines if not found[m.address]["has"].get(name)]
                outcome.source = "each machine's own"
                if lacking:     # the system library, a registered prefix: not something to copy
                    outcome.error = (f"{name} is not built by sslperf, so it cannot be copied; "
                                     f"{', '.join(lacking)} lack it")
                continue
            if holders:
                source = holders[0]
                made = client.submit(tasks.export_bundle, name, workers=[source.address], pure=False)
            else:
                source = min(machines, key=lambda m: load[m.address])
                load[source.address] += 1
                made = client.submit(tasks.build_bundle, name, workers=[source.address], resources={BUILD: 1},
                                     pure=False)
            outcome.source = source.name
            pending[made] = (outcome, None)
            for machine in machines:
                if machine not in holders and machine is not source:
                    pending[client.submit(tasks.install_bundle, made, workers=[machine.address], pure=False)] = \
                        (outcome, machine)
    for future in as_completed(list(pending), loop=client.loop):
        outcome, target = pending[future]
        try:
            value = future.result()
        except Exception as exc:        # a task's error, raised again here by Dask
            outcome.error = outcome.error or _reason(exc)
            progress(f"{outcome.name} on {outcome.kind}: failed")
            continue
        if target is None:
            outcome.built, outcome.seconds = value["built_here"], value["seconds"]
            progress(f"{outcome.name}: {'built on' if outcome.built else 'taken from'} {outcome.source}")
        else:
            outcome.copied_to.append(target.name)
            progress(f"{outcome.name}: copied to {target.name}")
    return outcomes


def _reason(exc: BaseException) -> str:
    if isinstance(exc, FleetError):
        return exc.message + (f" {exc.hint}" if exc.hint else "")
    return f"{type(exc).__name__}: {exc}"


def refuse_missing(client, chosen: dict, names: list[str], scheduler: str) -> None:
    """Refuse a suite before it is sent when a machine of `chosen` (type → machines) lacks one of the libraries
    `names` (a name with a provider, NAME:fips…, is checked by its own part)."""
    plain = [n for n in names if ":" not in n and "=" not in n]
    lacking = missing(client, [m for ms in chosen.values() for m in ms], plain)
    if lacking:
        raise FleetError("Not every machine has the libraries in hand: " + "; ".join(
            f"{name} on {m.name} ({m.tag})" for m, name in lacking) + ".",
            hint=f"Build them across the cluster first: `sslperf fleet build --scheduler {scheduler} "
                 f"{' '.join(sorted({name for _, name in lacking}))}`.")
