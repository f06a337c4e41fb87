"""Build and measure the commits of a branch not yet measured on this host."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sslperf.bisect.space import commit_point
from sslperf.errors import BuildFailed
from sslperf.libs import build as builder
from sslperf.errors import SslperfError
from sslperf.measure import scheduler
from sslperf.measure.request import Request, name_of
from sslperf.measure.environment import host_name
from sslperf.measure.modes import registry
from sslperf.measure.settings import Settings
from sslperf.measure.suites import Case
from sslperf.proc import require_tool
from sslperf.results import Run
from sslperf.track.commits import Commit, first_parent

SOURCE = "sslperf track"


@dataclass
class TrackRequest:
    repo: Path
    branch: str
    cases: list[Case]
    settings: dict[str, Settings]      # per metric ("wall", "instructions"): how to measure it
    limit: int = 5                     # commits built and measured in one call, at most
    depth: int = 200                   # how far back the branch is looked at for commits not measured
    jobs: int | None = None
    options: dict = field(default_factory=dict)     # the cases' modes' own options (an exec case's command)
    variants: tuple[str, ...] = ()     # what every commit is built with besides (an exec case: shared)


@dataclass
class Outcome:
    commit: Commit
    lib: str | None = None
    runs: dict[str, list[str]] = field(default_factory=dict)     # metric → stored run ids
    skipped: str | None = None
    build_seconds: float = 0.0
    measure_seconds: float = 0.0


@dataclass
class Events:
    """What the command prints as it goes (all optional)."""
    building: Callable[[Commit], contextlib.AbstractContextManager] = lambda commit: contextlib.nullcontext()
    built: Callable[[Outcome, bool], None] = lambda outcome, cached: None
    measuring: Callable[[Commit, str], None] = lambda commit, metric: None


def measurable(cases: list[Case], metric: str) -> list[Case]:
    """The cases `metric` can measure, by their modes' rule: a loopback or real-server case (a server and a client
    process) only by the wall clock; an in-memory case by either."""
    return [c for c in cases if metric in registry.mode_of(c).metrics]


def metrics(requested: str | None, cases: list[Case], valgrind: bool) -> tuple[str, ...]:
    """What `track` measures each commit by: both (wall and instructions) by default where valgrind is installed,
    else wall; instructions only where some case can be counted (a refusal when asked for and none can)."""
    chosen = (("wall", "instructions") if valgrind else ("wall",)) if requested in (None, "both") else (requested,)
    if requested == "both" and not valgrind:
        raise SslperfError("--metric both counts instructions with valgrind, which is not installed.",
                           hint="Install it (`sudo apt-get install valgrind`) or give --metric wall.")
    if "instructions" in chosen and not measurable(cases, "instructions"):
        if requested == "instructions":
            raise SslperfError("--metric instructions cannot measure these cases: each is a server and a client "
                               "process over 127.0.0.1 (or several threads), timed by the wall clock.",
                               hint="Use --metric wall.")
        chosen = ("wall",)
    return chosen


def done_on_this_host(store, host: str, cases: list[Case]) -> tuple[dict[str, set[str]], dict[str, str]]:
    """(commit → metrics measured on `host` for every one of `cases` that metric measures, over one run or
    several, commit → why it was skipped): what a call need not do again."""
    covered: dict[tuple[str, str], set[str]] = {}
    skipped: dict[str, str] = {}
    for row in store.list():
        tracked = (row.get("settings") or {}).get("track")
        if row.get("source") != SOURCE or row.get("host") != host or not tracked or row.get("state") != "complete":
            continue
        if tracked.get("skipped"):
            skipped[tracked["commit"]] = tracked["skipped"]
        else:
            metric = row["settings"].get("metric", "wall")
            covered.setdefault((tracked["commit"], metric), set()).update(tracked.get("cases") or [])
    measured: dict[str, set[str]] = {}
    for (commit, metric), ids in covered.items():
        if {c.id for c in measurable(cases, metric)} <= ids:
            measured.setdefault(commit, set()).add(metric)
    return measured, skipped


def track(request: TrackRequest, store, events: Events = Events()) -> tuple[list[Outcome], int]:
    """(what this call did, commit by commit newest first; how many commits
    of the branch are still to measure after it)."""
    host = host_name()
    commits = first_parent(request.repo, request.branch, request.depth)
    measured, skipped = done_on_this_host(store, host, request.cases)
    todo = [c for c in commits if c.sha not in skipped and not set(request.settings) <= measured.get(c.sha, set())]
    git = require_tool("git", "to read the commits of the branch to track")
    outcomes = []
    for commit in todo[:request.limit]:
        outcome = Outcome(commit)
        outcomes.append(outcome)
        point = commit_point(git, request.repo, commit.sha, f"{commit.sha[:10]} {commit.subject}",
                             request.jobs or os.cpu_count() or 1, request.variants)
        started = time.monotonic()
        build = point.request
        try:
            with events.building(commit):
                built = builder.build(build)
        except BuildFailed as failed:
            outcome.skipped = failed.message
            outcome.build_seconds = time.monotonic() - started
            _record_skip(store, commit, request, host, failed.message)
            events.built(outcome, False)
            continue
        outcome.lib, outcome.build_seconds = built.lib.name, time.monotonic() - started
        events.built(outcome, built.cache_hit)
        for metric, settings in request.settings.items():
            if metric in measured.get(commit.sha, set()):
                continue
            events.measuring(commit, metric)
            started = time.monotonic()
            chosen = measurable(request.cases, metric)
            if chosen:          # every mode's cases in one run, interleaved by the one scheduler
                run = scheduler.measure(Request(SOURCE, [name_of(built.lib)], [c.id for c in chosen], settings,
                                                request.options, {"suite": "track", "metric": metric,
                                                                  "track": _key(commit, request,
                                                                                [c.id for c in chosen])}),
                                        store)
                outcome.runs.setdefault(metric, []).append(run.id)
            outcome.measure_seconds += time.monotonic() - started
    return outcomes, max(0, len(todo) - request.limit)


def _key(commit: Commit, request: TrackRequest, case_ids: list[str]) -> dict:
    return {"commit": commit.sha, "date": commit.date, "subject": commit.subject, "branch": request.branch,
            "repo": str(request.repo.resolve()), "cases": case_ids}


def _record_skip(store, commit: Commit, request: TrackRequest, host: str, reason: str) -> None:
    """A commit that does not build, stored so the next call does not build it again."""
    run = Run.new({"suite": "track", "metric": "none",
                   "track": {**_key(commit, request, [c.id for c in request.cases]), "skipped": reason}},
                  {"host": host})
    run.warnings = [f"commit {commit.sha[:12]} was not measured: {reason}"]
    run.complete, run.state = True, "complete"
    store.save(run, SOURCE)
