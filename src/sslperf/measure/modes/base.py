"""What a measurement mode is. Every mode is one module that declares a `Mode` row (its case templates, the
harness backends that have it, the figures its results carry, what a verdict on them may rest on) and a `Session`:
how one round of one case is taken on one library. The scheduler (measure.scheduler) owns the rest — passes,
rounds, the libraries interleaved A B / B A, each sample's round, start time and process, the store, the
warnings — the same for every mode.

    class Session(base.Session):
        fixed_passes = 1                     # else: the settings' processes, each pass fresh processes
        def take(self, case, lib):           # one round: a Measurement of that round's samples
            ...
    MODE = base.Mode("memory", "bytes per TLS connection", ("tls/memory",), base.ALL_BACKENDS,
                     (figures.CLIENT_BYTES, ...), ("wall",), Session)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sslperf.libs.model import Lib, harness_backend
from sslperf.cases.ids import Case
from sslperf.measure.settings import Settings
from sslperf.results import Measurement, Run

ALL_BACKENDS = ("openssl", "rustls", "wolfssl")
OPENSSL_ONLY = ("openssl",)
TIME_METRICS = ("wall", "cpu", "instructions")      # a case in one process: any
WALL_ONLY = ("wall",)                               # a server and a client process, timed together


@dataclass
class Context:
    """What every session of one run shares: the libraries, the settings, each mode's own options, the run
    being recorded (its environment takes each mode's placement, its warnings each mode's), the certificates'
    directory (None when no case reads them) and the environment the harness processes get."""
    libs: list[Lib]
    settings: Settings
    options: dict[str, object]
    run: Run
    cert_dir: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    on_build: Callable[[str], None] | None = None       # a dependent program is being built (curl)
    build_progress: object | None = None                # the progress of building servers (libs.build's protocol)

    def options_of(self, mode: Mode):
        """The mode's options: those given, else its defaults."""
        given = self.options.get(mode.options_of or mode.name)
        return given if given is not None else (mode.options() if mode.options else None)


@dataclass
class Prepared:
    """A case made ready on the libraries: per library its result (status ok, or n/a or error with the reason;
    unit, bytes per operation and note as the preparation found them) and how many rounds to take in all."""
    results: dict[str, Measurement]
    rounds: int


def pass_order(libs: list[Lib], number: int) -> list[Lib]:
    """The libraries in the order pass `number` starts them, prepares them and gives them its first round: as given
    on even passes, reversed on odd ones. Whatever favours the library started first (its physical pages, the sample
    right after the warm-up) then falls on each in turn: variance the test across processes sees, not a bias."""
    return list(libs) if number % 2 == 0 else list(libs)[::-1]


class Session:
    """One mode's part of one run. The scheduler calls, per pass: `open_pass`; per case of this mode `prepare`
    (first pass) or `reprepare` (later passes), then `take` once per library per round, then `release`; then
    `close_pass`. `finish` sees every result of the run at the end, `close` always runs."""
    fixed_passes: int | None = None     # a mode whose figures do not drift (memory) takes this many passes
    finishing: str | None = None        # what `finish` does that takes time, for the progress line

    def __init__(self, mode: Mode, ctx: Context, cases: list[Case]):
        self.mode, self.ctx, self.cases = mode, ctx, cases
        # Passes: the settings' processes (each pass has fresh processes; a loopback round is one pass).
        self.passes = self.fixed_passes or max(1, ctx.settings.processes)

    @property
    def options(self):
        return self.ctx.options_of(self.mode)

    def open_pass(self, number: int) -> None:
        """A new pass begins (a mode with long-lived workers starts fresh ones)."""

    def prepare(self, case: Case, libs: list[Lib]) -> Prepared:
        """The case made ready (and so checked) on `libs`; by default every library is ready, a round per pass."""
        return Prepared({lib.name: Measurement.of(case, lib.name) for lib in libs}, self.passes)

    def reprepare(self, case: Case, libs: list[Lib]) -> dict[str, str]:
        """The case made ready again in this pass's fresh processes; the libraries that refused, with why."""
        return {}

    def rounds_this_pass(self, prepared: Prepared, taken: int, number: int) -> int:
        """How many rounds of the case this pass takes (by default its rounds spread evenly over the passes)."""
        return min(math.ceil(prepared.rounds / max(1, min(self.passes, prepared.rounds))), prepared.rounds - taken)

    def take(self, case: Case, lib: Lib) -> Measurement | None:
        """One round of `case` on `lib`: a measurement holding that round's samples and figures (or its failure);
        None when this library has nothing to take in this round."""
        raise NotImplementedError

    def release(self, case: Case, libs: list[Lib]) -> None:
        """The pass is done with the case."""

    def close_pass(self) -> None:
        """The pass ends."""

    def finish(self, results: list[Measurement]) -> list[str]:
        """Notes added to results once the run is done (one result beside another); the warnings to add."""
        return []

    def close(self) -> None:
        """Whatever the session holds is let go (always called)."""

    def cpus(self) -> set[int]:
        """The CPUs this session's processes ran on (the busy-CPU warnings check each)."""
        return set()


@dataclass(frozen=True)
class Mode:
    """A registry row: one measurement mode."""
    name: str                                   # `loopback`
    title: str                                  # `HTTPS GETs over loopback TCP`
    templates: tuple[str, ...]                  # the catalog's id templates it measures (by prefix: `tls/quic`)
    backends: tuple[str, ...]                   # the harness backends that have it
    figures: tuple[str, ...]                    # what its results carry beside their samples (sslperf.figures)
    metrics: tuple[str, ...]                    # what a verdict on its results may rest on
    session: Callable[[Mode, Context, list[Case]], Session]
    where: tuple[tuple[str, tuple[str, ...]], ...] = ()   # parts a case must have: (("client", ("curl",)),)
    counter: str = "time"                       # "instructions": the mode of a run that counts them
    options: type | None = None                 # its own options (a dataclass), None when it has none
    options_of: str | None = None               # the mode whose request options it reads, where not its own
    auto_metric: str | None = None              # what `--metric auto` takes, where not the first of `metrics`
    lacks: str = "is not measured for this library's harness yet"      # the n/a reason for another backend
    # The case a result of this mode is read beside, where it has one (a QUIC GET beside its TCP loopback GET):
    # finish() notes the two together (beside()).
    beside: Callable[[Case], Case] | None = None

    def backend_names(self) -> str:
        """`OpenSSL-API libraries (OpenSSL, BoringSSL, AWS-LC, LibreSSL), rustls and wolfSSL` for the backends."""
        names = {"openssl": "OpenSSL-API libraries (OpenSSL, BoringSSL, AWS-LC, LibreSSL)", "rustls": "rustls",
                 "wolfssl": "wolfSSL"}
        return " and ".join(names[b] for b in self.backends)

    def claims(self, case: Case, counter: str = "time") -> bool:
        """Whether this mode measures `case` in a run whose counter is `counter`."""
        if counter != self.counter or case.template not in self.templates:
            return False
        return all(case.part(name) in values for name, values in self.where)

    def lacking(self, lib: Lib) -> str | None:
        """Why `lib` cannot run this mode (an n/a reason), or None."""
        backend = harness_backend(lib.flavor)
        return None if backend in self.backends else f"{self.title} {self.lacks} ({backend} harness)"


def beside(mode: Mode, results: list[Measurement]) -> list[tuple[Measurement, Measurement]]:
    """Each result of `mode` with the result of the same library in the case its mode is read beside (Mode.beside),
    where that case was measured too."""
    by_key = {(m.lib, m.case): m for m in results}
    found = []
    for m in results:
        case = m.parsed
        if mode.beside is not None and case is not None and mode.claims(case):
            other = by_key.get((m.lib, mode.beside(case).id))
            if other is not None:
                found.append((m, other))
    return found
