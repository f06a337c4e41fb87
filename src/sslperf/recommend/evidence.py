"""The evidence `recommend` decides from: one library's figures taken from
stored runs, and whatever they lack measured now (the quick depth, as the
CPU is and with AES-NI hidden by the no-aesni CPU mask)."""

from __future__ import annotations

from collections.abc import Callable

from sslperf.errors import SslperfError
from sslperf.measure import suites
from sslperf.measure.environment import mask_env
from sslperf.measure.settings import Settings
from sslperf.recommend.decide import Evidence, needed_cases
from sslperf.recommend.fips import cost_cases
from sslperf.results import Run

MASK = "no-aesni"
SAMPLES = 10

# (cases, settings) → the Run that measured `cases` on the library now.
Measure = Callable[[list, Settings], Run]


def gather(lib, floor: int, runs: list, measure: Measure, no_store: bool = False) -> Evidence:
    """Measurements of `lib` from `runs` (stored runs, in any order; the
    newest figure of a case wins), plus whatever is missing measured now
    through `measure`. With `no_store` nothing measured is kept, so the
    evidence names no run."""
    plain_ids, masked_ids = needed_cases(floor)
    plain, masked, origin = from_runs(lib, runs)
    used = list(runs)
    depth = suites.DEPTHS["quick"]
    plain_todo = [c for c in plain_ids if c not in plain]
    masked_todo = [c for c in masked_ids if c not in masked]
    if plain_todo:
        run = measure([suites.parse_case(c) for c in plain_todo], Settings(depth.target_ms, SAMPLES))
        plain.update({m.case: m for m in run.measurements})
        origin.update({m.case: run.id for m in run.measurements})
        used.append(run)
    if masked_todo and can_mask():
        run = measure([suites.parse_case(c) for c in masked_todo], Settings(depth.target_ms, SAMPLES, MASK))
        masked.update({m.case: m for m in run.measurements})
        origin.update({f"{m.case}@masked": run.id for m in run.measurements})
        used.append(run)
    return Evidence(list(plain.values()), list(masked.values()), [] if no_store else [r.id for r in used], origin,
                    {r.id: r.noise() for r in used})


def masked_aeads(lib, measure: Measure) -> Evidence | None:
    """AES-128-GCM and ChaCha20-Poly1305 on `lib` with AES-NI hidden (None where CPU masks do not work):
    what `recommend --fips` weighs the loss of ChaCha20 with."""
    if not can_mask():
        return None
    depth = suites.DEPTHS["quick"]
    run = measure([suites.parse_case(c) for c in cost_cases()], Settings(depth.target_ms, SAMPLES, MASK))
    return Evidence([], run.measurements, [run.id], {f"{m.case}@masked": run.id for m in run.measurements},
                    {run.id: run.noise()})


def from_runs(lib, runs: list) -> tuple[dict, dict, dict[str, str]]:
    """(plain measurements, no-aesni measurements, each by case; the run each came from) of `lib` in `runs`, the
    newest run's figure of a case winning; a run without `lib` is an error."""
    plain, masked, origin = {}, {}, {}
    for run in sorted(runs, key=lambda r: r.started):
        mine = [m for m in run.measurements if m.lib == lib.name]
        if not mine:
            raise SslperfError(f"Run {run.id} has no measurements of {lib.name}.",
                               hint=f"Its libraries: {', '.join(l.name for l in run.libs)}.")
        mask = run.environment.get("mask")
        if mask is None:
            plain.update({m.case: m for m in mine})
            origin.update({m.case: run.id for m in mine})
        elif mask == MASK:
            masked.update({m.case: m for m in mine})
            origin.update({f"{m.case}@masked": run.id for m in mine})
    return plain, masked, origin


def can_mask() -> bool:
    """Whether this CPU takes OPENSSL_ia32cap masks (environment decides, as for `speed --cpu-mask`)."""
    try:
        mask_env(MASK)
    except SslperfError:
        return False
    return True
