"""OpenSSL 1.1.1w's released source as a small git history with a deliberate
slow-down, for the tests of `bisect --git` and `track`. Commit identities and
dates are fixed, so the same commits get the same ids in every test and run
and their builds (keyed by the commit) are made once for all of them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}

DELAY = """
/* sslperf test: a deliberate slow-down of every digest initialisation */
__attribute__((noinline)) static void sslperf_toy_delay(void)
{
    volatile unsigned int spin = 0;
    unsigned int i;

    for (i = 0; i < 4000; i++)
        spin += i;
}
"""

LOCKED = """
#include <pthread.h>
static pthread_mutex_t sslperf_toy_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void sslperf_toy_locked_delay(void)
{
    pthread_mutex_lock(&sslperf_toy_lock);
    sslperf_toy_delay();
    pthread_mutex_unlock(&sslperf_toy_lock);
}
"""


def git(repo: Path, *args: str, env: dict | None = None) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **GIT_ENV, **(env or {})}).stdout.strip()


def commit_all(repo: Path, message: str, hour: int | None = None) -> str:
    """Commit everything; with `hour`, at 2026-01-01 that hour (UTC) as author and committer."""
    dated = {} if hour is None else {"GIT_AUTHOR_DATE": f"2026-01-01T{hour:02d}:00:00Z",
                                     "GIT_COMMITTER_DATE": f"2026-01-01T{hour:02d}:00:00Z"}
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, env=dated)
    return git(repo, "rev-parse", "HEAD")


def openssl_history(cache_dir: str, repo: Path, extra: tuple[str, ...] = ()) -> list[str]:
    """Commits, oldest first: 1.1.1w as released, the slow-down (in
    EVP_DigestInit_ex), a harmless README line; then `extra` ones:
    "harmless" (another README line), "locked" (the delay behind one global
    mutex: the same speed on one thread, no gain from a second) or "broken"
    (Configure that perl cannot run, so the build fails at once)."""
    source = next(Path(cache_dir, "sources").glob("openssl-src-*+1.1.1w")) / "openssl"
    shutil.copytree(source, repo)
    git(repo, "init", "-q", "-b", "main")
    shas = [commit_all(repo, "OpenSSL 1.1.1w as released", 0)]
    digest_c = repo / "crypto" / "evp" / "digest.c"
    text = digest_c.read_text()
    head = "int EVP_DigestInit_ex(EVP_MD_CTX *ctx, const EVP_MD *type, ENGINE *impl)\n{\n"
    assert head in text
    digest_c.write_text(text.replace(head, DELAY + head + "    sslperf_toy_delay();\n", 1))
    shas.append(commit_all(repo, "Slow down EVP_DigestInit_ex", 1))
    (repo / "README").write_text((repo / "README").read_text() + "Another harmless line.\n")
    shas.append(commit_all(repo, "Harmless: another README line", 2))
    for hour, kind in enumerate(extra, start=3):
        if kind == "harmless":
            (repo / "README").write_text((repo / "README").read_text() + f"Harmless line {hour}.\n")
            shas.append(commit_all(repo, f"Harmless: README line {hour}", hour))
        elif kind == "locked":
            # Every digest initialisation's delay behind one global lock: threads now wait for each other there,
            # so the rate stops growing with threads (what a scaling bisect must find and explain).
            digest_c = repo / "crypto" / "evp" / "digest.c"
            text = digest_c.read_text()
            text = text.replace("    sslperf_toy_delay();\n", "    sslperf_toy_locked_delay();\n", 1)
            text = text.replace(DELAY, DELAY + LOCKED, 1)
            digest_c.write_text(text)
            shas.append(commit_all(repo, "Serialise the delay behind a global lock", hour))
        elif kind == "broken":
            (repo / "Configure").write_text("this is not perl (\n")
            shas.append(commit_all(repo, "Break Configure", hour))
        else:
            raise ValueError(kind)
    return shas
