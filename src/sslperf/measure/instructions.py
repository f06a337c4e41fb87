"""The deterministic tier: instructions per operation, counted by valgrind's
callgrind inside the harness's loop only (`--toggle-collect` on the
function that runs the timed batch), so set-up, key generation and the
correctness check are not counted. The same binary, input and environment
give the same count to a few hundredths of a percent whatever else the
machine does — what a CI gate or a bisect needs; time is what users feel.

Where the harness can open the CPU's own counters (harness/counters.c),
`hardware_count` counts natively instead; this VM has none, so valgrind is
the counter here; it runs the code about 50 times slower, which is why the
batches are short.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple

from sslperf import tempdirs
from sslperf.errors import SslperfError
from sslperf.libs.model import Lib
from sslperf.measure.harness_client import call
from sslperf.proc import require_tool

LOOP_FUNCTION = "sslperf_profiled_loop"      # harness/profile.c: the batch, and nothing else
# harness/deterministic.c: every process draws the same random stream, so
# makes the same keys, nonces and signatures (OpenSSL 1.1.1 and 3.x).
DETERMINISTIC_VARIABLE = "SSLPERF_DETERMINISTIC"
_TOTALS = re.compile(r"^(?:totals|summary):\s*(\d+)", re.M)


def valgrind() -> str:
    return require_tool("valgrind", "to count instructions (--metric instructions)")


MIN_COUNTED_OPS = 16     # fewer, and what differs between the first operations and the rest can flip a sign


def batch(calibrated: int) -> int:
    """The counted batch: the calibrated size rounded down to a power of two,
    so two runs mostly count the same operations (the fixed cost cancels in
    the difference of two batches, but a random stream's draws fall on
    other operations when N differs), and never fewer than MIN_COUNTED_OPS:
    a count of 2 SSL_CTX_new calls once read 1% faster where a profile of
    thousands read 1.4% dearer (the first calls fill caches the rest reuse)."""
    return max(MIN_COUNTED_OPS, 1 << max(0, calibrated.bit_length() - 1))


COUNTER_VARIABLE = "SSLPERF_INSTRUCTION_COUNTER"    # auto (default), perf or callgrind
COUNTERS = ("auto", "perf", "callgrind")


class Counted(NamedTuple):
    instructions: int
    deterministic: bool      # the library drew sslperf's fixed random stream: every process counts the same
    counter: str = "callgrind"         # "callgrind", or "perf" (the CPU's own counter, perf_event_open)
    cycles: int | None = None          # perf only


def counter_choice() -> str:
    """Which counter --metric instructions uses: SSLPERF_INSTRUCTION_COUNTER
    (auto: the CPU's own where the harness can open it, else callgrind)."""
    chosen = os.environ.get(COUNTER_VARIABLE, "auto").strip() or "auto"
    if chosen not in COUNTERS:
        raise SslperfError(f"{COUNTER_VARIABLE}={chosen!r} is not a counter sslperf knows.",
                           hint="Use auto (the CPU's own counter where there is one, else callgrind), perf or "
                                "callgrind.")
    return chosen


def hardware_count(lib: Lib, case_id: str, iters: int, env: dict[str, str] | None = None, cpu: int | None = None,
                   timeout: float = 600) -> Counted:
    """User-space instructions (and cycles) of `iters` operations from the
    CPU's own counters (harness/counters.c: N then 2N operations, the
    difference), natively: nearly free where the machine has a PMU."""
    done = call(lib, "hwcount", case_id, "--iters", str(iters), timeout=timeout,
                env={**(env or {}), DETERMINISTIC_VARIABLE: "1"}, ok_codes=None, cpu=cpu, fixed_layout=True)
    reply = next((line for line in done.lines if line.get("case") == case_id), {})
    if reply.get("type") != "hwcounted":
        raise SslperfError(f"Counting instructions of `{case_id}` on {lib.name} with the CPU's counters failed: "
                           f"{reply.get('reason') or done.stderr.strip()[-300:] or 'no result'}.")
    return Counted(int(reply["instructions"]), False, "perf", int(reply.get("cycles") or 0))


def count(lib: Lib, case_id: str, iters: int, env: dict[str, str] | None = None, cpu: int | None = None,
          timeout: float = 600) -> Counted:
    """Instructions the library executes for `iters` operations of `case_id`,
    exactly: the loop runs `iters` then 2 x `iters` operations in one
    process, callgrind writes a part after each (`--dump-after`), and the
    difference is the cost of `iters` operations alone. The loop's own fixed
    cost cancels, so the count per operation does not depend on the batch
    (with a single batch it did: 33 instructions shared by 4 operations under
    load, by 512 when idle, moved AES-GCM on 16 bytes by 0.3%)."""
    tool = valgrind()
    with tempdirs.private_dir("callgrind") as tmp:
        out = Path(tmp) / "callgrind.out"
        # A fixed memory layout: some code takes other paths for other buffer
        # alignments (ed25519 verify moved by 0.8% between randomised processes).
        done = call(lib, "profile", case_id, "--iters", str(iters), "--differential", timeout=timeout,
                    env={**(env or {}), DETERMINISTIC_VARIABLE: "1"},
                    ok_codes=None, cpu=cpu, fixed_layout=True,
                    wrapper=(tool, "--tool=callgrind", "--cache-sim=no", "--branch-sim=no",
                             f"--toggle-collect={LOOP_FUNCTION}", f"--dump-after={LOOP_FUNCTION}",
                             f"--callgrind-out-file={out}"))
        reply = next((line for line in done.lines if line.get("case") == case_id), {})
        if reply.get("type") != "profiled":
            raise SslperfError(f"Counting instructions of `{case_id}` on {lib.name} failed: "
                               f"{reply.get('reason') or done.stderr.strip()[-300:] or 'no result'}.")
        first, second = (total(Path(f"{out}.{part}")) for part in (1, 2))
        if first is None or second is None or second < first:
            raise SslperfError(f"callgrind wrote no instruction totals for the two batches of `{case_id}` on "
                               f"{lib.name}: {done.stderr.strip()[-300:] or 'its part files are missing'}")
        return Counted(second - first, reply.get("deterministic_rand") == "on")


def total(part: Path) -> int | None:
    """The instruction total a callgrind output file states, or None."""
    try:
        found = _TOTALS.search(part.read_text(errors="replace"))
    except OSError:
        return None
    return int(found.group(1)) if found else None
