"""Which samples waited for their CPU, and so what a verdict on wall time may rest on (issue 50).

A worker pinned to a CPU that another task also wants is taken off it, runnable, for as long as the other task's
turn lasts: the sample's wall time then holds that wait. Interleaved rounds do not pair it away — one library's
sample waits and the other's, taken a moment later, does not — so wall time on a shared CPU gives tight intervals
around a difference that is the other task's, not the libraries'. The harness reads the kernel's run delay before and
after every in-memory sample (figures.WAIT), so each sample says whether it waited:

- a sample that waited more than WAITED of its wall time is never a unit of a wall-time verdict;
- while few of a pair's samples waited (at most ALLOWED on each side) those are left out and wall time stands;
- beyond that, where every sample's work is on the CPU of the one process that times it (families.on_cpu), the
  figures and the verdict rest on CPU time, which leaves the waits out, and say so; the threshold is then at
  least CONTENDED;
- elsewhere (a peer process, the kernel's own work) nothing is left to measure: `?`, with the reason.

Plain rules on measurements; no I/O."""

from __future__ import annotations

from dataclasses import dataclass

from sslperf import families, figures
from sslperf.results import Measurement

WAITED = 0.01       # a sample that spent over 1% of its wall time runnable but off its CPU waited
ALLOWED = 0.10      # up to this share of a side's samples may wait and be left out; beyond it, CPU time
# On CPU time taken beside another task, no change under 5% is called: each of the other task's turns costs the
# worker cache refills, and two libraries (or two processes of one) pay them unequally. Two copies of one library
# measured beside a CPU-bound loop differed by up to 4.2% on CPU time (bench/busy_verdicts.py, docs/benchmarks.md).
CONTENDED = 0.05


@dataclass(frozen=True)
class Basis:
    """What the figures and a verdict rest on: `metric` (the one asked, or "cpu" in its place), which samples of
    each measurement are units (None: all), and why, when that is not simply the metric asked."""
    metric: str
    keep: tuple[tuple[bool, ...] | None, ...]
    reason: str | None = None
    waited: int = 0          # samples that waited, all measurements together
    samples: int = 0

    @property
    def abstain(self) -> bool:
        """Too little left to measure: the verdict is `?` and `reason` says why."""
        return self.metric == "?"


def waited(m: Measurement) -> list[bool] | None:
    """Per sample, whether it waited for its CPU; None where the samples do not say (other modes, older runs). A
    threads round's wait is all its threads' together: against each thread's share."""
    waits = (m.figures or {}).get(figures.WAIT)
    if not waits or len(waits) != len(m.wall_ns):
        return None
    threads = max(1, m.size or 1) if m.family == "threads" else 1
    return [sample_waited(w / threads, wall) for w, wall in zip(waits, m.wall_ns)]


def sample_waited(wait_ns: float, wall_ns: float) -> bool:
    """Whether a sample that waited `wait_ns` for its CPU in `wall_ns` waited (more than WAITED of its time)."""
    return wait_ns > WAITED * wall_ns


def basis(measurements: list[Measurement], metric: str) -> Basis:
    """What a row or a pair of `measurements` is judged and shown on when `metric` is asked (see the module)."""
    plain = Basis(metric, tuple(None for _ in measurements))
    if metric != "wall":
        return plain
    marks = [waited(m) for m in measurements]
    if all(mark is None or not any(mark) for mark in marks):
        return plain
    count, total = sum(sum(mark) for mark in marks if mark), sum(len(mark) for mark in marks if mark)
    share = f"{count} of {total} samples waited for the workers' CPU, which another task held"
    if all(mark is None or sum(mark) <= ALLOWED * len(mark) for mark in marks):
        keep = tuple(None if mark is None else tuple(not w for w in mark) for mark in marks)
        return Basis(metric, keep, f"{share}; they are left out", count, total)
    if all(families.family(m.family).on_cpu and mark is not None and m.cpu_ns for m, mark in zip(measurements, marks)):
        return Basis("cpu", plain.keep, f"{share}: CPU time, which leaves the waits out", count, total)
    if all(families.family(m.family).on_cpu and m.cpu_ns for m in measurements):
        return Basis("?", plain.keep, f"{share}, and a side measured before sslperf recorded waits cannot say which "
                     "of its samples waited: measure it again", count, total)
    return Basis("?", plain.keep, f"{share}, and this case's wall time has no stand-in: rerun with the CPU to "
                 "itself (--cpu chooses another)", count, total)


def row_metric(measurements: list[Measurement], metric: str) -> str:
    """What a row of figures beside their changes is shown in: CPU time for every library of a row whose samples
    waited for their CPU where CPU time stands in (so the figures read like the changes), else `metric`."""
    return "cpu" if basis([m for m in measurements if m.status == "ok"], metric).metric == "cpu" else metric
