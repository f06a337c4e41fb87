"""The deterministic tier: instructions per operation, counted by valgrind's
callgrind inside the harness's loop only (`--toggle-collect` on the
function that runs the timed batch), so set-up, key generation and the
correctness check are not counted. The same binary, input and environment
give the same count to a few hundredths of a percent whatever else the
machine does — what a CI gate or a bisect needs; time is what users feel.

This VM has no hardware instruction counter (`perf stat -e instructions`
says "not supported"), so valgrind is the counter here; it runs the code
about 50 times slower, which is why the batches are short.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from sslperf.errors import SslperfError
from sslperf.libs.model import Lib
from sslperf.measure.harness_client import call
from sslperf.proc import require_tool

LOOP_FUNCTION = "sslperf_profiled_loop"      # harness/profile.c: the batch, and nothing else
_TOTALS = re.compile(r"^(?:totals|summary):\s*(\d+)", re.M)


def valgrind() -> str:
    return require_tool("valgrind", "to count instructions (--metric instructions)")


def count(lib: Lib, case_id: str, iters: int, env: dict[str, str] | None = None, cpu: int | None = None,
          timeout: float = 600) -> int:
    """Instructions the library executes for `iters` operations of `case_id`."""
    tool = valgrind()
    with tempfile.TemporaryDirectory(prefix="sslperf-callgrind-") as tmp:
        out = Path(tmp) / "callgrind.out"
        done = call(lib, "profile", case_id, "--iters", str(iters), timeout=timeout, env=env, ok_codes=None, cpu=cpu,
                    wrapper=(tool, "--tool=callgrind", "--cache-sim=no", "--branch-sim=no",
                             f"--toggle-collect={LOOP_FUNCTION}", f"--callgrind-out-file={out}"))
        reply = next((line for line in done.lines if line.get("case") == case_id), {})
        if reply.get("type") != "profiled":
            raise SslperfError(f"Counting instructions of `{case_id}` on {lib.name} failed: "
                               f"{reply.get('reason') or done.stderr.strip()[-300:] or 'no result'}.")
        try:
            found = _TOTALS.search(out.read_text(errors="replace"))
        except OSError:
            found = None
        if found is None:
            raise SslperfError(f"callgrind wrote no instruction total for `{case_id}` on {lib.name}: "
                               f"{done.stderr.strip()[-300:]}")
        return int(found.group(1))
