"""A verdict as a table cell writes it: the change with its interval and evidence, `~` for no significant change,
`?` with the few words that say why (its `why` says it whole). One wording for every output that prints a Change."""

from __future__ import annotations

from sslperf.verdict.rule import Change


def change_text(change: Change | None) -> tuple[str, str]:
    """(text, style) for a change cell."""
    if change is None:
        return "", ""
    ci = (f" [{(change.low - 1) * 100:+.1f}, {(change.high - 1) * 100:+.1f}]"
          if change.low is not None and change.high is not None else "")
    basis = " cpu" if change.basis == "cpu" else ""
    if change.verdict == "~":
        return f"~ {change.percent:+.1f}%{ci} ({change.evidence()}){basis}", "dim"
    if change.verdict == "?" and change.method == "different counters":
        return "? (counted by different counters)", "yellow"
    if change.verdict == "?":
        return f"{change.percent:+.1f}% ? ({unknown_reason(change)})", "yellow"
    style = "green" if change.verdict == "faster" else "bold red"
    return f"{change.percent:+.1f}%{ci} ({change.evidence()}){basis}", style


def unknown_reason(change: Change) -> str:
    """Why a change is `?`, in a few words for a cell (its `why` says it whole)."""
    why = change.why or ""
    if "waited" in why:
        return "samples waited for the CPU"
    if "worker processes" in why:
        return "fewer than 3 processes a side"
    return "n too small"
