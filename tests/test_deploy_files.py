"""The production files are checked offline by real validators: the
Kubernetes manifests against the Kubernetes OpenAPI schemas that
kubernetes-validate ships, the GitHub workflow against the workflow schema
that check-jsonschema vendors. Each validator is also shown a broken copy
and must refuse it, so a validator that accepts anything (or a schema that
is not there) cannot pass these tests. No network: the proxies point at a
closed port while they run."""

import copy
import os
import re
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest
import yaml
from kubernetes_validate import SchemaNotFoundError

ROOT = Path(__file__).parent.parent
FLEET = ROOT / "deploy" / "kubernetes" / "fleet.yaml"
WORKFLOW = ROOT / ".github" / "workflows" / "sslperf.yml"
KUBERNETES = "1.30"       # the oldest Kubernetes the manifests are meant for
SCHEDULER = "tls://sslperf-scheduler:8786"
POOLS = {"lab-a", "lab-b"}
OFFLINE = {"http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
           "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "no_proxy": "", "NO_PROXY": ""}


@pytest.fixture
def offline(monkeypatch):
    for key, value in OFFLINE.items():
        monkeypatch.setenv(key, value)


def resources() -> list[dict]:
    return [doc for doc in yaml.safe_load_all(FLEET.read_text()) if doc]


def by_kind(kind: str) -> list[dict]:
    return [doc for doc in resources() if doc["kind"] == kind]


def validate(resource: dict) -> None:
    """kubernetes-validate with the strict schemas (an unknown field is an
    error); a kind it has no schema for is an error too, not a warning."""
    kubernetes_validate.validate(resource, KUBERNETES, strict=True)


def workers() -> dict[str, dict]:
    """The worker Deployments by pool (the --tag each worker offers)."""
    found = {}
    for deployment in by_kind("Deployment"):
        [container] = deployment["spec"]["template"]["spec"]["containers"]
        args = container.get("args", [])
        if args[:2] == ["fleet", "worker"]:
            found[args[args.index("--tag") + 1]] = deployment
    return found


def test_every_resource_is_valid_kubernetes(offline):
    kinds = [doc["kind"] for doc in resources()]
    assert sorted(kinds) == ["ConfigMap", "Deployment", "Deployment", "Deployment", "Job", "NetworkPolicy", "Service"]
    for resource in resources():
        validate(resource)


@pytest.mark.parametrize("spoil, error", [
    (lambda d: d["spec"]["template"]["spec"]["containers"][0].update(image=["not", "a", "string"]),
     kubernetes_validate.ValidationError),
    (lambda d: d["spec"]["template"]["spec"].update(nodeSelectr={"a": "b"}), kubernetes_validate.ValidationError),
    (lambda d: d["spec"].pop("selector"), kubernetes_validate.ValidationError),
    (lambda d: d.update(apiVersion="apps/v1beta7"), SchemaNotFoundError),
], ids=["wrong-type", "unknown-field", "missing-required", "unknown-api"])
def test_the_validator_refuses_a_broken_worker(offline, spoil, error):
    broken = copy.deepcopy(workers()["lab-a"])
    spoil(broken)
    with pytest.raises(error):
        validate(broken)


def test_the_scheduler_is_sslperfs_behind_the_service_the_workers_name_on_the_pods_own_address():
    [service] = by_kind("Service")
    [scheduler] = [d for d in by_kind("Deployment") if d["metadata"]["name"] == service["metadata"]["name"]]
    assert scheduler["spec"]["template"]["metadata"]["labels"].items() >= service["spec"]["selector"].items()
    [container] = scheduler["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    assert args[:2] == ["fleet", "scheduler"] and "--insecure" not in args and "command" not in container
    assert args[args.index("--host") + 1] == "$(POD_IP)"          # never every interface
    assert _env(container)["POD_IP"] == {"fieldRef": {"fieldPath": "status.podIP"}}
    assert [p["port"] for p in service["spec"]["ports"]] == [int(SCHEDULER.rsplit(":", 1)[1])]
    assert SCHEDULER == f"tls://{service['metadata']['name']}:8786"
    assert _mounted_keys(scheduler) == ["ca.pem", "scheduler.pem", "scheduler-key.pem"]


def _env(container: dict) -> dict:
    return {e["name"]: e.get("valueFrom", e.get("value")) for e in container.get("env", [])}


def _mounted_keys(workload: dict) -> list[str]:
    """The keys of the fleet's credentials Secret a pod mounts, where SSLPERF_CONFIG_DIR/fleet finds them."""
    spec = workload["spec"]["template"]["spec"]
    [container] = spec["containers"]
    [volume] = [v for v in spec["volumes"] if v["secret"]["secretName"] == "sslperf-fleet"]
    [mount] = [m for m in container["volumeMounts"] if m["name"] == volume["name"]]
    assert mount["readOnly"] and mount["mountPath"] == _env(container)["SSLPERF_CONFIG_DIR"] + "/fleet"
    assert spec["securityContext"]["fsGroup"] == spec["securityContext"]["runAsGroup"]
    return [item["key"] for item in volume["secret"]["items"]]


def _reads_the_store_password_from_a_file(container: dict, workload: dict) -> None:
    env = _env(container)
    assert env["SSLPERF_DB"] == {"configMapKeyRef": {"name": "sslperf-store", "key": "url"}}
    assert not any("secretKeyRef" in str(value) for value in env.values())       # no secret in the environment
    [volume] = [v for v in workload["spec"]["template"]["spec"]["volumes"] if v.get("secret", {}).get("secretName")
                == "sslperf-db"]
    [mount] = [m for m in container["volumeMounts"] if m["name"] == volume["name"]]
    assert env["SSLPERF_DB_PASSWORD_FILE"] == mount["mountPath"] + "/password"
    [store] = by_kind("ConfigMap")
    assert "@" in store["data"]["url"] and ":" not in store["data"]["url"].split("//")[1].split("@")[0]


def test_only_the_fleets_pods_reach_the_fleet():
    [policy] = by_kind("NetworkPolicy")
    selected = policy["spec"]["podSelector"]["matchLabels"]
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    assert policy["spec"]["ingress"] == [{"from": [{"podSelector": {"matchLabels": selected}}]}]
    for workload in by_kind("Deployment") + by_kind("Job"):
        assert workload["spec"]["template"]["metadata"]["labels"].items() >= selected.items()


def test_each_pool_has_guaranteed_whole_cpus_on_its_own_machine_type():
    pools = workers()
    assert set(pools) == POOLS
    selectors = set()
    for pool, deployment in pools.items():
        spec = deployment["spec"]["template"]["spec"]
        assert spec["nodeSelector"], pool
        selectors.add(tuple(sorted(spec["nodeSelector"].items())))
        for container in spec.get("initContainers", []) + spec["containers"]:
            resources = container["resources"]
            # Guaranteed QoS: every container has limits, and requests equal to them, for CPU and memory.
            assert set(resources["limits"]) >= {"cpu", "memory"}, (pool, container["name"])
            assert resources.get("requests", resources["limits"]) == resources["limits"], (pool, container["name"])
            # Whole CPUs (the static CPU manager gives such a container CPUs of its own).
            assert re.fullmatch(r"[1-9][0-9]*", str(resources["limits"]["cpu"])), (pool, resources["limits"]["cpu"])
        [container] = spec["containers"]
        assert container["args"] == ["fleet", "worker", "--scheduler", SCHEDULER, "--tag", pool, "--host", "$(POD_IP)"]
        env = _env(container)
        assert env["SSLPERF_HOST"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}
        assert _mounted_keys(deployment) == ["ca.pem", "worker.pem", "worker-key.pem"]
        _reads_the_store_password_from_a_file(container, deployment)
    assert len(selectors) == len(pools), "two pools select the same machines"


def test_the_client_job_runs_fleet_speed_against_the_scheduler():
    [job] = by_kind("Job")
    [container] = job["spec"]["template"]["spec"]["containers"]
    assert container["args"][:4] == ["fleet", "speed", "--scheduler", SCHEDULER]
    assert _mounted_keys(job) == ["ca.pem", "client.pem", "client-key.pem"]
    _reads_the_store_password_from_a_file(container, job)


def check_workflow(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                           str(path)], capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, **OFFLINE})


def test_the_workflow_is_valid():
    result = check_workflow(WORKFLOW)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "validation done" in result.stdout


@pytest.mark.parametrize("spoil", [
    lambda w: w["jobs"]["gate"].update({"runs_on": w["jobs"]["gate"].pop("runs-on")}),
    lambda w: w["jobs"]["fleet"]["strategy"].update({"fail-fast": "sometimes"}),
    lambda w: w["jobs"]["gate"]["steps"][0].update(run="echo both uses and run"),
], ids=["misspelt-key", "wrong-type", "uses-and-run"])
def test_the_workflow_validator_refuses_a_broken_workflow(tmp_path, spoil):
    workflow = yaml.safe_load(WORKFLOW.read_text())
    spoil(workflow)
    broken = tmp_path / "broken.yml"
    broken.write_text(yaml.safe_dump(workflow, sort_keys=False))
    result = check_workflow(broken)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Schema validation errors" in result.stdout


def test_the_workflow_measures_each_runner_into_one_store_and_gates_pull_requests():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    triggers = workflow[True]          # YAML 1.1 reads the key `on` as true
    assert "pull_request" in triggers
    fleet, gate = workflow["jobs"]["fleet"], workflow["jobs"]["gate"]
    assert set(fleet["strategy"]["matrix"]["runner"]) == {"ubuntu-24.04", "ubuntu-24.04-arm"}
    assert fleet["runs-on"] == "${{ matrix.runner }}"
    assert fleet["env"]["SSLPERF_DB"] == "${{ secrets.SSLPERF_DB }}"
    fleet_runs = " ".join(step.get("run", "") for step in fleet["steps"])
    assert "sslperf speed --quick" in fleet_runs
    assert "pull_request" in gate["if"]
    gate_runs = " ".join(step.get("run", "") for step in gate["steps"])
    assert re.search(r"sslperf speed [^\n]*--lib base --lib pr", gate_runs), "both libraries in one run"
    assert re.search(r"sslperf speed [^\n]*--lib base --lib pr --metric instructions", gate_runs)
    for run in ("count_run", "time_run"):        # each measure gated on its own run, the comment in GitHub's form
        assert re.search(rf'sslperf compare "\${run}:base" "\${run}:pr" [^>]*--format github --fail-above', gate_runs)
