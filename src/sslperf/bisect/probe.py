"""The probe a bisect searches with: points built on demand (cached, with
progress), each step one interleaved, pinned run of the case on two or three
libraries, the verdicts read with the noise floor, everything kept as one
stored run, and the boundary explained by a profile of its two sides.
Also the bisect's own policy: which metric decides (`auto`) and the
threshold each metric starts from."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from sslperf.bisect.search import EndUnusable, Outcome, Search
from sslperf.bisect.space import Space
from sslperf.verdict import Change, Floors, Policy, judge
from sslperf.errors import BuildFailed, SslperfError
from sslperf.libs import build as builder
from sslperf.libs import installed
from sslperf.libs.model import Lib
from sslperf.libs.system import find_system
from sslperf.measure import certificates, scheduler
from sslperf.measure.request import Request, name_of
from sslperf.measure.modes import registry, threads
from sslperf.measure.settings import Settings
from sslperf.measure.suites import Case, parse_case
from sslperf.profiling.explain import profile_pair
from sslperf.results import Measurement, Run

LONGER = 2          # an unclear step is measured again with this many times the processes and samples
DEFAULT_THRESHOLD = {"instructions": 1.0, "wall": 2.0, "cpu": 2.0}      # %, when --threshold is not given
SAMPLE_MS = 30      # a sample's wall time when --time is not given
EXPLAIN_MS = 1000   # each run that explains a threads case's step, when --time does not say


def choose_metric(requested: str, case: Case) -> tuple[str, str]:
    """(the metric that decides each step, why): the case's mode's rule (measure.modes.registry.metric)."""
    return registry.metric(case, requested)


@dataclass
class Judge:
    """How a change is called: the metric, --threshold, alpha and the noise floors."""
    metric: str
    threshold: float
    alpha: float
    floors: Floors = field(default_factory=dict)

    def change(self, older: Measurement, newer: Measurement) -> Change | None:
        return judge(older, newer, self.metric, Policy(self.threshold, self.alpha, self.floors), paired=True)


@dataclass
class Build:
    name: str
    cached: bool
    seconds: float
    problem: str | None = None


class Events:
    """What the command shows as the bisect goes (progress and step lines)."""

    def building(self, label: str) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext(builder.SilentProgress())

    def built(self, build: Build) -> None: ...

    def measuring(self, labels: list[str], longer: bool) -> None: ...

    def measured(self, what: str, done: int, total: int) -> None: ...

    def step(self, step) -> None: ...


class RealProbe:
    """Builds and measures the points of `space` for `case`."""

    def __init__(self, space: Space, case: Case, settings: Settings, judge: Judge, events: Events,
                 cert_dir: Path | None, options: dict | None = None):
        self.options = options or {}       # the case's mode's own options (serve-load's plan)
        self.space = space
        self.case = case
        self.settings = settings
        self.judge = judge
        self.events = events
        self.cert_dir = cert_dir         # made once for every step
        self.libs: dict[int, Lib] = {}
        self.builds: list[Build] = []
        self.runs: list[Run] = []
        self.build_seconds = 0.0
        self.measure_seconds = 0.0

    def build(self, index: int) -> str | None:
        if index in self.libs:
            return None
        point = self.space.points[index]
        started = time.monotonic()
        try:
            with self.events.building(point.label) as progress:
                outcome = builder.build(point.request, progress)
        except BuildFailed as exc:
            seconds = time.monotonic() - started
            self.build_seconds += seconds
            record = Build(point.name, False, seconds, f"the build failed: {exc.message}")
            self.builds.append(record)
            self.events.built(record)
            return record.problem
        self.build_seconds += 0 if outcome.cache_hit else outcome.seconds
        self.libs[index] = outcome.lib
        record = Build(outcome.lib.name, outcome.cache_hit,
                       outcome.lib.info.get("build_seconds", 0.0) if outcome.cache_hit else outcome.seconds)
        self.builds.append(record)
        self.events.built(record)
        return None

    def measure(self, indexes: list[int], longer: bool) -> Run:
        settings = self.settings
        if longer:
            settings = dataclasses.replace(settings, samples=settings.samples * LONGER,
                                           processes=settings.processes * LONGER)
        self.events.measuring([self.space.points[i].label for i in indexes], longer)
        started = time.monotonic()
        libs, extra = [self.libs[i] for i in indexes], {"suite": "bisect-step", "metric": self.judge.metric}
        request = Request("sslperf bisect", [name_of(lib) for lib in libs], [self.case.id], settings, self.options,
                          extra)
        run = scheduler.measure(request, None, self.events.measured, cert_dir=self.cert_dir)
        self.measure_seconds += time.monotonic() - started
        self.runs.append(run)
        return run

    def _cell(self, run: Run, index: int) -> Measurement | None:
        name = self.libs[index].name
        return next((m for m in run.measurements if m.lib == name and m.case == self.case.id), None)

    def unusable(self, run: Run, index: int) -> str | None:
        cell = self._cell(run, index)
        if cell is None:
            return f"{self.space.points[index].label} gave no result for {self.case.id}"
        if cell.status != "ok":
            return f"{self.case.id} is {cell.status} on {self.space.points[index].label}: {cell.reason}"
        return None

    def change(self, run: Run, older: int, newer: int) -> Change | None:
        a, b = self._cell(run, older), self._cell(run, newer)
        if a is None or b is None or a.status != "ok" or b.status != "ok":
            return None
        return self.judge.change(a, b)


@dataclass
class Bisect:
    """The answer, with what it cost."""
    case: str
    space: Space
    judge: Judge
    outcome: Outcome
    probe: RealProbe
    seconds: float
    run: Run | None = None           # the stored record
    explanations: list = field(default_factory=list)     # (boundary, profile A, profile B)
    contentions: list = field(default_factory=list)      # a threads case's: (boundary, contention A, contention B)

    def label(self, index: int) -> str:
        return self.space.points[index].label

    def as_dict(self) -> dict:
        return {
            "case": self.case, "kind": self.space.kind, "metric": self.judge.metric,
            "threshold": self.judge.threshold, "alpha": self.judge.alpha,
            "points": [p.label for p in self.space.points], "good": self.space.good, "bad": self.space.bad,
            "note": self.space.note, **self.outcome.as_dict(),
            "builds": [vars(b) for b in self.probe.builds],
            "seconds": {"total": round(self.seconds, 1), "building": round(self.probe.build_seconds, 1),
                        "measuring": round(self.probe.measure_seconds, 1)},
        }


def mode_options(case: Case, time_ms: float | None) -> dict:
    """The case's mode's own options from bisect's --time: a threads case's sample is a round in which every thread
    runs for a while (2 s unless --time says), not a sample of the harness's timed loop."""
    if time_ms is None or registry.mode_of(case).name != "threads":
        return {}
    return {"threads": threads.Options(milliseconds=int(time_ms))}


def bisect(space: Space, case: Case, settings: Settings, judge: Judge, events: Events, store,
           options: dict | None = None) -> Bisect:
    """Search `space` for where `case` changed; the result is stored (when
    `store` is given) even if the search is interrupted. `options`: the case's mode's own (mode_options)."""
    started = time.monotonic()
    with _certificates(case) as cert_dir:
        probe = RealProbe(space, case, settings, judge, events, cert_dir, options)
        search = Search(len(space.points), probe, on_step=events.step)
        result = Bisect(case.id, space, judge, search.outcome, probe, 0.0)
        try:
            search.run()
        except EndUnusable as exc:
            end = "good" if exc.index == space.good else "bad"
            raise SslperfError(f"The {end} end {space.points[exc.index].label} cannot be used: {exc.problem}",
                               hint="Choose an end that builds and runs the case (`sslperf speed --case CASE --lib "
                                    "END` shows why it does not).") from None
        finally:
            result.seconds = time.monotonic() - started
            result.run, stored = _record(result, store)
            stopped = sys.exc_info()[1]
            if stopped is not None and result.run is not None:
                # What an interrupt keeps is the whole bisect's record (its finished steps), not the step's run.
                stopped.sslperf_run = (result.run, stored)
    return result


def _certificates(case: Case):
    """API and TLS cases read certificates; they are made once for every
    step, by the system library or else any built one (each makes the same
    kind of files)."""
    if not certificates.needed([case]):
        return contextlib.nullcontext(None)
    return certificates.made_by(_certificate_maker(), pem=certificates.pem_needed([case]))


def _certificate_maker() -> Lib:
    if find_system() is not None:
        return installed.find("system")
    found = installed.built_libs()
    if not found:
        raise SslperfError("API and TLS cases need a library to make their certificates, and none is in hand.",
                           hint="Install the system OpenSSL (libssl-dev) or build one library first.")
    return found[0]


def _record(result: Bisect, store) -> tuple[Run | None, bool]:
    """One run for the whole bisect: each point's first measurement (a
    midpoint's from its own step), and the search in settings["bisect"]; and whether the store kept it."""
    runs = result.probe.runs
    if not runs:
        return None, False
    record = Run.new({"suite": "bisect", "case": result.case, "metric": result.judge.metric,
                      "bisect": result.as_dict(), **{k: v for k, v in runs[0].settings.items() if k != "suite"}},
                     runs[0].environment)
    seen = set()
    for run in runs:
        for info in run.libs:
            if info.name not in seen:
                seen.add(info.name)
                record.libs.append(info)
                record.measurements += [m for m in run.measurements if m.lib == info.name]
        record.warnings += [w for w in run.warnings if w not in record.warnings]
    record.finished = runs[-1].finished
    record.complete = bool(result.outcome.status)
    record.state = "complete" if record.complete else "interrupted"
    if store is None:
        return record, False
    try:
        store.save(record, "sslperf bisect")
    except SslperfError as exc:
        record.warnings.append(f"The results store did not keep this bisect: {exc.message}")
        return record, False
    return record, True


def profiled(case_id: str) -> bool:
    """Whether a step of this case can be explained by profiling: callgrind runs the harness's loop in one process,
    so a case of a mode with a server and a client (or several threads) cannot be."""
    return "instructions" in registry.mode_of(parse_case(case_id)).metrics


def explained_by_contention(case_id: str) -> bool:
    """Whether a step of this case is explained by its two sides' contention (a case across threads)."""
    return registry.mode_of(parse_case(case_id)).name == "threads"


def explain(result: Bisect, top_boundaries: int = 2) -> None:
    """Explain each found step's two sides, the largest steps first: an in-memory case by a callgrind profile of
    each (the harness's loop in one process); a case across threads by each side's contention at its thread count
    (scale.contention: where the threads were blocked, which functions' CPU share grew)."""
    steps = [b for b in result.outcome.boundaries if b.kind == "step"][:top_boundaries]
    if explained_by_contention(result.case):
        from sslperf.measure import certificates
        from sslperf.measure import contention

        case = parse_case(result.case)
        inner, n, mode = case.part("case"), int(case.part("size")), case.part("mode")
        chosen = result.probe.options.get("threads")          # --time: each explaining run as long as a round
        milliseconds = chosen.milliseconds if chosen else EXPLAIN_MS
        with certificates.for_cases(result.probe.libs[steps[0].before], [parse_case(inner)]) if steps else \
                contextlib.nullcontext() as made:
            for boundary in steps:
                sides = [contention.explain(result.probe.libs[i], inner, n, milliseconds, mode,
                                            certificates.env(made))
                         for i in (boundary.before, boundary.after)]
                result.contentions.append((boundary, *sides))
        return
    if not profiled(result.case):
        return
    for boundary in steps:
        older, newer = result.probe.libs[boundary.before], result.probe.libs[boundary.after]
        result.explanations.append((boundary, *profile_pair(older, newer, result.case)))
