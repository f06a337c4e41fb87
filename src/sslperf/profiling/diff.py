"""The difference of two profiles (`profile --vs`, `compare --explain`,
bisect): every function's shares in both, matched by name (X, X_ex and
ossl_X, OpenSSL 3.0's library-context and internal forms, as one) and
across renames, and the functions whose share moved most, a call chain with
equal shares as one row; the lead (`lead`) is the function of both whose
inclusive share moved most.

A function present in one profile only is not new or gone by that alone:
- renamed: OpenSSL 3.0 replaced `X509_STORE_load_locations` by
  `X509_STORE_load_file_ex` in the same place of the same call chain. Two
  such one-sided functions with alike names are one, renamed, when they sit
  in one call chain with the same function on each side (the same inclusive
  share as a function both profiles have), or when their inclusive shares
  match closely;
- in a chain of calls with equal shares, a frame one side does not show: perf
  loses the frame of a function that ends in a tail call (1.1.1w's
  `SSL_CTX_load_verify_locations` jumps to `X509_STORE_load_locations`), and
  a new wrapper (3.0's `SSL_CTX_load_verify_file`) adds a frame. Either joins
  the chain whose share it has on its side, instead of reading as +90 points."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sslperf.profiling.model import LOOP_FUNCTION, Profile

# points: a smaller one-sided function is neither paired as a rename nor joined to a chain, as its share matches
# others' by chance too often (perf's shares move by tenths of a point from run to run)
ONE_SIDED_MIN_SHARE = 5.0
CLOSE_SHARES = 0.5         # points: inclusive shares this close "match closely"
RENAME_LIKENESS = 0.6      # difflib ratio of the names: X509_STORE_load_locations/_file_ex 0.71, unrelated ~0.3
SAME_SHARE_DIGITS = 2      # shares equal to this many decimals: one call chain
FRAME_POINTS = 1.0         # points: a one-sided function this close to a function of both, on its side, wraps it


@dataclass
class ShareChange:
    name: str
    a_self: float
    b_self: float
    a_inclusive: float
    b_inclusive: float
    same_shares: tuple[str, ...] = ()   # other functions with these very shares (one call chain)
    renamed: tuple[str, str] | None = None    # (its name in A, its name in B) when renamed between them
    in_a: bool = True                   # present in profile A (a function absent there has 0% there)
    in_b: bool = True

    @property
    def self_change(self) -> float:
        return self.b_self - self.a_self

    @property
    def inclusive_change(self) -> float:
        return self.b_inclusive - self.a_inclusive


def _by_comparison_name(p: Profile) -> dict[str, tuple[set[str], float, float]]:
    """OpenSSL 3.0 renamed many functions to an `_ex` form that takes a
    library context, and the old name only calls it
    (`X509_load_cert_crl_file` → `X509_load_cert_crl_file_ex`), and gave
    its internal functions an `ossl_` prefix (`asn1_item_embed_free` →
    `ossl_asn1_item_embed_free`). To compare versions, X, X_ex and ossl_X
    are one function: self shares added, the larger inclusive share kept."""
    out: dict[str, tuple[set[str], float, float]] = {}
    for f in p.functions:
        key = _comparison_key(f.name)
        names, self_share, inclusive = out.get(key, (set(), 0.0, 0.0))
        out[key] = (names | {f.name}, self_share + f.self_share, max(inclusive, f.inclusive_share))
    return out


def changes(a: Profile, b: Profile) -> list[ShareChange]:
    """Every function seen in either profile, with its shares in both (a
    function absent from one profile has 0% there), renamed ones as one."""
    in_a, in_b = _by_comparison_name(a), _by_comparison_name(b)
    out = []
    for key in dict.fromkeys([*in_a, *in_b]):
        names_a, self_a, incl_a = in_a.get(key, (set(), 0.0, 0.0))
        names_b, self_b, incl_b = in_b.get(key, (set(), 0.0, 0.0))
        names = names_a | names_b
        name = next(iter(names)) if len(names) == 1 else _alias_name(key, names)
        out.append(ShareChange(name, round(self_a, 4), round(self_b, 4), incl_a, incl_b,
                               in_a=bool(names_a), in_b=bool(names_b)))
    return _merge_renames(out)


def _alias_name(key: str, names: set[str]) -> str:
    """`(ossl_)X(_ex)`: the one name of a function known by several (X, X_ex, ossl_X)."""
    prefixed = any(n.startswith("ossl_") for n in names) and any(not n.startswith("ossl_") for n in names)
    suffixed = any(n.endswith("_ex") for n in names) and any(not n.endswith("_ex") for n in names)
    return ("(ossl_)" if prefixed else "") + key + ("(_ex)" if suffixed else "")


def _merge_renames(rows: list[ShareChange]) -> list[ShareChange]:
    """`rows` with each renamed function's two one-sided rows as one (named as in B)."""
    only_a = [r for r in rows if not r.in_b and r.a_inclusive >= ONE_SIDED_MIN_SHARE]
    only_b = [r for r in rows if not r.in_a and r.b_inclusive >= ONE_SIDED_MIN_SHARE]
    both = [r for r in rows if r.in_a and r.in_b]
    anchored, close = [], []
    for x in only_a:
        for y in only_b:
            if -_likeness((x, y))[0] < RENAME_LIKENESS:
                continue
            if any(_same(x.a_inclusive, h.a_inclusive) and _same(y.b_inclusive, h.b_inclusive) for h in both):
                anchored.append((x, y))
            elif abs(x.a_inclusive - y.b_inclusive) <= CLOSE_SHARES:
                close.append((x, y))
    # Shares alone pair two functions only when neither has another close match.
    close = [(x, y) for x, y in close if sum(x is p or y is q for p, q in close) == 1]
    pairs, used = [], set()
    for x, y in sorted(anchored, key=_likeness) + sorted(close, key=_likeness):
        if id(x) not in used and id(y) not in used:
            pairs.append((x, y))
            used |= {id(x), id(y)}
    merged = {id(x): ShareChange(y.name, x.a_self, y.b_self, x.a_inclusive, y.b_inclusive, renamed=(x.name, y.name))
              for x, y in pairs}
    return [merged.get(id(r), r) for r in rows if id(r) not in used or id(r) in merged]


def _likeness(pair: tuple[ShareChange, ShareChange]) -> tuple[float, str, str]:
    """Most alike names first (of several functions in one chain, the renamed one keeps most of its name)."""
    x, y = pair
    return -difflib.SequenceMatcher(None, x.name.lower(), y.name.lower()).ratio(), x.name, y.name


def _same(x: float, y: float) -> bool:
    return round(x, SAME_SHARE_DIGITS) == round(y, SAME_SHARE_DIGITS)


def changed_most(a: Profile, b: Profile, n: int, by: str = "self") -> list[ShareChange]:
    """The `n` functions whose share moved most, in percentage points, by
    self share or (`by="inclusive"`) inclusive share. By inclusive share, a
    call chain whose members all have the same shares (A calls only B, B
    only C: `SSL_CTX_load_verify_locations` → … → `by_file_ctrl_ex`) is one
    row, named by its renamed member, else the one with the largest self
    share; a function one profile lacks joins the chain whose share it has
    in the other (a frame perf lost, or a new wrapper)."""
    if by == "self":
        ranked = sorted(changes(a, b), key=lambda c: (-abs(c.self_change), c.name))
        return [c for c in ranked if abs(c.self_change) > 0][:n]
    moved = [c for c in changes(a, b) if abs(c.inclusive_change) > 0]
    chains: dict[tuple[float, float], list[ShareChange]] = {}
    for c in moved:
        if c.in_a and c.in_b:
            chains.setdefault(_key(c.a_inclusive, c.b_inclusive), []).append(c)
    for c in moved:
        if not (c.in_a and c.in_b):
            side = 0 if c.in_a else 1
            share = c.a_inclusive if c.in_a else c.b_inclusive
            if share < ONE_SIDED_MIN_SHARE:     # a small share is equal to others' by chance: its own row
                chains.setdefault(_key(c.a_inclusive, c.b_inclusive), []).append(c)
                continue
            # Of several chains with its share, the one that moved least: a lost caller's frame had at least the
            # largest of their shares, and so no more change is put on it than the profiles show.
            joined = max((k for k in chains if k[side] == round(share, SAME_SHARE_DIGITS)),
                         key=lambda k: k[1 - side], default=None)
            chains.setdefault(joined or _key(c.a_inclusive, c.b_inclusive), []).append(c)
    rows = []
    for (a_share, b_share), members in chains.items():
        members.sort(key=lambda c: (c.renamed is None, not (c.in_a and c.in_b), -(c.a_self + c.b_self), c.name))
        head = members[0]
        rows.append(ShareChange(head.name, head.a_self, head.b_self, a_share, b_share,
                                tuple(c.name for c in members[1:]), head.renamed, head.in_a, head.in_b))
    return sorted(rows, key=lambda c: (-abs(c.inclusive_change), c.name))[:n]


def _key(a_share: float, b_share: float) -> tuple[float, float]:
    return round(a_share, SAME_SHARE_DIGITS), round(b_share, SAME_SHARE_DIGITS)


def lead(a: Profile, b: Profile) -> ShareChange | None:
    """The one-line cause `profile --vs` leads with: the function present in both profiles (renamed ones as one,
    a call chain as one) whose inclusive share moved most, the way the cost moved. Shares are relative: where B
    does more work every other share shrinks, so B's dearer operation is explained by a share that grew (and a
    cheaper one by a share that shrank). A function one profile lacks has no change to speak of (its whole share
    is all it has): it leads only when no function of both moved."""
    rows = changed_most(a, b, len(a.functions) + len(b.functions), "inclusive")
    way = _direction(a, b)
    both = [r for r in rows if r.in_a and r.in_b and r.inclusive_change * way >= 0]
    if not both:
        return rows[0] if rows else None
    return max(both, key=lambda r: (r.inclusive_change * way if way else abs(r.inclusive_change)))


def largest_one_sided(a: Profile, b: Profile) -> ShareChange | None:
    """The largest function only the dearer profile has (B's when B is dearer or as dear), beside the lead: one the
    other side really lacks, under every name it is known by (only_in)."""
    rows = changed_most(a, b, len(a.functions) + len(b.functions), "inclusive")
    dearer_b = _direction(a, b) >= 0
    only = [r for r in rows if (not r.in_a if dearer_b else not r.in_b)]
    only = [r for r in only if only_in(r, a if dearer_b else b, b if dearer_b else a)]
    return max(only, key=lambda r: max(r.a_inclusive, r.b_inclusive), default=None)


def only_in(row: ShareChange, lacking: Profile, having: Profile) -> bool:
    """Whether the function of `row`, which `having` shows and `lacking` does not, is work `lacking` does not do,
    as far as the profiles tell: not where `lacking`'s whole report (below the parsed shares too) names it as X, X_ex
    or ossl_X, and not where it is a frame around a function both profiles have — its share on its side within
    FRAME_POINTS of that function's (1.1.1w's perf lost `SSL_CTX_load_verify_locations`, which ends in a tail call to
    `X509_STORE_load_locations`; 3.0.8 wraps `asn1_item_embed_d2i` in `asn1_item_ex_d2i_intern`)."""
    if _named_in_reports(row, lacking):
        return False
    own = row.b_inclusive if not row.in_a else row.a_inclusive
    key = _comparison_key(row.name)
    loop = having.function(LOOP_FUNCTION)
    whole = (loop.inclusive_share if loop else 100.0) - FRAME_POINTS     # as Profile.top_inclusive leaves them out
    lacking_keys = {_comparison_key(g.name) for g in lacking.functions}
    for f in having.functions:
        # A frame wraps the function just under it: a share within FRAME_POINTS of its own, and not one of the
        # frames around the whole loop (main, the loop: ~100% on both sides, they match anything near the top).
        if _comparison_key(f.name) == key or abs(f.inclusive_share - own) > FRAME_POINTS or f.inclusive_share >= whole:
            continue
        if _comparison_key(f.name) in lacking_keys:
            return False
    return True


def _comparison_key(name: str) -> str:
    return re.sub(r"^ossl_", "", re.sub(r"_ex$", "", name))


def _named_in_reports(row: ShareChange, profile: Profile) -> bool:
    """Whether `profile`'s own text reports (what the tool printed, every line) name the function of `row`."""
    names = {row.name, *(row.renamed or ())}
    keys = {_comparison_key(n) for n in names}
    wanted = re.compile(r"\b(?:ossl_)?(?:" + "|".join(re.escape(k) for k in keys) + r")(?:_ex)?\b")
    return any(wanted.search(_report_text(report)) for report in profile.reports)


@lru_cache(maxsize=16)
def _report_text(path: str) -> str:
    """A tool's report, read once (every one-sided function is looked up in it)."""
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def _direction(a: Profile, b: Profile) -> int:
    """1 where B costs more per operation, -1 where less, 0 where equal or not known."""
    if not a.cost_per_op or not b.cost_per_op or a.cost_per_op == b.cost_per_op:
        return 0
    return 1 if b.cost_per_op > a.cost_per_op else -1


def comparison(a: Profile, b: Profile, n: int) -> dict:
    """What `--vs` prints, as data."""
    row = lambda c: {"function": c.name, "a_self": c.a_self, "b_self": c.b_self,    # noqa: E731
                     "self_change_pp": round(c.self_change, 4), "a_inclusive": c.a_inclusive,
                     "b_inclusive": c.b_inclusive, "inclusive_change_pp": round(c.inclusive_change, 4),
                     "same_shares": list(c.same_shares), "renamed": list(c.renamed) if c.renamed else None}
    first = lead(a, b)
    return {"a": a.lib, "b": b.lib, "unit": a.unit,
            "cost_per_op": {a.lib: a.cost_per_op, b.lib: b.cost_per_op},
            "cost_ratio": b.cost_per_op / a.cost_per_op if a.cost_per_op else None,
            "lead": row(first) if first else None,
            "changed_most_self": [row(c) for c in changed_most(a, b, n, "self")],
            "changed_most_inclusive": [row(c) for c in changed_most(a, b, n, "inclusive")]}
