"""Measurement policy: what the verbs' options become before anything runs —
the runner's settings (sample time, samples, processes, the CPU; the batch
counted under valgrind), which TLS measurement was asked for, and the
limits a request must keep (a thread-scaling run that would take an hour is
refused before it starts)."""

from __future__ import annotations

from dataclasses import dataclass

from sslperf.errors import SslperfError
from sslperf.measure import instructions, netpath, pinning
from sslperf.measure.netpath import NetPath
from sslperf.measure.runner import PROCESSES, Settings

INSTRUCTIONS_BATCH_MS = 0.5       # native time of the first counted batch (the second is twice as long; under valgrind ~50× longer)
INSTRUCTIONS_PROCESSES = 3        # one count per process; counts repeat, so few are needed
THREAD_ROUNDS = 3                 # every thread count at least this many times, interleaved
TRANSFER_TCP_ROUNDS = 3           # transfer over TCP: at least this many fresh server/client pairs
TRANSFER_TCP_MIN_MS = 250         # a shorter round is mostly connection set-up
THREADS_LIMIT_MINUTES = 10        # a longer thread-scaling request is refused before it starts
MAX_THREADS = 256
MAX_CONNECTIONS = 100_000


def settings(time_ms: float, samples: int, cpu: int | None, no_pin: bool, processes: int | None,
             mask: str | None = None, metric: str = "wall", fixed_layout: bool = False) -> Settings:
    """The runner's Settings from the verbs' options (the CPU checked before anything runs)."""
    if metric == "instructions":
        instructions.valgrind()             # missing valgrind: say so before anything runs
        # Counts with deterministic inputs repeat exactly: unless --processes
        # says otherwise, such a library is counted once (the others in 3).
        return Settings(INSTRUCTIONS_BATCH_MS, processes or INSTRUCTIONS_PROCESSES, mask,
                        processes=processes or INSTRUCTIONS_PROCESSES, cpu=pinning.choose(cpu, not no_pin),
                        counter="instructions", count_exact_once=processes is None)
    return Settings(time_ms, samples, mask, processes=processes or PROCESSES, cpu=pinning.choose(cpu, not no_pin),
                    fixed_layout=fixed_layout)


def counts(text: str, option: str, most: int) -> list[int]:
    """`1,2,4` → [1, 2, 4]; anything else is a one-paragraph error."""
    try:
        found = sorted({int(part) for part in text.split(",")})
    except ValueError:
        found = []
    if not found or found[0] < 1 or found[-1] > most:
        raise SslperfError(f"`{text}` is not a list of counts between 1 and {most:,}, e.g. {option} 1,2,4.")
    return found


def check_threads(cases: list, libs: list, thread_counts: list[int], seconds: float) -> None:
    """Refuse a thread-scaling request longer than THREADS_LIMIT_MINUTES."""
    minutes = len(cases) * len(libs) * len(thread_counts) * THREAD_ROUNDS * seconds / 60
    if minutes > THREADS_LIMIT_MINUTES:
        raise SslperfError(f"--threads runs every case for {seconds:g} s per thread count, {THREAD_ROUNDS} rounds "
                           f"each: {len(cases)} cases on {len(libs)} libraries would take about {minutes:.0f} "
                           "minutes.", hint="Choose a few cases with --case or --filter (or fewer thread counts).")


@dataclass(frozen=True)
class TlsRequest:
    """What `sslperf tls` was asked to measure: the mode and its own settings, checked."""
    mode: str                              # runner | loopback | transfer-tcp | quic | quic-transfer |
    #                                        quic-memory | quic-threads | memory | threads
    seconds: float = 0.25                  # transfer-tcp: per round
    rounds: int = 3                        # transfer-tcp and threads: rounds of every shape or thread count
    requests: int = 30                     # loopback: GETs per measurement
    client: str = "harness"                # loopback: harness | curl | both
    curl: str | None = None                # loopback: which curl
    server: object | None = None           # loopback: the server's library (None: the client's)
    threads: tuple[int, ...] = ()          # threads: the thread counts
    thread_seconds: float = 2.0
    thread_mode: str = "shared"
    connections: tuple[int, ...] = ()      # memory, quic-memory: connection counts
    chosen: bool = False                   # the user chose the cases (else each mode's own pattern)
    path: NetPath = NetPath()              # quic, quic-transfer: the network path (emulated or loopback as it is)


def tls_request(loopback: bool, transfer: bool, memory: bool, thread_list: str | None, client: str,
                thread_mode: str, connections: str, time_ms: float, samples: int, **rest) -> TlsRequest:
    """The one measurement the `tls` options ask for; a combination that is
    two measurements is refused before anything runs."""
    quic = rest.pop("quic", False)
    rest["path"] = netpath.parse(rest.pop("path", None))
    if rest["path"].emulated and not quic:
        raise SslperfError("--path emulates a network path for QUIC; it needs --quic.",
                           hint="e.g. `sslperf tls --quic --transfer --path rtt=50ms --lib openssl-3.6`.")
    chosen = [name for name, on in (("--loopback", loopback), ("--quic", quic), ("--threads", thread_list),
                                    ("--memory", memory)) if on]
    if quic and thread_list:      # QUIC from N client threads at once, beside TCP+TLS 1.3
        chosen.remove("--threads")
        if transfer or memory:
            raise SslperfError("--quic --threads measures GETs from N client threads at once; it does not go with "
                               "--transfer or --memory.", hint="Run them one after the other.")
    if quic and memory:           # QUIC's memory per connection, beside TLS 1.3's
        chosen.remove("--memory")
        if rest["path"].emulated:
            raise SslperfError("--memory counts the bytes a connection holds once established; a network path "
                               "does not change them, so --path does not go with it.",
                               hint="Drop --path, or measure GETs or transfers over it (--quic [--transfer]).")
    if client != "harness" and not loopback:
        raise SslperfError("--client chooses who makes the loopback requests; it needs --loopback.",
                           hint="e.g. `sslperf tls --loopback --client curl --lib openssl-3.0`.")
    if transfer and memory:       # transfer cases go with threads or over loopback, not with memory
        chosen.insert(0, "--transfer")
    if len(chosen) > 1:
        raise SslperfError(f"{' and '.join(chosen)} are different measurements; give one of them.",
                           hint="Run them one after the other.")
    if thread_mode == "shared" and thread_list and transfer:
        raise SslperfError("--thread-mode shared shares one SSL_CTX between handshakes; bulk transfers run on "
                           "connections of their own.", hint="Use --thread-mode own (or libctx) with --transfer.")
    mode = ("transfer-tcp" if loopback and transfer else "loopback" if loopback
            else "quic-transfer" if quic and transfer else "quic-memory" if quic and memory
            else "quic-threads" if quic and thread_list else "quic" if quic
            else "memory" if memory else "threads" if thread_list else "runner")
    seconds, rounds = (max(time_ms, TRANSFER_TCP_MIN_MS) / 1000, max(samples // 2, TRANSFER_TCP_ROUNDS)) \
        if mode in ("transfer-tcp", "quic-transfer") else (time_ms / 1000, max(samples // 3, THREAD_ROUNDS))
    return TlsRequest(mode, seconds, rounds, client=client, thread_mode=thread_mode,
                      threads=tuple(counts(thread_list, "--threads", MAX_THREADS)) if thread_list else (),
                      connections=tuple(counts(connections, "--connections", MAX_CONNECTIONS)) if memory else (),
                      **rest)
