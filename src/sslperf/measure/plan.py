"""Measurement policy: the run's settings from the verbs' options (sample
time, samples, processes, the CPU; the batch counted under valgrind), lists
of counts, and the limits a request must keep (a thread-scaling run that
would take an hour is refused before it starts). measure.verbs makes each
command's request with these."""

from __future__ import annotations

from sslperf.errors import SslperfError
from sslperf.measure import instructions, limits
from sslperf import pinning
from sslperf.measure.settings import PROCESSES, Settings

INSTRUCTIONS_BATCH_MS = 0.5       # native time of the first counted batch (the second is twice as long; under valgrind ~50× longer)
INSTRUCTIONS_PROCESSES = 3        # one count per process; counts repeat, so few are needed
THREAD_ROUNDS = 3                 # every thread count at least this many times, interleaved
THREADS_LIMIT_MINUTES = 10        # a longer thread-scaling request is refused before it starts
MAX_THREADS = int(limits.THREADS.high)
MAX_CONNECTIONS = int(limits.CONNECTIONS.high)


def settings(time_ms: float, samples: int, cpu: int | None, no_pin: bool, processes: int | None,
             mask: str | None = None, metric: str = "wall", fixed_layout: bool = False) -> Settings:
    """The runner's Settings from the verbs' options (the CPU checked before anything runs)."""
    if metric == "instructions":
        instructions.valgrind()             # missing valgrind: say so before anything runs
        # Counts with deterministic inputs repeat exactly: unless --processes
        # says otherwise, such a library is counted once (the others in 3).
        return Settings(INSTRUCTIONS_BATCH_MS, processes or INSTRUCTIONS_PROCESSES, mask,
                        processes=processes or INSTRUCTIONS_PROCESSES, cpu=pinning.choose(cpu, not no_pin),
                        counter="instructions", count_exact_once=processes is None)
    return Settings(time_ms, samples, mask, processes=processes or PROCESSES, cpu=pinning.choose(cpu, not no_pin),
                    fixed_layout=fixed_layout)


def counts(text: str, option: str, most: int) -> list[int]:
    """`1,2,4` → [1, 2, 4]; anything else is a one-paragraph error. At most limits.COUNTS of them: each count is
    a measurement of its own, and a request is held to the same number."""
    parts = text.split(",")
    try:
        found = sorted({int(part) for part in parts}) if len(parts) <= limits.COUNTS else []
    except ValueError:
        found = []
    if not found or found[0] < 1 or found[-1] > most:
        shown = text if len(text) <= 60 else f"{text[:40]}… ({len(text)} characters)"
        raise SslperfError(f"`{shown}` is not a list of counts between 1 and {most:,} (at most {limits.COUNTS} of "
                           f"them), e.g. {option} 1,2,4.")
    return found


def check_threads(cases: list, libs: list, thread_counts: list[int], seconds: float,
                  rounds: int = THREAD_ROUNDS) -> None:
    """Refuse a thread-scaling request longer than THREADS_LIMIT_MINUTES."""
    minutes = len(cases) * len(libs) * len(thread_counts) * rounds * seconds / 60
    if minutes > THREADS_LIMIT_MINUTES:
        raise SslperfError(f"--threads runs every case for {seconds:g} s per thread count, {rounds} rounds "
                           f"each: {len(cases)} cases on {len(libs)} libraries would take about {minutes:.0f} "
                           "minutes.", hint="Choose a few cases with --case or --filter (or fewer thread counts).")
