"""Which stored runs `recommend` argues from. By default the newest complete run of the library on this host, at
most MAX_AGE old, that holds every case the advice needs (one as the CPU is, one with AES-NI hidden), so that
back-to-back calls argue from the same figures rather than from two noisy measurements; the output names the runs
reused. `--fresh` measures anew; `--from-run` names the runs instead."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from sslperf.errors import SslperfError
from sslperf.measure.environment import host_name
from sslperf.recommend.decide import needed_cases
from sslperf.recommend.evidence import MASK, can_mask
from sslperf.results import Run

MAX_AGE = dt.timedelta(days=7)
# Runs made to answer another question (an A/A experiment, a bisection, a tracked series): never reused.
OTHER_PURPOSES = ("sslperf noise", "sslperf bisect", "sslperf track")


@dataclass
class Choice:
    runs: list[Run] = field(default_factory=list)     # what the evidence starts from
    reused: bool = False                              # picked here by default, not named with --from-run

    def describe(self, measured: list[str], now: dt.datetime | None = None) -> str:
        """`figures from run 20261125-… (sslperf speed, 2 h ago); --fresh measures anew`, and the runs measured
        now (`measured`: every run id the evidence names)."""
        now = now or dt.datetime.now(dt.timezone.utc)
        given = [run.id for run in self.runs]
        words = []
        if self.runs:
            named = ", ".join(f"run {run.id} ({_source(run)}, {_age(run.started, now)} ago)" for run in self.runs)
            words.append(f"figures from {named}" + ("; --fresh measures anew" if self.reused else ""))
        new = [run_id for run_id in measured if run_id not in given]
        if new:
            words.append(f"measured now: run {', run '.join(new)}")
        return "; ".join(words)


def choose(store, lib, floor: int, run_ids: tuple[str, ...] = (), fresh: bool = False,
           masked_too: bool | None = None, now: dt.datetime | None = None) -> Choice:
    """The runs to argue from: those named (`run_ids`); none with `fresh` or without a store; else the newest
    complete run of `lib` on this host, at most MAX_AGE old, holding every case needed as the CPU is, and (where
    the CPU takes masks, or `masked_too`) the newest such run with AES-NI hidden."""
    if fresh and run_ids:
        raise SslperfError("--fresh measures every figure anew and --from-run argues from stored runs: give one "
                           "or the other.", hint="Leave out --fresh to use the runs named.")
    if run_ids:
        return Choice([store.load(run_id) for run_id in run_ids])
    if fresh or store is None:
        return Choice()
    plain, masked = needed_cases(floor)
    masked_too = can_mask() if masked_too is None else masked_too
    wanted = {None: set(plain), **({MASK: set(masked)} if masked_too else {})}
    found: dict[str | None, Run] = {}
    now = now or dt.datetime.now(dt.timezone.utc)
    for row in store.list(since=(now - MAX_AGE).isoformat(timespec="seconds")):
        mask = (row.get("environment") or {}).get("mask")
        if mask in wanted and mask not in found and _may_reuse(row, lib) and row["measurements"] >= len(wanted[mask]):
            run = store.load(row["id"])
            if _holds(run, lib, wanted[mask]):
                found[mask] = run
        if len(found) == len(wanted):
            break
    return Choice(sorted(found.values(), key=lambda r: r.started), reused=bool(found))


def _may_reuse(row: dict, lib) -> bool:
    """A complete run of `lib` measured by sslperf on this host, for a question like this one."""
    source = row.get("source") or ""
    return (row.get("state") == "complete" and lib.name in row.get("libs", []) and row.get("host") == host_name()
            and source.startswith("sslperf ") and source not in OTHER_PURPOSES)


def _holds(run: Run, lib, cases: set[str]) -> bool:
    """Whether `run` measured every one of `cases` on this very build of `lib` (its version unchanged)."""
    info = next((i for i in run.libs if i.name == lib.name), None)
    if info is None or (lib.version and info.version != lib.version):
        return False
    return cases <= {m.case for m in run.measurements if m.lib == lib.name}


def _source(run: Run) -> str:
    source = run.settings.get("source", "")
    return source.removeprefix("sslperf ") + (" with AES-NI hidden" if run.environment.get("mask") else "")


def _age(started: str, now: dt.datetime) -> str:
    try:
        begun = dt.datetime.fromisoformat(started)
    except (TypeError, ValueError):
        return "some time"
    seconds = max(0.0, (now - (begun if begun.tzinfo else begun.replace(tzinfo=dt.timezone.utc))).total_seconds())
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h" if seconds < 86400 else f"{seconds / 86400:.0f} d"
