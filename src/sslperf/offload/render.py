"""What `sslperf offload` prints: the scan's driver table, the crossover of
each cipher behind `offload config`, and the bench's table with a verdict per
algorithm. Each takes the data its verb computed and the console to print on."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sslperf.offload.bench import Bench, how_measured, verdict
from sslperf.offload.config import Crossover
from sslperf.results import Measurement
from sslperf.stats import NOISY_CI


def print_scan(report: dict, show_all: bool, console: Console) -> None:
    """`offload scan`: the drivers (all, or the one the kernel picks per
    algorithm), whether any is hardware, and whether AF_ALG is open here."""
    rows = report["drivers"] if show_all else report["chosen"]
    af_alg = report["af_alg"]
    table = Table(title=f"Kernel crypto drivers ({'all' if show_all else 'the one the kernel picks per algorithm'})")
    for column in ("algorithm", "type", "driver", "module", "priority", "kind", "async", "AF_ALG"):
        table.add_column(column)
    for d in rows:
        bind = af_alg["bindable"].get(d["name"])
        style = {"hardware": "bold green", "cpu-accelerated": "cyan"}.get(d["kind"], "")
        table.add_row(escape(d["name"]), escape(d["type"]), escape(d["driver"]), escape(d["module"]),
                      str(d["priority"]), f"[{style}]{escape(d['kind'])}[/]" if style else escape(d["kind"]),
                      "yes" if d["is_async"] else "",
                      "" if bind is None else ("bindable" if bind else "no"))
    console.print(table)
    hardware = report["hardware"]
    console.print("hardware crypto drivers: "
                  + (escape(", ".join(hardware)) if hardware else "none — every algorithm is served ")
                  + ("" if hardware else "by the CPU (generic C or its own instructions), which userspace "
                     "OpenSSL already uses at least as well"))
    if af_alg["available"]:
        console.print(f"AF_ALG: available; {sum(af_alg['bindable'].values())} of {len(af_alg['bindable'])} "
                      "user-reachable algorithms can be bound.")
    else:
        console.print(f"[yellow]AF_ALG: not available here[/]: {escape(af_alg['reason'])}. The afalg and "
                      "devcrypto engines cannot work on this machine, so `offload bench` has nothing to time; "
                      "the scan above still shows what the kernel has.")


def print_crossovers(results: list[Crossover], console: Console) -> None:
    """`offload config`: per cipher, where the kernel wins and its ratio at each size, as comment lines."""
    for c in results:
        where = f"kernel wins from {c.threshold} bytes" if c.threshold is not None else "kernel never wins"
        detail = ", ".join(f"{s} B {k / u:.2f}x" for s, k, u in c.points)
        console.print(f"# {escape(c.cipher)}: {where} (kernel/userspace: {detail})", style="dim")


def print_bench(bench: Bench, console: Console) -> None:
    """`offload bench`: MB/s per algorithm and size on each side (and per CPU
    second where the figures have CPU times), each the median with its 95%
    CI half-width; the kernel/library ratio marked where the kernel is
    clearly faster and where it is not clearly either; then a verdict per
    algorithm with the driver that serves it."""
    results = [m for a in bench.algorithms.values() for m in [*a.kernel.values(), *a.user.values()]]
    with_ci = any(m.status == "ok" and len(m.rates()) > 1 for m in results)
    with_cpu = any(m.status == "ok" and m.cpu_ns for m in results)
    with_kernel = bench.measured_kernel

    def rate(m: Measurement | None, metric: str = "wall") -> str:
        if m is None or m.status != "ok" or (metric == "cpu" and not m.cpu_ns):
            return "" if m is None or m.status == "ok" else m.status
        summary = m.summary(metric)
        text = f"{summary.median / 1e6:,.1f}"
        if with_ci:
            style = "yellow" if summary.ci_half_width > NOISY_CI else "dim"
            text += f" [{style}]±{summary.ci_half_width * 100:.1f}%[/]"
        return text

    title = f"AF_ALG against {bench.library}" if with_kernel else f"{bench.library}, library side only"
    table = Table(title=f"{escape(title)}: MB/s" + (" per elapsed and per CPU second" if with_cpu else "")
                  + (" (median ±95% CI)" if with_ci else " (one figure each, no CI)"))
    columns = ["algorithm", "size", "kernel", "library", "kernel/library"] if with_kernel else \
        ["algorithm", "size", "library"]
    if with_cpu:
        columns += ["kernel per CPU s", "library per CPU s"] if with_kernel else ["library per CPU s"]
    for column in columns:
        table.add_column(column, justify="left" if column == "algorithm" else "right")
    overlap = False
    for alg in bench.algorithms.values():
        for i, size in enumerate(alg.sizes):
            k, u, v = alg.kernel.get(size), alg.user.get(size), alg.wall.get(size)
            ratio = f"{v.ratio:.2f}x" if v else ""
            if v and v.clear == 1:
                ratio = f"[bold green]{ratio}[/]"
            elif v and v.clear == 0:
                ratio, overlap = f"[yellow]{ratio} ≈[/]", True
            row = [escape(alg.name) if i == 0 else "", str(size)]
            row += [rate(k), rate(u), ratio] if with_kernel else [rate(u)]
            if with_cpu:
                row += [rate(k, "cpu"), rate(u, "cpu")] if with_kernel else [rate(u, "cpu")]
            table.add_row(*row)
        table.add_section()
    console.print(table)
    how = how_measured(bench.run)
    if with_ci:
        note = f"{how}; ±: half the 95% CI of the median" if how else "±: half the 95% CI of the median"
        if with_kernel:
            note += ("; kernel/library: the ratio of the two, judged by sslperf's one verdict rule (paired by worker "
                     "process where both sides ran in the same processes); green: the rule calls the kernel faster"
                     + ("; ≈: the rule calls no change (~) or cannot call one (?)" if overlap else "")
                     + ". A threshold needs such a clear win at its size and every larger one")
        console.print(escape(note) + ".", style="dim")
    elif with_kernel:
        console.print(f"One figure per size and side ({escape(how) or 'no samples'}): the verdict rule calls no "
                      "change on one figure a side (≈), so no threshold is clear; `sslperf offload bench` measures "
                      "samples in worker processes, and `sslperf offload config` gives the medians' crossing.",
                      style="dim")
    for alg in bench.algorithms.values():
        if not with_kernel and alg.failed is None:
            continue
        driver = alg.driver
        about = ", ".join(escape(part) for part in (alg.kernel_name, driver.get("driver") and
                                                     f"driver {driver['driver']}", driver.get("kind")) if part)
        console.print(f"{escape(alg.name)}{f' ({about})' if about else ''}: {escape(verdict(alg))}")
    if not with_kernel:
        why = "the kernel's side could not run (above)" if any(a.kernel for a in bench.algorithms.values()) \
            else "--user-only"
        console.print(f"[yellow]Only the library was timed[/] ({why}); there is no crossover to find.")
