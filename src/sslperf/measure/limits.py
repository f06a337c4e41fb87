"""The limits a measurement keeps, declared once: the measuring verbs' options take them (cli.options `int_range`
and `finite`), and a request sent as JSON (`sslperf measure-request`, what a fleet worker runs) is checked against
the same numbers (measure.request_check), so a request can ask for nothing the command line would refuse.

    click.option("--samples", type=int_range(limits.SAMPLES))
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bound:
    """A closed range of an option's values."""
    low: float
    high: float

    def __contains__(self, value) -> bool:
        return self.low <= value <= self.high

    def said(self) -> str:
        return f"{self.low:,g} to {self.high:,g}"


# ---- what the verbs' options take ------------------------------------------------------------------------------
TIME_MS = Bound(1, 10_000)              # --time: one sample's target wall time (ms); a TCP or QUIC transfer round's
SAMPLES = Bound(1, 1000)                # --samples per case and library
PROCESSES = Bound(1, 100)               # --processes: worker processes (passes) per case and library
ROUNDS = Bound(1, 100)                  # tls --rounds (each with fresh processes)
REQUESTS = Bound(1, 10_000)             # tls loopback/quic --requests: GETs per library per round
THREAD_SECONDS = Bound(0.1, 60)         # --thread-seconds, scale --seconds: one thread count's time per round
SCALE_ROUNDS = Bound(2, 100)            # scale --rounds
THREADS = Bound(1, 256)                 # each count of --threads and --clients
CONNECTIONS = Bound(1, 100_000)         # each count of tls memory --connections
COUNTS = 64                             # counts in one --threads, --clients or --connections list
SERVE_CONNECTIONS = Bound(1, 10_000)    # serve-load --connections (wrk's)
SERVE_SECONDS = Bound(1, 600)           # serve-load --seconds: the timed load of a round
SERVE_WARMUP = Bound(0, 60)             # serve-load --warmup
SERVE_ROUNDS = Bound(3, 100)            # serve-load --rounds
NOISE_RUNS = Bound(2, 20)               # noise --runs: the A/A experiment's back-to-back runs (a request's repeat)
NOISE_THRESHOLD = Bound(0, 100)         # noise --threshold, in %
PORT = Bound(1, 65_535)                 # serve-load --port
EXEC_RUNS = Bound(1, 10_000)            # exec --runs: timed runs per library per round
EXEC_WARMUP = Bound(0, 100)             # exec --warmup: untimed runs per library before each pass's first round
EXEC_TIMEOUT = Bound(1, 3600)           # exec --timeout: seconds one run may take

# ---- what only a request holds (the verbs set these themselves) -------------------------------------------------
TARGET_MS = Bound(0, TIME_MS.high)      # a settings' target_ms: tls memory sets 0, --metric instructions 0.5
WARMUP_SAMPLES = Bound(0, 10)           # samples thrown away before the first kept one (1 by default)
CPU = Bound(0, 8191)                    # a CPU number (Linux's largest NR_CPUS); checked against this machine's too
THREAD_MS = Bound(THREAD_SECONDS.low * 1000, THREAD_SECONDS.high * 1000)   # --thread-seconds in the mode's ms
ONE_THREAD_ROUNDS = Bound(1, 10)        # rounds of 1 thread per round of the others (2 by default)
WRK_THREADS = Bound(1, THREADS.high)    # wrk threads (one per client CPU)

# ---- the size of a request ---------------------------------------------------------------------------------------
REQUEST_BYTES = 1024 * 1024             # a request file (real ones are under 10 KB)
TEXT_CHARS = 4096                       # any free text in it: the source, a label
NAME_CHARS = 255                        # a case id (the store's VARCHAR(255))
LIB_NAME_CHARS = 100                    # a library name (real ones are under 40; errors quote it whole)
LABEL_KEY_CHARS = 64                    # a label's name
LIST_ITEMS = 10_000                     # cases or anything else listed (a full suite is a few hundred)
LIBS = 100                              # libraries (columns) of one run, and FIPS modules
EXEC_ARGS = 1000                        # arguments of one command (exec's, its --prepare, --setup, --cleanup)
LABELS = 32                             # labels of one request (a verb sets at most four)
