"""What a measuring verb asks the scheduler for, as one object: the libraries (by name, with the providers to
measure them under), the cases (by id), the run's settings, each mode's own options and the labels the run records.
A verb makes one from its options (measure.plan), the scheduler runs it, and the fleet sends it to the machines
as JSON — the same object everywhere, never a command line.

    request = Request("sslperf speed", ["system"], ["cipher/aes-128-gcm/encrypt/16384"], settings)
    run = scheduler.measure(request, store)

A library is named as `--lib` names it, a FIPS view as its spec (`openssl-3.6:fips=openssl-3.1.2+fips`) and a
second column of one library (noise's A/A experiment) as its name and TWIN: `name_of` gives any library's.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from dataclasses import dataclass, field

from sslperf.measure.settings import Settings

TWIN = "#2"         # `system#2`: the same library as a second column, in worker processes of its own


def name_of(lib) -> str:
    """How a request names `lib` (a libs.model.Lib): its spec where it is a view, else its name."""
    return lib.spec or lib.name


@dataclass
class Request:
    source: str                                     # what the run says made it: "sslperf speed"
    libs: list[str]                                 # library names as the user gave them
    cases: list[str]                                # case ids
    settings: Settings
    options: dict[str, object] = field(default_factory=dict)     # mode name → its Options
    labels: dict = field(default_factory=dict)      # recorded in the run's settings (suite, depth …)
    providers: list[str] = field(default_factory=list)           # --provider: each library once per provider
    fips_modules: list[str] = field(default_factory=list)
    tuning: list[str] = field(default_factory=list)     # the verb's options for longer or more samples (warnings)
    repeat: int = 1         # back-to-back runs of it (noise's A/A experiment takes several; each is a run)

    def resolve(self):
        """(the libraries, the cases) this request names, each checked."""
        import dataclasses

        from sslperf.errors import SslperfError
        from sslperf.libs import fips
        from sslperf.measure.suites import parse_case

        cases = [parse_case(c) for c in self.cases]
        if self.providers or self.fips_modules:
            return fips.columns(tuple(self.libs), tuple(self.providers), tuple(self.fips_modules)), cases
        if len(set(self.libs)) != len(self.libs):
            raise SslperfError("The same library is named twice; name each library once.")
        bases = [name.removesuffix(TWIN) for name in self.libs]
        unique = list(dict.fromkeys(bases))
        found = dict(zip(unique, fips.columns(tuple(unique))))
        libs = [found[base] if name == base else
                dataclasses.replace(found[base], name=found[base].name + TWIN, spec=found[base].name + TWIN)
                for name, base in zip(self.libs, bases)]
        return libs, cases

    def run(self, store, progress=None, on_build=None, build_progress=None):
        """The run this request asks for, recorded into `store` (None: nowhere): scheduler.measure(self, …)."""
        from sslperf.measure import scheduler

        return scheduler.measure(self, store, progress, on_build=on_build, build_progress=build_progress)

    def to_json(self) -> str:
        return json.dumps({"source": self.source, "libs": self.libs, "cases": self.cases,
                           "settings": self.settings.as_dict(), "labels": self.labels, "providers": self.providers,
                           "fips_modules": self.fips_modules, "tuning": self.tuning, "repeat": self.repeat,
                           "options": {name: dataclasses.asdict(o) for name, o in self.options.items()}})

    @staticmethod
    def from_json(text: str | bytes, origin: str = "the request") -> Request:
        """A request sent as JSON, every field checked with the limits the verbs' options keep (measure.request_check);
        anything else is a one-paragraph error naming `origin` (the file), the field and its value."""
        from sslperf.measure import request_check
        from sslperf.measure.modes.registry import BY_NAME

        data = request_check.checked(text, origin)
        options = {name: _build(BY_NAME[name].options, values) for name, values in (data.get("options") or {}).items()}
        return Request(data["source"], data["libs"], data["cases"], Settings(**data["settings"]), options,
                       data.get("labels") or {}, data.get("providers") or [], data.get("fips_modules") or [],
                       data.get("tuning") or [], data.get("repeat") or 1)


def _build(cls, values: dict):
    """A dataclass from its asdict() form, nested dataclasses and tuples made again."""
    hints = typing.get_type_hints(cls)
    made = {}
    for f in dataclasses.fields(cls):
        if f.name not in values:
            continue
        value, hint = values[f.name], hints.get(f.name)
        inner = [a for a in typing.get_args(hint) if dataclasses.is_dataclass(a)] if hint else []
        if dataclasses.is_dataclass(hint) or inner:
            value = _build(hint if dataclasses.is_dataclass(hint) else inner[0], value) if value is not None else None
        elif isinstance(value, list) and hint is not None and (typing.get_origin(hint) is tuple or tuple in
                                                               typing.get_args(hint)):
            value = tuple(value)
        made[f.name] = value
    return cls(**made)
