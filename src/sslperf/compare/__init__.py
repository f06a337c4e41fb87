"""`compare`: libraries or runs side by side with verdicts (verdicts), and
what a user's items name — libraries, runs, RUN:LIB — as columns (columns)."""

from sslperf.compare.columns import picked_lines, resolve
from sslperf.compare.deployed import Split, split_lines, splits
from sslperf.compare.verdicts import Column, Comparison, Row, change, compare
from sslperf.verdict import DEFAULT_ALPHA, DEFAULT_THRESHOLD, MIN_SAMPLES_FOR_TEST, Change, Floors, process_test

__all__ = ["DEFAULT_ALPHA", "DEFAULT_THRESHOLD", "MIN_SAMPLES_FOR_TEST", "Change", "Column", "Comparison", "Floors",
           "Row", "Split", "change", "compare", "picked_lines", "process_test", "resolve", "split_lines", "splits"]
