"""How each kind of table draws a result in the terminal (report.terminal lays the tables out): a first line that
says what a reader wants — the figure, its unit, its 95% CI — and, with --details, the lines under it (each side's
CPU, latency percentiles, descstat lines, the server's busy share). Every figure carries its unit."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from collections.abc import Callable

from rich.text import Text

from sslperf import families, figures
from sslperf.cases import catalog
from sslperf.results import Measurement, cpu_per_request, latency_percentiles, serve_busy
from sslperf.scale.efficiency import efficiency
from sslperf.stats import NOISY_CI, describe
from sslperf.units import instructions, micros, rate, throughput


def per_op(m: Measurement, metric: str) -> str:
    """The cost of one operation: µs of time, or instructions."""
    return instructions(m.instructions_per_op()) if metric == "instructions" else micros(m.micros_per_op(metric))


def ci_part(s) -> tuple[str, str]:
    """(` ±x.x%`, its style): the 95% CI half-width, highlighted when the figure is noisy."""
    return f" ±{s.ci_half_width * 100:.1f}%", "yellow" if s.ci_half_width > NOISY_CI else "dim"


def descstat(label: str, values_ns: list[int]) -> str:
    """A descstat line (as in the curl regression report), in ms: n min max mean median p95 p99 stdev sum."""
    s = describe([v / 1e6 for v in values_ns])
    return (f"{label}: n={s.n} min={s.min:.3f} max={s.max:.3f} mean={s.mean:.3f} median={s.median:.3f} "
            f"p95={s.p95:.3f} p99={s.p99:.3f} stdev={s.stdev:.3f} sum={s.sum:.1f} (ms)")


def _latencies(m: Measurement, unit: str) -> str | None:
    found = latency_percentiles(m)
    return (" ".join(f"p{p} {v / 1e3:,.0f}" for p, v in found.items()) + f" {unit}") if found else None


@dataclass(frozen=True)
class Kind:
    """One kind of table: its title (after the group's name), its first column, and how a result is drawn —
    `draw(m, metric, details)` → (the first line, the lines under it), None for a result with nothing to show."""
    title: Callable[[str, str], str]                  # (group, metric) → what the figures are
    first_column: str
    draw: Callable[[Measurement, str, bool], tuple[str, list[str]] | None]
    label: Callable[[Measurement], str] | None = None
    ranked: bool = True                               # ★ and a change column: one figure decides


def _tls(m: Measurement, metric: str, details: bool):
    s = m.summary(metric)
    if s is None:
        return None
    first = per_op(m, metric) + ci_part(s)[0]          # the title says "per handshake"
    under = []
    if details:
        client, server = m.figure_micros_per_op(figures.CLIENT_CPU), m.figure_micros_per_op(figures.SERVER_CPU)
        if client is not None and server is not None:
            under.append(f"CPU: client {micros(client)} / server {micros(server)}")
        if metric != "instructions":
            under.append(f"{s.median:,.0f} handshakes/s")
        if (lat := _latencies(m, "µs per handshake")) is not None:
            under.append(lat)
    return first, under


def _api(m: Measurement, metric: str, details: bool):
    s = m.summary(metric)
    if s is None:
        return None
    return per_op(m, metric) + " per call" + ci_part(s)[0] + (" †" if m.note else ""), []


def _transfer(m: Measurement, metric: str, details: bool):
    s = m.summary(metric)
    if s is None:
        return None
    head = f"{m.instructions_per_op() / m.bytes_per_op:.2f} instr/B" if metric == "instructions" and m.bytes_per_op \
        else throughput(s.median)
    under = []
    send, receive = m.figure_micros_per_op(figures.CLIENT_CPU), m.figure_micros_per_op(figures.SERVER_CPU)
    if details and send is not None and receive is not None:
        under.append(f"per write: send {micros(send)} / receive {micros(receive)} CPU")
    if details and m.note:
        under.append(m.note)
    return head + ci_part(s)[0], under


def _transfer_label(first: Measurement) -> str:
    p = first.parts
    if p["template"] == "tls/quic-transfer":
        return f"QUIC {p['suite']} {first.size:,} B" + (f" over {p['path']}" if p.get("path") else "")
    kernel = " kTLS" if p.get("kernel") == "ktls" else ""
    return f"{p['protocol']} {p['suite']} {first.size:,} B{kernel}"


def _memory(m: Measurement, metric: str, details: bool):
    x = m.figures or {}
    if not x.get(figures.CONNECTIONS):
        return None
    rows = list(zip(x[figures.CONNECTIONS], x[figures.CLIENT_BYTES], x[figures.SERVER_BYTES], x[figures.PEAK_BYTES],
                    x[figures.ESTABLISHED_BYTES]))
    n, c, s, p, e = rows[-1]
    first = f"{c / 1024:.1f} / {s / 1024:.1f} KiB at N={n:,}"
    under = [f"N={n:,}: {c / 1024:.1f} / {s / 1024:.1f} KiB, peak {p / 1024:.1f} KiB, "
             f"{e * 10_000 / 2**20:,.0f} MiB for 10k pairs" for n, c, s, p, e in rows] if details else []
    return first, under + [m.note] if m.note else under        # how it was counted: always said


def _loopback(m: Measurement, metric: str, details: bool):
    if not m.figures or figures.TOTAL not in m.figures:
        return None
    medians = {name: statistics.median(m.figures[key]) / 1e6
               for key, name in ((figures.PRETRANSFER, "handshake"), (figures.TOTAL, "total"))}
    s = m.summary(metric)
    first = f"{medians['handshake']:.2f} / {medians['total']:.2f} ms" + (ci_part(s)[0] if s else "")
    if not details:
        return first, []
    under = [f"connect {statistics.median(m.figures[figures.CONNECT]) / 1e6:.2f} ms"]
    cpu = cpu_per_request(m)
    if cpu:
        under.append(f"CPU per request: server {cpu[0] / 1e3:.0f} µs, client {cpu[1] / 1e3:.0f} µs")
    under += [descstat("pretransfer", m.figures[figures.PRETRANSFER]), descstat("______total", m.figures[figures.TOTAL])]
    if m.note:
        under.append(m.note)
    return first, under


def _serve(m: Measurement, metric: str, details: bool):
    rate_s, cpu_s = m.summary("wall"), m.summary("cpu")
    if rate_s is None or cpu_s is None:
        return None
    handshakes = "" if m.parts.get("scenario") == "keepalive" else " (a handshake each)"
    first = f"{rate_s.median:,.0f} requests/s{ci_part(rate_s)[0]}{handshakes}"
    under = [f"server CPU {1e6 / cpu_s.median:.0f} µs/request{ci_part(cpu_s)[0]}"]
    if details:
        percentiles = [(p, (m.figures or {}).get(name)) for p, name in figures.LATENCY_PERCENTILE.items()]
        under.append("latency " + " ".join(f"p{p} {statistics.median(v) / 1e6:.2f}" for p, v in percentiles if v)
                     + " ms")
        shares = serve_busy(m)
        logged = sum((m.figures or {}).get(figures.LOGGED, []))
        busy = f"busy: server {shares[0]:.0%}, client {shares[1]:.0%}" if shares else ""
        resumed = f"resumed {sum((m.figures or {}).get(figures.RESUMED, [])) / logged:.0%}" if logged else ""
        under.append("; ".join(x for x in (busy, resumed) if x))
    return first, under


def _exec_title(metric: str) -> str:
    return {"wall": "wall time per run", "cpu": "CPU time per run"}.get(metric, "instructions per run, every process")


def _exec(m: Measurement, metric: str, details: bool):
    s = m.summary(metric)
    if s is None:
        return None
    if metric == "instructions":
        first = f"{instructions(m.instructions_per_op())}{ci_part(s)[0]}"
    else:
        first = f"{m.micros_per_op(metric) / 1e3:,.2f} ms{ci_part(s)[0]}"
    under = [m.note] if m.note else []          # the loader's answer: which libssl and libcrypto the runs mapped
    if details:
        f = m.figures or {}
        user, system, rss, server = (f.get(name) for name in (figures.USER_CPU, figures.SYSTEM_CPU, figures.MAX_RSS,
                                                              figures.RUN_SERVER_CPU))
        if user and system:
            under.append(f"user {statistics.median(user) / 1e6:,.2f} ms, system {statistics.median(system) / 1e6:,.2f} "
                         "ms (medians)")
        if rss:
            under.append(f"max RSS {max(rss) / 2**20:,.1f} MiB")
        if server:
            under.append(f"server CPU {statistics.median(server) / 1e6:,.2f} ms per run (median)")
    return first, under


def threads_kind(measurements: list[Measurement], metric: str) -> Kind:
    """Each case's rate by thread count, and the scaling efficiency (rate at N / (N × rate at 1 thread))."""
    scaling = efficiency(measurements, metric)

    def draw(m: Measurement, metric: str, details: bool):
        s = m.summary(metric)
        if s is None:
            return None
        first = (throughput(s.median) if m.unit == "bytes" else rate(s.median)) + ci_part(s)[0]
        if (m.case, m.lib) in scaling:
            first += f" · {scaling[(m.case, m.lib)] * 100:.0f}% efficiency"
        lat = _latencies(m, "µs per operation") if details else None
        return first, [lat] if lat else []
    return Kind(lambda group, metric: "rate, median ±95% CI; scaling efficiency", "case [mode]: threads", draw)


def _api_title(group: str, metric: str) -> str:
    return "µs per call, median ±95% CI"


KINDS: dict[str, Kind] = {
    "api": Kind(_api_title, "way", _api),
    "tls": Kind(lambda group, metric: "per handshake, median ±95% CI", "protocol group certificate client-SSL_CTX",
                _tls),
    "transfer": Kind(lambda group, metric: "throughput, median ±95% CI", "protocol suite write size", _transfer,
                     _transfer_label),
    "loopback": Kind(lambda group, metric: "ms per request to a finished handshake / to the whole response, "
                     "median; ± the request rate's 95% CI", "request", _loopback),
    "memory": Kind(lambda group, metric: "KiB per connection, client / server, at the largest N", "protocol group "
                   "certificate", _memory, ranked=False),
    "serve": Kind(lambda group, metric: "median ±95% CI across rounds", "server scenario protocol group cert", _serve),
    "exec": Kind(lambda group, metric: _exec_title(metric) + ", median ±95% CI",
                 "command", _exec),
}


def api_has_alternatives(group: str) -> bool:
    return any(families.API_PREFIX + e["title"] == group and e["alternatives"] for e in catalog.api_cases())


def styled(first: str, under: list[str], best: bool, noisy: bool) -> Text:
    """A cell: its first line (bold green for the row's significant winner, ★), the rest dim."""
    text = Text(first + (" ★" if best else ""), style="bold green" if best else "yellow" if noisy else "")
    for line in under:
        text.append("\n" + line, style="dim")
    return text
