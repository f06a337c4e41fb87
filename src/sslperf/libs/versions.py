"""Version strings of OpenSSL-family libraries: ordering and prefix matching.

OpenSSL 1.1.1 used letter suffixes (1.1.1w); 3.x and later use three numbers.
A short spec matches by whole components, so `3.3` matches `3.3.2` but not
`3.30.0`, and `1.1.1` matches `1.1.1w`.
"""

import re

_TOKEN = re.compile(r"\d+|[a-z]+")


def tokens(version: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(version.lower()))


def sort_key(version: str) -> tuple[int, ...]:
    """Numeric key: digits as numbers, a letter suffix as its alphabet rank
    (a=1 … z=26), so 1.1.1w sorts after 1.1.1v and 1.1.1 before both; a
    pre-release sorts before its release."""
    base, _, pre = version.partition("-")
    return _numbers(base) + ((0, *_numbers(pre)) if pre else (1,))   # 4.0.0-rc.1 < 4.0.0


def _numbers(text: str) -> tuple[int, ...]:
    return tuple(int(t) if t.isdigit() else sum((ord(c) - 96) * 27**i for i, c in enumerate(reversed(t)))
                 for t in tokens(text))


def is_prerelease(version: str) -> bool:
    return bool(re.search(r"-(alpha|beta|pre|rc)", version.lower()))


def matches(spec: str, version: str) -> bool:
    """True when `spec` is `version` or a leading part of it."""
    want, have = tokens(spec), tokens(version)
    return bool(want) and have[: len(want)] == want


def newest_matching(spec: str | None, versions: list[str]) -> str | None:
    """The newest release that `spec` (None: any) matches; pre-releases only
    when the spec names them exactly."""
    candidates = [
        v for v in versions
        if (spec is None and not is_prerelease(v))
        or (spec is not None and (v == spec or (matches(spec, v) and not is_prerelease(v))))
    ]
    return max(candidates, key=sort_key) if candidates else None


def series(version: str, semver: bool = False) -> str:
    """The release series: `3.3` for OpenSSL 3.3.2, `1.1.1` for 1.1.1w (before
    3.0 OpenSSL's series had three numbers); with `semver`, a crate's
    compatible range: `5` for 5.4.0, `0.47` for 0.47.0."""
    numbers = [t for t in tokens(version) if t.isdigit()]
    if semver:
        width = 2 if numbers and numbers[0] == "0" else 1
    else:
        width = 3 if numbers and int(numbers[0]) < 3 and len(numbers) >= 3 else 2
    return ".".join(numbers[:width])
