"""`sslperf measure-request FILE` (what a fleet worker runs) checks every field of the request before anything
runs, with the limits the verbs' own options keep (measure.limits): a hostile file gives exit 2 and one paragraph
that names the field, never a traceback, and the store gains no run. A label cannot take the name of a setting the
run records, and text from a request is stored with its control characters escaped, as an import's is."""

import copy
import json

import click
import pytest
from conftest import free_port, run_cli

from sslperf.cli import declared_params
from sslperf.errors import SslperfError
from sslperf.measure import limits, scheduler, verbs
from sslperf.measure.request import Request
from sslperf.measure.settings import Settings

# A request as `sslperf speed --case kex/x25519/derive` makes it, cut to one short sample per process.
BASE = {"source": "sslperf speed", "libs": ["system"], "cases": ["kex/x25519/derive"],
        "settings": {"target_ms": 1, "samples": 3, "mask": None, "warmup_samples": 1, "processes": 1, "cpu": None,
                     "counter": "time", "fixed_layout": False, "count_exact_once": False},
        "labels": {"depth": "default", "workload": "record", "metric": "time"}, "providers": [], "fips_modules": [],
        "tuning": [], "options": {}}
LONG_ID = "cipher/" + "a" * 5000 + "/encrypt/16"


def changed(path: str, value) -> str:
    """BASE with the value at `path` ("settings.samples", "options.memory") replaced, as JSON."""
    made = copy.deepcopy(BASE)
    *parents, last = path.split(".")
    where = made
    for key in parents:
        where = where.setdefault(key, {})
    where[last] = value
    return json.dumps(made)


def raw(path: str, text: str) -> str:
    """BASE with raw JSON text (`NaN`, a 5000-digit number) at `path`, which json.dumps cannot write."""
    return changed(path, "@raw@").replace('"@raw@"', text)


HOSTILE = [
    ("top-level list", "[]", "a JSON object"),
    ("top-level string", '"sslperf speed"', "a JSON object"),
    ("not JSON", "{not json", "not JSON"),
    ("empty file", "", "not JSON"),
    ("settings a list", changed("settings", [1, 3]), "settings"),
    ("options a list", changed("options", ["memory"]), "options"),
    ("labels a list", changed("labels", ["suite"]), "labels"),
    ("libs as a string", changed("libs", "system"), "libs"),
    ("cases as an object", changed("cases", {"kex/x25519/derive": 1}), "cases"),
    ("no libs", changed("libs", []), "libs"),
    ("no cases", changed("cases", []), "cases"),
    ("string for a number", changed("settings.samples", "10"), "settings.samples"),
    ("boolean for a number", changed("settings.samples", True), "settings.samples"),
    ("fraction of a sample", changed("settings.samples", 2.5), "settings.samples"),
    ("NaN", raw("settings.target_ms", "NaN"), "NaN"),
    ("Infinity", raw("settings.target_ms", "-Infinity"), "Infinity"),
    ("negative target", changed("settings.target_ms", -1), "settings.target_ms"),
    ("absurd target", changed("settings.target_ms", 1e300), "settings.target_ms"),
    ("negative processes", changed("settings.processes", -3), "settings.processes"),
    ("10**9 samples", changed("settings.samples", 10**9), "settings.samples"),
    ("a 5000-digit number", raw("settings.samples", "9" * 5000), "settings.samples"),
    ("1e999", raw("settings.target_ms", "1e999"), "settings.target_ms"),
    ("absurd warm-up", changed("settings.warmup_samples", 10**9), "settings.warmup_samples"),
    ("absurd CPU", changed("settings.cpu", 10**9), "settings.cpu"),
    ("unknown counter", changed("settings.counter", "cycles"), "settings.counter"),
    ("unknown mask", changed("settings.mask", "no-everything"), "settings.mask"),
    ("string for a flag", changed("settings.fixed_layout", "yes"), "settings.fixed_layout"),
    ("unknown field", changed("run_as", "root"), "run_as"),
    ("unknown setting", changed("settings.evil", 1), "settings.evil"),
    ("no settings", json.dumps({k: v for k, v in BASE.items() if k != "settings"}), "settings"),
    ("missing setting", changed("settings", {"samples": 3}), "settings.target_ms"),
    ("bad case id", changed("cases", ["cipher/nosuch/encrypt/16"]), "is not a case sslperf knows"),
    ("case id with an escape", changed("cases", ["kex/x25519/derive\x1b[2J"]), "control characters"),
    ("case id not a string", changed("cases", [7]), "cases[0]"),
    ("999 threads", changed("cases", ["threads/own/999/kex/x25519/derive"]), "999 threads"),
    ("half an hour of threads", changed("cases", [f"threads/own/{n:03}/kex/x25519/derive" for n in range(1, 101)])
     .replace('"processes": 1', '"processes": 10'), "minutes"),
    ("a timed case in instructions", raw("settings.counter", '"instructions"').replace(
        "kex/x25519/derive", "tls/loopback/tls1.3/x25519/ecdsa-p256/new"), "cannot be counted in instructions"),
    ("lib with control characters", changed("libs", ["sys\x00tem"]), "control characters"),
    ("unknown provider", changed("providers", ["evil"]), "providers[0]"),
    ("unknown tuning flag", changed("tuning", ["--rm-rf"]), "tuning[0]"),
    ("unknown mode's options", changed("options.nosuch", {}), "options.nosuch"),
    ("threads absurd milliseconds", changed("options.threads", {"milliseconds": 10**9}),
     "options.threads.milliseconds"),
    ("threads negative milliseconds", changed("options.threads", {"milliseconds": -5}),
     "options.threads.milliseconds"),
    ("negative connections", changed("options.memory", {"connections": [-1]}), "options.memory.connections[0]"),
    ("absurd connections", changed("options.memory", {"connections": [10**9]}), "options.memory.connections[0]"),
    ("connections as a string", changed("options.memory", {"connections": "100,1000"}), "options.memory.connections"),
    ("no GETs", changed("options.loopback", {"requests": 0}), "options.loopback.requests"),
    ("unknown option field", changed("options.loopback", {"requests": 3, "shell": "sh"}), "options.loopback.shell"),
    ("serve-load's load a list", changed("options.serve", {"load": [1]}), "options.serve.load"),
    ("serve-load absurd seconds", changed("options.serve", {"load": {"seconds": 1e9}}), "options.serve.load.seconds"),
    ("serve-load port 0", changed("options.serve", {"port": 0}), "options.serve.port"),
    ("deeply nested object", changed("labels.suite", json.loads("[" * 50 + "]" * 50)), "nest"),
    ("deeper than the decoder", '{"labels": ' + "[" * 100_000 + "]" * 100_000 + "}", "nest"),
    ("duplicate fields", json.dumps(BASE).replace('"samples": 3', '"samples": 1000000000, "samples": 3'), "twice"),
    ("2 MB file", json.dumps(BASE) + " " * 2_000_000, "MiB"),
    ("100 KB string", changed("source", "x" * 100_000), "source"),
    ("100 KB label", changed("labels.suite", "y" * 100_000), "labels.suite"),
    ("label named like a setting", changed("labels.samples", 10**9), "labels.samples"),
    ("label named like the counter", changed("labels.counter", "instructions"), "labels.counter"),
    ("label named modes", changed("labels.modes", []), "labels.modes"),
    ("label the store owns", changed("labels.merged_from", "x"), "labels.merged_from"),
    ("label a nested object", changed("labels.suite", {"a": 1}), "labels.suite"),
    ("label key with an escape", changed("labels", {"su\x1bite": "x"}), "control characters"),
]


@pytest.fixture
def nothing_runs(monkeypatch):
    """The scheduler fails the test if a request reaches it: a refusal must come before anything starts."""
    def started(*args, **kwargs):
        raise AssertionError("a measurement started")
    monkeypatch.setattr(scheduler, "measure", started)


def refused(sslperf_here, path, needle: str) -> str:
    """`measure-request path` refused with exit 2 in one paragraph holding `needle`; its stderr."""
    result = sslperf_here("measure-request", path)
    said = result.stdout + result.stderr
    assert "Traceback" not in said and "AssertionError" not in said, said
    assert result.returncode == 2, (result.returncode, said)
    assert result.stderr.startswith("error: ") and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert needle in result.stderr, result.stderr
    assert sslperf_here("runs", "list", "--json").stdout.strip() in ("", "[]")
    return result.stderr


@pytest.mark.parametrize("name, text, needle", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_request_is_one_paragraph_exit_2_and_nothing_runs(sslperf_here, nothing_runs, tmp_path, name,
                                                                     text, needle):
    path = tmp_path / "request.json"
    path.write_text(text)
    said = refused(sslperf_here, path, needle)
    assert "\x1b" not in said and "\x00" not in said and len(said) < 2000, said    # the value escaped and shortened


def test_a_file_that_is_not_utf8_is_refused(sslperf_here, nothing_runs, tmp_path):
    path = tmp_path / "request.json"
    path.write_bytes(b'{"source": "\xff\xfe"}')
    refused(sslperf_here, path, "UTF-8")


def test_a_long_case_id_is_quoted_shortened(sslperf_here, nothing_runs, tmp_path):
    path = tmp_path / "request.json"
    path.write_text(changed("cases", [LONG_ID]))
    said = refused(sslperf_here, path, "characters")
    assert "a" * 100 not in said and "cases[0]" in said


def test_a_request_from_the_real_command_line_is_refused_alike(sslperf_dirs, tmp_path):
    """The same in a process of its own, as a fleet worker starts it."""
    path = tmp_path / "request.json"
    path.write_text(changed("settings.samples", 10**9))
    result = run_cli("measure-request", path)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "settings.samples" in result.stderr and "1000" in result.stderr, result.stderr
    assert json.loads(run_cli("runs", "list", "--json").stdout or "[]") == []


def test_what_every_verb_sends_is_accepted_again():
    """The requests the verbs make (what a fleet sends) pass the checks: the limits refuse nothing they make."""
    from sslperf.scale import sweep

    params = [("speed", {"case_ids": ("kex/x25519/derive",), "samples": 1000, "time_ms": 10000.0}),
              ("speed", {"thread_list": "1,256", "case_ids": ("kex/x25519/derive",)}),
              ("api", {}), ("tls handshake", {}), ("tls transfer", {}), ("tls transfer", {"tcp": True, "rounds": 100}),
              ("tls loopback", {"requests": 10000, "rounds": 100, "client_kind": "both"}),
              ("tls memory", {"connections": "1,100000"}), ("tls threads", {"thread_list": "1,2,4"}),
              ("tls quic", {}), ("tls quic", {"transfer": True}), ("tls quic", {"memory_": True}),
              ("tls quic", {"client_threads": "1,2"}),
              ("serve-load", {"connections": 10000, "seconds": 600, "warmup": 60, "round_count": 100,
                              "port": free_port()}),
              ("speed", {"metric": "instructions", "case_ids": ("kex/x25519/derive",)})]
    made = [verbs.from_params(command, declared_params(command, **p)) for command, p in params]
    made.append(sweep.request(None, ("kex/x25519/derive",), (), "1,2", "own", 60.0, 5, True, True))
    for request in made:
        again = Request.from_json(request.to_json())
        assert again.to_json() == request.to_json(), request.source


def test_every_field_of_every_modes_options_is_checked():
    """A field added to a mode's Options must be added to request_check's table (else a request is refused)."""
    import dataclasses

    from sslperf.measure import request_check
    from sslperf.measure.modes.registry import BY_NAME

    def names(cls, value) -> set[str]:
        return {f.name for f in dataclasses.fields(cls)}

    # Keyed as a request keys them: by the mode whose options they are (exec-instructions reads exec's).
    with_options = {mode.options_of or name: mode.options for name, mode in BY_NAME.items() if mode.options is not None}
    assert set(request_check.OPTIONS) == set(with_options)
    for name, cls in with_options.items():
        every = {f.name: f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
                 for f in dataclasses.fields(cls)}
        sent = json.loads(Request("x", ["system"], [], Settings(1, 1, cpu=None), {name: cls()}).to_json())
        assert set(sent["options"][name]) == set(every), name
        request_check.OPTIONS[name](sent["options"][name], name)       # the defaults pass


def test_the_command_line_options_keep_the_limits_a_request_keeps():
    """One declaration of each limit: the verbs' options take theirs from measure.limits."""
    from sslperf.cli import get_verb

    def option(command: str, name: str):
        verb, *sub = command.split()
        found = get_verb(verb)
        for part in sub:
            found = found.commands[part]
        return next(p for p in found.params if p.name == name).type

    for command, name, bound in (("speed", "samples", limits.SAMPLES), ("speed", "time_ms", limits.TIME_MS),
                                 ("speed", "processes", limits.PROCESSES), ("api", "thread_seconds",
                                                                             limits.THREAD_SECONDS),
                                 ("tls loopback", "requests", limits.REQUESTS), ("tls loopback", "rounds",
                                                                                  limits.ROUNDS),
                                 ("tls quic", "time_ms", limits.TIME_MS),
                                 ("serve-load", "connections", limits.SERVE_CONNECTIONS),
                                 ("serve-load", "seconds", limits.SERVE_SECONDS),
                                 ("serve-load", "round_count", limits.SERVE_ROUNDS)):
        kind = option(command, name)
        assert isinstance(kind, (click.IntRange, click.FloatRange)), (command, name)
        assert (kind.min, kind.max) == (bound.low, bound.high), (command, name)
    result = run_cli("speed", "--samples", str(limits.SAMPLES.high + 1))
    assert result.returncode == 2 and str(limits.SAMPLES.high) in result.stderr


def test_a_label_cannot_replace_a_setting_the_scheduler_records():
    """Whoever calls the scheduler (not only a request): a label named like a setting is refused before anything
    runs, so the settings a run shows are the ones it was measured with."""
    settings = Settings(1, 3, processes=1, cpu=None)
    for key in ("samples", "target_ms", "counter", "modes", "processes"):
        with pytest.raises(SslperfError, match=key):
            scheduler.measure_libs([], [], settings, None, "sslperf test", {key: 10**9})


def test_control_characters_from_a_request_are_stored_escaped(sslperf_dirs, tmp_path):
    """A real run: the source and a label with terminal sequences and NUL are kept as their escapes (as an import
    keeps names: importers' `visible`), never as raw control characters."""
    made = json.loads(changed("source", "sslperf speed\x1b[31m\x00"))
    made["labels"]["suite"] = "mine\x1b]0;pwned\x07\u2028"
    path = tmp_path / "request.json"
    path.write_text(json.dumps(made))
    result = run_cli("measure-request", path, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "\x1b[31m" not in result.stdout + result.stderr
    rows = json.loads(run_cli("runs", "list", "--json").stdout)
    assert len(rows) == 1 and rows[0]["source"] == "sslperf speed\\x1b[31m\\x00", rows
    run = json.loads(run_cli("runs", "export", rows[0]["id"]).stdout)
    assert run["settings"]["suite"] == "mine\\x1b]0;pwned\\x07\\u2028"
    assert run["settings"]["samples"] == 3 and run["settings"]["processes"] == 1
    assert run["measurements"][0]["status"] == "ok" and len(run["measurements"][0]["wall_ns"]) == 3


def test_a_bidirectional_override_is_stored_escaped_like_a_control_character():
    from sslperf.importers._common import visible

    assert visible("openssl\u202e3.0\u2066") == "openssl\\u202e3.0\\u2066" and visible("a\tb") == "a\tb"
