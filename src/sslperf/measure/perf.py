"""Whether `perf record` can sample on this machine: asked before a profile (sslperf.profiling) or a contention
explanation (measure.contention) is attempted, so that either says why it has no CPU profile instead of failing."""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

from sslperf import tempdirs


def perf_problem() -> str | None:
    """Why `perf record` cannot sample here, or None when it can. The
    software cpu-clock event is tried, which works on VMs without counters."""
    perf = shutil.which("perf")
    return _perf_problem(perf) if perf else "perf is not installed"


@functools.cache
def _perf_problem(perf: str) -> str | None:
    """perf_problem for one perf binary, asked once per process: the trial recording takes about a second,
    and a bisect explaining a threads step asks for each side."""
    with tempdirs.private_dir("perf-probe") as tmp:
        try:
            probe = subprocess.run([perf, "record", "-q", "-e", "cpu-clock", "-o", str(Path(tmp) / "probe.data"),
                                    "--", "true"], capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            return "`perf record` did not finish a trivial recording within 60 s"
        except OSError as exc:
            return f"perf cannot be started ({exc.strerror})"
    if probe.returncode != 0:
        said = [line.strip() for line in (probe.stderr + probe.stdout).splitlines() if line.strip()]
        reason = next((line for line in said if "paranoid" in line or "ermission" in line), said[-1] if said else "")
        return f"`perf record` failed ({reason[:200]})" if reason else "`perf record` failed"
    return None
