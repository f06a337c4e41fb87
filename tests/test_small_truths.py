"""Small truths (issue 50 item 7): what sslperf says must be so — an option it suggests exists on the verb, a
package it names exists, a bound it announces holds or is explained, an example reads the way it runs, and an
explicit option is applied or refused, never ignored."""

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from sslperf.bisect import render
from sslperf.cli import declared_params
from sslperf.bisect.probe import Build
from sslperf.bisect.search import Boundary, Outcome
from sslperf.bisect.space import Point, Space
from sslperf.errors import SslperfError
from sslperf.measure import scheduler, verbs
from sslperf.proc import debian_package

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("command, params, offered, not_offered", [
    ("speed", {"time_ms": None, "samples": None, "processes": None}, "use --time to lengthen them or --samples",
     None),
    ("tls loopback", {"requests": 10, "rounds": 3}, "--rounds or --requests", "--samples"),
])
def test_the_noisy_interval_warning_names_only_options_the_verb_has(monkeypatch, command, params, offered,
                                                                     not_offered):
    """The warning told `tls loopback` (no --samples) to use --samples: the request carries the verb's own."""
    made = verbs.Request("test", ["system"], [], None)
    monkeypatch.setitem(verbs.REQUESTS, command, lambda p: made)
    tuning = verbs.from_params(command, declared_params(command, **params)).tuning
    said = scheduler._remedy(tuning)
    assert offered in said and (not_offered is None or not_offered not in said), said
    assert "--samples" not in scheduler._remedy([]) and "--time" not in scheduler._remedy([])
    from sslperf.scale import sweep

    scale = scheduler._remedy(sweep.request(("system",), ("digest/sha256/64",), (), "1,2", "own", 1.0, 3, True,
                                            False).tuning)
    assert scale == "use --seconds to lengthen them or --rounds for more"


@pytest.mark.parametrize("tool, package", [
    ("x86_64-w64-mingw32-gcc", "gcc-mingw-w64-x86-64"), ("x86_64-w64-mingw32-g++", "g++-mingw-w64-x86-64"),
    ("i686-w64-mingw32-gcc", "gcc-mingw-w64-i686"), ("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"),
    ("arm-linux-gnueabihf-g++", "g++-arm-linux-gnueabihf"), ("cc", "gcc"), ("no-such-compiler", None)])
def test_a_missing_compiler_names_the_debian_package_that_has_it(tool, package):
    """The hint named `x86_64-w64-mingw32-gcc` as a package: Debian's is gcc-mingw-w64-x86-64."""
    assert debian_package(tool) == package


def bisect_result(points: int, boundaries: list[Boundary], used: int, failed: int = 0, status: str = "found"):
    space = Space([Point(f"openssl-3.0.{i}", f"openssl-3.0.{i}") for i in range(points)], 0, "releases")
    builds = [Build(f"openssl-3.0.{i}", False, 60.0) for i in range(used)] + \
        [Build("openssl-3.0.x", False, 5.0, "did not build") for _ in range(failed)]
    probe = SimpleNamespace(libs={i: None for i in range(used)}, builds=builds)
    return SimpleNamespace(space=space, probe=probe, outcome=Outcome(status, boundaries=boundaries))


def test_a_bisect_over_its_announced_bound_says_why():
    """9 releases: a one-step change needs 3 midpoints and the 2 ends, 5 libraries; a change in two steps
    built 7 ("at most 5 builds", then 7, unexplained)."""
    step = lambda a: Boundary(a, a + 1, None, "step")          # noqa: E731
    lines = " ".join(render.space_lines(bisect_result(9, [], 0).space, "api/pem/private-key", set()))
    assert "at most" not in lines and "more when the change is spread over several steps" in lines
    assert render.over_bound(bisect_result(9, [step(2)], 5)) is None
    said = render.over_bound(bisect_result(9, [step(2), step(6)], 7))
    assert said.startswith("That is 7, over the 5 a change in one step needs") and "spread over 2 steps" in said
    assert "did not build" in render.over_bound(bisect_result(9, [step(2)], 5, failed=1))


def test_the_readmes_bisect_example_is_one_the_guide_measured():
    """The README's example had its --bad end the faster one (3.0.8 is faster than 3.0.0 at new SSL_CTXs): it
    would find nothing. It is now a search the upgrade guide ran and shows."""
    guide = (ROOT / "docs" / "guides" / "upgrade.md").read_text().splitlines()
    for page in ("README.md", "docs/index.md"):
        [example] = re.findall(r"^\$ sslperf bisect .*$", (ROOT / page).read_text(), re.M)
        assert example in guide, page


def test_workload_with_cases_is_applied_or_refused(monkeypatch):
    """`speed --workload speed-compat --case cipher/aes-128-gcm/encrypt/16384` measured the record workload."""
    settings = SimpleNamespace(counter="time")
    made = verbs.speed(None, (), ("cipher/aes-128-gcm/encrypt/16384",), "default", None, "speed-compat", settings)
    assert made.cases == ["cipher/aes-128-gcm/encrypt/16384/speed-compat"]
    both = verbs.speed(None, (), ("digest/sha256/64",), "default", None, "both", settings)
    assert both.cases == ["digest/sha256/64", "digest/sha256/64/speed-compat"]
    plain = verbs.speed(None, (), ("cipher/aes-128-gcm/encrypt/16384",), "default", None, None, settings)
    assert plain.cases == ["cipher/aes-128-gcm/encrypt/16384"]
    record = verbs.speed(None, (), ("sig/ecdsa-p256/sign",), "default", None, "record", settings)
    assert record.cases == ["sig/ecdsa-p256/sign"]          # the workload every case has: applied
    for case_ids, workload, said in (
            (("sig/ecdsa-p256/sign",), "speed-compat", "is not an encryption or digest case"),
            (("digest/sha256/64/speed-compat",), "record", "names the speed-compat workload")):
        with pytest.raises(SslperfError) as refused:
            verbs.speed(None, (), case_ids, "default", None, workload, settings)
        assert said in refused.value.message and "Nothing was measured" in refused.value.message
    with pytest.raises(SslperfError) as refused:
        verbs.speed(None, (), ("digest/sha256/64",), "default", "1350", None, settings)
    assert "--sizes" in refused.value.message
