"""Terminal tables for a Run: one table per family group, libraries side by side. Each cell's first line is the
figure a reader wants, with its unit and 95% CI; with two libraries or more each library after the first has a
change column against the first (the rate's change, its 95% CI and the one verdict rule's symbol — ▲ faster,
▼ slower, ~ tie, ? too few to tell — as `sslperf compare RUN` gives it), and the row's significant winner is
marked ★. The tables fit 120 columns; `--details` adds the lines under each figure (each side's CPU, latency
percentiles, descstat lines)."""

from __future__ import annotations

from collections import defaultdict

from rich.console import Console, Group
from rich.markup import escape
from rich.table import Column, Table
from rich.text import Span, Text

from sslperf import families, negotiation
from sslperf.compare import deployed
from sslperf.libs import fips
from sslperf.report.long_table import LONG, LongTable
from sslperf.report.ranking import ALPHA, THRESHOLD, rank_case
from sslperf.report.terminal_kinds import KINDS, Kind, api_has_alternatives, ci_part, per_op, styled, threads_kind
from sslperf.results import Measurement, Run
from sslperf.stats import NOISY_CI
from sslperf.units import instructions, micros, rate, throughput
from sslperf.verdict import Change, Policy, judge, waits

__all__ = ["cell", "header", "print_run", "tables", "throughput", "rate", "micros", "instructions"]


def _headline(m: Measurement, metric: str, median: float) -> str:
    if metric == "instructions":
        per = m.instructions_per_op()
        return f"{per / m.bytes_per_op:.2f} instr/B" if m.unit == "bytes" and m.bytes_per_op else instructions(per)
    return throughput(median) if m.unit == "bytes" else rate(median)


def cell(m: Measurement | None, metric: str, fastest: bool, details: bool = False) -> Text:
    """A primitive's cell: its rate (throughput or op/s) ±CI, and with --details its cost per operation and cycles."""
    if m is None:
        return Text("")
    if m.status != "ok":
        return Text(m.status, style="dim")
    s = m.summary(metric)
    if s is None:
        return Text("no samples", style="dim")
    parts = [(" (one reported figure)", "dim")] if s.n == 1 else [ci_part(s)]
    if details and m.unit == "ops" and metric != "instructions" and s.median:
        parts.append((f" ({micros(1e6 / s.median)})", "dim"))      # per_op's figure, from the summary at hand
    elif details and m.unit == "bytes" and metric == "instructions":
        parts.append((f" ({per_op(m, metric)})", "dim"))
    if (cycles := cycles_figure(m)) is not None:       # known for few results (perf, imports): always shown
        parts.append((f" {cycles}", "dim"))
    if fastest:
        parts.append((" ★", "bold green"))
    return _joined(_headline(m, metric, s.median), "bold green" if fastest else "", parts)


def _joined(first: str, style: str, parts: list[tuple[str, str]]) -> Text:
    """`first` in `style`, then each (text, style) of `parts`, as one Text made at once (a Text.append per part
    was most of the time a table of 80,000 rows took)."""
    spans, at = [], len(first)
    for piece, piece_style in parts:
        spans.append(Span(at, at + len(piece), piece_style))
        at += len(piece)
    return Text(first + "".join(piece for piece, _ in parts), style=style, spans=spans)


def cycles_figure(m: Measurement) -> str | None:
    """`0.11 cycles/B` beside a throughput, `29,504 cycles/op` beside a rate, where the cycles are known (perf's
    count beside the instructions, or another tool's report); None elsewhere."""
    per_op_cycles = m.cycles_per_op()            # once: cycles_per_byte is this over the bytes per operation
    if per_op_cycles is None:
        return None
    if m.unit == "bytes" and m.bytes_per_op:
        return f"{per_op_cycles / m.bytes_per_op:.2f} cycles/B"
    return f"{per_op_cycles:,.0f} cycles/op"


def change_text(change: Change | None) -> Text:
    """`▼ -63.6% [-65.0, -62.1]`: the rate's change against the first library and its 95% CI, in percent (a ratio's
    interval is not symmetric); ` cpu` after it when it rests on CPU time because samples waited for their CPU."""
    if change is None:
        return Text("")
    ci = f" [{(change.low - 1) * 100:+.1f}, {(change.high - 1) * 100:+.1f}]" if change.low is not None \
        and change.high is not None and change.high > change.low else ""
    style = {"faster": "bold", "slower": "bold", "~": "dim", "?": "dim"}[change.verdict]
    return Text(f"{change.symbol} {change.percent:+.1f}%{ci}{' cpu' if change.basis == 'cpu' else ''}", style=style)


class _Layout:
    """The columns of one table: the first, then each library, and after each library but the first its change
    against the first (when the table's figures decide a verdict)."""

    def __init__(self, run: Run, libs: list[str], metric: str, changes: bool):
        self.run, self.libs, self.metric, self.changes = run, libs, metric, changes and len(libs) > 1
        self.lib_runs = dict(run.settings.get("lib_runs") or {})
        self.policy = Policy(THRESHOLD, ALPHA)
        self.waited: list[waits.Basis] = []      # the rows whose samples waited for their CPU, as the rule saw them
        self.parameters: list[str] = []          # what the compared connections negotiated differently
        self.paired = False                      # a change rests on one run's paired rounds

    def columns(self, first: str, justify: str = "right") -> list:
        found = [Column(first)]
        for index, lib in enumerate(self.libs):
            found.append(Column(Text(lib), justify=justify))
            if self.changes and index:
                found.append(Column(Text("change"), justify="right"))
        return found

    def row_metric(self, per_lib: dict[str, Measurement]) -> str:
        """What the row's figures and changes rest on: the table's metric, or CPU time for every library of a row
        whose samples waited for their CPU (the verdict rule's waits.basis), so the figures read like the changes."""
        found = waits.basis([m for m in per_lib.values() if m.status == "ok"], self.metric)
        if found.reason is not None:
            self.waited.append(found)
        return "cpu" if found.metric == "cpu" else self.metric

    def row(self, per_lib: dict[str, Measurement], draw) -> list:
        """The row's cells; `draw(m, metric)` draws a library's figure."""
        base = per_lib.get(self.libs[0])
        metric = self.row_metric(per_lib)
        cells = []
        for index, lib in enumerate(self.libs):
            m = per_lib.get(lib)
            text = draw(m, metric) if m is not None and m.status == "ok" else None
            cells.append(Text(m.status if m else "", style="dim") if text is None else text)
            if self.changes and index:
                cells.append(change_text(self.change(base, m, list(per_lib.values()))))
        return cells

    def change(self, base: Measurement | None, m: Measurement | None,
               row: list[Measurement] | None = None) -> Change | None:
        """`m` against `base` by the verdict rule, on the basis of their `row` (what its figures are shown in)."""
        if base is None or m is None or base.status != "ok" or m.status != "ok":
            return None
        runs = (self.run_of(base.lib), self.run_of(m.lib))
        found = judge(base, m, self.metric, self.policy, paired=runs[0] == runs[1], runs=runs,
                      row=[x for x in row or () if x.status == "ok"] or None)
        self.paired = self.paired or (found is not None and found.method == "paired")
        if found is not None and found.parameters:
            self.parameters.append(f"{base.label}: {found.parameters}")
        return found

    def run_of(self, lib: str) -> str:
        return self.lib_runs.get(lib, self.run.id)

    def caption(self) -> str | None:
        if len(self.libs) < 2:
            return None
        said = (f"★: faster than the next best by the verdict rule (p < {ALPHA:g}, > {THRESHOLD:.0%}); no ★: a tie "
                "within the noise, or too few samples to tell")
        if self.changes:
            said += (f". change: the rate against {self.libs[0]} and, in brackets, its 95% CI (+ is faster); ▲ faster, "
                     "▼ slower, ~ tie, ? unknown (too few to tell, or its samples waited for a shared CPU)")
        return said

    def notes(self) -> str | None:
        """What the changes rest on, said under the table once it is filled: the paired basis (a change is not the
        ratio of the medians beside it) and the rows whose samples waited for their CPU."""
        said = []
        if self.parameters:
            said.append("as deployed, the connections differ — " + "; ".join(dict.fromkeys(self.parameters)))
        if self.paired:
            said.append("changes from one run are paired: each worker process's median of the round-by-round "
                        "ratios, combined across processes, not the ratio of the medians shown")
        if self.waited:
            count, total = sum(b.waited for b in self.waited), sum(b.samples for b in self.waited)
            cpu = sum(1 for b in self.waited if b.metric == "cpu")
            said.append(f"the workers' CPU was shared: {count} of {total} samples in {len(self.waited)} row(s) "
                        "waited for it, runnable, while another task ran; those are never the basis of a change"
                        + (f"; {cpu} row(s) marked cpu show CPU time, which leaves the waits out" if cpu else "")
                        + "; for wall time, rerun with the CPU to itself")
        return "; ".join(said) if said else None


def tables(run: Run, metric: str = "wall", details: bool = False) -> list:
    """Renderables: one table per group, then footnotes for n/a and errors."""
    libs = [lib.name for lib in run.libs]
    fastest = _fastest_in(run)
    by_group: dict[str, dict[str, dict[str, Measurement]]] = defaultdict(dict)
    for m in run.measurements:
        by_group[m.group].setdefault(m.case, {})[m.lib] = m
    out = []
    notes: dict[str, set[str]] = defaultdict(set)
    for group in families.ordered(by_group):
        rows = by_group[group]
        for per_lib in rows.values():
            for m in per_lib.values():
                if m.status != "ok" and m.reason:
                    notes[f"{m.status} on {m.lib}: {m.reason}"].add(m.algorithm)
        sample = next(iter(next(iter(rows.values())).values()))
        kind = families.table_of(group, sample.family)
        if kind == "rates":
            out.append(_rates_table(run, group, rows, libs, metric, fastest, details))
        else:
            everything = [m for per_lib in rows.values() for m in per_lib.values()]
            out.append(_kind_table(run, group, rows, libs, metric, fastest, details,
                                   threads_kind(everything, metric) if kind == "threads" else KINDS[kind]))
    if notes:
        lines = [f"  {escape(note)} ({escape(', '.join(sorted(algs)))})" for note, algs in sorted(notes.items())]
        out.append(Text.from_markup("[dim]" + "\n".join(lines) + "[/dim]"))
    found = [line for lib in libs[1:] for s in deployed.splits(run.measurements, libs[0], lib, metric,
                                                                 Policy(THRESHOLD, ALPHA)) for line in s.lines()]
    if found:
        out.append(Text("As deployed and pinned (the change split by the one verdict rule):\n" + "\n".join(found)))
    return out


def _rates_table(run: Run, group: str, rows, libs: list[str], metric: str, fastest, details: bool):
    sample = next(iter(next(iter(rows.values())).values()))
    unit = "throughput" if sample.unit == "bytes" or families.family(sample.family).throughput else "op/s"
    everything = [m for per_lib in rows.values() for m in per_lib.values() if m.status == "ok"]
    imported = [m for m in everything if _imported(m)]
    if metric == "instructions":
        what = "instructions per operation, median of the worker processes"
    elif everything and len(imported) == len(everything):
        what = (f"{unit}, the rate the imported tool reported: one figure, no CI"
                if all(len(m.reported_rates) == 1 for m in imported)
                else f"{unit}, the rates the imported tool reported: median ±95% CI of its repetitions")
    elif imported:
        what = f"{unit}, median ±95% CI, {metric} time; imported results: the one rate their tool reported"
    else:
        what = f"{unit}, median ±95% CI, {metric} time"
    layout = _Layout(run, libs, metric, changes=not imported)
    table = _long_if(len(rows), Table(*layout.columns("case"), title=f"{escape(group)} ({what})", title_justify="left",
                                      caption=layout.caption(), caption_justify="left"))
    for per_lib in rows.values():
        best = fastest(per_lib, metric)
        first = next(iter(per_lib.values()))
        table.add_row(Text(first.label), *layout.row(per_lib, lambda m, basis: cell(m, basis, m is best, details)))
    return _noted(table, layout)


def _noted(table, layout: _Layout):
    """The table with what its changes rest on added to its caption."""
    notes = layout.notes()
    if notes and table.caption is not None:
        table.caption = f"{table.caption}. {notes}"
    elif notes:
        table.caption = notes
    return table


def _kind_table(run: Run, group: str, rows, libs: list[str], metric: str, fastest, details: bool, kind: Kind):
    layout = _Layout(run, libs, metric, changes=kind.ranked)
    title = kind.title(group, metric)
    alternatives = kind is KINDS["api"] and api_has_alternatives(group)
    if alternatives:
        title += "; saving: against the first way, by the verdict rule"
    table = _long_if(len(rows), Table(*layout.columns(escape(kind.first_column)),
                                      title=f"{escape(group)} ({escape(title)})", title_justify="left",
                                      caption=layout.caption() if kind.ranked else None, caption_justify="left"))
    first_way: dict[str, Measurement] = {}

    def draw(m: Measurement, per_lib, metric: str) -> Text | None:
        drawn = kind.draw(m, metric, details)
        if drawn is None:
            return None
        first, under = drawn
        if alternatives and m.lib in first_way:
            saving = layout.change(first_way[m.lib], m)
            if saving is not None:
                first += f" ({saving.symbol} {saving.percent:+.0f}%)"
        elif alternatives:
            first_way[m.lib] = m
        s = m.summary(metric)
        best = kind.ranked and m is fastest(per_lib, metric)
        return styled(first, under, best, bool(s and s.ci_half_width > NOISY_CI))

    for per_lib in rows.values():
        first = next(iter(per_lib.values()))
        label = kind.label(first) if kind.label else first.label
        shown = negotiated_column(per_lib, libs)
        table.add_row(escape(label + (f" ({shown})" if shown else "")),
                      *layout.row(per_lib, lambda m, basis: draw(m, per_lib, basis)))
    return _noted(table, layout)


def negotiated_column(per_lib: dict[str, Measurement], libs: list[str]) -> str | None:
    """What a row's connections negotiated, short: where the libraries differ each one's group in column order
    (`X25519 / X25519MLKEM768`); where they agree, the group of a `default` case (or a HelloRetryRequest); None for
    a pinned case whose id says it already, or where nothing was recorded."""
    found = [negotiation.of(per_lib[lib]) for lib in libs if lib in per_lib and per_lib[lib].status == "ok"]
    shorts = [n.short() if n is not None else "?" for n in found]
    if not any(n is not None for n in found):
        return None
    if len(set(shorts)) == 1:       # a pinned case negotiates what its id says (it is checked): nothing to add
        pinned = next(iter(per_lib.values())).case.split("/")
        return None if negotiation.DEFAULT not in pinned and not shorts[0].endswith("+HRR") else shorts[0]
    return " / ".join(shorts)


def _long_if(count: int, table: Table) -> Table | LongTable:
    """`table`, or for `count` rows from LONG on (a large import) a LongTable like it, drawn line by line: rich's
    Table takes 0.2 ms a row."""
    return LongTable.like(table) if count >= LONG else table


def _imported(m: Measurement) -> bool:
    """A figure another tool reported (`sslperf import`): one value, nothing to test."""
    return m.reported_rates is not None and not m.ops


def _fastest_in(run: Run | None):
    """The function that picks a row's significant winner: the library alone
    in first place of the ranking (report.ranking), which pairs only the
    libraries of one interleaved run."""
    lib_runs = dict((run.settings.get("lib_runs") or {}) if run is not None else {})

    def run_of(lib: str) -> str:
        return lib_runs.get(lib, run.id) if run is not None else f"{lib} (run not known)"

    def pick(per_lib: dict[str, Measurement], metric: str) -> Measurement | None:
        if len(per_lib) < 2:                 # one library: nothing to rank it against
            return None
        places = rank_case(list(per_lib.values()), metric, run_of)
        alone = places and len(places[0]) == 1 and sum(len(p) for p in places) >= 2
        return next(m for m in per_lib.values() if m.lib == places[0][0]) if alone else None
    return pick


def header(run: Run) -> Group:
    env = run.environment
    if env.get("imported"):
        lines = [f"[bold]run {escape(run.id)}[/]: imported from {escape(str(run.settings.get('file', '?')))} "
                 f"({escape(str(run.settings.get('source', '?')))}, {escape(str(run.settings.get('format', '?')))})"]
    else:
        lines = [f"[bold]run {escape(run.id)}[/] on {escape(env.get('cpu_model') or '?')} ({env.get('cpus')} CPUs, "
                 f"kernel {escape(env.get('kernel') or '?')}, governor {escape(str(env.get('governor') or 'n/a'))})",
                 f"CPU flags: {escape(' '.join(env.get('cpu_flags') or [])) or 'none detected'}"]
    if env.get("probe"):        # measured where sslperf is not installed, by the driver of a probe it built
        probe = env["probe"]
        lines.append(f"measured by probe {escape(str(probe.get('id')))} ({escape(str(probe.get('target')))}) on host "
                     f"{escape(str(env.get('host')))}, imported; pinning: {escape(str(probe.get('pinning')))}"
                     + (f"; [bold yellow]{escape(str(probe['emulated']))}: timings not comparable with native "
                        "ones[/]" if probe.get("emulated") else "")
                     + (f"; run by {escape(str(probe['runner']))}" if probe.get("runner") else ""))
    if env.get("instruction_counter"):
        lines.append(f"instructions counted by {escape(str(env['instruction_counter']))}; hardware counter: "
                     f"{escape(env.get('hardware_instruction_counter') or '?')}")
    served = set(((run.settings.get("exec") or {}).get("servers") or {}).values())
    if len(served) == 1:            # one server for every library (the reverse's are under each library instead)
        lines.append(f"the command's server: {escape(str(served.pop()))}")
    placement = env.get("placement") or {}
    if "server_cpu" in placement:
        lines.append(f"loopback server pinned to CPU {placement['server_cpu']}, client to CPU {placement['client_cpu']}")
    if "thread_cpus" in placement:
        lines.append(f"threads on CPUs {', '.join(map(str, placement['thread_cpus']))}")
    if not env.get("imported") and "pinned_cpu" in env:
        where = f"pinned to CPU {env['pinned_cpu']}" if env["pinned_cpu"] is not None else "[yellow]not pinned[/]"
        lines.append(f"workers {where}; each case sampled in {run.settings.get('processes', 1)} fresh worker "
                     "processes per library, spread over the run"
                     + ("; fixed memory layout (no ASLR)" if run.settings.get("fixed_layout") else ""))
    if env.get("mask"):
        lines.append(f"[bold yellow]CPU mask {escape(str(env['mask']))} in force[/] "
                     f"(OPENSSL_ia32cap={escape(str(env.get('mask_env')))})")
    providers = env.get("providers") or {}
    for lib in run.libs:
        caps = f", capability vector {escape(lib.ia32cap)}" if lib.ia32cap else ""
        provider = f", [bold]{escape(fips.describe(providers[lib.name]))}[/]" if lib.name in providers else ""
        lines.append(f"  {escape(lib.name)}: {escape(lib.version_string)}{caps}{provider}")
    return Group(*[Text.from_markup(line) for line in lines])


def print_run(run: Run, console: Console, metric: str = "wall", details: bool = False) -> None:
    console.print(header(run))
    for renderable in tables(run, metric, details):
        console.print(renderable)
    for warning in run.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")
