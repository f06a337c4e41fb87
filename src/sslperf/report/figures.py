"""The PNG and SVG figures of a report (matplotlib), each readable on its own:
throughput against size per algorithm with the libraries as series, grouped
bars for signatures, key exchange and KEMs, version over version (versions_figure.py,
from the verdict rule), RSA/EC/FFDH scaling with the fitted `a` of the `openssl speed` plotting
write-up (the slow-down per doubled key size), TLS handshake CPU,
loopback latency distributions, real servers under load and thread sweeps (scale/plot.py)."""

from __future__ import annotations

import math
import re
import statistics
from collections import defaultdict

from sslperf import families
from sslperf import figures as named  # the declared figure names
from sslperf.report import versions_figure
from sslperf.plotting import palette
from sslperf.report.ranking import ALPHA, THRESHOLD
from sslperf.plotting.mpl import Figure, save, subplots
from sslperf.results import Measurement, Run
from sslperf.stats import doubling_fit
from sslperf.userfiles import Batch
from sslperf.verdict import Policy, judge, waits

# Throughput families draw rate against size; the other primitive families draw grouped bars.
SYMMETRIC_GROUPS = tuple(g for f in families.FAMILIES.values() if f.throughput for g in f.groups)
BAR_GROUPS = tuple(g for f in families.FAMILIES.values() if f.table == "rates" and not f.throughput for g in f.groups)
# Key sizes for the scaling fits, by algorithm name.
SCALING = {
    "RSA": (r"rsa-(\d+)", "sig"),
    "ECDSA (NIST curves)": (r"ecdsa-p(\d+)", "sig"),
    "ECDH (NIST curves)": (r"ecdh-p(\d+)", "kex"),
    "FFDH": (r"ffdh-(\d+)", "kex"),
}


def _ok(measurements: list[Measurement], metric: str) -> list[Measurement]:
    return [m for m in measurements if m.status == "ok" and m.summary(metric) is not None]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _libs(run: Run) -> list[str]:
    return [lib.name for lib in run.libs]


def _change(run: Run, base: Measurement, other: Measurement, metric: str, row: list[Measurement]):
    """The one verdict rule's change of `other` against `base`, as the terminal table asks it (report.ranking's
    threshold and alpha; paired when both come from one run of a merged report; the basis of their row)."""
    lib_runs = run.settings.get("lib_runs") or {}
    runs = (lib_runs.get(base.lib, run.id), lib_runs.get(other.lib, run.id))
    return judge(base, other, metric, Policy(THRESHOLD, ALPHA), paired=runs[0] == runs[1], runs=runs, row=row)


def _mark(change) -> str:
    """`▲ +12%` above a bar: the table's symbol and change."""
    return "?" if change.verdict == "?" else f"{change.symbol} {change.percent:+.0f}%"


def throughput_by_size(run: Run, files: Batch, formats: tuple[str, ...], metric: str = "wall") -> list[Figure]:
    """One figure per group/operation/workload: a panel per algorithm,
    throughput (GB/s) against buffer size, one line per library with its CI."""
    figures = []
    panels: dict[tuple, dict[str, list[Measurement]]] = defaultdict(lambda: defaultdict(list))
    for m in _ok(run.measurements, metric):
        if m.group in SYMMETRIC_GROUPS and m.size:
            panels[(m.group, m.operation, m.workload)][m.algorithm].append(m)
    libs = _libs(run)
    for (group, operation, workload), by_alg in panels.items():
        algs = [a for a, ms in by_alg.items() if len({m.size for m in ms}) >= 2]
        if not algs:
            continue
        cols = min(3, len(algs))
        rows = math.ceil(len(algs) / cols)
        fig, axes = subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
        for ax, alg in zip(axes.flat, algs):
            for lib in libs:
                points = sorted((m.size, m.summary(metric)) for m in by_alg[alg] if m.lib == lib)
                if not points:
                    continue
                sizes = [p[0] for p in points]
                med = [p[1].median / 1e9 for p in points]
                err = [[(p[1].median - p[1].ci_low) / 1e9 for p in points],
                       [(p[1].ci_high - p[1].median) / 1e9 for p in points]]
                ax.errorbar(sizes, med, yerr=err, marker="o", ms=3, capsize=2, label=lib)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")      # a 2x gap looks the same at 16 B as at 16 KiB
            ax.set_title(alg, fontsize=10)
            ax.set_xlabel("buffer size (bytes)")
            ax.set_ylabel("GB/s (log)")
            ax.grid(alpha=0.3)
        for ax in list(axes.flat)[len(algs):]:
            ax.axis("off")
        handles, labels = axes.flat[0].get_legend_handles_labels()
        fig.tight_layout()
        fig.legend(handles, labels, loc="upper center", ncol=min(len(labels), 3), bbox_to_anchor=(0.5, 0.0),
                   fontsize=8)
        title = f"{group}: {operation}" + (" (openssl speed's loop)" if workload == "speed-compat" else
                                            "" if workload == "record" else f" [{workload}]")   # afalg: kernel, user
        fig.suptitle(title, y=1.03)
        name = _slug(f"throughput-{group}-{operation}-{workload}")
        figures.append(Figure(name, title, save(fig, files, name, formats)))
    return figures


def operations_bars(run: Run, files: Batch, formats: tuple[str, ...], metric: str = "wall") -> list[Figure]:
    """Op/s per operation as small multiples: a panel per case, each with its
    own linear axis from zero (cases differ by orders of magnitude, and a
    shared log axis would make a 30% gap look like 8x), the libraries side by
    side with their CI."""
    figures = []
    libs = _libs(run)
    colours = {lib: palette.series_colour(i) for i, lib in enumerate(libs)}
    for group in BAR_GROUPS:
        ms = [m for m in _ok(run.measurements, metric) if m.group == group]
        if not ms:
            continue
        labels = list(dict.fromkeys(m.label for m in ms))
        cols = min(4, len(labels))
        rows = math.ceil(len(labels) / cols)
        fig, axes = subplots(rows, cols, figsize=(max(3.2 * cols, 0.5 * len(libs) * cols), 2.9 * rows + 0.6),
                                 squeeze=False)
        for ax, label in zip(axes.flat, labels):
            cells = {m.lib: m for m in ms if m.label == label}
            shown = waits.row_metric(list(cells.values()), metric)       # as the table's row: CPU where it is
            by_lib = {lib: m.summary(shown) for lib, m in cells.items()}
            present = [lib for lib in libs if lib in by_lib]
            ys = [by_lib[lib].median for lib in present]
            errs = [[by_lib[lib].median - by_lib[lib].ci_low for lib in present],
                    [by_lib[lib].ci_high - by_lib[lib].median for lib in present]]
            ax.bar(range(len(present)), ys, yerr=errs, capsize=2, color=[colours[lib] for lib in present])
            for x, lib in enumerate(present[1:] if present[:1] == libs[:1] else [], start=1):  # the table's changes
                change = _change(run, cells[present[0]], cells[lib], metric, list(cells.values()))
                if change is not None:
                    ax.annotate(_mark(change), (x, by_lib[lib].ci_high), textcoords="offset points", xytext=(0, 2),
                                ha="center", va="bottom", fontsize=7,
                                fontweight="bold" if change.verdict in ("faster", "slower") else "normal")
            ax.set_xticks(range(len(present)))
            ax.set_xticklabels(present, rotation=30, ha="right", fontsize=7)
            ax.set_ylim(bottom=0, top=max(ys) * 1.2 if ys and max(ys) > 0 else None)
            ax.set_title(label + (" (CPU time)" if shown != metric else ""), fontsize=9)
            ax.grid(axis="y", alpha=0.3)
        for ax in list(axes.flat)[len(labels):]:
            ax.axis("off")
        fig.supylabel(f"operations per second ({metric} time)", fontsize=9)
        fig.suptitle(f"{group}: median with 95% CI, each panel from zero; the change against {libs[0]} by the "
                     "verdict rule (▲ faster, ▼ slower, ~ tie, ? unknown)" if len(libs) > 1 else
                     f"{group}: median with 95% CI, each panel from zero", fontsize=9 if len(libs) > 1 else None)
        fig.tight_layout()
        name = _slug(f"ops-{group}")
        figures.append(Figure(name, group, save(fig, files, name, formats)))
    return figures


def scaling_fits(run: Run, files: Batch, formats: tuple[str, ...], metric: str = "wall") -> list[Figure]:
    """Rate against key size on log-log axes with the fitted doubling factor
    `a` (a doubling of the key size divides the rate by a)."""
    figures = []
    libs = _libs(run)
    for title, (pattern, family) in SCALING.items():
        series: dict[tuple[str, str], list[tuple[int, float]]] = defaultdict(list)
        for m in _ok(run.measurements, metric):
            match = re.fullmatch(pattern, m.algorithm)
            if m.family == family and match:
                series[(m.lib, m.operation)].append((int(match.group(1)), m.summary(metric).median))
        series = {k: sorted(v) for k, v in series.items() if len({s for s, _ in v}) >= 2}
        if not series:
            continue
        fig, ax = subplots(figsize=(6.4, 4.2))
        for lib in libs:
            for (name, op), points in series.items():
                if name != lib:
                    continue
                sizes, rates = zip(*points)
                fit = doubling_fit(list(sizes), list(rates))
                line = ax.plot(sizes, rates, marker="o", linestyle="none")[0]
                grid = [min(sizes) * (max(sizes) / min(sizes)) ** (i / 20) for i in range(21)]
                ax.plot(grid, [fit.predict(s) for s in grid], color=line.get_color(),
                        label=f"{lib} {op}: a = {fit.a:.2f}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("key size (bits)")
        ax.set_ylabel("operations per second")
        ax.set_title(f"{title}: each doubling of the key divides the rate by a")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
        name = _slug(f"scaling-{title}")
        figures.append(Figure(name, title, save(fig, files, name, formats)))
    return figures


def handshake_figures(run: Run, files: Batch, formats: tuple[str, ...], metric: str = "wall") -> list[Figure]:
    """TLS: in-memory handshakes as stacked client/server CPU bars per
    library, and loopback request latencies as distributions (box plots of
    pretransfer and total per library)."""
    figures = []
    libs = _libs(run)
    memory = [m for m in _ok(run.measurements, metric) if m.family == "tls" and m.figures
              and m.figure_micros_per_op(named.CLIENT_CPU) is not None]
    if memory:
        labels = list(dict.fromkeys(m.label for m in memory))
        fig, ax = subplots(figsize=(max(6.0, 0.7 * len(labels) * max(len(libs), 1)), 4.4))
        width = 0.8 / max(len(libs), 1)
        for index, lib in enumerate(libs):
            by_label = {m.label: m for m in memory if m.lib == lib}
            xs = [i + index * width for i, label in enumerate(labels) if label in by_label]
            if not xs:
                continue
            client = [by_label[l].figure_micros_per_op(named.CLIENT_CPU) / 1000 for l in labels if l in by_label]
            server = [by_label[l].figure_micros_per_op(named.SERVER_CPU) / 1000 for l in labels if l in by_label]
            bars = ax.bar(xs, client, width, label=f"{lib}: client")
            ax.bar(xs, server, width, bottom=client, color=bars.patches[0].get_facecolor(), alpha=0.45,
                   label=f"{lib}: server")
        ax.set_xticks([i + width * (len(libs) - 1) / 2 for i in range(len(labels))])
        ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=7)
        ax.set_ylim(bottom=0)
        ax.set_ylabel("CPU ms per handshake")
        ax.set_title("TLS handshakes in memory: client and server CPU")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7)
        figures.append(Figure("tls-handshakes", "TLS handshakes", save(fig, files, "tls-handshakes", formats)))
    loop = [m for m in run.measurements if m.family == "tls-loopback" and m.status == "ok"
            and (m.figures or {}).get(named.PRETRANSFER)]
    cases = list(dict.fromkeys(m.case for m in loop))
    if cases:
        fig, axes = subplots(1, len(cases), figsize=(4.2 * len(cases), 4.2), squeeze=False)
        for ax, case in zip(axes.flat, cases):
            ms = [m for lib in libs for m in loop if m.case == case and m.lib == lib]
            data, names = [], []
            for m in ms:
                data += [[v / 1e6 for v in m.figures[named.PRETRANSFER]], [v / 1e6 for v in m.figures[named.TOTAL]]]
                names += [f"{m.lib}\npretransfer", f"{m.lib}\ntotal"]
            ax.boxplot(data, showfliers=True)
            ax.set_xticks(range(1, len(names) + 1))
            ax.set_xticklabels(names, rotation=45, ha="right", fontsize=7)
            ax.set_ylabel("ms per request")
            ax.set_title(ms[0].label if ms else case, fontsize=9)
            ax.grid(axis="y", alpha=0.3)
        fig.suptitle("HTTPS over loopback: request latency distributions")
        fig.tight_layout()
        figures.append(Figure("tls-loopback", "HTTPS over loopback", save(fig, files, "tls-loopback", formats)))
    return figures


def bisect_figure(run: Run, files: Batch, formats: tuple[str, ...]) -> list[Figure]:
    """A stored bisect: the case's cost per operation at every release (or
    commit) it measured, in history order, with each found step marked."""
    search = run.settings.get("bisect")
    if not search:
        return []
    metric = search.get("metric", "wall")
    tokens = [p.split(" ")[0] for p in search.get("points", [])]
    cells = {m.lib: m for m in _ok(run.measurements, metric) if m.case == search.get("case")}
    placed = sorted((i, m) for lib, m in cells.items() for i, t in enumerate(tokens) if t == lib or lib.endswith(t))
    if not placed:
        return []
    per_op = ([m.instructions_per_op() / 1e6 for _, m in placed] if metric == "instructions"
              else [m.micros_per_op(metric) for _, m in placed])
    fig, ax = subplots(figsize=(max(6.0, 0.7 * len(tokens)), 4.2))
    ax.plot([i for i, _ in placed], per_op, marker="o", color=palette.SERIES[0])
    for boundary in search.get("boundaries", []):
        change = boundary.get("change") or {}
        x = (boundary["before"] + boundary["after"]) / 2
        ax.axvline(x, color=palette.SLOWER if boundary["kind"] == "step" else palette.TIE, ls="--", lw=1)
        if change.get("ratio"):       # the rate's ratio; the figure draws cost, its inverse
            ax.annotate(f"{(1 / change['ratio'] - 1) * 100:+.1f}%", (x, max(per_op) * 1.03), fontsize=8,
                        ha="center", va="bottom")
    ax.set_xticks(range(len(tokens)))
    ax.set_xticklabels(tokens, rotation=30, ha="right", fontsize=8)
    ax.set_ylim(0, max(per_op) * 1.15)
    unit = "M instructions" if metric == "instructions" else "µs"
    ax.set_ylabel(f"{unit} per operation (lower is better)")
    ax.set_title(f"bisect of {search.get('case')}: {search.get('status') or 'not finished'}")
    ax.grid(alpha=0.3)
    return [Figure("bisect", f"bisect of {search.get('case')}", save(fig, files, "bisect", formats))]


def serve_figure(run: Run, files: Batch, formats: tuple[str, ...]) -> list[Figure]:
    """Real servers under load: per case, each library's requests/s (median, 95% CI whiskers) above its server CPU
    time per request, and wrk's latency percentiles."""
    served = [m for m in run.measurements if m.family == "tls-serve" and m.status == "ok" and m.summary("cpu")]
    cases = list(dict.fromkeys(m.case for m in served))
    if not cases:
        return []
    libs = _libs(run)
    fig, axes = subplots(3, len(cases), figsize=(max(4.5, 0.55 * len(libs)) * len(cases), 9.5), squeeze=False)
    for column, case in enumerate(cases):
        ms = [m for lib in libs for m in served if m.case == case and m.lib == lib]
        xs = list(range(len(ms)))
        rate, cpu = [m.summary("wall") for m in ms], [m.summary("cpu") for m in ms]
        top, middle, bottom = axes[0][column], axes[1][column], axes[2][column]
        top.bar(xs, [s.median for s in rate], yerr=[[s.median - s.ci_low for s in rate],
                                                     [s.ci_high - s.median for s in rate]], capsize=3)
        top.set_title(ms[0].label, fontsize=9)
        top.set_ylabel("requests/s")
        middle.bar(xs, [1e6 / s.median for s in cpu], color=palette.SERIES[1])
        middle.set_ylabel("server CPU µs per request")
        for p, marker in zip((50, 90, 99), ("o", "s", "^")):
            bottom.plot(xs, [statistics.median(m.figures[named.LATENCY_PERCENTILE[p]]) / 1e6 for m in ms], marker=marker,
                        ls="", label=f"p{p}")
        bottom.set_ylabel("wrk latency, ms")
        bottom.legend(fontsize=7)
        for ax in (top, middle, bottom):
            ax.set_xticks(xs)
            ax.set_xticklabels([m.lib for m in ms], rotation=35, ha="right", fontsize=7)
            ax.set_ylim(bottom=0)
            ax.grid(axis="y", alpha=0.3)
    fig.suptitle("Real servers under load (wrk)")
    fig.tight_layout()
    return [Figure("tls-serve", "Real servers under load", save(fig, files, "tls-serve", formats))]


def all_figures(run: Run, files: Batch, formats: tuple[str, ...] = ("png", "svg"), metric: str = "wall",
                floors=None, originals: list[Run] | None = None) -> list[Figure]:
    """Every figure the run has data for; `floors` and `originals` (the runs `run` merges) are the verdict
    rule's inputs for the version figure, as for the page's verdicts."""
    return (bisect_figure(run, files, formats)
            + throughput_by_size(run, files, formats, metric) + operations_bars(run, files, formats, metric)
            + scaling_fits(run, files, formats, metric)
            + versions_figure.draw(run, files, formats, metric, floors, originals)
            + handshake_figures(run, files, formats, metric) + serve_figure(run, files, formats)
            + scale_figures(run, files, formats, metric))


def scale_figures(run: Run, files: Batch, formats: tuple[str, ...], metric: str = "wall") -> list[Figure]:
    """Thread sweeps (`sslperf scale`, `tls threads`): rate and efficiency against threads, as scale --plot draws."""
    from sslperf.scale import plot, sweep      # the threads mode's modules load only for a run that has them

    if not any(m.family == "threads" for m in run.measurements):
        return []
    return plot.figures(sweep.curves(run, metric), files, formats, _libs(run))
