import pytest

from sslperf.libs import versions


def test_letter_releases_sort_after_their_base():
    ordered = ["1.1.1", "1.1.1a", "1.1.1v", "1.1.1w", "3.0.0", "3.0.9", "3.0.10", "3.5.0-alpha1", "3.5.0",
               "3.10.0", "4.0.0-rc.1", "4.0.0-rc.2", "4.0.0", "4.0.3"]
    assert sorted(reversed(ordered), key=versions.sort_key) == ordered


@pytest.mark.parametrize("spec, version, expected", [
    ("3.3", "3.3.2", True),
    ("3.3", "3.30.0", False),
    ("3", "3.6.3", True),
    ("1.1.1", "1.1.1w", True),
    ("1.1.1w", "1.1.1w", True),
    ("1.1.1w", "1.1.1v", False),
    ("3.0", "3.0.8", True),
    ("4.0.3", "4.0.2", False),
])
def test_prefix_matching(spec, version, expected):
    assert versions.matches(spec, version) is expected


def test_newest_matching_skips_prereleases_unless_named():
    offered = ["5.0.0", "5.0.1-alpha.1", "4.21.2"]
    assert versions.newest_matching(None, offered) == "5.0.0"
    assert versions.newest_matching("5", offered) == "5.0.0"
    assert versions.newest_matching("5.0.1-alpha.1", offered) == "5.0.1-alpha.1"
    assert versions.newest_matching("6", offered) is None


@pytest.mark.parametrize("version, series", [("1.1.1w", "1.1.1"), ("1.1.0i", "1.1.0"), ("3.3.2", "3.3"),
                                             ("4.0.3", "4.0")])
def test_series(version, series):
    assert versions.series(version) == series


@pytest.mark.parametrize("version, series", [("5.4.0", "5"), ("0.47.0", "0.47"), ("4.21.2", "4")])
def test_crate_series(version, series):
    assert versions.series(version, semver=True) == series
