"""`sslperf track` on a real git history of OpenSSL 1.1.1w with a deliberate
slow-down: commit by commit, newest first, in calls of a few; nothing
measured twice; a commit that does not build skipped with its reason and not
tried again; and `sslperf regressions` finds the change point at the
commit that made it."""

from __future__ import annotations

import json
import re

import pytest
from conftest import run_cli
from toy_history import openssl_history

from sslperf.errors import SslperfError
from sslperf.track import first_parent

pytestmark = pytest.mark.slow
CASE = "digest/sha256/16"


def track(repo, *extra: str):
    return run_cli("track", "--git", repo, "--branch", "main", "--case", CASE, "--metric", "instructions", *extra,
                   timeout=3600)


# With the tests that run alone: the counted batch is sized by the wall clock (instructions.batch), so two commits of
# the same code can count slightly different batches (even alone: 128 operations against 256 once). With two points
# either side of the change that spread does not hide it; alone, the batches stay as close as they can.
@pytest.mark.timing
def test_a_branch_is_tracked_commit_by_commit_and_its_change_point_found(built_openssl, in_e2e_cache, tmp_path,
                                                                        monkeypatch):
    # A store of its own: other tests of the session store runs of the same commits' builds, which `regressions`
    # would read as points of the same series.
    monkeypatch.setenv("SSLPERF_DATA_DIR", str(tmp_path / "data"))
    # The release the branch starts from, counted first as a user would have it: the slow-down comes at the history's
    # second commit, and a change point needs two points before it (E-divisive splits no segment of one point; with
    # one, the change was found only while the later commits' counts tied exactly, and a fresh run's did not).
    release = run_cli("speed", "--lib", built_openssl, "--case", CASE, "--metric", "instructions")
    assert release.returncode == 0, release.stdout + release.stderr
    repo = tmp_path / "openssl"
    shas = openssl_history(in_e2e_cache["SSLPERF_CACHE_DIR"], repo, ("harmless", "broken"))
    base, slow, broken = shas[0], shas[1], shas[-1]
    assert [c.sha for c in first_parent(repo, "main", 10)] == shas[::-1]        # newest first
    first = track(repo, "--limit", "2")
    assert first.returncode == 0, first.stdout + first.stderr
    assert f"skipped {broken[:10]}" in first.stdout and "Configure" in first.stdout
    assert re.search(r"Tracked 1 commit\(s\) of main, skipped 1; .*3 commit\(s\) left", first.stdout), first.stdout
    second = track(repo, "--limit", "10")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "Tracked 3 commit(s) of main, skipped 0" in second.stdout and "0 commit(s) left" in second.stdout
    assert broken[:10] not in second.stdout                                      # not tried again
    third = track(repo)
    assert third.returncode == 0 and "Nothing to do" in third.stdout, third.stdout
    runs = [r for r in json.loads(run_cli("runs", "list", "--json").stdout) if r["source"] == "sslperf track"]
    assert len(runs) == 5                       # four commits measured, one recorded as skipped
    asked = run_cli("regressions", "--metric", "instructions", "--json")
    assert asked.returncode == 0 and "Warning" not in asked.stderr, asked.stderr   # scipy's on equal exact counts
    regressions = json.loads(asked.stdout)
    found = regressions["change_points"]
    assert len(found) == 1, json.dumps(regressions)[:3000]
    [change] = found
    assert change["index"] == 2                         # the release, the history's first commit, then the slow one
    assert change["to"]["lib"].endswith(f"-g{slow[:10]}") and change["from"]["lib"].endswith(f"-g{base[:10]}")
    assert change["verdict"] == "slower" and change["percent"] < -20
    assert change["bisect"][5:9] == ["--good", base[:10], "--bad", slow[:10]]


def test_a_directory_that_is_not_a_clone_is_a_clear_error(tmp_path):
    with pytest.raises(SslperfError, match="is not a git repository"):
        first_parent(tmp_path, "main", 5)


def test_a_loopback_case_is_tracked_in_rounds_by_the_wall_clock_beside_an_in_memory_one(built_openssl, in_e2e_cache,
                                                                                         tmp_path, monkeypatch):
    monkeypatch.setenv("SSLPERF_DATA_DIR", str(tmp_path / "data"))
    repo = tmp_path / "openssl"
    shas = openssl_history(in_e2e_cache["SSLPERF_CACHE_DIR"], repo, ("harmless", "broken"))
    loop = "tls/loopback/tls1.3/x25519/ecdsa-p256/shared"
    args = ("track", "--git", repo, "--branch", "main", "--case", CASE, "--case", loop, "--metric", "both",
            "--depth", "2", "--limit", "2")
    first = run_cli(*args, timeout=3600)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "measuring 2 case(s): wall time" in first.stdout and "measuring 1 case(s): instructions" in first.stdout
    runs = [r for r in json.loads(run_cli("runs", "list", "--json").stdout)
            if r["source"] == "sslperf track" and not r["settings"]["track"].get("skipped")]
    by_metric = {}
    for r in runs:
        assert r["settings"]["track"]["commit"] == shas[-2]            # the newest that builds
        by_metric.setdefault(r["settings"]["metric"], []).append(r["settings"]["track"]["cases"])
    # The loopback case by the wall clock only; the digest by both. Its wall-time run holds both cases, each
    # measured by its own mode in the one scheduler's rounds.
    assert by_metric["wall"] == [[CASE, loop]] and by_metric["instructions"] == [[CASE]]
    [wall_run] = [r for r in runs if r["settings"]["metric"] == "wall"]
    assert wall_run["settings"]["modes"] == ["in-memory", "loopback"] and wall_run["settings"]["processes"] >= 3
    again = run_cli(*args, timeout=3600)                                  # both metrics of every case are in hand
    assert again.returncode == 0 and "Nothing to do" in again.stdout, again.stdout
