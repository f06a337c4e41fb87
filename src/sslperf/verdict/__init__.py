"""The one rule for faster / slower / tie (rule.py), asked by every output that says one of them; waits.py: what a
verdict on wall time rests on when samples waited for their CPU."""

from sslperf.verdict.rule import (DEFAULT_ALPHA, DEFAULT_THRESHOLD, MIN_SAMPLES_FOR_TEST, SIGNIFICANT, SYMBOLS, WORDS,
                                  Change, Floors, Policy, decide, decide_exact, judge, process_test)
from sslperf.verdict import waits

__all__ = ["DEFAULT_ALPHA", "DEFAULT_THRESHOLD", "MIN_SAMPLES_FOR_TEST", "SIGNIFICANT", "SYMBOLS", "WORDS", "Change",
           "Floors", "Policy", "decide", "decide_exact", "judge", "process_test", "waits"]
