"""A request sent as JSON (`sslperf measure-request FILE`, what a fleet worker runs) checked before anything runs:
its size and nesting, then every field's type and range, with the limits the verbs' own options keep
(measure.limits), so a file can ask for nothing the command line would refuse. A request that fails is one
paragraph naming the field and its value (escaped and shortened); text a run keeps from it (its source, its
labels) is escaped as an import's is (importers' `visible`), and ids with control characters are refused.

    fields = request_check.checked(data, "request.json")      # Request's fields, each checked
"""

from __future__ import annotations

import json
import math
import re

from sslperf.errors import SslperfError
from sslperf.untrusted import BAD_CHARS, json_too_deep, shorten, visible
from sslperf.measure import environment, limits, plan, suites, verbs
from sslperf import pinning
from sslperf.measure.limits import Bound
from sslperf.measure.modes import registry, threads, transfer_tcp
from sslperf.measure.settings import RECORDED

HINT = ("A request is what `sslperf fleet` sends each machine; make it with `sslperf fleet` and the same sslperf "
        "version on both sides (its verbs hold their options to the same limits, see their --help).")
SHOWN = 60              # characters of a value an error quotes
# Labels a request may not set: the settings a run records, and what imports, merges, compare, bisect, track and
# offload keep in a run's settings (runs show and the reports read them as theirs).
NOT_LABELS = RECORDED | {"source", "file", "format", "lib_runs", "merged_from", "picked_as", "bisect", "track",
                         "afalg", "case"}
LABEL_KEY = re.compile(r"[a-z][a-z0-9_-]*")
TUNING = frozenset(flag for _, flag in verbs.TUNING) | {"--seconds"}      # scale's own


class Refused(Exception):
    """One field that is wrong: where it is (`settings.samples`; "": the whole file), what is wrong with it and,
    where there is better advice than HINT, what to do."""

    def __init__(self, where: str, problem: str, hint: str | None = None):
        super().__init__(where, problem)
        self.where, self.problem, self.hint = where, problem, hint


def _at(where: str, key: str) -> str:
    """The path of a field inside `where` (`options.memory`), its name escaped and shortened."""
    key = shorten(visible(key), SHOWN)
    return f"{where}.{key}" if where else key


class Odd:
    """What the decoder found where a number should be and no field may hold (NaN, a 5000-digit number): kept
    until a field's check names it, so the error says where it is."""

    def __init__(self, said: str):
        self.said = said


def said(value) -> str:
    """A value as an error quotes it: escaped, shortened, a container by its kind."""
    if isinstance(value, Odd):
        return value.said
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "a list"
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, str):
        return f"the text `{shorten(visible(value), SHOWN)}`"
    return shorten(f"{value:g}" if isinstance(value, float) else str(value), 24)


# ---- the file: size, encoding, nesting, JSON -------------------------------------------------------------------

def decoded(data: bytes | str) -> object:
    """The JSON value of a request file's content, or Refused: larger than limits.REQUEST_BYTES, not UTF-8,
    nested deeper than any request (no decoder recursion), not JSON, or a field given twice."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > limits.REQUEST_BYTES:
        raise Refused("", f"is larger than the {limits.REQUEST_BYTES // 1024 ** 2} MiB a request may be (real ones are "
                          "a few KB)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused("", f"is not UTF-8 text (byte {exc.start})") from None
    deep = json_too_deep(text)
    if deep is not None:
        raise Refused("", f"nests objects or lists deeper than a request does (at character {deep})")
    try:
        return json.loads(text, parse_constant=lambda name: Odd(name), parse_int=_int,
                          object_pairs_hook=_object_once)
    except ValueError as exc:          # JSONDecodeError: where the text stops being JSON
        raise Refused("", f"is not JSON ({shorten(visible(str(exc)), 80)})") from None


def _int(digits: str):
    return int(digits) if len(digits) <= 20 else Odd(f"a number of {len(digits)} digits")


def _object_once(pairs: list) -> dict:
    made = {}
    for key, value in pairs:
        if key in made:
            raise Refused("", f"gives the field `{shorten(visible(key), SHOWN)}` twice")
        made[key] = value
    return made


# ---- one value each ---------------------------------------------------------------------------------------------

def integer(bound: Bound):
    def check(value, where):
        if type(value) is not int or value not in bound:    # bool is an int: never a count
            raise Refused(where, f"is {said(value)}; it takes a whole number from {bound.said()}")
        return value
    return check


def number(bound: Bound):
    def check(value, where):
        if type(value) not in (int, float) or not math.isfinite(value) or value not in bound:
            raise Refused(where, f"is {said(value)}; it takes a finite number from {bound.said()}")
        return value
    return check


def flag(value, where):
    if type(value) is not bool:
        raise Refused(where, f"is {said(value)}; it takes true or false")
    return value


def choice(choices):
    def check(value, where):
        if not isinstance(value, str) or value not in choices:
            raise Refused(where, f"is {said(value)}; it takes one of {', '.join(sorted(choices))}")
        return value
    return check


def optional(inner):
    return lambda value, where: None if value is None else inner(value, where)


def text(value, where, most: int = limits.TEXT_CHARS) -> str:
    """Free text a run keeps (a source, a label): its control characters written as escapes, as an import's."""
    if not isinstance(value, str) or not value.strip():
        raise Refused(where, f"is {said(value)}; it takes a text that is not blank")
    if len(value) > most:
        raise Refused(where, f"is {said(value)}, longer than the {most:,} characters it may be")
    return visible(value)


def name(most: int):
    """An id (a library, a case, a version): refused with a control character, never escaped into another id."""
    def check(value, where):
        if not isinstance(value, str) or not value.strip():
            raise Refused(where, f"is {said(value)}; it takes a name that is not blank")
        if BAD_CHARS.search(value):
            raise Refused(where, f"is {said(value)}, which holds control characters")
        if len(value) > most:
            raise Refused(where, f"is {said(value)}, longer than the {most:,} characters it may be")
        return value
    return check


def listed(item, least: int = 0, most: int = limits.LIST_ITEMS):
    def check(value, where):
        if not isinstance(value, list):
            raise Refused(where, f"is {said(value)}; it takes a list")
        if not least <= len(value) <= most:
            raise Refused(where, f"holds {len(value):,} items; it takes {least:,} to {most:,}")
        return [item(v, f"{where}[{i}]") for i, v in enumerate(value)]
    return check


def fields(checks: dict, required: bool = False):
    """An object of exactly these fields (each its check); `required`: all of them given."""
    def check(value, where):
        if not isinstance(value, dict):
            raise Refused(where, f"is {said(value)}; it takes an object")
        for key in value:
            if key not in checks:
                raise Refused(_at(where, key), "is not a field sslperf knows there")
        missing = [key for key in checks if key not in value] if required else []
        if missing:
            raise Refused(_at(where, missing[0]), "is missing")
        return {key: checks[key](v, _at(where, key)) for key, v in value.items()}
    return check


def cpu(value, where):
    number_ = integer(limits.CPU)(value, where)
    if number_ not in pinning.allowed():
        raise Refused(where, f"is CPU {number_}, which is not one this process may run on")
    return number_


# ---- what a request holds ---------------------------------------------------------------------------------------

SETTINGS = fields({
    "target_ms": number(limits.TARGET_MS),
    "samples": integer(limits.SAMPLES),
    "mask": optional(choice(environment.MASKS)),
    "warmup_samples": integer(limits.WARMUP_SAMPLES),
    "processes": integer(limits.PROCESSES),
    "cpu": optional(cpu),
    "counter": choice(("time", "instructions")),
    "fixed_layout": optional(flag),
    "count_exact_once": flag,
}, required=True)

_LIB = name(limits.LIB_NAME_CHARS)
_VERSION = name(80)                     # a curl or server version (`8.17`, `1.26.3-1`)
_GETS = {"requests": integer(limits.REQUESTS), "server": optional(_LIB)}
_CPUS = listed(cpu, 1, int(limits.THREADS.high))


def _ARG(value, where):
    """One argument of a command (exec): any text without a NUL, which no argv can hold."""
    if not isinstance(value, str):
        raise Refused(where, f"is {said(value)}; it takes a text")
    if "\0" in value or len(value) > limits.TEXT_CHARS:
        raise Refused(where, f"is {said(value)}: an argument holds no NUL and at most {limits.TEXT_CHARS:,} characters")
    return value

# Each mode's Options (the registry's), field by field; tests/test_request_validation.py checks that every field of
# every mode's options is here, so a new one cannot go unchecked.
OPTIONS = {
    "threads": fields({"milliseconds": integer(limits.THREAD_MS), "pin": flag,
                       "one_thread_rounds": integer(limits.ONE_THREAD_ROUNDS), "explain": flag}),
    "loopback": fields(_GETS),
    "quic": fields(_GETS),
    "curl": fields({**_GETS, "curl": optional(_VERSION)}),
    "transfer-tcp": fields({"milliseconds": integer(Bound(transfer_tcp.MIN_MS, limits.TIME_MS.high))}),
    "memory": fields({"connections": listed(integer(limits.CONNECTIONS), 1, limits.COUNTS)}),
    "serve": fields({"load": fields({"connections": integer(limits.SERVE_CONNECTIONS),
                                     "seconds": number(limits.SERVE_SECONDS),
                                     "warmup_seconds": number(limits.SERVE_WARMUP),
                                     "threads": integer(limits.WRK_THREADS)}),
                     "server_cpus": optional(_CPUS), "client_cpus": optional(_CPUS),
                     "port": optional(integer(limits.PORT)), "version": optional(_VERSION)}),
    "exec": fields({"command": listed(_ARG, 0, limits.EXEC_ARGS), "runs": integer(limits.EXEC_RUNS),
                    "warmup": integer(limits.EXEC_WARMUP), "prepare": listed(_ARG, 0, limits.EXEC_ARGS),
                    "setup": listed(_ARG, 0, limits.EXEC_ARGS), "cleanup": listed(_ARG, 0, limits.EXEC_ARGS),
                    "timeout": number(limits.EXEC_TIMEOUT), "server": optional(_LIB)}),
}


def label(value, where):
    """A label's value: a short text (escaped), a number, true/false or null — never an object a reader of the
    run's settings would take for a setting's."""
    if isinstance(value, str):
        return text(value, where)
    if value is None or type(value) is bool or type(value) is int:
        return value
    if type(value) is float and math.isfinite(value):
        return value
    raise Refused(where, f"is {said(value)}; a label is a text, a number, true, false or null")


def labels(value, where):
    if not isinstance(value, dict):
        raise Refused(where, f"is {said(value)}; it takes an object")
    if len(value) > limits.LABELS:
        raise Refused(where, f"holds {len(value)} labels; a request has at most {limits.LABELS}")
    for key in value:
        at = _at(where, key)
        if BAD_CHARS.search(key):
            raise Refused(at, "is a label name that holds control characters")
        if key in NOT_LABELS:
            raise Refused(at, "is named like a setting the run records (or the store keeps); a label cannot "
                              "replace it")
        if len(key) > limits.LABEL_KEY_CHARS or not LABEL_KEY.fullmatch(key):
            raise Refused(at, f"is not a label name (lower-case letters, digits, - and _, at most "
                              f"{limits.LABEL_KEY_CHARS} characters)")
    return {key: label(v, _at(where, key)) for key, v in value.items()}


TOP = {
    "source": text,
    "libs": listed(_LIB, 1, limits.LIBS),
    "cases": listed(name(limits.NAME_CHARS), 1),
    "settings": SETTINGS,
    "labels": labels,
    "providers": listed(choice(("default", "fips")), 0, 2),
    "fips_modules": listed(_LIB, 0, limits.LIBS),
    "tuning": listed(choice(TUNING), 0, 2 * len(TUNING)),      # a warning names each; a few, maybe repeated
    "options": fields(OPTIONS),
    "repeat": integer(Bound(1, limits.NOISE_RUNS.high)),
}
REQUIRED = ("source", "libs", "cases", "settings")


def checked(data: bytes | str, origin: str = "the request") -> dict:
    """Request's fields from a request file's content, each checked (cases parsed, options still in their JSON
    form); otherwise an SslperfError (exit 2) naming `origin`, the field and its value."""
    try:
        value = decoded(data)
        if not isinstance(value, dict):
            raise Refused("", f"is {said(value)}, not a JSON object of a request's fields")
        for key in REQUIRED:
            if key not in value:
                raise Refused(key, "is missing")
        made = fields(TOP)(value, "")
        made["cases"] = _cases(made["cases"], made["settings"]["counter"])
        _cross_checks(made)
        return made
    except Refused as exc:
        origin = shorten(visible(origin), 2 * SHOWN)
        said_ = f"{origin}: {exc.where} {exc.problem}" if exc.where else f"{origin} {exc.problem}"
        raise SslperfError(f"{said_}. Nothing was measured or stored.", hint=exc.hint or HINT) from None


def _cases(ids: list[str], counter: str) -> list[str]:
    """Each id as the case parser reads it, and measured by some mode with this counter; the id quoted shortened."""
    found = []
    for index, text_ in enumerate(ids):
        where = f"cases[{index}]"
        try:
            case = suites.parse_case(text_)
            registry.mode_of(case, counter)
        except SslperfError as exc:
            problem = exc.message if len(text_) <= SHOWN else f"`{shorten(text_, SHOWN)}` is not a case sslperf knows"
            raise Refused(where, f"is refused: {problem.rstrip('.')}", exc.hint) from None
        # A sweep's case names its thread count, which the parser takes as any size: held to --threads' limit.
        if case.template == "threads" and int(case.part("size")) not in limits.THREADS:
            raise Refused(where, f"is `{case.id}`, {int(case.part('size'))} threads; a sweep takes "
                                 f"{limits.THREADS.said()} (the limit of --threads and --clients)")
        found.append(case.id)
    return found


def _cross_checks(made: dict) -> None:
    """What the verbs check across options: valgrind for instruction counts, a thread sweep's length, and
    serve-load's CPUs apart and its port free."""
    from sslperf.measure import instructions
    from sslperf.serve_load.load import check_port

    settings, options = made["settings"], made.get("options") or {}
    if settings["counter"] == "instructions":
        instructions.valgrind()             # missing valgrind: said before anything runs, as the verbs say it
    swept = [case for case in map(suites.parse_case, made["cases"])
             if case.template == "threads" and case.part("mode") != "clients"]
    if swept:
        ms = (options.get("threads") or {}).get("milliseconds", threads.Options().milliseconds)
        plan.check_threads(swept, made["libs"], [1], ms / 1000, settings["processes"])
    serve = options.get("serve") or {}
    if serve.get("server_cpus") and serve.get("client_cpus") and set(serve["server_cpus"]) & set(serve["client_cpus"]):
        raise Refused("options.serve.client_cpus", "shares CPUs with server_cpus; wrk would compete with the server")
    if serve.get("port") is not None:
        check_port(serve["port"])
