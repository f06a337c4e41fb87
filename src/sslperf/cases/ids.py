"""Case names, from the templates of the case catalog (sslperf.cases.catalog: the harness's tables, each family's
`ids`, see harness.h `id_template`): case
names are defined once, in C beside the code that reads them, and this
module parses and makes them from those templates alone.

    parse("cipher/aes-128-gcm/encrypt/16384")          # a Case, or None
    parse("digest/md5/16/speed-compat", strict=False)   # the shape only: imports name other algorithms
    make("tls/handshake", protocol="tls1.3", group="x25519", cert="ecdsa-p256", context="shared")

A template is segments of literals and parts: `{name}` (one segment),
`{size}` (a positive integer), `{name:03}` (an integer written with three
digits), `{name...}` (the rest of the id) and `[/{name}]` (an optional last
segment). Strictly, a part must be one of its family's values (the list
named after it with an `s`, or after it), and a family that lists its cases
(api) takes those only; the workload `record` is the default and is never
written.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from sslperf.cases import catalog, groups

DEFAULT_WORKLOAD = "record"
# The largest size in bytes a case may name (a harness buffer is that big); `--sizes` has the same bound.
MAX_SIZE = 64 * 1024 * 1024
_PART = re.compile(r"\[/\{(\w+)\}\]|\{(\w+)(?::0(\d))?(\.\.\.)?\}")


@dataclass(frozen=True)
class Case:
    id: str
    family: str
    algorithm: str
    operation: str
    size: int | None = None
    workload: str = DEFAULT_WORKLOAD

    @property
    def parts(self) -> dict[str, str | None]:
        """The id's named parts, as its template names them: {"protocol": "tls1.3", "group": "x25519", …}
        (empty when no template reads the id)."""
        return dict(_parts(self.id))

    @property
    def template(self) -> str | None:
        """The prefix of the template that reads the id (`tls/handshake`, `threads`): what kind of case it is."""
        return self.parts.get("template")

    def part(self, name: str) -> str | None:
        """One named part of the id, e.g. case.part("group"); None when the template has no such part."""
        return self.parts.get(name)

    @property
    def group(self) -> str:
        """The table a result belongs to."""
        return groups.group_of(self)


@dataclass(frozen=True)
class Template:
    key: str                       # the catalog family it is listed under
    family: str                    # the family of its results
    pattern: str
    algorithm: str                 # how Case.algorithm and .operation are made ("{group} {cert}")
    operation: str
    regex: re.Pattern
    widths: dict[str, int]         # parts written with a fixed number of digits

    @property
    def prefix(self) -> str:
        """The literal segments before the first part: `tls/handshake`, `cipher`."""
        return self.pattern.split("/{")[0].split("[")[0]

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(self.regex.groupindex)


def _compile(pattern: str) -> tuple[re.Pattern, dict[str, int]]:
    regex, widths, at = "", {}, 0
    for m in _PART.finditer(pattern):
        regex += re.escape(pattern[at:m.start()])
        optional, name, width, rest = m.group(1), m.group(2), m.group(3), m.group(4)
        if optional:
            value = r"[1-9][0-9]*" if optional == "size" else r"[^/]+"
            regex += rf"(?:/(?P<{optional}>{value}))?"
        else:
            if width:
                widths[name] = int(width)
            value = r".+" if rest else r"[0-9]+" if width else r"[1-9][0-9]*" if name == "size" else r"[^/]+"
            regex += rf"(?P<{name}>{value})"
        at = m.end()
    return re.compile(regex + re.escape(pattern[at:])), widths


@functools.cache
def templates() -> tuple[Template, ...]:
    found = []
    for key, entry in catalog.load().items():
        for row in entry.get("ids", ()) if isinstance(entry, dict) else ():
            regex, widths = _compile(row["id"])
            found.append(Template(key, row.get("family", key), row["id"], row.get("algorithm", "{algorithm}"),
                                  row.get("operation", "{operation}"), regex, widths))
    return tuple(found)


def _choices(key: str, part: str) -> set[str] | None:
    """The values a part may take in family `key`, None when the catalog does not list them."""
    entry = catalog.load()[key]
    values = entry.get(part + "s", entry.get(part))
    if not isinstance(values, list):
        return None
    return {v["name"] if isinstance(v, dict) else v for v in values}


def _valid(template: Template, parts: dict[str, str | None]) -> bool:
    """Every listed part is one of its values (a part with no list, e.g. a threads case's inner case, is free)."""
    for name, value in parts.items():
        if name == "size" and value is not None and not size_in_bounds(value):
            return False
        if value is None or name in template.widths or name == "size" or \
                name == "workload" and value == DEFAULT_WORKLOAD:
            continue
        allowed = _choices(template.key, name)
        if allowed is not None and value not in allowed:
            return False
    return True


def size_in_bounds(text: str) -> bool:
    """Whether the digits `text` are a size from 1 to MAX_SIZE (compared by length first: int() of
    thousands of digits is refused by Python itself)."""
    return text.isdigit() and len(text.lstrip("0")) <= len(str(MAX_SIZE)) and 1 <= int(text) <= MAX_SIZE


def _case(template: Template, parts: dict[str, str | None]) -> Case:
    shown = {name: str(int(value)) if name in template.widths and value else value or ""
             for name, value in parts.items()}
    size = parts.get("size")
    return Case(format_id(template, parts), template.family, template.algorithm.format(**shown),
                template.operation.format(**shown), int(size) if size else None,
                parts.get("workload") or DEFAULT_WORKLOAD)


def parts_of(case_id: str) -> dict[str, str | None]:
    """The named parts of a case id (a result's `case`), as Case.parts gives them."""
    return dict(_parts(case_id))


@functools.lru_cache(maxsize=4096)
def _parts(text: str) -> dict[str, str | None]:
    for template in templates():
        m = template.regex.fullmatch(text)
        if m is not None:
            return {**m.groupdict(), "template": template.prefix}
    return {}


def parse(text: str, strict: bool = True) -> Case | None:
    """The Case `text` names; None when no template reads it (strictly: or a
    part is not one the catalog lists, so the harness could not prepare it)."""
    for template in templates():
        m = template.regex.fullmatch(text)
        if m is None:
            continue
        parts = m.groupdict()
        if strict:
            listed = catalog.load()[template.key].get("cases")
            if listed is not None and text not in {c["id"] for c in listed} or not _valid(template, parts):
                continue
        return _case(template, parts)
    return None


@functools.lru_cache(maxsize=4096)
def shape(text: str) -> Case | None:
    """parse(text, strict=False), kept: a result's case as Measurement.parsed reads it, again and again."""
    return parse(text, strict=False)


def format_id(template: Template, parts: dict) -> str:
    """The id of `parts` in `template` (an optional part left out when absent or the default workload)."""
    def fill(m: re.Match) -> str:
        optional, name = m.group(1), m.group(2)
        value = parts.get(optional or name)
        if optional:
            return "" if value is None or (optional == "workload" and value == DEFAULT_WORKLOAD) else f"/{value}"
        if name in template.widths:
            return f"{int(value):0{template.widths[name]}d}"
        return str(value)
    return _PART.sub(fill, template.pattern)


def make(prefix: str, **parts) -> Case:
    """The Case of the template starting with `prefix` whose parts are those given."""
    given = {k for k, v in parts.items() if v is not None}
    for template in templates():
        if template.prefix == prefix and given <= set(template.parts) and \
                all(p in given for p in template.parts if f"[/{{{p}}}]" not in template.pattern):
            return _case(template, {p: (str(parts[p]) if parts.get(p) is not None else None)
                                    for p in template.parts})
    raise ValueError(f"no case template {prefix} with parts {sorted(given)}")
