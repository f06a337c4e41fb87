"""Reading the profilers' text reports into FunctionCosts: `perf report`
and `callgrind_annotate` rows, with one name per function whichever tool
saw it (symbol versions, GCC clone suffixes, recursion marks removed)."""

from __future__ import annotations

import re

from sslperf.errors import SslperfError
from sslperf.symbols import function_name
from sslperf.profiling.model import LOOP_FUNCTION, FunctionCost

def merge(entries: list[tuple[str, float, float]]) -> list[FunctionCost]:
    """(raw name, self %, inclusive %) → one FunctionCost per function. Self
    shares add up (a function split over files or clones is still one
    function); the inclusive share is the largest, as the parts' inclusive
    costs overlap. Callgrind's deeper recursion entries (`f'2`) count their
    callees again, so they give an inclusive share only when nothing else does."""
    merged: dict[str, list[float]] = {}
    recursive_only: dict[str, float] = {}
    for raw, self_share, inclusive in entries:
        name = function_name(raw)
        slot = merged.setdefault(name, [0.0, 0.0])
        slot[0] += self_share
        if re.search(r"'\d+$", raw.strip()):
            recursive_only[name] = max(recursive_only.get(name, 0.0), inclusive)
        else:
            slot[1] = max(slot[1], inclusive)
    out = []
    for name, (self_share, inclusive) in merged.items():
        if inclusive == 0.0 and name in recursive_only:
            inclusive = min(recursive_only[name], 100.0)
        if re.fullmatch(r"0x[0-9a-f]+", name):      # no symbol: as a caller, only an unwinding artefact
            inclusive = self_share
        out.append(FunctionCost(name, round(self_share, 4), round(max(inclusive, self_share), 4)))
    return sorted(out, key=lambda f: (-f.self_share, -f.inclusive_share, f.name))


_PERF_ROW = re.compile(r"^\s*(\d+(?:\.\d+)?)%\s+(\d+(?:\.\d+)?)%\s+\[(.)\]\s+(.+?)(?:\s{2,}.*)?$")
_PERF_EVENT_COUNT = re.compile(r"^# Event count \(approx\.\):\s*(\d+)", re.M)


def parse_perf_report(text: str) -> tuple[list[FunctionCost], int]:
    """`perf report --stdio --children --sort symbol -g none`: rows of
    `Children% Self% [.] symbol`. Returns the functions and the event count
    (for cpu-clock: CPU nanoseconds)."""
    entries = []
    for line in text.splitlines():
        match = _PERF_ROW.match(line)
        if match and not line.lstrip().startswith("#"):
            children, self_share, _, symbol = match.groups()
            entries.append((symbol, float(self_share), float(children)))
    if not entries:
        raise SslperfError("perf report gave no functions: the profile is empty.",
                           hint="Run for longer (--seconds) or look at the raw perf.data with `perf report -i`.")
    count = _PERF_EVENT_COUNT.search(text)
    return merge(entries), int(count.group(1)) if count else 0


_CG_ROW = re.compile(r"^\s*([\d,]+)\s+\(\s*(\d+(?:\.\d+)?)%\)\s+(.+?)(?:\s+\[[^\]]*\])?\s*$")
_CG_TOTAL = re.compile(r"^\s*([\d,]+)(?:\s+\([^)]*\))?\s+PROGRAM TOTALS", re.M)


def _callgrind_rows(text: str, inclusive: bool) -> dict[str, float]:
    """function → share. One function can have several rows: code from
    several source files (inlined headers) or several objects (`(below
    main)`); their own costs add up, their inclusive costs overlap."""
    rows: dict[str, float] = {}
    for line in text.splitlines():
        match = _CG_ROW.match(line)
        if match and "PROGRAM TOTALS" not in line:
            _, share, where = match.groups()
            function = where.split(":", 1)[1] if ":" in where else where     # file:function
            before = rows.get(function, 0.0)
            rows[function] = max(before, float(share)) if inclusive else before + float(share)
    return rows


def parse_callgrind_annotate(self_text: str, inclusive_text: str) -> tuple[list[FunctionCost], int]:
    """`callgrind_annotate` without and with `--inclusive=yes`: rows of
    `Ir (share%)  file:function [object]`. Returns the functions and the
    instructions of the whole profiled part."""
    total = _CG_TOTAL.search(self_text)
    if not total or int(total.group(1).replace(",", "")) == 0:
        raise SslperfError("callgrind counted no instructions in the profiled loop.",
                           hint=f"The harness function {LOOP_FUNCTION} may have been renamed or inlined; "
                                "rebuild the harness (it is recompiled when its sources change).")
    own, inclusive = _callgrind_rows(self_text, False), _callgrind_rows(inclusive_text, True)
    entries = [(name, own.get(name, 0.0), inclusive.get(name, own.get(name, 0.0)))
               for name in dict.fromkeys([*own, *inclusive])]
    return merge(entries), int(total.group(1).replace(",", ""))
