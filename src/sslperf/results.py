"""The one result model: a Run holds Measurements (one per case and library),
and every output — terminal tables, JSON, later the store, plots and the
HTML report — reads these records."""

from __future__ import annotations

import datetime as dt
import json
import statistics
import uuid
from dataclasses import asdict, dataclass, field

from sslperf import families, figures
from sslperf.cases.ids import Case, parts_of, shape
from sslperf.errors import SslperfError
from sslperf.stats import Summary, describe

METRICS = ("wall", "cpu", "instructions")
# The figures a result carries beside its samples are declared in sslperf.figures. Two facts that older runs kept
# among their figures (now the fields counter and deterministic) are still written under these keys by the store.
DETERMINISTIC_KEY = "deterministic_inputs"
COUNTER_KEY = "instruction_counter"
NEGOTIATED_KEY = "negotiated"            # a fact kept in the same bag (sslperf.negotiation)
LATENCY_PERCENTILES = (50, 75, 90, 99)


@dataclass
class Measurement:
    case: str
    family: str
    group: str
    algorithm: str
    operation: str
    size: int | None
    workload: str
    lib: str
    status: str                      # "ok", "n/a" or "error"
    reason: str | None = None
    unit: str = "ops"                # "bytes" (throughput) or "ops"
    bytes_per_op: int = 0
    ops: list[int] = field(default_factory=list)
    wall_ns: list[int] = field(default_factory=list)
    cpu_ns: list[int] = field(default_factory=list)
    note: str | None = None
    # Rates another tool reported (imports of `openssl speed` / `bssl speed`),
    # in bytes/s or op/s, used when there are no samples of our own.
    reported_rates: list[float] | None = None
    # Figures beside the samples, each a list of numbers, named in sslperf.figures (client_cpu_ns, instructions …).
    figures: dict[str, list[float]] | None = None
    counter: str | None = None           # what counted the instructions: "callgrind" or "perf" (the CPU's own)
    deterministic: bool | None = None    # the counts came from sslperf's fixed random stream: every process alike
    # TLS: what the checked connection negotiated (sslperf.negotiation.Negotiated's fields: codepoints, HRR, bytes)
    negotiated: dict | None = None

    def __setattr__(self, name, value) -> None:
        # Figures are typed: whatever mapping is given (a mode's dict, a stored or imported run's) is checked into
        # a figures.Figures, here and whenever the attribute is set again.
        if name == "figures" and value is not None and not isinstance(value, figures.Figures):
            value = figures.Figures(value)
        object.__setattr__(self, name, value)

    @classmethod
    def of(cls, case, lib: str, status: str = "ok", reason: str | None = None, **fields) -> Measurement:
        """A result of `case` (a sslperf.cases.ids.Case) on `lib` (its samples, unit and notes in `fields`, which may
        also say the operation as a table shows it)."""
        own = {"case": case.id, "family": case.family, "group": case.group, "algorithm": case.algorithm,
               "operation": case.operation, "size": case.size, "workload": case.workload}
        return cls(**{**own, "lib": lib, "status": status, "reason": reason, **fields})

    @property
    def parsed(self) -> Case | None:
        """The case this result measured, parsed (its shape: an imported id may name what the catalog lacks); None
        when no template reads the id."""
        return shape(self.case)

    @property
    def parts(self) -> dict[str, str | None]:
        """The named parts of its case id, with its template ({"template": "tls/handshake", "group": …})."""
        return parts_of(self.case)

    @property
    def label(self) -> str:
        """A row label for tables: `aes-128-gcm encrypt 16 B [speed-compat]`."""
        return families.label(self, lambda: self.parts)

    def rates(self, metric: str = "wall") -> list[float]:
        """Per-sample rate: bytes/s for throughput cases, operations/s otherwise;
        for instructions, bytes or operations per 10^9 instructions (higher is
        better, as for time, so every comparison reads the same way)."""
        if self.reported_rates is not None and not self.ops:
            return list(self.reported_rates) if metric != "instructions" else []
        if metric == "instructions":
            times = (self.figures or {}).get(figures.INSTRUCTIONS) or []
        else:
            times = self.wall_ns if metric == "wall" else self.cpu_ns
        scale = self.bytes_per_op if self.unit == "bytes" else 1
        return [ops * scale * 1e9 / ns for ops, ns in zip(self.ops, times) if ns > 0]

    def instructions_per_op(self) -> float | None:
        """Median instructions per operation (the deterministic tier), or None."""
        summary = self.summary("instructions")
        if summary is None or not summary.median:
            return None
        return 1e9 * (self.bytes_per_op if self.unit == "bytes" else 1) / summary.median

    def cycles_per_op(self) -> float | None:
        """Median CPU cycles per operation: counted by perf beside the instructions (figures.CYCLES), or as another
        tool reported them; None where neither is known."""
        found = self.figures or {}
        counted = [c / n for c, n in zip(found.get(figures.CYCLES) or [], self.ops) if n and c > 0]
        values = sorted(counted or [v for v in found.get(figures.REPORTED_CYCLES) or [] if v > 0])
        return statistics.median(values) if values else None

    def cycles_per_byte(self) -> float | None:
        """cycles_per_op over the bytes each operation processes (throughput cases only)."""
        per_op = self.cycles_per_op()
        return per_op / self.bytes_per_op if per_op is not None and self.unit == "bytes" and self.bytes_per_op \
            else None

    def summary(self, metric: str = "wall") -> Summary | None:
        rates = self.rates(metric)
        return describe(rates) if rates else None

    def figure_micros_per_op(self, key: str) -> float | None:
        """Median over samples of a per-sample figure (ns, sslperf.figures) per operation, in µs."""
        values = (self.figures or {}).get(key)
        if not values or not self.ops:
            return None
        per_op = sorted(v / n / 1000 for v, n in zip(values, self.ops) if n)
        return per_op[len(per_op) // 2] if per_op else None

    def micros_per_op(self, metric: str = "wall") -> float | None:
        summary = self.summary(metric)
        if summary is None or not summary.median:
            return None
        per_second = summary.median / (self.bytes_per_op if self.unit == "bytes" else 1)
        return 1e6 / per_second


@dataclass
class LibInfo:
    name: str
    flavor: str
    version: str
    version_string: str
    variant: str
    kind: str
    ia32cap: str | None = None      # the capability vector the library settled on


@dataclass
class Run:
    id: str
    started: str
    settings: dict
    environment: dict
    libs: list[LibInfo] = field(default_factory=list)
    measurements: list[Measurement] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    finished: str | None = None
    complete: bool = False
    # "running" (still going, or killed), "complete", "interrupted" or "crashed", set by
    # measure.recording.recorded; None for imports and merges until the store gives them one.
    state: str | None = None

    @staticmethod
    def new(settings: dict, environment: dict) -> Run:
        now = dt.datetime.now(dt.timezone.utc)
        return Run(f"{now:%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}", now.isoformat(timespec="seconds"), settings,
                   environment)

    def noise(self) -> dict:
        """What the run recorded of its noise (sslperf.verdict.run_noise): {"flags": [...], "spread": 0.03}, or {}
        for runs that recorded none (older ones, imports)."""
        return self.environment.get("noise") or {}

    def to_dict(self, with_summaries: bool = True) -> dict:
        data = asdict(self)
        if with_summaries:
            for record, measurement in zip(data["measurements"], self.measurements):
                record["summary"] = {m: (s.as_dict() if (s := measurement.summary(m)) else None) for m in METRICS}
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    @staticmethod
    def from_dict(data: dict) -> Run:
        fields = {k: v for k, v in data.items() if k not in ("libs", "measurements")}
        run = Run(**fields)
        run.libs = [LibInfo(**lib) for lib in data.get("libs", [])]
        run.measurements = [measurement_from_dict(m) for m in data.get("measurements", [])]
        return run


def measurement_from_dict(data: dict) -> Measurement:
    """A Measurement from its to_dict() form; one written before figures were typed (`extra`, with the counter
    and the deterministic flag among the figures) is read into the fields of today."""
    fields = {k: v for k, v in data.items() if k not in ("summary", "extra")}
    if "extra" in data and "figures" not in data:
        fields["figures"], facts = split_facts(data["extra"])
        fields.update(facts)
    return Measurement(**fields)


def split_facts(bag: dict | None) -> tuple[dict | None, dict]:
    """(the figures, the facts) of a bag that older runs kept as one: facts are what is not a list of numbers."""
    if not bag:
        return bag, {}
    facts = {}
    if COUNTER_KEY in bag:
        facts["counter"] = str(bag[COUNTER_KEY])
    if DETERMINISTIC_KEY in bag:
        facts["deterministic"] = bool(bag[DETERMINISTIC_KEY])
    if isinstance(bag.get(NEGOTIATED_KEY), dict):
        facts["negotiated"] = dict(bag[NEGOTIATED_KEY])
    return {k: v for k, v in bag.items() if isinstance(v, list) and k not in (COUNTER_KEY, DETERMINISTIC_KEY)}, facts


@dataclass(frozen=True)
class RecordedMeasurement:
    """A measurement as recorded in a stored run, with the facts of its run
    (id, start, host, source, state, environment, settings) and of its
    library (flavor, version, variant): what the history and hosts views read."""
    run_id: str
    started: str
    host: str
    source: str
    state: str
    environment: dict
    flavor: str
    version: str
    variant: str
    measurement: Measurement
    settings: dict = field(default_factory=dict)


def refuse_emulated_beside_native(runs: list[Run]) -> None:
    """A probe's run under an emulator (qemu-user) timed the emulator: it is read beside runs emulated alike only,
    never beside a native run (compare, a report across runs)."""
    said = {run.id: (run.environment.get("probe") or {}).get("emulated") for run in runs}
    if len(set(said.values())) < 2:
        return
    emulated = next(run_id for run_id, how in said.items() if how)
    other = next(run_id for run_id, how in said.items() if how != said[emulated])
    raise SslperfError(f"Run {emulated} was {said[emulated]}, and run {other} was not measured alike: an emulator's "
                       "timings say whether a probe works, not how fast its code runs, so the two are not read side "
                       "by side.", hint=f"Read the emulated run's libraries with each other (`sslperf compare "
                       f"{emulated}`), or run the probe on the machine it was built for.")


def merge(runs: list[Run]) -> Run:
    """Several runs as one, for a report across runs. A library measured in
    more than one run keeps its name when the runs measured different cases
    (say the TLS suite in one, loopback in another); when they measured the
    same case, it is told apart as NAME@MASK or NAME@RUN."""
    if len(runs) == 1:
        return runs[0]
    refuse_emulated_beside_native(runs)
    cases: dict[str, list[set[str]]] = {}
    for run in runs:
        for lib in run.libs:
            cases.setdefault(lib.name, []).append({m.case for m in run.measurements if m.lib == lib.name})
    clash = {name for name, sets in cases.items()
             if len(sets) > 1 and sum(len(s) for s in sets) != len(set().union(*sets))}
    # lib_runs: the run each (renamed) library came from, so that only libraries of one run are paired.
    merged = Run(f"{runs[0].id}+{len(runs) - 1}", runs[0].started,
                 {"merged_from": [run.id for run in runs], "lib_runs": {}}, runs[0].environment)
    seen: set[str] = set()
    for run in runs:
        tag = run.environment.get("mask") or run.id      # a CPU mask says more than a run id
        rename = {lib.name: f"{lib.name}@{tag}" if lib.name in clash else lib.name for lib in run.libs}
        for lib in run.libs:
            if rename[lib.name] in seen:     # one name over several runs: never paired with anything
                merged.settings["lib_runs"][rename[lib.name]] = f"{rename[lib.name]} in several runs"
            else:
                seen.add(rename[lib.name])
                merged.settings["lib_runs"][rename[lib.name]] = run.id
                merged.libs.append(LibInfo(**{**vars(lib), "name": rename[lib.name]}))
        merged.measurements += [Measurement(**{**vars(m), "lib": rename.get(m.lib, m.lib)}) for m in run.measurements]
        merged.warnings += run.warnings
    merged.complete = all(run.complete for run in runs)
    merged.finished = max((run.finished or "") for run in runs) or None
    return merged


def cpu_per_request(m: Measurement) -> tuple[float, float] | None:
    """Median server and client CPU time per request (ns) of a GET measurement, where both were counted."""
    found = m.figures or {}
    if m.status != "ok" or not found.get(figures.SERVER_CPU) or not found.get(figures.CLIENT_CPU):
        return None
    server = statistics.median(c / n for c, n in zip(found[figures.SERVER_CPU], found[figures.SERVED]))
    per_round = len(found[figures.TOTAL]) // len(found[figures.CLIENT_CPU])
    return server, statistics.median(c / per_round for c in found[figures.CLIENT_CPU])



def serve_busy(m: Measurement) -> tuple[float, float] | None:
    """(server, client) of a real server under load: the median share of their CPUs they kept busy (1.0: all of
    them throughout). A client busier than the server means the rate was the client's."""
    found = m.figures or {}
    if m.status != "ok" or not m.wall_ns or not found.get(figures.CLIENT_CPU) or not found.get(figures.SERVER_CPUS):
        return None
    server = statistics.median(c / w / n for c, w, n in zip(m.cpu_ns, m.wall_ns, found[figures.SERVER_CPUS]))
    client = statistics.median(c / w / n for c, w, n in zip(found[figures.CLIENT_CPU], m.wall_ns,
                                                              found[figures.CLIENT_CPUS]))
    return server, client


def latency_percentiles(m: Measurement) -> dict[int, float] | None:
    """p50, p75, p90 and p99 of each operation's wall time (ns), where the case kept them."""
    values = (m.figures or {}).get(figures.OP_WALL)
    if m.status != "ok" or not values:
        return None
    import numpy as np

    found = np.percentile(values, LATENCY_PERCENTILES)
    return {p: float(v) for p, v in zip(LATENCY_PERCENTILES, found)}
