"""Text sslperf did not write — a user's, a file's, another tool's, the store's — made safe to print and checked
before it is parsed: the characters that would move a terminal or reorder a line, values too long to quote, JSON
nested deep enough to reach a decoder's recursion limit. Used wherever such text is read (importers, requests,
the scheduler's messages)."""

from __future__ import annotations

import re

# Controls (a tab is text), line separators, lone surrogates, and the bidirectional overrides and isolates that
# make printed text read in another order than it is stored.
BAD_CHARS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def shorten(text: str, keep: int = 24) -> str:
    """`99999…999 (5000 characters)` for a value too long to quote."""
    return text if len(text) <= keep else f"{text[:keep // 2]}…{text[-(keep // 4):]} ({len(text)} characters)"


def visible(text: str) -> str:
    """`text` with each character BAD_CHARS matches written as its Python escape (`\\x1b`, `\\x7f`)."""
    return BAD_CHARS.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"), text)


# JSON outputs (bssl speed -json, Google Benchmark) are shallow: a deeper text is refused before the decoder
# reads it, so no input reaches its recursion limit.
MAX_JSON_DEPTH = 8
_JSON_NESTING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.S)    # a string (skipped) or a bracket


def json_too_deep(text: str, start: int = 0) -> int | None:
    """The offset of the first bracket in `text` (from `start`) nested deeper than MAX_JSON_DEPTH, or None."""
    depth = 0
    for token in _JSON_NESTING.finditer(text, start):
        if token.group() in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return token.start()
        elif token.group() in "]}":
            depth -= 1
    return None
