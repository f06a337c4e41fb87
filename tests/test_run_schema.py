"""The run JSON schema (docs/reference/run.schema.json, documented in docs/reference/run-json.md) against real
runs of the system library, as `--out` and `runs export --format json` write them: primitives (one case the
library may lack, so an n/a too), a thread sweep, a TLS handshake, an instruction count and an import. A run
with a field removed or of the wrong type fails, so these tests can fail for their reason; and the schema names
exactly the fields, figures, modes and families the code has, so page, schema and code cannot drift apart."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from pathlib import Path

import jsonschema
import pytest
from conftest import DATA, run_cli

from sslperf import families, figures
from sslperf.measure import environment
from sslperf.measure.modes import registry
from sslperf.measure.settings import Settings
from sslperf.results import LibInfo, Measurement, Run
from sslperf.stats import Summary

# One worker takes the module, so its real runs (the `runs` fixture) are made once, not once per worker.
pytestmark = pytest.mark.xdist_group("run-schema")

SCHEMA_FILE = Path(__file__).parent.parent / "docs" / "reference" / "run.schema.json"
SHORT = ("--time", "5", "--samples", "3", "--processes", "3")      # a few ms of measuring per case
SPEED_CASES = ("digest/sha256/64", "digest/sha256/16384", "kem/ml-kem-768/encaps")   # ML-KEM: n/a before 3.5
IMPORTED = DATA / "speed" / "bssl-boringssl-5.0.2-aead.txt"


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads(SCHEMA_FILE.read_text())


@pytest.fixture(scope="module")
def validator(schema) -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _sslperf(env: dict[str, str], *args) -> str:
    done = run_cli(*args, env=env, timeout=300)
    assert done.returncode == 0, f"sslperf {' '.join(map(str, args))} exited {done.returncode}:\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def runs(e2e_env, tmp_path_factory) -> dict[str, dict]:
    """Real runs, each as the command wrote it, in a data directory of this module's own (the end-to-end cache
    holds the system library's harness)."""
    where = tmp_path_factory.mktemp("run-schema")
    env = {**e2e_env, "SSLPERF_DATA_DIR": str(where / "data")}
    out = {name: where / f"{name}.json" for name in ("speed", "threads", "tls", "instructions")}
    _sslperf(env, "speed", "--lib", "system", *(a for c in SPEED_CASES for a in ("--case", c)), *SHORT,
             "--out", out["speed"])
    found = {"exported": json.loads(_sslperf(env, "runs", "export", "latest", "--format", "json"))}
    _sslperf(env, "speed", "--lib", "system", "--case", "digest/sha256/64", "--threads", "1,2",
             "--thread-seconds", "0.1", "--out", out["threads"])
    _sslperf(env, "tls", "handshake", "--lib", "system", "--case", "tls/handshake/tls1.3/x25519/ecdsa-p256/shared",
             *SHORT, "--out", out["tls"])
    _sslperf(env, "speed", "--lib", "system", "--case", "digest/sha256/64", "--metric", "instructions",
             "--out", out["instructions"])
    imported = re.search(r"as run (\S+)", _sslperf(env, "import", IMPORTED)).group(1)
    found["imported"] = json.loads(_sslperf(env, "runs", "export", imported, "--format", "json"))
    return {**{name: json.loads(path.read_text()) for name, path in out.items()}, **found}


def errors(validator, run: dict) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}" for e in
            sorted(validator.iter_errors(run), key=lambda e: list(map(str, e.absolute_path)))]


@pytest.mark.parametrize("name", ["speed", "exported", "threads", "tls", "instructions", "imported"])
def test_a_real_run_is_valid(runs, validator, name):
    run = runs[name]
    assert run["measurements"], f"the {name} run measured nothing"
    assert not errors(validator, run), "\n".join(errors(validator, run))


def test_the_real_runs_have_what_the_schema_describes(runs):
    """The runs above are the kinds the page describes (so a valid run is not valid for having little in it)."""
    assert runs["exported"]["settings"]["source"] == "sslperf speed"
    assert {m["case"] for m in runs["speed"]["measurements"]} == set(SPEED_CASES)
    assert runs["speed"]["settings"]["modes"] == ["in-memory"]
    assert runs["threads"]["settings"]["modes"] == ["threads"]
    assert runs["threads"]["measurements"][0]["figures"]["per_thread"]
    assert runs["tls"]["measurements"][0]["figures"]["client_cpu_ns"]
    counted = runs["instructions"]["measurements"][0]
    assert counted["counter"] in ("callgrind", "perf") and counted["figures"]["instructions"]
    assert runs["instructions"]["settings"]["counter"] == "instructions"
    assert runs["imported"]["environment"].get("imported") is True
    assert runs["imported"]["measurements"][0]["reported_rates"]
    for name in ("speed", "threads", "tls", "instructions"):
        assert {"process", "round", "start_ns"} <= set(runs[name]["measurements"][0]["figures"]), name


def test_every_fact_a_measured_run_records_is_named_in_the_schema(runs, schema):
    """The environment and settings are open objects (verbs and modes add facts), so validation alone lets an
    undocumented fact through: each one the real runs carry must be named (and so described) in the schema."""
    defs = schema["$defs"]
    for name in ("speed", "threads", "tls", "instructions"):
        run = runs[name]
        assert set(run["environment"]) <= set(defs["environment"]["properties"]), name
        assert set(run["settings"]) <= set(defs["settings"]["properties"]), name


def _without(run: dict, *path) -> dict:
    broken = copy.deepcopy(run)
    target = broken
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return broken


def _with(run: dict, value, *path) -> dict:
    broken = copy.deepcopy(run)
    target = broken
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return broken


@pytest.mark.parametrize("mutilate, where, said", [
    (lambda r: _without(r, "measurements", 0, "wall_ns"), "measurements/0", "'wall_ns' is a required property"),
    (lambda r: _without(r, "environment", "noise", "spread"), "environment/noise", "'spread' is a required"),
    (lambda r: _without(r, "state"), "(top)", "'state' is a required property"),
    (lambda r: _with(r, "many", "measurements", 0, "ops"), "measurements/0/ops", "'many' is not of type 'array'"),
    (lambda r: _with(r, [1.5], "measurements", 0, "ops"), "measurements/0/ops/0", "1.5 is not of type 'integer'"),
    (lambda r: _with(r, "fast", "measurements", 0, "status"), "measurements/0/status", "'fast' is not one of"),
    (lambda r: _with(r, {**r["measurements"][0]["figures"], "speed_mbps": [1.0]}, "measurements", 0, "figures"),
     "measurements/0/figures", "'speed_mbps'"),
    (lambda r: _with(r, "5", "settings", "processes"), "settings/processes", "'5' is not of type 'integer'"),
    (lambda r: _with(r, "yesterday", "started"), "started", "does not match"),
    (lambda r: _with(r, 1, "libs", 0, "extra"), "libs/0", "Additional properties are not allowed"),
], ids=["no-wall_ns", "no-noise-spread", "no-state", "ops-a-string", "ops-not-integers", "unknown-status",
        "undeclared-figure", "processes-a-string", "started-not-a-time", "unknown-lib-field"])
def test_a_mutilated_run_fails_where_it_was_cut(runs, validator, mutilate, where, said):
    found = errors(validator, mutilate(runs["speed"]))
    assert any(e.startswith(f"{where}: ") and said in e for e in found), found


def test_an_na_or_error_without_its_reason_fails(runs, validator):
    broken = _with(runs["speed"], "n/a", "measurements", 0, "status")
    broken["measurements"][0]["reason"] = None
    assert any(e.startswith("measurements/0/reason: ") for e in errors(validator, broken))
    broken["measurements"][0]["reason"] = "not in this version"
    assert not errors(validator, broken)


# --- the schema names what the code has ---------------------------------------------------------------------------

def _fields(cls) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def test_the_schema_lists_exactly_the_fields_of_the_result_model(schema):
    defs = schema["$defs"]
    assert set(schema["properties"]) - {"analysis"} == _fields(Run)
    assert set(defs["lib"]["properties"]) == _fields(LibInfo)
    assert set(defs["measurement"]["properties"]) - {"summary"} == _fields(Measurement)
    assert set(defs["summary"]["properties"]) == _fields(Summary) | {"ci_half_width"}
    assert _fields(Settings) <= set(defs["settings"]["properties"])
    assert set(environment.capture()) - {"fleet", "machine_mask"} <= set(defs["environment"]["properties"])


def test_the_schema_names_every_figure_mode_and_family(schema):
    measurement = schema["$defs"]["measurement"]["properties"]
    named = measurement["figures"]["anyOf"][0]["propertyNames"]["enum"]
    assert set(named) == set(figures.REGISTRY)
    assert set(schema["$defs"]["settings"]["properties"]["modes"]["items"]["enum"]) == set(registry.BY_NAME)
    assert set(measurement["family"]["enum"]) == set(families.FAMILIES) | {families.OTHER.name}
