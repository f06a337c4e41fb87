"""Did you mean …: the names close to a mistyped one, among those that exist (libraries in hand and on offer,
variants, case ids, verbs, run ids), for error messages to offer. One measure of closeness for all of them:
difflib's ratio, as get_close_matches computes it."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.6        # difflib's own default: `opensll` is close to `openssl`, `nosuch` to nothing
# Long names made of the same parts (openssl-3.0.8 and openssl-3.6.3, the run ids of one day) share most of their
# characters: only a near-copy is a likely typo.
CUTOFF_LONG = 0.8


def close(text: str, names: Iterable[str], n: int = 3, cutoff: float = CUTOFF) -> list[str]:
    """The names (at most `n`, closest first) close to `text`; never `text` itself."""
    unique = [name for name in dict.fromkeys(names) if name != text]
    return difflib.get_close_matches(text, unique, n=n, cutoff=cutoff)


def either(names: list[str]) -> str:
    """`a`, `a` or `b`, `a`, `b` or `c`: names as code, joined for a question."""
    quoted = [f"`{name}`" for name in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def did_you_mean(text: str, names: Iterable[str], n: int = 3, cutoff: float = CUTOFF) -> str:
    """`Did you mean `x`?` for the names close to `text`, or "" when none is."""
    found = close(text, names, n, cutoff)
    return f"Did you mean {either(found)}?" if found else ""
