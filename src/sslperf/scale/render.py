"""`sslperf scale` in the terminal: per case a table of thread counts × libraries (the rate with its 95% CI, and
the scaling efficiency with its interval), then per library why its largest count scales as it does: the share of
the threads' time blocked on a lock and where (the lock function ← the library function that took it ← …), and
the functions whose CPU share grew with the threads."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table
from rich.text import Text

from sslperf.units import rate, throughput
from sslperf.scale.sweep import Curve

TOP = 5
# Fewer blocked acquisitions than this in a run name no lock: a handful of waits (the runner's start, a page fault
# in a holder) is not what stops a library scaling.
MIN_ACQUISITIONS = 100
# ... unless the waits are long and nobody was preempted: then one thread kept the lock while the others slept on
# it (a handful of wake-ups, each losing the lock again to the thread that just released it), and the lock is the
# cause, however few the waits.
MIN_BLOCKED_SHARE = 0.10
PREEMPTED = 0.05        # threads off their CPUs this share of their time: their figures hold other work's share


def _point_text(point, details: bool) -> Text:
    figure = throughput(point.rate) if point.unit == "bytes" else rate(point.rate)
    half = (point.ci[1] - point.ci[0]) / 2 / point.rate if point.rate else 0.0
    text = Text(f"{figure} ±{half:.0%}")
    e = point.efficiency
    if e is not None and point.threads > 1:
        interval = f" [{e.low:.0%}–{e.high:.0%}]" if e.low is not None else " [too few rounds]"
        text.append(f" · {e.value:.0%}{interval}", style="bold" if e.value < 0.8 else "")
    if details and point.latency:
        text.append("\n" + " ".join(f"p{p} {v / 1e3:,.0f}" for p, v in point.latency.items() if p in (50, 90, 99))
                    + " µs", style="dim")
    return text


def curves_tables(curves: list[Curve], details: bool = False) -> list[Table]:
    by_case: dict[tuple[str, str], list[Curve]] = {}
    for curve in curves:
        by_case.setdefault((curve.case, curve.mode), []).append(curve)
    tables = []
    for (case, mode), found in by_case.items():
        libs = [c.lib for c in found]
        table = Table(Column("threads", justify="right"), *[Column(Text(lib), justify="right") for lib in libs],
                      title=f"{escape(case)} [{mode}] (all threads' rate, median ±95% CI · scaling efficiency "
                            "[95% interval])", title_justify="left",
                      caption="efficiency: rate at N / (N × rate at 1 thread); 100% is perfect scaling",
                      caption_justify="left")
        counts = sorted({p.threads for c in found for p in c.points})
        for n in counts:
            cells = []
            for curve in found:
                point = next((p for p in curve.points if p.threads == n), None)
                cells.append(_point_text(point, details) if point else Text("—", style="dim"))
            table.add_row(str(n), *cells)
        tables.append(table)
    return tables


def contention_lines(found: dict) -> list[str]:
    """One library's contention, as lines (rich markup, escaped)."""
    head = f"[bold]{escape(found['lib'])}[/], {escape(found['case'])} {escape('[' + str(found['mode']) + ']')}"
    if found.get("problem"):
        return [f"{head}: not explained — {escape(found['problem'])}"]
    n = found["threads"]
    shares = found.get("blocked_share")
    if shares is None:          # a probe's: CPU shares only (its static harness cannot load the lock interposer)
        lines = [f"{head}: lock waits at {n} threads {escape(found.get('locks') or 'not measured')}"]
        shares = {}
    else:
        lines = [f"{head}: threads blocked on a lock {shares.get(str(n), 0):.1%} of their time at {n} threads "
                 f"({shares.get('1', 0):.1%} at 1)"]
    preempted = (found.get("preempted_share") or {}).get(str(n))
    if preempted is not None:
        lines.append(f"  preempted (runnable, waiting for a CPU another task held) {preempted:.1%} of their time at "
                     f"{n} threads — not a lock: "
                     + ("another task shares these CPUs, and lock waits include holders that were preempted; "
                        "measure on idle CPUs" if preempted > PREEMPTED else "the CPUs were the threads' own"))
    calls = found.get("calls") or {}
    taken = [f"{name} {counts[0]:,} ({counts[1]:,} found taken)" for name, counts in calls.items()
             if counts[0] and name != "pthread_cond_wait"]
    if taken:
        lines.append(f"  lock calls at {n} threads: " + escape("; ".join(taken)))
    sites = [site for site in found.get("sites", []) if site.get("kind") != "pthread_cond_wait"]
    acquisitions = (found.get("blocked_acquisitions") or {}).get(str(n), sum(site["count"] for site in sites))
    long_waits = (preempted is not None and preempted <= PREEMPTED
                  and shares.get(str(n), 0) >= MIN_BLOCKED_SHARE and acquisitions > 0)
    if sites and acquisitions < MIN_ACQUISITIONS and long_waits:
        waited = sum(site.get("blocked_ns", 0) for site in sites) / acquisitions
        lines.append(f"  {acquisitions:,} blocked acquisition{'s' if acquisitions != 1 else ''} in all, "
                     f"{waited / 1e6:,.1f} ms each on average with no thread preempted: a holder kept the lock "
                     "while the others waited")
    elif sites and acquisitions < MIN_ACQUISITIONS:
        lines.append(f"  {acquisitions:,} blocked acquisition{'s' if acquisitions != 1 else ''} in all: too few to "
                     f"name a lock (at least {MIN_ACQUISITIONS:,}); locks do not explain this count")
        sites = []
    for site in sites[:TOP]:
        lines.append(f"  {site['share']:6.1%} blocked  {site['count']:>8,}×  {escape(site['site'])}")
    if found.get("growing"):
        lines.append(f"  functions whose share of the CPU grew from 1 to {n} threads:")
        for g in found["growing"][:TOP]:
            callers = f" ← {escape(g['callers'])}" if g.get("callers") else ""
            lines.append(f"  {g['share_at_one']:5.1f}% → {g['share_at_n']:5.1f}%  {escape(g['function'])}{callers}")
    elif found.get("cpu_profile"):
        lines.append(f"  [dim]{escape(found['cpu_profile'])}[/dim]")
    return lines


def small_machine(cpus: int) -> str | None:
    """What a sweep on `cpus` CPUs cannot show, or None on a machine with enough of them."""
    if cpus > 4:
        return None
    return (f"This machine has {cpus} CPU{'s' if cpus != 1 else ''}: the sweep stops at {cpus} thread"
            f"{'s' if cpus != 1 else ''}. Contention that appears at 8, 16 or 64 threads (OpenSSL 3.0's fetch and "
            "name-map locks, reference counts bouncing between sockets) cannot show here; run the sweep on the "
            "many-core machine itself.")


def placement(curves_cpus: list[int], pinned: bool, counts: list[int]) -> str:
    """The placement header, printed before the first round: where the threads will run."""
    where = f"pinned one per CPU on CPUs {', '.join(map(str, curves_cpus))}" if pinned else "floating (--no-pin)"
    return f"threads {where}; thread counts {', '.join(map(str, counts))}"


def print_sweep(curves: list[Curve], contention: list[dict], console: Console, details: bool = False) -> None:
    for table in curves_tables(curves, details):
        console.print(table)
    if contention:
        console.print("[bold]Why: contention at the largest count with a CPU per thread, against 1 thread[/] (lock "
                      "waits timed by sslperf's lock interposer; CPU shares by perf record -e cpu-clock)")
        for found in contention:
            for line in contention_lines(found):
                console.print(line, soft_wrap=True)
