"""The first-parent commits of a branch of a local clone, newest first."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sslperf.errors import SslperfError
from sslperf.proc import require_tool, run


@dataclass(frozen=True)
class Commit:
    sha: str
    date: str          # committer date, ISO 8601 with its offset
    subject: str


def first_parent(repo: Path, branch: str, depth: int) -> list[Commit]:
    """At most `depth` first-parent commits of `branch`, newest first."""
    git = require_tool("git", "to read the commits of the branch to track")
    if not (repo / ".git").exists() and not (repo / "HEAD").exists():
        raise SslperfError(f"--git {repo} is not a git repository.",
                           hint="Give the directory of a local clone, e.g. --git ~/src/openssl.")
    listed = run([git, "-C", repo, "log", "--first-parent", f"--max-count={depth}", "--format=%H%x09%cI%x09%s",
                  "--end-of-options", branch, "--"], timeout=120)
    if listed.returncode != 0:
        raise SslperfError(f"`{branch}` is not a branch, tag or commit of {repo}.",
                           hint=f"List its branches with `git -C {repo} branch -a`.")
    commits = []
    for line in listed.output.splitlines():
        parts = line.split("\t", 2)
        if len(parts) == 3 and len(parts[0]) == 40:
            commits.append(Commit(parts[0], parts[1], parts[2][:80]))
    return commits
