"""As deployed against pinned: the change between two libraries in a `default` case (each side with its library's
own groups and suites), split into what the library changed at equal parameters and what its new default costs.

Since OpenSSL 3.5 a client offers X25519MLKEM768 first and a server picks it, so `tls/handshake/tls1.3/default/…`
does different work on 3.0 and on 3.6. When the run also measured the pinned case with the group the baseline
negotiated (`…/x25519/…`), the deployed change X splits into
- the library at equal parameters Y: the other library against the baseline, both in that pinned case;
- the default's own cost Z: the other library as deployed against itself pinned to the baseline's group,
each a Change from the one verdict rule with its interval (X ≈ Y·Z; each is measured, none derived)."""

from __future__ import annotations

from dataclasses import dataclass

from sslperf import negotiation
from sslperf.cases import ids as case_ids
from sslperf.results import Measurement
from sslperf.verdict import Change, Policy, judge

PARTS = ("group", "suite")          # the parts a case id may leave to the library (`default`)


@dataclass
class Split:
    case: str                       # the `default` case
    pinned: str                     # the pinned case at the baseline's negotiated parameters
    base: str                       # the two libraries
    other: str
    parameters: str                 # what the two negotiated differently, in one sentence
    deployed: Change                # other against base, both as deployed
    library: Change | None          # other against base, both pinned to the baseline's parameters
    default_cost: Change | None     # other as deployed against other pinned to the baseline's parameters

    def lines(self) -> list[str]:
        """The split as a reader gets it, one line per part."""
        out = [f"{self.case}: {self.parameters}.",
               f"  as deployed: {self.other} against {self.base} {said(self.deployed)}"]
        out.append(f"  the library at equal parameters ({self.pinned}): {said(self.library)}" if self.library
                   else f"  the library at equal parameters: not measured ({self.pinned} is not in this run)")
        out.append(f"  the default's own cost ({self.other} as deployed against itself on {self.pinned}): "
                   f"{said(self.default_cost)}" if self.default_cost else
                   "  the default's own cost: not measured")
        return out

    def to_dict(self) -> dict:
        def change(c: Change | None) -> dict | None:
            return None if c is None else {"percent": c.percent, "low": c.low, "high": c.high, "p": c.p,
                                           "verdict": c.verdict, "method": c.method}
        return {"case": self.case, "pinned": self.pinned, "base": self.base, "other": self.other,
                "parameters": self.parameters, "deployed": change(self.deployed), "library": change(self.library),
                "default_cost": change(self.default_cost)}


def said(change: Change) -> str:
    """`▼ -31.2% [-33.0, -29.1] p=0.001`: a change with its interval and evidence."""
    ci = f" [{(change.low - 1) * 100:+.1f}, {(change.high - 1) * 100:+.1f}]" if change.low is not None \
        and change.high is not None and change.high > change.low else ""
    return f"{change.symbol} {change.percent:+.1f}%{ci} {change.evidence()}"


def pinned_case(case: str, at: negotiation.Negotiated) -> str | None:
    """The id of `case` with each `default` part pinned to what `at` negotiated; None when the case pins everything
    already or `at` negotiated what no pinned case can ask for."""
    parts = case_ids.parts_of(case)
    prefix = parts.pop("template", None)
    defaults = [p for p in PARTS if parts.get(p) == negotiation.DEFAULT]
    if prefix is None or not defaults:
        return None
    for part in defaults:
        name = negotiation.pinned_name(at, part)
        if name is None:
            return None
        parts[part] = name
    template = next((t for t in case_ids.templates() if t.prefix == prefix), None)
    return case_ids.format_id(template, parts) if template is not None else None


def splits(measurements: list[Measurement], base_lib: str, other_lib: str, metric: str = "wall",
           policy: Policy | None = None, paired: bool = True) -> list[Split]:
    """Every `default` case of one run in which the two libraries negotiated different parameters, split."""
    index = {(m.case, m.lib): m for m in measurements if m.status == "ok"}
    found = []
    for (case, lib), base in index.items():
        other = index.get((case, other_lib))
        if lib != base_lib or other is None:
            continue
        sentence, at = negotiation.difference(base, other), negotiation.of(base)
        pinned = pinned_case(case, at) if sentence and at else None
        if pinned is None:
            continue
        deployed = judge(base, other, metric, policy, paired)
        if deployed is None:
            continue
        base_pinned, other_pinned = index.get((pinned, base_lib)), index.get((pinned, other_lib))
        library = judge(base_pinned, other_pinned, metric, policy, paired) if base_pinned and other_pinned else None
        # Two cases are not sampled in the same rounds: the default's cost compares worker processes, never pairs.
        cost = judge(other_pinned, other, metric, policy, False) if other_pinned else None
        found.append(Split(case, pinned, base_lib, other_lib, sentence, deployed, library, cost))
    return found


def split_lines(comparison, runs: dict) -> list[str]:
    """The splits of a comparison (compare.verdicts.Comparison) whose columns come from one run: as deployed, at
    equal parameters and the default's cost, for each column against the first."""
    first = comparison.columns[0]
    policy = Policy(comparison.threshold, comparison.alpha)
    out = []
    for column in comparison.columns[1:]:
        if column.run_id != first.run_id or first.run_id not in runs:
            continue
        for split in splits(runs[first.run_id].measurements, first.lib, column.lib, comparison.metric, policy):
            out += split.lines()
    return (["As deployed and pinned (the change split by the one verdict rule):"] + out) if out else []
