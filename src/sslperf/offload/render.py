"""What `sslperf offload` prints: the scan's driver table, the crossover of
each cipher behind `offload config`, and the bench's table with a verdict per
algorithm. Each takes the data its verb computed and the console to print on."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sslperf.offload.bench import Bench, verdict
from sslperf.offload.config import Crossover, separated
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
        table.add_row(escape(d["name"]), d["type"], escape(d["driver"]), escape(d["module"]), str(d["priority"]),
                      f"[{style}]{d['kind']}[/]" if style else d["kind"], "yes" if d["is_async"] else "",
                      "" if bind is None else ("bindable" if bind else "no"))
    console.print(table)
    hardware = report["hardware"]
    console.print(f"hardware crypto drivers: {', '.join(hardware) if hardware else 'none — every algorithm is served '}"
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
        console.print(f"# {c.cipher}: {where} (kernel/userspace: {detail})", style="dim")


def print_bench(bench: Bench, console: Console) -> None:
    """`offload bench`: MB/s per algorithm and size on each side (and per CPU
    second where the recording has CPU times), each the median over rounds
    with its 95% CI half-width, the ratio marked where the two CIs overlap;
    then a verdict per algorithm."""
    samples = [x for a in bench.algorithms.values() for x in [*a.kernel.values(), *a.user.values()]]
    fewest = min((x.n for x in samples), default=1)
    with_ci = fewest > 1

    def rate(summary) -> str:
        if summary is None:
            return ""
        text = f"{summary.median / 1e6:,.1f}"
        if with_ci:
            width = summary.ci_half_width * 100
            text += f" [{'yellow' if summary.ci_half_width > NOISY_CI else 'dim'}]±{width:.1f}%[/]"
        return text

    with_cpu = any(x.cpu for x in samples)
    with_kernel = bench.measured_kernel
    title = f"AF_ALG against {bench.library}" if with_kernel else f"{bench.library}, library side only"
    how = f"median ±95% CI over {bench.rounds} rounds" if with_ci else "one round, no CI"
    table = Table(title=f"{escape(title)}: MB/s" + (" per elapsed and per CPU second" if with_cpu else "")
                  + f" ({how})")
    columns = ["algorithm", "size", "kernel", "library", "kernel/library"] if with_kernel else \
        ["algorithm", "size", "library"]
    if with_cpu:
        columns += ["kernel per CPU s", "library per CPU s", "kernel sys"] if with_kernel else ["library per CPU s"]
    for column in columns:
        table.add_column(column, justify="left" if column == "algorithm" else "right")
    overlap = False
    for alg in bench.algorithms.values():
        for i, size in enumerate(alg.sizes or [None]):
            k, u = alg.kernel.get(size), alg.user.get(size)
            ratio = f"{k.wall_rate / u.wall_rate:.2f}x" if k and u else ""
            clear = separated(k.wall, u.wall) if k and u else None
            if clear == 1:
                ratio = f"[bold green]{ratio}[/]"
            elif clear == 0 and with_ci:
                ratio, overlap = f"[yellow]{ratio} ≈[/]", True
            kernel = [rate(k.wall if k else None)] if with_kernel else []
            row = [alg.name if i == 0 else "", str(size or ""), *kernel, rate(u.wall if u else None)]
            row += [ratio] if with_kernel else []
            if with_cpu and with_kernel:
                share = k.sys_share if k else None
                row += [rate(k.cpu if k else None), rate(u.cpu if u else None),
                        "" if share is None else f"{share:.0%}"]
            elif with_cpu:
                row += [rate(u.cpu if u else None)]
            table.add_row(*row)
        table.add_section()
    console.print(table)
    if with_ci:
        seconds = f" of {bench.seconds:g} s" if bench.seconds else ""
        note = (f"{bench.rounds} rounds{seconds} per size and side, each a fresh harness process; ±: half the "
                "95% CI of the median over rounds")
        if fewest < 6:
            note += (f" — with {fewest} rounds that interval is the rounds' \\[min, max], which holds the median "
                     f"with only {1 - 2 * 0.5 ** fewest:.0%} confidence; --rounds 6 or more for a full 95%")
        if with_kernel:
            note += "; green: the kernel's CI lies above the library's" + \
                ("; ≈: the CIs overlap, not clearly faster or slower" if overlap else "") + \
                ". A threshold needs such a clear win at its size and every larger one"
        console.print(note + ".", style="dim")
    for alg in bench.algorithms.values():
        if not with_kernel and alg.status == "ok":
            continue
        driver = alg.driver or {}
        about = escape(alg.kernel_name) + (f", driver {escape(driver['driver'])}" if driver.get("driver") else "") \
            + (f", {driver['kind']}" if driver.get("kind") else "")
        console.print(f"{alg.name} ({about}): {escape(verdict(alg))}")
    if with_kernel and not with_ci:
        console.print("One round: each figure is a single measurement, with no CI; thresholds compare those "
                      "figures (`--rounds` gives several).", style="dim")
    if not with_kernel:
        why = f"AF_ALG is not available here ({escape(bench.reason)})" if not bench.af_alg else "--user-only"
        console.print(f"[yellow]Only the library was timed[/]: {why}; there is no crossover to find.")
