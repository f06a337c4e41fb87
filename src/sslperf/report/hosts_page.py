"""hosts.html: the same library on several machines, side by side: what a fleet
operator choosing ciphers per machine type reads from a shared store. A
library is the same when its flavor, version and variant are; per host its
newest finished result of each case is taken. Hosts are told apart by name,
with their CPU model and crypto flags in the legend."""

from __future__ import annotations

from html import escape

from sslperf import families
from sslperf.report import page_frame
from sslperf.report.charts import Cell, chart
from sslperf.regressions.series import DEFAULT_VARIANTS
from sslperf.results import RecordedMeasurement

FINISHED = ("complete", "incomplete", "interrupted")     # a crashed or still-running run is not taken


def library(result: RecordedMeasurement) -> str:
    name = f"{result.flavor}-{result.version}" if result.version else result.measurement.lib
    name += f"+{result.variant}" if result.variant not in DEFAULT_VARIANTS else ""
    mask = result.environment.get("mask")
    return f"{name}@{mask}" if mask and not result.environment.get("machine_mask") else name


def host_legends(environments: dict[str, dict]) -> dict[str, str]:
    """Per host: `name: CPU model (flags)`, the flags being the crypto flags
    that not every host has (all hosts' full lists are in the page's table)."""
    flag_sets = {host: set(env.get("cpu_flags") or []) for host, env in environments.items()}
    common = set.intersection(*flag_sets.values()) if flag_sets else set()
    legends = {}
    for host, env in environments.items():
        differing = sorted(flag_sets[host] - common)
        missing = sorted(set().union(*flag_sets.values()) - flag_sets[host])
        flags = " ".join([f"+{f}" for f in differing] + [f"−{f}" for f in missing]) or "same crypto flags"
        legends[host] = f"{host}: {env.get('cpu_model') or 'CPU not recorded'} ({flags})"
    return legends


def hosts_table(environments: dict[str, dict]) -> str:
    rows = "".join(f"<tr><td>{escape(host)}</td><td>{escape(env.get('cpu_model') or '')}</td>"
                   f"<td>{escape(str(env.get('cpus') or ''))}</td><td>{escape(' '.join(env.get('cpu_flags') or []))}</td>"
                   f"<td>{escape(env.get('kernel') or '')}</td></tr>" for host, env in sorted(environments.items()))
    return ("<table class='facts'><tr><th>host</th><th>CPU</th><th>CPUs</th><th>crypto CPU flags</th>"
            f"<th>kernel</th></tr>{rows}</table>")


def newest_per_host(results: list[RecordedMeasurement]) -> dict[tuple[str, str, str], RecordedMeasurement]:
    """(library, host, case) → the newest finished result (results come oldest first)."""
    chosen: dict[tuple[str, str, str], RecordedMeasurement] = {}
    for result in results:
        if result.state in FINISHED and result.host:
            chosen[(library(result), result.host, result.measurement.case)] = result
    return chosen


def hosts_charts(results: list[RecordedMeasurement], libraries: tuple[str, ...] = (), floors=None) -> list[dict]:
    """Per library measured on two hosts or more, a chart per family group:
    its cases on x, one series per host."""
    chosen = newest_per_host(results)
    by_library: dict[str, dict[tuple[str, str], RecordedMeasurement]] = {}
    for (lib, host, case), result in chosen.items():
        if not libraries or lib in libraries or result.measurement.lib in libraries:
            by_library.setdefault(lib, {})[(host, case)] = result
    environments = {host: result.environment for (_, host, _), result in chosen.items()}
    legends = host_legends(environments)
    charts = []
    for lib, cells in sorted(by_library.items()):
        hosts_of: dict[str, set[str]] = {}
        for host, case in cells:
            hosts_of.setdefault(case, set()).add(host)
        shared = {case for case, hosts in hosts_of.items() if len(hosts) >= 2}     # side by side needs two
        hosts = list(dict.fromkeys(host for host, case in cells if case in shared))
        if len(hosts) < 2:
            continue
        groups: dict[str, dict[tuple[str, str], Cell]] = {}
        for (host, case), result in cells.items():
            if case in shared:
                groups.setdefault(result.measurement.group, {})[(host, case)] = Cell(result.measurement, result.run_id)
        for group in families.ordered(groups):
            group_cells = groups[group]
            cases = sorted({case for _, case in group_cells})
            labels = [next(c.measurement.label for (_, k), c in group_cells.items() if k == case) for case in cases]
            unit = next(iter(group_cells.values())).measurement.unit
            noise = {r.run_id: r.environment.get("noise") or {} for r in cells.values()}    # as Run.noise() reads it
            made = chart(f"hosts-{len(charts)}", f"{lib}: {group}", "bars", cases, labels, legends, group_cells, unit,
                         note=f"{len(hosts)} hosts; each host's newest finished result per case", floors=floors,
                         noise=noise)
            if made:
                charts.append(made)
    return charts


def render(charts: list[dict], results: list[RecordedMeasurement]) -> str:
    environments = {host: result.environment for (_, host, _), result in newest_per_host(results).items()}
    intro = (f"<p>Libraries measured on more than one of the hosts {escape(', '.join(sorted(environments)))}. "
             "Relative views give each host as a % of the baseline host, with the CI of the ratio across worker "
             "processes (Welch's test: different runs are never paired). A legend names the crypto CPU flags that "
             f"set its host apart; the full lists:</p>{hosts_table(environments)}")
    return page_frame.render("sslperf hosts", intro, page_frame.chart_divs(charts),
                       {"charts": charts, "default_view": "relative"})
