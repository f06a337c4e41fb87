"""Why one library is slower than another at a case: both profiled with
callgrind (instruction counts are comparable across versions and do not
move with the machine's load), for `bisect` and `compare --explain`."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sslperf import tempdirs
from sslperf.errors import SslperfError
from sslperf.libs import installed
from sslperf.libs.model import Lib
from sslperf.measure import certificates, suites
from sslperf.profiling import record
from sslperf.profiling.model import Profile

SECONDS = 3.0       # per library, under callgrind


def available() -> bool:
    return shutil.which("valgrind") is not None


def profile_pair(older: Lib, newer: Lib, case_id: str, seconds: float = SECONDS) -> tuple[Profile, Profile]:
    """`case_id` profiled on both libraries (the harness loop only)."""
    case = suites.parse_case(case_id)
    with tempdirs.private_dir("explain") as out, \
            certificates.for_cases(older, [case]) as cert_dir:
        env = certificates.env(cert_dir)
        a = record.record(older, case.id, "callgrind", Path(out), seconds, None, env)
        b = record.record(newer, case.id, "callgrind", Path(out), seconds, None, env)
    return a, b


@dataclass
class Explained:
    """One significant slow-down of a comparison, with both sides' profiles (or why there are none)."""
    row: object                 # compare.Row
    column: object              # compare.Column
    change: object              # compare.Change
    profiles: tuple[Profile, Profile] | None = None
    problem: str | None = None


def slowdowns(result, top: int) -> Iterator[Explained]:
    """The `top` largest significant slow-downs of `result` (a compare.Comparison)
    against its baseline, each profiled on its two libraries, one by one as it is done."""
    slower = sorted(result.regressions(0.0), key=lambda found: found[2].ratio)[:top]
    base = result.columns[0]
    for row, column, change in slower:
        try:
            older, newer = installed.find(base.lib), installed.find(column.lib)
        except SslperfError as exc:
            yield Explained(row, column, change, problem=exc.message)
            continue
        yield Explained(row, column, change, profile_pair(older, newer, row.case))
