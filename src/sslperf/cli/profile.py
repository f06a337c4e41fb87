"""`sslperf profile`: where one case spends its time, on one library or two
side by side."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sslperf import profile as profiling
from sslperf import suites
from sslperf.cli.common import certificates, find_libs

console = Console(highlight=False, soft_wrap=True)
progress = Console(stderr=True, highlight=False, soft_wrap=True)


@click.command()
@click.argument("case_id", metavar="CASE")
@click.option("--lib", "-l", "lib_name", required=True, help="Library to profile.")
@click.option("--vs", "vs_name", help="A second library: both side by side, and the functions whose share changed "
                                      "most.")
@click.option("--tool", type=click.Choice(["auto", "perf", "callgrind"]), default="auto", show_default=True,
              help="perf samples CPU time (needs perf_event_open); callgrind counts instructions on a simulated "
                   "CPU (slow, deterministic, works anywhere). auto: perf when `perf record` works here.")
@click.option("--seconds", type=click.FloatRange(0.1, 600), default=5.0, show_default=True,
              help="How long the loop runs per library (under callgrind: simulated, so far fewer operations).")
@click.option("--iterations", type=click.IntRange(1, 10**9), help="Run exactly this many operations instead.")
@click.option("--top", type=click.IntRange(1, 200), default=15, show_default=True, help="Functions per table.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Directory for the raw profiles, the tool's reports and profile.json "
                   "[default: sslperf-profile/TIME-CASE].")
@click.option("--json", "as_json", is_flag=True, help="Print profile.json instead of tables.")
def profile(case_id, lib_name, vs_name, tool, seconds, iterations, top, out, as_json) -> None:
    """Profile one case (a `speed`, `api` or `tls` case id) on a library:
    the top functions by self and by inclusive cost. With --vs, two libraries
    side by side and the functions whose share changed most, as seed 001
    found `sa_doall` and `ossl_method_store_cache_flush` in OpenSSL 3.0.

    Only the harness's timed loop is profiled; keys, contexts and the checked
    first operation are made before it. Built libraries are static and keep
    their symbol table, so names are real; the `debug-symbols` variant adds -g.

    \b
    Examples:
      sslperf profile tls/handshake/tls1.3/x25519/ecdsa-p256/new --lib openssl-1.1.1w --vs openssl-3.0
      sslperf profile sig/ecdsa-p256/sign --lib openssl-3.6 --tool callgrind --iterations 200
    """
    case = suites.parse_case(case_id)
    libs = find_libs((lib_name, vs_name) if vs_name else (lib_name,))
    chosen, why = profiling.choose_tool(tool)
    out = out or Path("sslperf-profile") / f"{time.strftime('%Y%m%d-%H%M%S')}-{case.id.replace('/', '_')}"
    out.mkdir(parents=True, exist_ok=True)
    progress.print(f"profiling with {chosen}: {why}")
    needs_certs = case.family in ("tls", "api")
    profiles = []
    with certificates(libs[0]) if needs_certs else contextlib.nullcontext() as cert_dir:
        env = {"SSLPERF_CERT_DIR": str(cert_dir)} if cert_dir else {}
        for lib in libs:
            how_long = f"{iterations} operations" if iterations else f"{seconds:g} s"
            progress.print(f"  {lib.name}: {case.id}, {how_long} …")
            profiles.append(profiling.record(lib, case.id, chosen, out, seconds, iterations, env))
    result = {"case": case.id, "tool": chosen, "why": why, "out": str(out),
              "profiles": [p.to_dict() for p in profiles],
              "comparison": profiling.comparison(profiles[0], profiles[1], top) if len(profiles) == 2 else None}
    (out / "profile.json").write_text(json.dumps(result, indent=1))
    if as_json:
        click.echo(json.dumps(result, indent=1))
        return
    print_profiles(profiles, chosen, why, top, out)


def print_profiles(profiles, tool: str, why: str, top: int, out: Path) -> None:
    first = profiles[0]
    how = (f"perf, cpu-clock sampling at {profiling.PERF_FREQUENCY} Hz with DWARF call graphs" if tool == "perf"
           else "callgrind, instructions counted")
    console.print(f"[bold]Profile of {escape(first.case)}[/]")
    console.print(f"tool: {how} — {escape(why)}")
    console.print(f"profiled: {escape(first.scope)}")
    for p in profiles:
        console.print(f"[bold]{escape(p.lib)}[/] ({escape(p.version_string)}): {_cost_line(p)}")
        console.print(f"  names: {escape(p.symbols)}", style="dim")
    if len(profiles) == 2:
        a, b = profiles
        if a.cost_per_op:
            console.print(f"cost per operation ({escape(a.unit)}): {escape(b.lib)} / {escape(a.lib)} = "
                          f"[bold]×{b.cost_per_op / a.cost_per_op:.2f}[/]")
        console.print(_side_by_side(a, b, top))
        console.print(_changes_table(a, b, top, "self"))
        console.print(_changes_table(a, b, top, "inclusive"))
    else:
        console.print(_single_table(first, top, "self"))
        console.print(_single_table(first, top, "inclusive"))
    console.print(f"Raw profiles, the tool's reports and profile.json: {escape(str(out))}", style="dim")


def _cost_line(p) -> str:
    seconds = p.wall_ns / 1e9
    if p.tool == "callgrind":
        return (f"{p.ops:,} operations, {p.total:,} instructions in the loop: "
                f"[bold]{p.cost_per_op / 1e6:,.2f} M instructions per operation[/]")
    samples = f", {p.samples:,} samples" if p.samples else ""
    return (f"{p.ops:,} operations in {seconds:.1f} s{samples}: "
            f"[bold]{p.cpu_ns / max(p.ops, 1) / 1e3:,.1f} µs CPU per operation[/] (under perf)")


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}%"


def _single_table(p, top: int, by: str) -> Table:
    rows = p.top_self(top) if by == "self" else p.top_inclusive(top)
    title = (f"Top {top} functions by self cost (own code)" if by == "self" else
             f"Top {top} functions by inclusive cost (with what they call; frames around the whole loop left out)")
    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("function", overflow="fold")
    table.add_column("self", justify="right")
    table.add_column("inclusive", justify="right")
    for rank, f in enumerate(rows, 1):
        table.add_row(str(rank), escape(f.name), _pct(f.self_share), _pct(f.inclusive_share))
    return table


def _side_by_side(a, b, top: int) -> Table:
    table = Table(title=f"Top {top} functions by self cost, side by side (A = {escape(a.lib)}, B = {escape(b.lib)})",
                  title_justify="left")
    table.add_column("#", justify="right")
    for mine, other in (("A", "B"), ("B", "A")):
        table.add_column(mine, overflow="fold")
        table.add_column("self", justify="right")
        table.add_column(f"in {other}", justify="right", style="dim")
    left, right = a.top_self(top), b.top_self(top)
    for rank in range(max(len(left), len(right))):
        cells = [str(rank + 1)]
        for rows, other in ((left, b), (right, a)):
            if rank < len(rows):
                f = rows[rank]
                there = other.function(f.name)
                cells += [escape(f.name), _pct(f.self_share), _pct(there.self_share if there else 0.0)]
            else:
                cells += ["", "", ""]
        table.add_row(*cells)
    return table


def _changes_table(a, b, top: int, by: str) -> Table:
    note = "" if by == "self" else "; a call chain with equal shares is one row"
    table = Table(title=f"Changed most by {by} share, A → B in percentage points{note}", title_justify="left")
    table.add_column("function", overflow="fold")
    for label in ("A self", "B self", "Δ self", "A incl.", "B incl.", "Δ incl."):
        table.add_column(label, justify="right")
    for c in profiling.changed_most(a, b, top, by):
        name = escape(c.name) + (f" [dim](= {escape(', '.join(c.same_shares))})[/]" if c.same_shares else "")
        table.add_row(name, _pct(c.a_self), _pct(c.b_self), _delta(c.self_change),
                      _pct(c.a_inclusive), _pct(c.b_inclusive), _delta(c.inclusive_change))
    return table


def _delta(pp: float) -> str:
    return f"{pp:+.2f}"
