"""The difference of two profiles (`profile --vs`, `compare --explain`,
bisect): every function's shares in both, matched by name (X and X_ex,
OpenSSL 3.0's library-context form, as one), and the functions whose share
moved most, a call chain with equal shares as one row."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sslperf.profiling.model import Profile


@dataclass
class ShareChange:
    name: str
    a_self: float
    b_self: float
    a_inclusive: float
    b_inclusive: float
    same_shares: tuple[str, ...] = ()   # other functions with these very shares (one call chain)

    @property
    def self_change(self) -> float:
        return self.b_self - self.a_self

    @property
    def inclusive_change(self) -> float:
        return self.b_inclusive - self.a_inclusive


def _by_comparison_name(p: Profile) -> dict[str, tuple[set[str], float, float]]:
    """OpenSSL 3.0 renamed many functions to an `_ex` form that takes a
    library context, and the old name only calls it
    (`X509_load_cert_crl_file` → `X509_load_cert_crl_file_ex`). To compare
    versions, X and X_ex are one function: self shares added, the larger
    inclusive share kept."""
    out: dict[str, tuple[set[str], float, float]] = {}
    for f in p.functions:
        key = re.sub(r"_ex$", "", f.name)
        names, self_share, inclusive = out.get(key, (set(), 0.0, 0.0))
        out[key] = (names | {f.name}, self_share + f.self_share, max(inclusive, f.inclusive_share))
    return out


def changes(a: Profile, b: Profile) -> list[ShareChange]:
    """Every function seen in either profile, with its shares in both (a
    function absent from one profile has 0% there)."""
    in_a, in_b = _by_comparison_name(a), _by_comparison_name(b)
    out = []
    for key in dict.fromkeys([*in_a, *in_b]):
        names_a, self_a, incl_a = in_a.get(key, (set(), 0.0, 0.0))
        names_b, self_b, incl_b = in_b.get(key, (set(), 0.0, 0.0))
        names = names_a | names_b
        name = next(iter(names)) if len(names) == 1 else f"{key}(_ex)"
        out.append(ShareChange(name, round(self_a, 4), round(self_b, 4), incl_a, incl_b))
    return out


def changed_most(a: Profile, b: Profile, n: int, by: str = "self") -> list[ShareChange]:
    """The `n` functions whose share moved most, in percentage points, by
    self share or (`by="inclusive"`) inclusive share. By inclusive share, a
    call chain whose members all have the same shares (A calls only B, B
    only C: `SSL_CTX_load_verify_locations` → … → `by_file_ctrl_ex`) is one
    row, named by the member with the largest self share."""
    if by == "self":
        ranked = sorted(changes(a, b), key=lambda c: (-abs(c.self_change), c.name))
        return [c for c in ranked if abs(c.self_change) > 0][:n]
    chains: dict[tuple[float, float], list[ShareChange]] = {}
    for c in changes(a, b):
        if abs(c.inclusive_change) > 0:
            chains.setdefault((round(c.a_inclusive, 2), round(c.b_inclusive, 2)), []).append(c)
    rows = []
    for members in chains.values():
        members.sort(key=lambda c: (-(c.a_self + c.b_self), c.name))
        head = members[0]
        rows.append(ShareChange(head.name, head.a_self, head.b_self, head.a_inclusive, head.b_inclusive,
                                tuple(c.name for c in members[1:])))
    return sorted(rows, key=lambda c: (-abs(c.inclusive_change), c.name))[:n]


def comparison(a: Profile, b: Profile, n: int) -> dict:
    """What `--vs` prints, as data."""
    row = lambda c: {"function": c.name, "a_self": c.a_self, "b_self": c.b_self,    # noqa: E731
                     "self_change_pp": round(c.self_change, 4), "a_inclusive": c.a_inclusive,
                     "b_inclusive": c.b_inclusive, "inclusive_change_pp": round(c.inclusive_change, 4),
                     "same_shares": list(c.same_shares)}
    return {"a": a.lib, "b": b.lib, "unit": a.unit,
            "cost_per_op": {a.lib: a.cost_per_op, b.lib: b.cost_per_op},
            "cost_ratio": b.cost_per_op / a.cost_per_op if a.cost_per_op else None,
            "changed_most_self": [row(c) for c in changed_most(a, b, n, "self")],
            "changed_most_inclusive": [row(c) for c in changed_most(a, b, n, "inclusive")]}
