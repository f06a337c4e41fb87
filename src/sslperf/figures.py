"""The figures a result may carry beside its samples (ops, wall_ns, cpu_ns): one declared registry, so that a
figure's name, unit and meaning are written once and every mode, output and importer refers to the constant here
rather than to a string. A result's `figures` holds numbers only, each figure a list; facts (what counted the
instructions, whether the inputs were deterministic, a note) are fields of the result itself.

How a figure's list lines up with the samples:
- "sample": one value per sample (the list is as long as `ops`);
- "round": one value per round of the mode (a loopback round's whole loop, a server's CPU time);
- "operation": a uniform sample of single operations (latencies), not tied to samples;
- "count": one value per connection count (`connections` says which).

Plain data: this module imports nothing of sslperf's."""

from __future__ import annotations

import numbers
from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    name: str
    unit: str           # ns, instructions, cycles, bytes, count, CPUs, id
    per: str            # sample | round | operation | count
    meaning: str


REGISTRY: dict[str, Figure] = {}


def _declare(name: str, unit: str, per: str, meaning: str) -> str:
    REGISTRY[name] = Figure(name, unit, per, meaning)
    return name


# -- what the scheduler records of every sample, in every mode ----------------------------------------------------
PROCESS = _declare("process", "id", "sample", "the worker process (or the round's fresh processes) that took the "
                   "sample; the unit the tests rest on")
ROUND = _declare("round", "count", "sample", "the round of the interleaved schedule the sample was taken in")
START = _declare("start_ns", "ns", "sample", "when the sample's round began on its library, after the run began: "
                 "read it beside the other libraries' to see the interleaving and plot drift")

# -- what the kernel did to a sample (in-memory cases: all their work is on the CPU, in one process) --------------
WAIT = _declare("wait_ns", "ns", "sample", "time the worker spent runnable but waiting for its CPU during the sample "
                "(the kernel's run delay): another task held the CPU, and the sample's wall time is not the "
                "library's alone")
SLICES = _declare("slices", "count", "sample", "times the worker was put on its CPU during the sample")
RETAKEN = _declare("retaken", "count", "sample", "times the sample was taken again, in its round, because it waited "
                   "for its CPU (the last taking stands)")

# -- the instruction tier -------------------------------------------------------------------------------------------
INSTRUCTIONS = _declare("instructions", "instructions", "sample", "instructions the sample's operations took "
                        "(callgrind or the CPU's own counter)")
CYCLES = _declare("cycles", "cycles", "sample", "CPU cycles the sample's operations took (perf only)")
REPORTED_CYCLES = _declare("reported_cycles_per_op", "cycles", "sample", "cycles per operation another tool "
                           "reported (wolfCrypt's benchmark, from rdtsc)")

# -- TLS in memory and across threads ------------------------------------------------------------------------------
CLIENT_CPU = _declare("client_cpu_ns", "ns", "round", "the client's (or writer's, or load generator's) CPU time")
SERVER_CPU = _declare("server_cpu_ns", "ns", "round", "the server's (or reader's) CPU time")
OP_WALL = _declare("op_wall_ns", "ns", "operation", "single operations' wall times (a uniform sample of at most 256 "
                   "per sample or thread), for latency percentiles")
PER_THREAD = _declare("per_thread", "count", "round", "operations each thread completed in the round")

# -- loopback requests (harness client, curl, QUIC) ---------------------------------------------------------------
CONNECT = _declare("connect_ns", "ns", "sample", "time to the TCP connection (QUIC: to the first packet)")
PRETRANSFER = _declare("pretransfer_ns", "ns", "sample", "time to a finished handshake")
TOTAL = _declare("total_ns", "ns", "sample", "time to the whole response")
LOOP = _declare("loop_ns", "ns", "round", "wall time of the round's whole request loop")
SERVED = _declare("served", "count", "round", "connections the server served in the round (its CPU time's divisor)")

# -- memory per connection -----------------------------------------------------------------------------------------
CONNECTIONS = _declare("connections", "count", "count", "connections held at once")
CLIENT_BYTES = _declare("client_bytes", "bytes", "count", "bytes the library holds per established client "
                        "connection")
SERVER_BYTES = _declare("server_bytes", "bytes", "count", "bytes per established server connection")
ESTABLISHED_BYTES = _declare("established_bytes", "bytes", "count", "bytes per established pair, both sides")
PEAK_BYTES = _declare("peak_bytes", "bytes", "count", "peak bytes per pair during the handshakes")

# -- real servers under load ---------------------------------------------------------------------------------------
SERVE_PERCENTILES = (50, 75, 90, 99)
LATENCY_PERCENTILE = {p: _declare(f"latency_p{p}_ns", "ns", "round", f"wrk's p{p} request latency")
                      for p in SERVE_PERCENTILES}
LATENCY_MEAN = _declare("latency_mean_ns", "ns", "round", "wrk's mean request latency")
LOGGED = _declare("logged", "count", "round", "requests the server logged")
RESUMED = _declare("resumed", "count", "round", "requests the server logged on a resumed session")
FAILED = _declare("failed", "count", "round", "requests that failed (wrk's errors)")
SERVER_CPUS = _declare("server_cpus", "CPUs", "round", "CPUs the server ran on")
CLIENT_CPUS = _declare("client_cpus", "CPUs", "round", "CPUs the load generator ran on")

# -- the user's program (sslperf exec): one sample is one run ---------------------------------------------------------
USER_CPU = _declare("user_ns", "ns", "sample", "the run's user CPU time (its process and the children it waited for)")
SYSTEM_CPU = _declare("system_ns", "ns", "sample", "the run's system CPU time (its process and the children it "
                      "waited for)")
MAX_RSS = _declare("max_rss_bytes", "bytes", "sample", "the largest resident set of the run's process or a child "
                   "it waited for")
RUN_SERVER_CPU = _declare("run_server_cpu_ns", "ns", "sample", "the CPU time the command's server (--server: every "
                          "thread of its processes) spent while the run ran")


class Figures(dict):
    """A result's figures: a mapping from declared names to lists of numbers, checked as it is made and as each
    figure is set, so that no result carries a figure the registry does not declare (a misspelt constant, a
    damaged file): ValueError, naming it."""

    def __init__(self, *args, **kwargs):
        super().__init__()
        self.update(*args, **kwargs)

    def __setitem__(self, name: str, values) -> None:
        super().__setitem__(name, _checked(name, values))

    def update(self, *args, **kwargs) -> None:
        for name, values in dict(*args, **kwargs).items():
            self[name] = values

    def setdefault(self, name: str, default=None):
        if name not in self:
            self[name] = default
        return self[name]


def _checked(name, values) -> list:
    if name not in REGISTRY:
        raise ValueError(f"`{str(name)[:60]}` is not a figure sslperf declares (sslperf.figures)")
    if not isinstance(values, list | tuple) or not all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                                                       for v in values):
        raise ValueError(f"the figure `{name}` is not a list of numbers")
    return list(values)


def unknown(names) -> list[str]:
    """The names among `names` that are not declared figures."""
    return sorted(set(names) - set(REGISTRY))
