"""The one scheduler: every measured run of sslperf — speed, api, every tls mode, serve-load, scale, bisect,
track, recommend, noise and the fleet — is cases × libraries taken here, the same way.

A run goes in passes; each pass gives every case a few rounds; in every round each library takes the case once,
in turn, and the order reverses on alternate rounds (A B, B A, …) so that drift hits the libraries alike. A mode
with long-lived worker processes starts fresh ones each pass, so a case's processes are spread over the whole run
and a burst of interference meets one of them, not all. Each pass starts, prepares and first samples the libraries
in the other order (base.pass_order). What a round is belongs to the case's mode
(measure.modes): a sample in a pinned worker, a loop of GETs against a fresh server, one wrk run, one callgrind
count. Each sample records its round, its process and when its round began (figures ROUND, PROCESS, START), so the
run JSON shows the interleaving and anyone can plot drift.

    run = scheduler.measure(Request("sslperf tls", ["openssl-3.6"], case_ids, settings, labels={"suite": "tls"}), store)
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sslperf import figures
from sslperf.libs.build import last_build
from sslperf.verdict import run_noise as noise_record
from sslperf.libs.model import Lib
from sslperf.measure import certificates, environment, hostlock
from sslperf import pinning
from sslperf.cases.ids import Case
from sslperf.measure.modes import base, registry
from sslperf.measure.recording import new_run, recorded
from sslperf.measure.request import Request
from sslperf.measure.settings import RECORDED, Settings
from sslperf.results import Measurement, Run
from sslperf.stats import NOISY_CI
from sslperf.verdict import waits

Progress = Callable[[str, int, int], None]      # (what, done, total)


@dataclass
class _Case:
    """One case's schedule across the passes of a run."""
    case: Case
    session: base.Session
    prepared: base.Prepared | None = None
    ready: list[Lib] = field(default_factory=list)
    taken: int = 0                               # rounds taken so far


def measure(request: Request, store, progress: Progress | None = None, *, cert_dir=None,
            on_build: Callable[[str], None] | None = None, build_progress=None) -> Run:
    """The one entry of every measuring feature — speed, api, tls, scale, serve-load, bisect, track, noise,
    recommend, offload, and a fleet machine's `measure-request`: the request's libraries and cases, resolved and
    checked, measured and recorded into `store` (None: nowhere) as it goes. `cert_dir`: test certificates made
    already (a bisect's steps share theirs); `on_build` and `build_progress` show what a mode builds before its
    first round (a curl, a server)."""
    libs, cases = request.resolve()
    return measure_libs(libs, cases, request.settings, store, request.source, request.labels, request.options,
                        progress, cert_dir, on_build, build_progress, request.tuning)


def measure_libs(libs: list[Lib], cases: list[Case], settings: Settings, store, source: str,
                 labels: dict | None = None, options: dict[str, object] | None = None,
                 progress: Progress | None = None, cert_dir=None, on_build: Callable[[str], None] | None = None,
                 build_progress=None, tuning: list[str] | None = None) -> Run:
    """measure() on libraries already in hand: what a Request resolves to, or (tests, benches) libraries no name
    finds. Features build a Request instead (tests/test_layers.py holds them to it). `options`: each mode's own
    options by mode name (else its defaults); `labels`: what the run's settings record beside the scheduler's own;
    `tuning`: the verb's options for longer or more samples, the only ones a warning names."""
    _refuse_labels(labels or {})
    by_mode = registry.split(cases, settings.counter)
    waiting = (lambda: progress("waiting for another measurement on this host (a fleet serves it)", 0, 0)) \
        if progress else (lambda: None)
    with hostlock.measuring(waiting):       # a host that serves a fleet measures one run at a time
        return _measure(libs, cases, by_mode, settings, store, source, labels, options, progress, cert_dir, on_build,
                        build_progress, tuning or [])


def _measure(libs, cases, by_mode, settings, store, source, labels, options, progress, cert_dir, on_build,
             build_progress, tuning) -> Run:
    # The labels first: what the scheduler records is never replaced by one (see _refuse_labels).
    run = new_run(libs, {**(labels or {}), **settings.as_dict(), "modes": sorted(mode.name for mode in by_mode)},
                  settings.mask)
    with certificates.for_cases(libs, cases, cert_dir) as made:
        ctx = base.Context(libs, settings, options or {}, run, made, certificates.env(made), on_build, build_progress)
        _refuse_lacking(by_mode, libs)
        sessions = _open(by_mode, ctx)
        try:
            busy = pinning.busy_cpus(set().union(*(s.cpus() for s in sessions.values())))
            run.warnings += pinning.busy_warnings(busy)
            with recorded(run, store, source) as keep:
                try:
                    _passes([_Case(c, sessions[registry.mode_of(c, settings.counter)]) for c in cases],
                            libs, keep, store, run, progress)
                except KeyboardInterrupt:
                    run.warnings += _interrupted(run, len(cases))
                    raise
                notes = [m.note for m in run.measurements]
                for session in sessions.values():
                    if progress and session.finishing:         # the line says what runs now, not the last case
                        progress(session.finishing, len(cases), len(cases))
                    run.warnings += session.finish(run.measurements)
                run.warnings += _warnings(run, settings, [f"CPU {cpu} {share:.0%} busy" for cpu, share in busy.items()],
                                          tuning)
                for m, note in zip(run.measurements, notes):
                    if store and m.note != note:        # what finish() noted beside a result
                        store.replace(run.id, m)
        finally:
            for session in sessions.values():
                session.close()
    if progress:
        progress("done", 1, 1)
    return run


def _refuse_labels(labels: dict) -> None:
    """A label named like a setting the run records (settings.RECORDED) is refused before anything runs: the
    settings a run shows (`runs show`, exports, reports) are always the ones it was measured with."""
    from sslperf.errors import SslperfError
    from sslperf.untrusted import shorten, visible

    clash = sorted(str(key) for key in labels if key in RECORDED)
    if clash:
        raise SslperfError(f"The label `{shorten(visible(clash[0]), 60)}` is named like a setting the run records "
                           "itself; a label cannot replace it. Nothing was measured.",
                           hint=f"Name labels apart from the settings ({', '.join(sorted(RECORDED))}).")


def _open(by_mode: dict[base.Mode, list[Case]], ctx: base.Context) -> dict[base.Mode, base.Session]:
    sessions: dict[base.Mode, base.Session] = {}
    try:
        for mode, mode_cases in by_mode.items():
            sessions[mode] = mode.session(mode, ctx, mode_cases)
    except BaseException:
        for session in sessions.values():
            session.close()
        raise
    return sessions


def _refuse_lacking(by_mode: dict[base.Mode, list[Case]], libs: list[Lib]) -> None:
    """A mode no library of the run has is refused before anything runs (a library that lacks it gets n/a)."""
    from sslperf.errors import SslperfError

    for mode in by_mode:
        if all(mode.lacking(lib) for lib in libs):
            raise SslperfError(f"{', '.join(lib.name for lib in libs)}: {mode.title} {mode.lacks}.",
                               hint=f"sslperf measures it with {mode.backend_names()}; every library runs the "
                                    "in-memory cases and the thread sweeps.")


def _passes(plans: list[_Case], libs: list[Lib], keep, store, run: Run, progress: Progress | None) -> None:
    passes = max((p.session.passes for p in plans), default=1)
    total, done = len(plans) * passes, 0
    started = time.monotonic_ns()
    sessions = list(dict.fromkeys(p.session for p in plans))
    for number in range(passes):
        for session in sessions:
            session.open_pass(number)
        for plan in plans:
            if progress:
                progress(f"{plan.case.id} (pass {number + 1} of {passes})", done, total)
            done += 1
            if number == 0:
                _first(plan, libs)
            elif not _again(plan, number):
                continue
            _rounds(plan, number, started)
            for m in plan.prepared.results.values():
                if number == 0:
                    keep(m)
                elif store:
                    store.replace(run.id, m)
        for session in sessions:
            session.close_pass()


def _first(plan: _Case, libs: list[Lib]) -> None:
    """The case prepared (and so checked) on every library that has its mode; n/a for those that do not."""
    lacking = {lib.name: why for lib in libs if (why := plan.session.mode.lacking(lib))}
    able = [lib for lib in libs if lib.name not in lacking]
    plan.prepared = plan.session.prepare(plan.case, able) if able else base.Prepared({}, 0)
    for name, why in lacking.items():
        plan.prepared.results[name] = Measurement.of(plan.case, name, "n/a", why)
    plan.prepared.results = {lib.name: plan.prepared.results[lib.name] for lib in libs}
    plan.ready = [lib for lib in able if plan.prepared.results[lib.name].status == "ok"]


def _again(plan: _Case, number: int) -> bool:
    """Whether the case has rounds in this pass; if so it is prepared again in the pass's processes."""
    if number >= plan.session.passes or not plan.ready or plan.taken >= plan.prepared.rounds:
        return False
    for name, why in plan.session.reprepare(plan.case, base.pass_order(plan.ready, number)).items():
        m = plan.prepared.results[name]
        m.status, m.reason = "error", f"ready in an earlier pass, then: {why}"
    plan.ready = [lib for lib in plan.ready if plan.prepared.results[lib.name].status == "ok"]
    return bool(plan.ready)


def _rounds(plan: _Case, number: int, started: int) -> None:
    """This pass's rounds of the case, the libraries alternating A B, B A from the pass's order (base.pass_order);
    then the case released."""
    first = base.pass_order(plan.ready, number)
    for index in range(plan.session.rounds_this_pass(plan.prepared, plan.taken, number)):
        for lib in first if index % 2 == 0 else first[::-1]:
            result = plan.prepared.results[lib.name]
            if result.status != "ok":
                continue
            begun = time.monotonic_ns() - started
            got = plan.session.take(plan.case, lib)
            if got is not None:
                merge(result, got, plan.taken, begun, number)
        plan.taken += 1
    plan.ready = [lib for lib in plan.ready if plan.prepared.results[lib.name].status == "ok"]
    plan.session.release(plan.case, plan.ready)


def merge(into: Measurement, got: Measurement, round_number: int, begun_ns: int, default_process: int) -> None:
    """One round's measurement `got` into the case's result: its samples and figures appended, each sample marked
    with the round, the time the round began and its process (the round's own mark, else the pass); a failed round
    makes the result a failure with its reason (the samples before it are kept)."""
    if got.status != "ok":
        into.status, into.reason = got.status, got.reason
        return
    into.unit, into.bytes_per_op = got.unit, got.bytes_per_op
    if got.note:
        into.note = got.note
    got_figures = dict(got.figures or {})
    process = got_figures.pop(figures.PROCESS, None) or [default_process] * len(got.ops)
    into.figures = into.figures or {}
    for key, values in got_figures.items():
        into.figures.setdefault(key, []).extend(values)
    into.ops += got.ops
    into.wall_ns += got.wall_ns
    into.cpu_ns += got.cpu_ns
    into.figures.setdefault(figures.PROCESS, []).extend(process)
    into.figures.setdefault(figures.ROUND, []).extend([round_number] * len(got.ops))
    into.figures.setdefault(figures.START, []).extend([begun_ns] * len(got.ops))
    for fact in ("counter", "deterministic", "negotiated"):      # what every round records alike
        if getattr(got, fact) is not None:
            setattr(into, fact, getattr(got, fact))


def _interrupted(run: Run, cases: int) -> list[str]:
    """The warnings of a run stopped with Ctrl-C: what it holds."""
    done = len({m.case for m in run.measurements})
    return [f"this run was interrupted (Ctrl-C) with {done} of {cases} case{'' if cases == 1 else 's'} "
            "measured: a case stopped before its last pass has fewer samples and processes than asked, so its CI "
            "is wider and it is a weaker basis for a comparison."]


def _remedy(tuning: list[str]) -> str:
    """What to do about wide intervals, naming only the options the verb has."""
    longer = [t for t in tuning if t in ("--time", "--seconds")]
    more = [t for t in tuning if t in ("--samples", "--rounds", "--requests", "--processes")]
    if longer and more:
        return f"use {longer[0]} to lengthen them or {' or '.join(more)} for more"
    if more or longer:
        return f"use {' or '.join(longer + more)} for longer or more samples"
    return "lengthen them or take more, where the command has options for that (--help)"


def _warnings(run: Run, settings: Settings, flags: list[str], tuning: list[str]) -> list[str]:
    """What every run says of its machine and its spread, whatever its modes; the run records the noise it saw
    (verdict.run_noise), which verdicts between it and another run take into account."""
    after = environment.capture(settings.mask)
    found = environment.noise_warnings(run.environment, after, last_build())
    flags = flags + environment.noise_flags(run.environment, after, last_build())
    # On the basis the tables show (CPU time where the samples waited for a shared CPU: waits.row_metric).
    noisy = [m for m in run.measurements if m.status == "ok" and (s := m.summary(waits.row_metric([m], "wall")))
             and s.ci_half_width > NOISY_CI]
    if noisy:
        names = ", ".join(f"{m.case} on {m.lib}" for m in noisy[:3]) + (" …" if len(noisy) > 3 else "")
        found.append(f"{len(noisy)} result(s) have a 95% CI wider than ±{NOISY_CI:.0%} ({names}): the machine is "
                     f"noisy or the samples are short; {_remedy(tuning)}.")
        flags.append(f"{len(noisy)} results with a CI wider than ±{NOISY_CI:.0%}")
    run.environment["noise"] = noise_record.summarise(run, flags)
    run.finished = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    return found
