"""What an unknown case id may have meant: the ids of the catalog close to it (each part replaced by the close
value its family lists, or the close id of a family that lists its cases), and the command whose --list shows
the cases of its family (`tls/…` → `sslperf tls handshake --list`, not the primitives' `speed --list`)."""

from __future__ import annotations

from sslperf import suggest
from sslperf.cases import catalog
from sslperf.cases.ids import DEFAULT_WORKLOAD, Template, parse, templates

# The command that lists each family's cases, by the literal start of its ids (the primitives': speed).
LISTED_BY = {
    "tls/handshake": "sslperf tls handshake --list",
    "tls/resume": "sslperf tls handshake --list",
    "tls/transfer": "sslperf tls transfer --list",
    "tls/transfer-tcp": "sslperf tls transfer --tcp --list",
    "tls/loopback": "sslperf tls loopback --list",
    "tls/memory": "sslperf tls memory --list",
    "tls/quic": "sslperf tls quic --list",
    "tls/quic-transfer": "sslperf tls quic --transfer --list",
    "tls/quic-memory": "sslperf tls quic --memory --list",
    "tls/serve": "sslperf serve-load --list",
    "threads": "sslperf tls threads --list",
}
PRIMITIVES_LISTED_BY = "sslperf speed --list"


def close_ids(text: str, n: int = 3) -> list[str]:
    """Case ids the catalog takes that are close to `text`, closest first."""
    found = []
    for template in _templates_near(text):
        listed = catalog.load()[template.key].get("cases")
        if listed is not None:
            found += suggest.close(text, [c["id"] for c in listed], n)
            continue
        corrected = _corrected(template, text.split("/")[len(template.prefix.split("/")):])
        if corrected is not None and corrected != text:
            found.append(corrected)
    return suggest.close(text, found, n, cutoff=0) if found else []


def where_listed(text: str) -> str | None:
    """Where the cases of the family `text` is (or is close to) one of are listed, as a sentence; None when it
    is close to no family's."""
    near = _templates_near(text)
    if not near:
        return None
    if near[0].key == "api":            # `sslperf api` has no --list: it runs its whole catalog
        return "`sslperf api` runs every case of its family (choose some with --filter)."
    return f"`{LISTED_BY.get(near[0].prefix, PRIMITIVES_LISTED_BY)}` shows the cases of its family."


def _templates_near(text: str) -> list[Template]:
    """The templates whose literal start `text` has, or has mistyped (`tls/handshak/…`); exact ones first."""
    segments = text.strip().split("/")
    exact, close = [], []
    for template in templates():
        literal = template.prefix.split("/")
        head = segments[:len(literal)]
        if head == literal:
            exact.append(template)
        elif len(head) == len(literal) and all(a == b or suggest.close(b, [a]) for a, b in zip(literal, head)):
            close.append(template)
    return exact + close


def _corrected(template: Template, values: list[str]) -> str | None:
    """The id of `template` with `values` (the segments after its literal start) for its parts, each part that
    is not one its family lists replaced by the closest that is; None when that makes no id the catalog takes."""
    names = list(template.parts)
    pattern = template.pattern
    required = [p for p in names if f"[/{{{p}}}]" not in pattern]
    rest = next((p for p in names if f"{{{p}...}}" in pattern), None)
    if rest is not None:            # the rest of the id is one part (a threads case's inner case)
        at = names.index(rest)
        values = [*values[:at], "/".join(values[at:])] if len(values) > at else values
    if not len(required) <= len(values) <= len(names):
        return None
    parts: dict[str, str | None] = dict.fromkeys(names)
    for name, value in zip(names, values):
        free = name == "size" or name in template.widths or name == "workload" and value == DEFAULT_WORKLOAD
        choices = None if free else _choices(template.key, name)      # sizes and counts: as typed
        if choices is not None and value not in choices:
            near = suggest.close(value, choices, 1)
            if not near:
                return None
            value = near[0]
        parts[name] = value
    shown = template.prefix + "".join(f"/{parts[p]}" for p in names if parts[p] is not None)
    return shown if parse(shown) is not None else None


def _choices(key: str, part: str) -> list[str] | None:
    """The values a part may take in family `key` (as case_ids reads them), None when the catalog lists none."""
    entry = catalog.load()[key]
    values = entry.get(part + "s", entry.get(part))
    if not isinstance(values, list):
        return None
    return [str(v["name"] if isinstance(v, dict) else v) for v in values]
