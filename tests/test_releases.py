"""Name parsing and version resolution against a recorded crates.io index."""

import pytest

from sslperf.errors import UnknownLibrary
from sslperf.libs import releases


@pytest.mark.parametrize("text, flavor, version, variants", [
    ("openssl-3.3", "openssl", "3.3", ()),
    ("openssl-1.1.1w+minimal+Os", "openssl", "1.1.1w", ("minimal", "Os")),
    ("openssl", "openssl", None, ()),
    ("aws-lc-0.47.0", "aws-lc", "0.47.0", ()),
    ("boringssl+no-asm", "boringssl", None, ("no-asm",)),
    ("system", "system", None, ()),
    ("my-build", "my-build", None, ()),
])
def test_parse_name(text, flavor, version, variants):
    name = releases.parse_name(text)
    assert (name.flavor, name.version, name.variants) == (flavor, version, variants)
    assert str(name) == text


@pytest.mark.parametrize("bad", ["", "+minimal", "openssl-3.3+", "openssl++Os"])
def test_parse_name_rejects_malformed(bad):
    with pytest.raises(UnknownLibrary, match="not a library name"):
        releases.parse_name(bad)


@pytest.mark.parametrize("text, version, crate_version", [
    ("openssl-3.3", "3.3.2", "300.3.2+3.3.2"),
    ("openssl-3.0", "3.0.8", "300.0.13+3.0.8"),     # newest crate carrying 3.0.8 wins
    ("openssl-3.0.2", "3.0.2", "300.0.5+3.0.2"),
    ("openssl-1.1.1", "1.1.1w", "111.28.2+1.1.1w"),
    ("openssl-1.1.1w", "1.1.1w", "111.28.2+1.1.1w"),
    ("openssl-3.5", "3.5.4", "300.5.4+3.5.4"),
    ("openssl-4", "4.0.3", "400.0.2+4.0.3"),
    ("openssl", "4.0.3", "400.0.2+4.0.3"),
])
def test_resolve_short_names(recorded_index, text, version, crate_version):
    release = releases.resolve(releases.parse_name(text))
    assert release.version == version
    assert release.crate.crate_version == crate_version
    assert len(release.digest) == 64


def test_yanked_and_unlabelled_crates_are_not_offered(recorded_index):
    offered = [r.version for r in releases.offered("openssl")]
    assert "3.0.6" not in offered          # 300.0.10+3.0.6 is yanked
    assert "110.0.0" not in offered        # an early crate without the OpenSSL version
    assert offered == sorted(set(offered), key=offered.index)


def test_unknown_version_lists_the_known_series(recorded_index):
    with pytest.raises(UnknownLibrary) as info:
        releases.resolve(releases.parse_name("openssl-3.9"))
    text = str(info.value)
    assert "No OpenSSL version matches `3.9`" in text
    for newest in ("1.1.1w", "3.0.8", "3.3.2", "3.6.3", "4.0.3"):
        assert newest in text


def test_unknown_flavor_names_the_known_ones(recorded_index):
    with pytest.raises(UnknownLibrary, match="boringssl, aws-lc"):
        releases.resolve(releases.parse_name("gnutls-3.8"))
