"""`sslperf bisect` on real things: the search space from the crates index
and from a real git repository, the errors for bad ends, and (slow) a whole
bisect over the commits of a real OpenSSL tree with a deliberate slow-down,
measured, explained and stored."""

from __future__ import annotations

import json
import math
import re

import pytest
from conftest import run_cli
from toy_history import commit_all, git, openssl_history

from sslperf.bisect.space import commits_between, releases_between
from sslperf.errors import SslperfError

@pytest.fixture
def version_repo(tmp_path, sslperf_dirs):
    """A git repository whose tree says it is OpenSSL 3.9.0, with a side branch merged in."""
    repo = tmp_path / "lib"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "VERSION.dat").write_text('MAJOR=3\nMINOR=9\nPATCH=0\n')
    shas = [commit_all(repo, "base")]
    git(repo, "tag", "v-old")
    for n in range(1, 4):
        (repo / "file.c").write_text(f"int x = {n};\n")
        shas.append(commit_all(repo, f"change {n}"))
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "side.c").write_text("int side;\n")
    side = commit_all(repo, "side work")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    shas.append(git(repo, "rev-parse", "HEAD"))
    git(repo, "tag", "v-new")
    return repo, shas, side


def test_an_exec_bisect_over_commits_builds_each_commit_with_its_shared_libraries(version_repo, sslperf_here,
                                                                                 monkeypatch):
    from sslperf.bisect import probe

    repo, shas, _ = version_repo
    searched = []

    def stop(space, case, *rest):
        searched.append((space, case))
        raise SslperfError("stopped before measuring")
    monkeypatch.setattr(probe, "bisect", stop)
    result = sslperf_here("bisect", "exec", "--git", repo, "--good", "v-old", "--bad", "v-new", "--no-store", "--",
                          "curl", "-s", "--version")
    assert result.returncode == 2 and "stopped before measuring" in result.stderr, result.stderr
    ((space, case),) = searched
    assert case.id.startswith("exec/curl-")
    assert [p.name for p in space.points] == [f"openssl-3.9.0-g{sha[:10]}+shared" for sha in shas]
    assert all(p.request.variants == ("shared",) and p.request.name == p.name for p in space.points)
    # A harness case's commits are built as they are: the same commits under other names.
    plain = commits_between(repo, "v-old", "v-new", jobs=1)
    assert [p.name for p in plain.points] == [f"openssl-3.9.0-g{sha[:10]}" for sha in shas]
    assert all(p.request.variants == () for p in plain.points)


def test_commits_are_the_first_parent_line_oldest_first_either_end_good(version_repo):
    repo, shas, side = version_repo
    space = commits_between(repo, "v-new", "v-old", jobs=1)     # good is the newer: a fix to find
    assert [p.request.source.digest for p in space.points] == shas
    assert side not in [p.request.source.digest for p in space.points]
    assert space.good == len(shas) - 1 and space.bad == 0
    assert space.points[1].label.endswith("change 1")
    assert space.points[0].name == f"openssl-3.9.0-g{shas[0][:10]}"
    assert commits_between(repo, "v-old", "v-new", jobs=1).good == 0
    tree = space.points[2].request.source.materialize()          # exported on first use, at that commit
    assert (tree / "file.c").read_text() == "int x = 2;\n" and not (tree / "side.c").exists()


def test_bad_git_ends_are_one_paragraph_errors(version_repo, tmp_path):
    repo, shas, side = version_repo
    with pytest.raises(SslperfError, match="not a commit, tag or branch"):
        commits_between(repo, "v-old", "no-such-tag", jobs=1)
    with pytest.raises(SslperfError, match="same commit"):
        commits_between(repo, "v-old", shas[0], jobs=1)
    git(repo, "checkout", "-q", "-b", "other", shas[1])
    (repo / "other.c").write_text("int other;\n")
    other = commit_all(repo, "other line")
    with pytest.raises(SslperfError, match="not on one line of history"):
        commits_between(repo, other, side, jobs=1)
    with pytest.raises(SslperfError, match="is not a git repository"):
        commits_between(tmp_path, "a", "b", jobs=1)


def test_releases_between_two_ends_in_release_order(recorded_index):
    space = releases_between("openssl-3.3.1", "openssl-1.1.1w", jobs=1)
    labels = [p.label for p in space.points]
    assert labels[0] == "openssl-1.1.1w" and labels[-1] == "openssl-3.3.1"
    assert labels == sorted(labels, key=lambda x: [int(t) if t.isdigit() else t
                                                  for t in re.findall(r"\d+|[a-z]+", x[8:])])
    assert "openssl-3.0.8" in labels and "openssl-3.3.2" not in labels
    assert space.good == len(labels) - 1       # the good end is the newer one here
    with_variant = releases_between("openssl-3.0.2+minimal", "openssl-3.0.8+minimal", jobs=1)
    assert all(p.name.endswith("+minimal") for p in with_variant.points)
    assert with_variant.points[0].request.variants == ("minimal",)


@pytest.mark.parametrize("good,bad,message", [
    ("openssl-3.0.8", "openssl-3.0.8", "are the same release"),
    ("openssl-3.0", "openssl-3.0.8", "are the same release"),
    ("openssl-3.0.2", "boringssl", "different libraries"),
    ("openssl-3.0.2+minimal", "openssl-3.0.8", "different builds"),
    ("openssl-9.9", "openssl-3.0.8", "No OpenSSL version matches `9.9`"),
    ("system", "openssl-3.0.8", "not a release sslperf can fetch"),
])
def test_bad_ends_are_one_paragraph_errors_before_anything_is_built(recorded_index, good, bad, message):
    result = run_cli("bisect", "digest/sha256/16", "--good", good, "--bad", bad, "--no-store")
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (recorded_index / "libs").exists() or not any((recorded_index / "libs").iterdir())


@pytest.fixture
def toy_history(built_openssl, in_e2e_cache, tmp_path):
    """OpenSSL 1.1.1w's source as a git repository of three commits: a base,
    the slow-down (in EVP_DigestInit_ex), a harmless one. (Each commit is a
    build; three are the fewest with a midpoint to search.)"""
    repo = tmp_path / "openssl"
    return repo, openssl_history(in_e2e_cache["SSLPERF_CACHE_DIR"], repo)


@pytest.mark.slow
def test_bisect_over_commits_finds_the_slow_down_explains_it_and_stores_it(toy_history, in_e2e_cache):
    repo, shas = toy_history
    result = run_cli("bisect", "digest/sha256/16", "--git", repo, "--good", shas[0], "--bad", shas[-1],
                     "--metric", "instructions", "--top", "8", timeout=3600)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "3 commits" in out
    assert "The change is between two adjacent commits" in out
    boundary = re.search(r"(\w{10}) → (\w{10}): (-\d+\.\d)%", out)
    assert boundary, out
    assert (boundary.group(1), boundary.group(2)) == (shas[0][:10], shas[1][:10])
    assert float(boundary.group(3)) < -20          # ~16,000 more instructions on a ~2,000-instruction hash
    assert "sslperf_toy_delay" in out              # the explanation names the function that was added
    used = re.search(r"Libraries used: (\d+) \((\d+) built", out)
    assert used and int(used.group(2)) <= math.ceil(math.log2(3)) + 2
    assert re.search(r"Wall time \d+ s: building \d+ s", out)
    run_id = re.search(r"stored as run (\S+)", out).group(1)
    shown = run_cli("runs", "export", run_id, "--format", "json")
    assert shown.returncode == 0, shown.stderr
    stored = json.loads(shown.stdout)
    assert stored["settings"]["suite"] == "bisect"
    assert stored["settings"]["bisect"]["boundaries"][0]["before"] == 0
    assert len({m["lib"] for m in stored["measurements"]}) == 3
    summary = run_cli("runs", "show", run_id)
    assert summary.returncode == 0, summary.stderr
    assert "Bisect of digest/sha256/16 over 3 commits" in summary.stdout
    assert f"{shas[0][:10]} → {shas[1][:10]} (step)" in summary.stdout
    drawn = run_cli("report", run_id, "--format", "png", "--out", toy_history[0].parent / "report")
    assert drawn.returncode == 0, drawn.stderr
    assert (toy_history[0].parent / "report" / "bisect.png").stat().st_size > 10_000
    # The history view draws the searched commits in history order, the slow one marked against the one before.
    history = run_cli("report", "--history", "digest/sha256/16", "--out", toy_history[0].parent / "report")
    assert history.returncode == 0, history.stderr
    text = (toy_history[0].parent / "report" / "history.html").read_text()
    marker = '<script type="application/json" id="sslperf-data">'
    data = json.loads(text[text.index(marker) + len(marker):text.index("</script>", text.index(marker))])
    [chart] = data["charts"]
    assert [label.split(" g")[-1] for label in chart["version_order"]] == [sha[:10] for sha in shas]
    slow = next(p for p in chart["points"] if p["version_label"].endswith(shas[1][:10]))
    assert slow["verdicts"]["version"]["instructions"]["verdict"] == "slower"
    assert slow["verdicts"]["version"]["instructions"]["method"] != "paired"    # steps of a bisect are not pairs



@pytest.mark.slow
@pytest.mark.timing                     # it asserts a measured change: two threads now no faster than one
def test_a_threads_case_bisect_finds_the_commit_that_stopped_scaling_and_names_its_lock(built_openssl, in_e2e_cache,
                                                                                         tmp_path):
    # The history's third commit (built by the bisect above: the same commit, the same build) against one that
    # puts the delay behind a global mutex: one thread as fast, two threads no faster than one.
    repo = tmp_path / "openssl"
    shas = openssl_history(in_e2e_cache["SSLPERF_CACHE_DIR"], repo, ("locked",))
    case = "threads/own/002/digest/sha256/16"
    # 10 worker processes a side and rounds of 0.5 s (--time: every thread's run in a round): the step it must find
    # halves the rate. With 3 (the fewest the rule tests) a fresh CI-like run got -71% [-97, +153]: one process
    # of a pair of two threads on a 2-CPU machine shared with builds, and rightly no verdict. With 5, one round
    # that another task interrupted on both sides (its two threads take both CPUs) was a fifth of the samples,
    # over the share the rule leaves out (verdict.waits.ALLOWED), and rightly `?`; with 10 it is left out.
    result = run_cli("bisect", case, "--git", repo, "--good", shas[2], "--bad", shas[3], "--processes", "10",
                     "--time", "500", timeout=3600)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    boundary = re.search(r"(\w{10}) → (\w{10}): (-\d+\.\d)%", out)
    assert boundary and (boundary.group(1), boundary.group(2)) == (shas[2][:10], shas[3][:10]), out
    assert float(boundary.group(3)) < -20             # two threads now do about what one did
    # The explanation: each side's contention at 2 threads against 1, the new lock and who took it on top.
    assert "contention at 2 threads against 1, each side" in out, out
    explained = out[out.index("Why "):]
    assert "pthread_mutex_lock ← sslperf_toy_locked_delay" in explained, explained


@pytest.mark.slow
def test_compare_explain_profiles_each_significant_slow_down(built_openssl, in_e2e_cache):
    measured = run_cli("api", "--lib", built_openssl, "--lib", "system", "--filter", "api/ssl-ctx/new",
                       "--metric", "instructions")
    assert measured.returncode == 0, measured.stdout + measured.stderr
    result = run_cli("compare", built_openssl, "system", "--metric", "instructions", "--explain", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    # OpenSSL 3's SSL_CTX_new costs several times 1.1.1w's: a slow-down to explain
    assert re.search(r"Why api/ssl-ctx/new is \d+\.\d% slower on system than on openssl-1.1.1w", out), out
    assert "Changed most by self share" in out and "Changed most by inclusive share" in out
    assert "SSL_CTX_new" in out
