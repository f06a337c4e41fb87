"""What `sslperf profile` prints: the tool and what it profiled, the cost
per operation, and tables of the top functions (one library) or of two side
by side and the functions whose share changed most; `as_dict` is the same
as data (profile.json, --json)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sslperf.profiling.diff import ShareChange, changed_most, comparison, largest_one_sided, lead
from sslperf.profiling.model import Profile
from sslperf.profiling.record import PERF_FREQUENCY


def as_dict(case_id: str, tool: str, why: str, out: Path, profiles: list[Profile], top: int) -> dict:
    """profile.json: the profiles, and with two the comparison of their `top` functions."""
    return {"case": case_id, "tool": tool, "why": why, "out": str(out),
            "profiles": [p.to_dict() for p in profiles],
            "comparison": comparison(profiles[0], profiles[1], top) if len(profiles) == 2 else None}


def print_profiles(profiles: list[Profile], tool: str, why: str, top: int, out: Path, console: Console) -> None:
    """One profile's top functions by self and by inclusive cost, or two
    side by side with the functions whose share changed most."""
    first = profiles[0]
    how = (f"perf, cpu-clock sampling at {PERF_FREQUENCY} Hz with DWARF call graphs" if tool == "perf"
           else "callgrind, instructions counted")
    console.print(f"[bold]Profile of {escape(first.case)}[/]")
    if len(profiles) == 2:
        console.print(f"[bold]{escape(lead_line(*profiles))}[/]")
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


def print_explanation(a: Profile, b: Profile, top: int, console: Console) -> None:
    """Why B costs what it does against A: the cost per operation of each
    and the functions whose self and inclusive shares moved most."""
    console.print(f"  [bold]{escape(lead_line(a, b))}[/]")
    console.print(f"  {escape(a.lib)}: {_cost_line(a)}")
    console.print(f"  {escape(b.lib)}: {_cost_line(b)}")
    if a.cost_per_op:
        console.print(f"  cost per operation ({escape(a.unit)}): ×{b.cost_per_op / a.cost_per_op:.3f}")
    console.print(_changes_table(a, b, top, "self"))
    console.print(_changes_table(a, b, top, "inclusive"))


def lead_line(a: Profile, b: Profile) -> str:
    """The one-line cause: `X509_STORE_load_file_ex: +12.1 points of inclusive share (B against A) (renamed: …)`,
    and the largest function only the dearer side has where it is larger than that change."""
    first = lead(a, b)
    if first is None:
        return f"No function's inclusive share moved ({b.lib} against {a.lib})."
    line = (f"{first.name}: {first.inclusive_change:+.1f} points of inclusive share ({b.lib} against {a.lib})"
            + _renamed(first, a, b))
    new = largest_one_sided(a, b)
    share = max(new.a_inclusive, new.b_inclusive) if new else 0.0
    if new and share > abs(first.inclusive_change) and (first.in_a and first.in_b):
        line += f"; only in {b.lib if not new.in_a else a.lib}: {new.name} at {share:.1f}%"
    return line


def _renamed(c: ShareChange, a: Profile, b: Profile) -> str:
    return f" (renamed: {c.renamed[0]} in {a.lib}, {c.renamed[1]} in {b.lib})" if c.renamed else ""


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
    for c in changed_most(a, b, top, by):
        name = escape(c.name) + (f" [dim]{escape(_renamed(c, a, b))}[/]" if c.renamed else "") \
            + (f" [dim](= {escape(', '.join(c.same_shares))})[/]" if c.same_shares else "")
        a_self, a_incl = (_pct(c.a_self), _pct(c.a_inclusive)) if c.in_a else ("absent", "absent")
        b_self, b_incl = (_pct(c.b_self), _pct(c.b_inclusive)) if c.in_b else ("absent", "absent")
        table.add_row(name, a_self, b_self, _delta(c.self_change), a_incl, b_incl, _delta(c.inclusive_change))
    return table


def _delta(pp: float) -> str:
    return f"{pp:+.2f}"
