"""Terminal tables for a Run: one table per family group, libraries side by
side, each figure its median with the 95% CI half-width, the fastest marked
★ only where compare's test finds it significantly faster than the next
best (a tie gets no mark, and each table's caption says so)."""

from __future__ import annotations

import statistics
from collections import defaultdict

from rich.console import Console, Group
from rich.markup import escape
from rich.table import Column, Table
from rich.text import Span, Text

from sslperf import families, figures
from sslperf.libs import fips
from sslperf.measure import catalog
from sslperf.measure.case_ids import parts_of
from sslperf.scale.efficiency import efficiency
from sslperf.report.long_table import LONG, LongTable
from sslperf.report.ranking import ALPHA, THRESHOLD, rank_case
from sslperf.results import Measurement, Run, cpu_per_request, latency_percentiles, serve_busy
from sslperf.stats import NOISY_CI, describe


def throughput(bytes_per_second: float) -> str:
    mb = bytes_per_second / 1e6
    return f"{mb / 1000:.2f} GB/s" if mb >= 1000 else f"{mb:.1f} MB/s"


def rate(ops_per_second: float) -> str:
    return f"{ops_per_second:,.0f} op/s" if ops_per_second >= 100 else f"{ops_per_second:,.1f} op/s"


def micros(us: float) -> str:
    return f"{us:,.1f} µs" if us >= 10 else f"{us:.2f} µs"


def instructions(count: float) -> str:
    return f"{count:,.0f} instr" if count >= 100 else f"{count:.1f} instr"


def per_op(m: Measurement, metric: str) -> str:
    """The cost of one operation: µs of time, or instructions."""
    return instructions(m.instructions_per_op()) if metric == "instructions" else micros(m.micros_per_op(metric))


def _headline(m: Measurement, metric: str, median: float) -> str:
    if metric == "instructions":
        per = m.instructions_per_op()
        return f"{per / m.bytes_per_op:.2f} instr/B" if m.unit == "bytes" and m.bytes_per_op else instructions(per)
    return throughput(median) if m.unit == "bytes" else rate(median)


def cell(m: Measurement | None, metric: str, fastest: bool) -> Text:
    if m is None:
        return Text("")
    if m.status != "ok":
        return Text(m.status, style="dim")
    s = m.summary(metric)
    if s is None:
        return Text("no samples", style="dim")
    parts = [(" (one reported figure)", "dim")] if s.n == 1 else [_ci_part(s)]
    if m.unit == "ops" and metric != "instructions" and s.median:
        parts.append((f" ({micros(1e6 / s.median)})", "dim"))      # per_op's figure, from the summary at hand
    elif m.unit == "bytes" and metric == "instructions":
        parts.append((f" ({per_op(m, metric)})", "dim"))
    if (cycles := cycles_figure(m)) is not None:
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


def tables(run: Run, metric: str = "wall") -> list:
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
        if kind != "rates":
            out.append(_TABLES[kind](group, rows, libs, metric, fastest))
            continue
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
        table = _long_if(len(rows), Table("case", *[Column(Text(lib), justify="right") for lib in libs],
                                          title=f"{escape(group)} ({what})", title_justify="left",
                                          caption=_star_caption(libs), caption_justify="left"))
        for case_id, per_lib in rows.items():
            best = fastest(per_lib, metric)
            first = next(iter(per_lib.values()))
            table.add_row(Text(first.label),
                          *[cell(per_lib.get(lib), metric, per_lib.get(lib) is best) for lib in libs])
        out.append(table)
    if notes:
        lines = [f"  {escape(note)} ({escape(', '.join(sorted(algs)))})" for note, algs in sorted(notes.items())]
        out.append(Text.from_markup("[dim]" + "\n".join(lines) + "[/dim]"))
    return out


def _append_ci(text: Text, s) -> None:
    text.append(*_ci_part(s))


def _ci_part(s) -> tuple[str, str]:
    """(` ±x.x%`, its style): the 95% CI half-width, highlighted when the figure is noisy."""
    return f" ±{s.ci_half_width * 100:.1f}%", "yellow" if s.ci_half_width > NOISY_CI else "dim"


def _lib_table(title: str, first_column: str, libs: list[str], justify: str = "right") -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column(first_column)
    for lib in libs:
        table.add_column(escape(lib), justify=justify)
    return table


def _status(m: Measurement | None) -> Text:
    return Text(m.status if m else "", style="dim")


def _long_if(count: int, table: Table) -> Table | LongTable:
    """`table`, or for `count` rows from LONG on (a large import) a LongTable like it, drawn line by line: rich's
    Table takes 0.2 ms a row."""
    return LongTable.like(table) if count >= LONG else table


def _fill(table: Table, rows: dict[str, dict[str, Measurement]], libs: list[str], draw, label=None) -> Table:
    """One row per case, one cell per library: `draw(m, per_lib)` draws a
    measured result (None: show its status); n/a, errors and gaps show their
    status."""
    table = _long_if(len(rows), table)
    for per_lib in rows.values():
        first = next(iter(per_lib.values()))
        cells = []
        for lib in libs:
            m = per_lib.get(lib)
            text = draw(m, per_lib) if m is not None and m.status == "ok" else None
            cells.append(_status(m) if text is None else text)
        table.add_row(escape(label(first) if label else first.label), *cells)
    return table


def _api_table(group: str, rows: dict[str, dict[str, Measurement]], libs: list[str], metric: str,
               fastest=None) -> Table:
    """µs per call of each way of doing the same work, and what it saves
    against the first (naive) way, per library."""
    alternatives = any(families.API_PREFIX + e["title"] == group and e["alternatives"] for e in catalog.api_cases())
    title = f"{escape(group)} (µs per call, median ±95% CI" + ("; saving vs the first way)" if alternatives else ")")
    naive: dict[str, float] = {}

    def draw(m: Measurement, per_lib) -> Text | None:
        s = m.summary(metric)
        if s is None:
            return None
        us = m.instructions_per_op() if metric == "instructions" else m.micros_per_op(metric)
        text = Text(per_op(m, metric))
        _append_ci(text, s)
        if m.lib in naive and alternatives:
            saving = 1 - us / naive[m.lib]
            text.append(f" ({-saving * 100:+.0f}%)", style="green" if saving > 0 else "red")
        else:
            naive[m.lib] = us
        if m.note:
            text.append(" †", style="dim")
        return text
    return _fill(_lib_table(title, "way", libs), rows, libs, draw)


def _tls_table(group: str, rows: dict[str, dict[str, Measurement]], libs: list[str], metric: str,
               fastest=None) -> Table:
    """µs per handshake (the client's and the server's CPU apart) and
    handshakes per second, libraries side by side, the fastest marked."""
    table = _lib_table(f"{escape(group)} (µs per handshake, median ±95% CI; client / server CPU; handshakes/s)",
                       "protocol group certificate client-SSL_CTX", libs)
    table.caption, table.caption_justify = _star_caption(libs), "left"

    def draw(m: Measurement, per_lib) -> Text | None:
        s = m.summary(metric)
        if s is None:
            return None
        best = m is fastest(per_lib, metric)
        text = Text(per_op(m, metric), style="bold green" if best else "")
        _append_ci(text, s)
        client, server = m.figure_micros_per_op(figures.CLIENT_CPU), m.figure_micros_per_op(figures.SERVER_CPU)
        if client is not None and server is not None:
            text.append(f"\n{micros(client)} / {micros(server)}", style="dim")
        if metric != "instructions":
            text.append(f"\n{s.median:,.0f}/s" + (" ★" if best else ""), style="bold green" if best else "")
        _append_latencies(text, m, 1e3, "µs")
        return text
    return _fill(table, rows, libs, draw)


def _append_latencies(text: Text, m: Measurement, scale: float, unit: str) -> None:
    """A line of each handshake's wall-time percentiles, where the case kept them."""
    found = latency_percentiles(m)
    if found:
        text.append("\n" + " ".join(f"p{p} {v / scale:,.0f}" for p, v in found.items()) + f" {unit}", style="dim")


def _transfer_table(group: str, rows: dict[str, dict[str, Measurement]], libs: list[str], metric: str,
                    fastest=None) -> Table:
    """Application throughput after one handshake, and the writer's and the
    reader's CPU per write apart."""
    what = "instructions per byte" if metric == "instructions" else f"throughput, median ±95% CI, {metric} time"
    table = _lib_table(f"{escape(group)} ({what}; send / receive time per write)", "protocol suite write size",
                       libs)
    table.caption, table.caption_justify = _star_caption(libs), "left"

    def draw(m: Measurement, per_lib) -> Text:
        text = cell(m, metric, m is fastest(per_lib, metric))
        send, receive = m.figure_micros_per_op(figures.CLIENT_CPU), m.figure_micros_per_op(figures.SERVER_CPU)
        if send is not None and receive is not None:
            text.append(f"\n{micros(send)} / {micros(receive)}", style="dim")
        return text

    def label(first: Measurement) -> str:
        p = parts_of(first.case)
        if p["template"] == "tls/quic-transfer":
            return f"QUIC {p['suite']} {first.size:,} B" + (f" over {p['path']}" if p.get("path") else "")
        kernel = " kTLS" if p.get("kernel") == "ktls" else ""
        return f"{p['protocol']} {p['suite']} {first.size:,} B{kernel}"
    return _fill(table, rows, libs, draw, label)


def _memory_table(group: str, rows: dict[str, dict[str, Measurement]], libs: list[str], metric: str,
                  fastest=None) -> Table:
    """KiB per established connection, client / server, the handshake's peak,
    and what 10,000 connections hold; one line per connection count."""
    table = _lib_table(f"{escape(group)} (KiB per connection: client / server; peak during the handshake; "
                       "10,000 connections)", "protocol group certificate", libs)

    def draw(m: Measurement, per_lib) -> Text | None:
        x = m.figures or {}
        if not x.get(figures.CONNECTIONS):
            return None
        lines = [f"N={n:,}: {c / 1024:.1f} / {s / 1024:.1f} KiB, peak {p / 1024:.1f} KiB, "
                 f"{e * 10_000 / 2**20:,.0f} MiB for 10k pairs"
                 for n, c, s, p, e in zip(x[figures.CONNECTIONS], x[figures.CLIENT_BYTES], x[figures.SERVER_BYTES],
                                          x[figures.PEAK_BYTES], x[figures.ESTABLISHED_BYTES])]
        text = Text("\n".join(lines))
        text.append(f"\n{m.note}", style="dim")
        return text
    return _fill(table, rows, libs, draw)


def descstat(label: str, values_ns: list[int]) -> str:
    """A descstat line (as in the curl regression report), in seconds:
    n min max mean median p95 p99 stdev sum."""
    s = describe([v / 1e9 for v in values_ns])
    return (f"{label}: n={s.n} min={s.min:.4f} max={s.max:.4f} mean={s.mean:.4f} median={s.median:.4f} "
            f"p95={s.p95:.4f} p99={s.p99:.4f} stdev={s.stdev:.4f} sum={s.sum:.3f}")


def _loopback_table(group: str, rows: dict[str, dict[str, Measurement]], libs: list[str], metric: str,
                    fastest=None) -> Table:
    """Per request: connect, TLS done (pretransfer) and total, median and p95,
    with descstat lines (as in the curl regression report) under each cell."""
    table = _lib_table(f"{escape(group)} (ms per request: median, p95; connect → pretransfer → total)", "request",
                       libs, justify="left")

    def draw(m: Measurement, per_lib) -> Text | None:
        if not m.figures:
            return None
        text = Text()
        for key, name in ((figures.CONNECT, "connect"), (figures.PRETRANSFER, "pretransfer"), (figures.TOTAL, "total")):
            s = describe([v / 1e6 for v in m.figures[key]])
            text.append(f"{name} {s.median:.2f} ms (p95 {s.p95:.2f})\n", style="bold" if key != figures.CONNECT else "")
        cpu = cpu_per_request(m)
        if cpu:
            text.append(f"CPU per request: server {cpu[0] / 1e3:.0f} µs, client {cpu[1] / 1e3:.0f} µs\n")
        text.append(descstat("pretransfer", m.figures[figures.PRETRANSFER]) + "\n", style="dim")
        text.append(descstat("______total", m.figures[figures.TOTAL]), style="dim")
        if m.note:
            text.append(f"\n{m.note}", style="dim")
        return text
    return _fill(table, rows, libs, draw)


def _serve_table(group: str, rows: dict[str, dict[str, Measurement]], libs: list[str], metric: str,
                 fastest=None) -> Table:
    """Per server, scenario and library: requests/s (one handshake each on new connections), the server's CPU per
    request, wrk's latency percentiles, how busy each side was, and how many sessions were resumed."""
    table = _lib_table(f"{escape(group)} (median ±95% CI across rounds)", "server scenario protocol group cert", libs,
                       justify="left")

    def draw(m: Measurement, per_lib) -> Text | None:
        rate_s, cpu_s = m.summary("wall"), m.summary("cpu")
        if rate_s is None or cpu_s is None:
            return None
        best = fastest(per_lib, metric) if fastest else None
        text = Text(f"{rate_s.median:,.0f} requests/s", style="bold green" if m is best else "bold")
        _append_ci(text, rate_s)
        if parts_of(m.case).get("scenario") != "keepalive":
            text.append(" (a handshake each)", style="dim")
        text.append("\n" + f"server CPU {1e6 / cpu_s.median:.0f} µs/request")
        _append_ci(text, cpu_s)
        percentiles = [(p, (m.figures or {}).get(name)) for p, name in figures.LATENCY_PERCENTILE.items()]
        text.append("\nlatency " + " ".join(f"p{p} {statistics.median(v) / 1e6:.2f}" for p, v in percentiles if v)
                    + " ms", style="dim")
        shares = serve_busy(m)
        if shares:
            text.append(f"\nbusy: server {shares[0]:.0%}, client {shares[1]:.0%}",
                        style="yellow" if shares[1] > shares[0] and shares[1] > 0.9 else "dim")
        logged, resumed = sum((m.figures or {}).get(figures.LOGGED, [])), sum((m.figures or {}).get(figures.RESUMED, []))
        if logged:
            text.append(f"; resumed {resumed / logged:.0%}", style="dim")
        return text
    return _fill(table, rows, libs, draw)


def _threads_table(group: str, rows: dict[str, dict[str, Measurement]], libs: list[str], metric: str,
                   fastest=None) -> Table:
    """Each case's rate by thread count, and the scaling efficiency: rate at
    N / (N × rate at 1 thread), 100% when N threads do N times the work."""
    table = _lib_table(f"{escape(group)} (median ±95% CI; scaling efficiency)", escape("case [mode]: threads"),
                       libs)
    scaling = efficiency([m for per_lib in rows.values() for m in per_lib.values()], metric)

    def draw(m: Measurement, per_lib) -> Text | None:
        s = m.summary(metric)
        if s is None:
            return None
        text = Text(throughput(s.median) if m.unit == "bytes" else rate(s.median))
        text.append(f" ±{s.ci_half_width * 100:.1f}%", style="dim")
        if (m.case, m.lib) in scaling:
            text.append(f" {scaling[(m.case, m.lib)] * 100:.0f}%", style="bold")
        _append_latencies(text, m, 1e3, "µs per handshake")
        return text
    return _fill(table, rows, libs, draw)


def _star_caption(libs: list[str]) -> str | None:
    if len(libs) < 2:
        return None
    return (f"★: faster than the next best by compare's test (p < {ALPHA:g}, > {THRESHOLD:.0%}); "
            "no ★: a tie within the noise, or too few samples to tell")


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
    if env.get("instruction_counter"):
        lines.append(f"instructions counted by {escape(str(env['instruction_counter']))}; hardware counter: "
                     f"{escape(env.get('hardware_instruction_counter') or '?')}")
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


def print_run(run: Run, console: Console, metric: str = "wall") -> None:
    console.print(header(run))
    for renderable in tables(run, metric):
        console.print(renderable)
    for warning in run.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")


_TABLES = {"api": _api_table, "tls": _tls_table, "transfer": _transfer_table, "loopback": _loopback_table,
           "threads": _threads_table, "memory": _memory_table, "serve": _serve_table}
