"""The one rule for which noise floor applies to a verdict (compare, bisect,
report, history): the floor `sslperf noise` measured on the host the runs
come from, per family; none across hosts, for instruction counts, or when
the host's floor was never measured — then --threshold alone decides. Each
answer comes with the line that tells the user which applied."""

from __future__ import annotations

from collections.abc import Iterable

Floors = dict[tuple[str, str], float]        # (kind, family) → the floor, as a fraction


def floor_for(store, hosts: Iterable[str | None], metric: str = "wall") -> tuple[Floors, str]:
    """The floors for results measured on `hosts`, and a line saying which applied."""
    hosts = set(hosts)
    if metric == "instructions":
        return {}, "noise floor: none applies to instruction counts (the threshold decides)"
    if store is None:
        return {}, "noise floor: not read (--no-store); the threshold decides"
    if len(hosts) != 1 or None in hosts:
        return {}, "noise floor: none applies (the runs come from different hosts); --threshold alone decides"
    [host] = hosts
    found = store.floors(host)
    if not found:
        return {}, (f"noise floor: not measured on {host}; --threshold alone decides (measure it with "
                    "`sslperf noise`)")
    measured = max(f["measured"] for f in found.values())
    return ({key: f["floor"] for key, f in found.items()},
            f"noise floor of {host} (sslperf noise, {measured}) applies: a change must exceed max(--threshold, "
            "the family's floor within a run or across runs)")


def above_threshold(floors: Floors, threshold: float, families: set[str]) -> list[str]:
    """The families of `families` whose floor is larger than `threshold`: `sig (within: 3.1%)`."""
    return sorted({f"{family} ({kind}: {value * 100:.1f}%)" for (kind, family), value in floors.items()
                   if value > threshold and family in families})
