"""Why one library is slower than another at a case: both profiled with
callgrind (instruction counts are comparable across versions and do not
move with the machine's load), for `bisect` and `compare --explain`."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path

from sslperf.libs.model import Lib
from sslperf.profiling.model import Profile

SECONDS = 3.0       # per library, under callgrind


def available() -> bool:
    return shutil.which("valgrind") is not None


def profile_pair(older: Lib, newer: Lib, case_id: str, seconds: float = SECONDS) -> tuple[Profile, Profile]:
    """`case_id` profiled on both libraries (the harness loop only)."""
    from sslperf.measure import suites
    from sslperf.measure.session import certificates
    from sslperf.profiling import record

    case = suites.parse_case(case_id)
    needs_certs = case.family in ("tls", "api")
    with tempfile.TemporaryDirectory(prefix="sslperf-explain-") as out, \
            (certificates(older) if needs_certs else contextlib.nullcontext()) as cert_dir:
        env = {"SSLPERF_CERT_DIR": str(cert_dir)} if cert_dir else {}
        a = record.record(older, case.id, "callgrind", Path(out), seconds, None, env)
        b = record.record(newer, case.id, "callgrind", Path(out), seconds, None, env)
    return a, b
