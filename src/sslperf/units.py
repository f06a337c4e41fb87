"""Figures as every table writes them: a rate, a throughput, a time, an instruction count (one spelling for the
terminal, the report and each feature's own output)."""

from __future__ import annotations


def throughput(bytes_per_second: float) -> str:
    mb = bytes_per_second / 1e6
    return f"{mb / 1000:.2f} GB/s" if mb >= 1000 else f"{mb:.1f} MB/s"


def rate(ops_per_second: float) -> str:
    return f"{ops_per_second:,.0f} op/s" if ops_per_second >= 100 else f"{ops_per_second:,.1f} op/s"


def micros(us: float) -> str:
    return f"{us:,.1f} µs" if us >= 10 else f"{us:.2f} µs"


def instructions(count: float) -> str:
    return f"{count:,.0f} instr" if count >= 100 else f"{count:.1f} instr"
