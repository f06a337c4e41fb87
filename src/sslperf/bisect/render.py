"""What `sslperf bisect` prints: the search space, a line per step as it
ends, the steps table, the answer, the builds and the time they took."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sslperf import figures
from sslperf.bisect.probe import Bisect
from sslperf.bisect.search import VERDICTS, Boundary, Step
from sslperf.bisect.space import Space
from sslperf.verdict import Change
from sslperf.verdict.text import change_text
from sslperf.results import Run

METRIC_NAMES = {"instructions": "instructions counted by callgrind in the loop", "wall": "wall time",
                "cpu": "CPU time"}


def space_lines(space: Space, case: str, built: set[str]) -> list[str]:
    points = space.points
    already = sum(1 for p in points if p.name in built)
    listed = ", ".join(p.label.split(" ")[0] for p in points) if len(points) <= 16 else \
        f"{points[0].label.split(' ')[0]} … {points[-1].label.split(' ')[0]}"
    good, bad = points[space.good].label, points[space.bad].label
    lines = [f"Bisecting {case} between {good} (good) and {bad} (bad): {len(points)} {space.kind}, oldest first: "
             f"{listed}.",
             f"A change in one step needs {space.midpoint_builds()} midpoint(s) besides the 2 ends "
             f"({space.midpoint_builds() + 2} libraries; more when the change is spread over several steps, each "
             f"searched, or a midpoint fails to build); {already} of the {len(points)} are built already."]
    if space.note:
        lines.append(f"({space.note})")
    return lines


def short(change: Change | None) -> str:
    """`+24.3% [+24.3, +24.3] (p=0.000) faster`: the rate's change, and what it means."""
    if change is None:
        return "no result"
    text = change_text(change)[0]
    text = f"{text} {change.verdict}" if change.verdict in ("faster", "slower") else text
    return text + (f" (as deployed: {escape(change.parameters)})" if change.parameters else "")


def brief(change: Change | None) -> str:
    """The change in a table cell (the step lines above it have the CI and p)."""
    if change is None:
        return "—"
    return f"{'~ ' if change.verdict == '~' else ''}{change.percent:+.1f}%"


def table_labels(labels: list[str]) -> list[str]:
    """Point labels without what they all share (`openssl-`), commits as their short id."""
    names = [label.split(" ")[0] for label in labels]
    prefix = names[0].rsplit("-", 1)[0] + "-" if all("-" in n for n in names) else ""
    if prefix and all(n.startswith(prefix) for n in names):
        return [n[len(prefix):] for n in names]
    return names


def processes(run: Run) -> int:
    """Worker processes per library in a step (the n of its paired test)."""
    pids = [set((m.figures or {}).get(figures.PROCESS) or []) for m in run.measurements if m.status == "ok"]
    return min((len(p) for p in pids), default=0)


def step_line(result_labels, step: Step) -> str:
    lo, hi = result_labels(step.lo), result_labels(step.hi)
    again = " (measured longer)" if step.longer else ""
    if step.mid is None:
        return f"step {step.number}{again}: {hi} against {lo}: {short(step.total)}"
    mid = result_labels(step.mid)
    return (f"step {step.number}{again}: {mid} between {lo} and {hi}: against {lo} {short(step.to_mid)}; "
            f"{hi} against it {short(step.from_mid)} → {VERDICTS[step.verdict]}")


def print_result(result: Bisect, console: Console) -> None:
    outcome = result.outcome
    label = lambda i: result.label(i).split(" ")[0]     # noqa: E731
    console.print(_steps_table(result))
    metric = METRIC_NAMES.get(result.judge.metric, result.judge.metric)
    if outcome.total is not None:
        console.print(f"Whole change, {escape(label(len(result.space.points) - 1))} against {escape(label(0))}: "
                      f"{short(outcome.total)} ({metric}; a change must pass p < {result.judge.alpha:g} and exceed "
                      f"{outcome.total.threshold * 100:.1f}%{_floor_note(outcome.total)}).")
        for line in bad_faster_lines(result, label):
            console.print(line, soft_wrap=True)
    for line in _answer(result, label):
        console.print(line, soft_wrap=True)


def _floor_note(change: Change) -> str:
    return (", this machine's noise floor within a run for the family" if change.floor
            and change.floor >= change.threshold else ", the threshold")


def _steps_table(result: Bisect) -> Table:
    names = table_labels([p.label for p in result.space.points])
    table = Table(title=f"Steps of the bisect of {escape(result.case)}", title_justify="left")
    for column in ("step", "older", "mid", "newer", "mid vs older", "newer vs mid", "mid is", "n"):
        table.add_column(column, justify="right" if column in ("step", "n") else "left", no_wrap=column != "mid is")
    for step in result.outcome.steps:
        mid = step.mid is not None
        table.add_row(f"{step.number}{'+' if step.longer else ''}", escape(names[step.lo]),
                      escape(names[step.mid]) if mid else "—", escape(names[step.hi]),
                      brief(step.to_mid) if mid else brief(step.total), brief(step.from_mid) if mid else "",
                      STEP_WORDS[step.verdict], str(processes(step.run)))
    table.caption = ("changes of the rate: + is faster (less time or fewer instructions per operation); "
                     "~ not significant; n: worker processes per library; + measured longer")
    return table


STEP_WORDS = {"older": "like older", "newer": "like newer", "between": "between", "contradicts": "outside",
              "unclear": "unclear", "ends": "(ends)"}


def _answer(result: Bisect, label) -> list[str]:
    outcome = result.outcome
    status = outcome.status
    if status == "nothing":
        return [f"[bold]Nothing to bisect:[/] the ends do not differ significantly ({short(outcome.total)})."]
    lines = []
    if status == "not-monotonic":
        lines.append("[bold yellow]Not monotonic:[/] a midpoint measured outside the two ends of its interval "
                     "(a change that came and went, or changes that pull apart), so no single release is the "
                     "answer. Those steps:")
        for step in outcome.contradictions:
            lines.append(f"  {escape(step_line(label, step))}")
    found = [b for b in outcome.boundaries if b.kind == "step"]
    if found:
        several = len(found) > 1
        if status == "not-monotonic":
            lines.append("[bold]Every change found, largest first[/] (a negative share goes against the whole; "
                         "a change that came and went inside an interval whose ends agree cannot be seen):")
        else:
            lines.append(f"[bold]The change came in {len(found)} steps, largest first:[/]" if several else
                         "[bold]The change is between two adjacent " + result.space.kind + ":[/]")
        for boundary in found:
            lines.append("  " + _boundary_line(boundary, label))
    for boundary in outcome.boundaries:
        if boundary.kind != "step":
            why = ("no point inside builds and runs the case" if boundary.kind == "untestable"
                   else "the midpoint measured like neither end, twice")
            lines.append(f"  somewhere from {escape(label(boundary.before))} to {escape(label(boundary.after))}: "
                         f"{why} ({short(boundary.change)})")
    for index, why in sorted(outcome.skipped.items()):
        lines.append(f"  skipped {escape(label(index))}: {escape(why[:300])}")
    return lines


def bad_faster_lines(result: Bisect, label) -> list[str]:
    """Said when the `--bad` end came out faster than `--good`: the search then finds where it got faster."""
    total = result.outcome.total
    bad_is_newer = result.space.bad > result.space.good
    faster = total is not None and total.verdict == ("faster" if bad_is_newer else "slower")
    if not faster:
        return []
    good, bad = label(result.space.good), label(result.space.bad)
    return [f"[bold yellow]Note:[/] the --bad end ({escape(bad)}) measured faster than --good ({escape(good)}), so "
            "the steps above find where it got faster, not slower. If you expected a slow-down, check the case and "
            "the metric (instructions count the library's work; the wall clock also sees the machine), or swap "
            "--good and --bad."]


def explained_line(result: Bisect, boundary, profiles) -> str:
    """The verdict of a step beside its explanation, both per operation: the counts the verdict rests on and the
    profile's, and whether they agree in direction (they rest on different numbers of operations)."""
    a, b = profiles
    counted = [_per_op(result, i) for i in (boundary.before, boundary.after)]
    parts = [f"verdict {boundary.change.symbol} {short(boundary.change)}"]
    if all(counted):
        parts.append(f"from {counted[0][1]:,} counted operations each: {counted[0][0]:,.0f} → {counted[1][0]:,.0f} "
                     f"{METRIC_UNITS.get(result.judge.metric, '')} per operation")
    text = "; ".join(parts)
    if a.cost_per_op and b.cost_per_op:
        cost = b.cost_per_op / a.cost_per_op
        text += f"; the profile's {a.ops:,} / {b.ops:,} operations: cost ×{cost:.3f}"
        dearer, slower = cost > 1, boundary.change.verdict == "slower"
        if boundary.change.verdict in ("faster", "slower") and dearer != slower and abs(cost - 1) > 0.005:
            text += (" — [bold yellow]the profile and the verdict disagree in direction[/]: the change is within "
                     "what differs between the first operations and the rest; measure longer before trusting it")
    return text


def _per_op(result: Bisect, index: int) -> tuple[float, int] | None:
    """(instructions or ns per operation, operations per count) of point `index` in the stored bisect run."""
    lib = result.probe.libs.get(index)
    run = result.run
    m = next((m for m in (run.measurements if run else []) if lib is not None and m.lib == lib.name
              and m.case == result.case and m.status == "ok"), None)
    if m is None or not m.ops:
        return None
    if result.judge.metric == "instructions":
        per_op = m.instructions_per_op()
    else:
        per_op = m.micros_per_op(result.judge.metric)
        per_op = per_op * 1000 if per_op is not None else None
    return (per_op, m.ops[0]) if per_op is not None else None


METRIC_UNITS = {"instructions": "instructions", "wall": "ns", "cpu": "ns CPU"}


def _boundary_line(boundary: Boundary, label) -> str:
    share = f", {boundary.share * 100:.0f}% of the whole change" if boundary.share is not None else ""
    return (f"{escape(label(boundary.before))} → {escape(label(boundary.after))}: "
            f"{short(boundary.change)}{share}")


def print_costs(result: Bisect, seconds: float, console: Console) -> None:
    """The libraries the bisect used and where its `seconds` went."""
    probe = result.probe
    built = [b for b in probe.builds if not b.cached and b.problem is None]
    cached = [b for b in probe.builds if b.cached]
    failed = [b for b in probe.builds if b.problem]
    parts = [f"{len(built)} built ({', '.join(f'{escape(b.name)} {b.seconds:.0f} s' for b in built)})" if built
             else "0 built", f"{len(cached)} cached"]
    if failed:
        parts.append(f"{len(failed)} failed ({escape(', '.join(b.name for b in failed))})")
    console.print(f"Libraries used: {len(probe.libs)} ({'; '.join(parts)}).")
    beyond = over_bound(result)
    if beyond:
        console.print(beyond)
    profiling = seconds - result.seconds
    console.print(f"Wall time {seconds:.0f} s: building {probe.build_seconds:.0f} s, measuring "
                  f"{probe.measure_seconds:.0f} s, profiling {profiling:.0f} s, the rest (harness compiles, "
                  f"certificates) {max(0.0, result.seconds - probe.build_seconds - probe.measure_seconds):.0f} s.")


def over_bound(result: Bisect) -> str | None:
    """Why the bisect used more libraries than the one-step bound it announced (space_lines), or None."""
    bound = result.space.midpoint_builds() + 2
    used = len(result.probe.libs) + sum(1 for b in result.probe.builds if b.problem)
    if used <= bound:
        return None
    found = [b for b in result.outcome.boundaries if b.kind == "step"]
    reasons = []
    if len(found) > 1:
        reasons.append(f"the change is spread over {len(found)} steps, and each was searched to its release")
    if any(b.kind != "step" for b in result.outcome.boundaries) or result.outcome.status == "not-monotonic":
        reasons.append("a midpoint fell outside its ends or could not be told apart, so both halves were searched")
    if any(b.problem for b in result.probe.builds):
        reasons.append("a midpoint did not build, so a neighbour was tried in its place")
    failed = sum(1 for b in result.probe.builds if b.problem)
    counted = f"{used} ({len(result.probe.libs)} used, {failed} that did not build)" if failed else f"{used}"
    return (f"That is {counted}, over the {bound} a change in one step needs: "
            f"{'; '.join(reasons) or 'both halves of an interval were searched'}.")


def stored_summary(data: dict) -> list[str]:
    """A stored bisect (its run's settings["bisect"]) in a few lines, for `runs show`."""
    points = [p.split(" ")[0] for p in data.get("points", [])]
    name = lambda i: points[i] if 0 <= i < len(points) else str(i)     # noqa: E731
    lines = [f"Bisect of {data.get('case')} over {len(points)} {data.get('kind')} "
             f"({name(data.get('good', 0))} good, {name(data.get('bad', 0))} bad), metric {data.get('metric')}: "
             f"{data.get('status') or 'not finished'}; {len(data.get('steps', []))} steps."]
    for boundary in data.get("boundaries", []):
        change = boundary.get("change") or {}
        share = f", {boundary['share'] * 100:.0f}% of the whole change" if boundary.get("share") is not None else ""
        figure = f"{change['percent']:+.1f}%" if "percent" in change else "no figure"
        lines.append(f"  {name(boundary['before'])} → {name(boundary['after'])} ({boundary['kind']}): "
                     f"{figure}{share}")
    return lines
