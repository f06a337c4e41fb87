"""`sslperf recommend` from start to end, without the printing: the server's
library (under its FIPS module with `fips`), the evidence (stored runs, and
what they lack measured now), the decisions, and every setting checked by
the library itself."""

from __future__ import annotations

from dataclasses import dataclass

from sslperf.errors import SslperfError
from sslperf.libs import fips, installed
from sslperf.libs.model import Lib
from sslperf.measure import scheduler
from sslperf.measure.request import Request, name_of
from sslperf.measure.scheduler import Progress
from sslperf.recommend import decide, evidence
from sslperf.recommend.check import LibraryCheck
from sslperf.recommend.fips import cost_point
from sslperf.recommend.snippets import refuse_unreadable


@dataclass
class Advised:
    lib: Lib                         # the library advised (a FIPS view with `fips`)
    result: decide.Advice
    figures: decide.Evidence


def server_lib(lib_name: str, use_fips: bool, fips_module: str | None, fmt: str) -> tuple[Lib, Lib]:
    """(the library advised, the library as it is): checked before anything is measured."""
    [lib] = fips.columns((lib_name,))
    if fips_module and not use_fips:
        raise SslperfError("--fips-module applies to --fips, which was not given.", hint="Add --fips.")
    advised = fips.with_module(lib, installed.find(fips_module) if fips_module else lib) if use_fips else lib
    refuse_unreadable(advised.name, advised.flavor, fmt)
    return advised, lib


def advise(advised: Lib, plain: Lib, use_fips: bool, clients: str, floor: int, compat: bool, runs: list, store,
           progress: Progress | None = None) -> Advised:
    """The argued settings for `advised`, from `runs` and what they lack
    measured now (kept in `store` unless it is None); with `use_fips`, also
    what the FIPS module costs against `plain` (the library as it is)."""
    def measure_on(target: Lib):
        return lambda cases, settings: scheduler.measure(
            Request("sslperf recommend", [name_of(target)], [c.id for c in cases], settings,
                    labels={"suite": "recommend"}), store, progress)

    figures = evidence.gather(advised, floor, runs, measure_on(advised), store is None)
    fips_cost = evidence.masked_aeads(plain, measure_on(plain)) if use_fips else None
    checker = LibraryCheck(advised)
    try:
        result = decide.decide(figures, advised.name, advised.flavor, advised.version_string or advised.version,
                               clients, floor, compat, checker.accepts)
    except ValueError as exc:
        raise SslperfError(f"sslperf cannot recommend settings for {advised.name}: {exc}.",
                           hint="Check `sslperf speed --quick --lib ...` runs on this library.") from None
    if use_fips:
        result.points.insert(0, cost_point(advised.name, figures, fips_cost))
    checker.verify(result)
    return Advised(advised, result, figures)
