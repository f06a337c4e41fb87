"""The search space of a bisect: every release (or commit) from one end to the
other, oldest first, each with what it takes to build it.

Releases come from the crates sslperf builds from, so the space is what the
crates carry (OpenSSL 3.0.6 was never published as a crate, for one); with
`--git`, the first-parent commits between two revisions of a local clone.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

from sslperf import paths, tempdirs
from sslperf.errors import SslperfError, UnknownLibrary
from sslperf.libs import releases, sources
from sslperf.libs.build import BuildRequest
from sslperf.proc import require_tool, run


@dataclass(frozen=True)
class Point:
    """One release or commit of the space."""
    label: str                 # what tables show: `openssl-3.0.3`, `a1b2c3d4e5 Make X faster`
    name: str                  # the library's name once built
    request: BuildRequest | None = None      # None: a library in hand (the ends may be)


@dataclass
class Space:
    points: list[Point]        # oldest first
    good: int                  # index of the good end: 0 or len(points) - 1
    kind: str                  # "releases" or "commits"
    note: str = ""             # e.g. which releases the crates do not carry

    @property
    def bad(self) -> int:
        return len(self.points) - 1 - self.good

    def midpoint_builds(self) -> int:
        """Midpoints a bisect of one step needs: ceil(log2(N - 1)) for N points."""
        interior = len(self.points) - 1
        return max(0, (interior - 1).bit_length()) if interior > 1 else 0


def releases_between(good: str, bad: str, jobs: int) -> Space:
    """Every release of one flavor from `good` to `bad` (either may be the older)."""
    names = [releases.parse_name(good), releases.parse_name(bad)]
    for text, name in zip((good, bad), names):
        if name.flavor not in releases.FLAVORS:
            raise UnknownLibrary(
                f"`{text}` is not a release sslperf can fetch, so it cannot be an end of a bisect over releases.",
                hint="Name releases such as `openssl-3.0.2` (see `sslperf libs available`), or bisect commits of a "
                     "local clone with --git REPO and two revisions.")
    if names[0].flavor != names[1].flavor:
        raise SslperfError(
            f"The ends `{good}` and `{bad}` are different libraries ({names[0].flavor} and {names[1].flavor}): "
            "there are no releases between them to search.",
            hint="Give two releases of one flavor, e.g. --good openssl-3.1.3 --bad openssl-3.0.2.")
    if names[0].variants != names[1].variants:
        raise SslperfError(
            f"The ends `{good}` and `{bad}` are different builds (variants {'+'.join(names[0].variants) or 'none'} "
            f"and {'+'.join(names[1].variants) or 'none'}): a bisect changes only the release.",
            hint="Give both ends the same variants; every release searched is built with them.")
    ends = [releases.resolve(n) for n in names]
    if ends[0].version == ends[1].version:
        raise SslperfError(
            f"`{good}` and `{bad}` are the same release ({names[0].flavor} {ends[0].version}): nothing lies between.",
            hint="Give two different releases, the one that is fast and the one that is slow.")
    found = releases.offered(names[0].flavor)
    versions = [r.version for r in found]
    low, high = sorted(versions.index(e.version) for e in ends)
    chosen = found[low:high + 1]
    variants = names[0].variants
    suffix = "".join(f"+{v}" for v in variants)
    points = [Point(f"{r.flavor}-{r.version}{suffix}", f"{r.flavor}-{r.version}{suffix}",
                    BuildRequest(sources.from_release(r), variants, jobs=jobs)) for r in chosen]
    good_index = 0 if versions.index(ends[0].version) == low else len(points) - 1
    return Space(points, good_index, "releases", _gaps(chosen))


def _gaps(chosen: list[releases.Release]) -> str:
    """Releases missing from a series (never published as a crate)."""
    missing = []
    for before, after in zip(chosen, chosen[1:]):
        a, b = before.version.split("."), after.version.split(".")
        if len(a) == len(b) == 3 and a[:2] == b[:2] and a[2].isdigit() and b[2].isdigit():
            missing += [".".join([*a[:2], str(n)]) for n in range(int(a[2]) + 1, int(b[2]))]
    if not missing:
        return ""
    return (f"not offered by the crates (never published, or yanked), so not searched: {', '.join(missing)} "
            "(a change there shows as a change between its neighbours)")


def commits_between(repo: Path, good: str, bad: str, jobs: int, variants: tuple[str, ...] = ()) -> Space:
    """The first-parent commits from `good` to `bad` of the local clone `repo`, each built with `variants` (an exec
    case's commits: `shared`)."""
    git = require_tool("git", "to read the commits of --git")
    repo = repo.expanduser()
    if not (repo / ".git").exists() and not _is_bare(git, repo):
        raise SslperfError(f"--git {repo} is not a git repository.",
                           hint="Give the directory of a local clone, e.g. --git ~/src/openssl.")
    commit = {}
    for end in (good, bad):
        result = run([git, "-C", repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{end}^{{commit}}"],
                     timeout=60)
        if result.returncode != 0:
            raise SslperfError(f"`{end}` is not a commit, tag or branch of {repo}.",
                               hint=f"List its tags with `git -C {repo} tag`; give two of them (or commit ids).")
        commit[end] = result.output.strip()
    if commit[good] == commit[bad]:
        raise SslperfError(f"`{good}` and `{bad}` are the same commit ({commit[good][:12]}) of {repo}.",
                           hint="Give the revision that is fast and the one that is slow.")
    if _ancestor(git, repo, commit[good], commit[bad]):
        old, new = commit[good], commit[bad]
    elif _ancestor(git, repo, commit[bad], commit[good]):
        old, new = commit[bad], commit[good]
    else:
        raise SslperfError(f"`{good}` and `{bad}` are not on one line of history in {repo}: neither contains the "
                           "other, so there is no sequence of commits between them.",
                           hint="Give two revisions of one branch (an older one and a newer one).")
    listed = run([git, "-C", repo, "rev-list", "--first-parent", "--reverse", f"{old}..{new}"], timeout=120)
    shas = [old, *listed.output.split()]
    subjects = _subjects(git, repo, shas)
    points = [Point(f"{sha[:10]} {subjects.get(sha, '')}".strip(), "", None) for sha in shas]
    space = Space(points, 0 if old == commit[good] else len(points) - 1, "commits",
                  f"first-parent commits of {repo}")
    space.points = [commit_point(git, repo, sha, point.label, jobs, variants) for sha, point in zip(shas, points)]
    return space


def _is_bare(git: str, repo: Path) -> bool:
    result = run([git, "-C", repo, "rev-parse", "--is-bare-repository"], timeout=30)
    return result.returncode == 0 and result.output.strip() == "true"


def _ancestor(git: str, repo: Path, older: str, newer: str) -> bool:
    return run([git, "-C", repo, "merge-base", "--is-ancestor", older, newer], timeout=60).returncode == 0


def _subjects(git: str, repo: Path, shas: list[str]) -> dict[str, str]:
    out = run([git, "-C", repo, "log", "--no-walk=unsorted", "--format=%H %s", *shas], timeout=120).output
    return {line[:40]: line[41:][:60] for line in out.splitlines() if re.match(r"[0-9a-f]{40} ", line)}


def commit_point(git: str, repo: Path, sha: str, label: str, jobs: int, variants: tuple[str, ...] = ()) -> Point:
    """A point that builds `sha` with `variants`, its tree exported on first use; named `openssl-3.2.0-gSHA` (and
    `+shared` for that variant: never the same name as the commit's plain build)."""
    tree = paths.subdir("sources") / f"commit-{hashlib.sha256(str(repo.resolve()).encode()).hexdigest()[:8]}-{sha[:16]}"

    def materialize() -> Path:
        if not (tree / ".sslperf-ok").exists():
            _export(git, repo, sha, tree)
        return tree

    flavor, version = _detect_at(git, repo, sha)
    name = f"{flavor}-{version}-g{sha[:10]}" + "".join(f"+{v}" for v in variants)
    source = sources.Source(flavor, version, sha, f"git {repo} {sha}", materialize)
    return Point(label, name, BuildRequest(source, variants, jobs=jobs, name=name))


def _detect_at(git: str, repo: Path, sha: str) -> tuple[str, str]:
    """Flavor and version of the tree at `sha`, from the few files that say
    them (read with `git show`, without exporting the tree)."""
    with tempdirs.private_dir("detect", cache=True) as tmp:
        for name in ("VERSION.dat", "include/openssl/opensslv.h", "include/openssl/base.h"):
            shown = run([git, "-C", repo, "show", f"{sha}:{name}"], timeout=60, keep_output=True)
            if shown.returncode == 0:
                target = Path(tmp) / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(shown.output)
        try:
            return sources.detect(Path(tmp))
        except SslperfError:
            raise SslperfError(f"Commit {sha[:12]} of {repo} is not an OpenSSL, LibreSSL, BoringSSL or AWS-LC tree "
                               "(no VERSION.dat or include/openssl/opensslv.h or base.h with a version).",
                               hint="--git takes a clone of one of those libraries.") from None


def _export(git: str, repo: Path, sha: str, tree: Path) -> None:
    staging = tempdirs.make("commit", cache=True)
    try:
        archive = staging / "tree.tar"
        result = run([git, "-C", repo, "archive", "--format=tar", "-o", archive, sha], timeout=600)
        if result.returncode != 0:
            raise SslperfError(f"`git archive {sha[:12]}` in {repo} failed: {result.output.strip()[-300:]}")
        with tarfile.open(archive) as tar:
            paths.unpack(tar, staging / "tree")
        (staging / "tree" / ".sslperf-ok").write_text(sha + "\n")
        if tree.exists():
            shutil.rmtree(tree)
        (staging / "tree").rename(tree)
    finally:
        tempdirs.remove(staging)
