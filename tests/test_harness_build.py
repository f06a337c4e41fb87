"""Compiling the harness: a file at a time through ccache, every path in the
compile lines relative, so a harness against the same headers from another
directory (a bisect's next commit, a copied build) compiles nothing again."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from sslperf.measure import harness_build, harness_client

COMPILE = ("import sys; from sslperf.libs import installed; from sslperf.measure.harness_client import harness_binary; "
           "print(harness_binary(installed.find('system')))")


def ccache_counts(store: Path) -> dict[str, int]:
    said = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "CCACHE_DIR": str(store)})
    assert said.returncode == 0, said.stderr
    counts = dict(line.split("\t") for line in said.stdout.splitlines() if "\t" in line)
    return {key: int(counts.get(key, 0)) for key in ("direct_cache_hit", "preprocessed_cache_hit", "cache_miss")}


def test_the_harness_compiled_again_elsewhere_takes_every_file_from_ccache(tmp_path):
    assert shutil.which("ccache"), "scripts/bootstrap.sh installs ccache"
    files = sum(1 for p in harness_client._sources("openssl") if p.suffix == ".c")
    store = tmp_path / "ccache"
    binaries = []
    for n in (1, 2):        # two caches, as two machines of a fleet or a test's private cache: nothing shared but ccache
        env = {**os.environ, "SSLPERF_CCACHE_DIR": str(store), "SSLPERF_CACHE_DIR": str(tmp_path / f"cache{n}"),
               "SSLPERF_DATA_DIR": str(tmp_path / f"data{n}")}
        said = subprocess.run([sys.executable, "-c", COMPILE], capture_output=True, text=True, timeout=300, env=env)
        assert said.returncode == 0, said.stderr
        binaries.append(Path(said.stdout.strip()))
        counts = ccache_counts(store)
        assert counts["cache_miss"] == files, counts                 # the first compiled each file once
        assert counts["direct_cache_hit"] == (n - 1) * files, counts  # the second found every one
    assert binaries[0] != binaries[1] and binaries[0].read_bytes() == binaries[1].read_bytes()
    info = subprocess.run([binaries[1], "info"], capture_output=True, text=True, timeout=60)
    assert info.returncode == 0 and '"type":"info"' in info.stdout, info.stdout + info.stderr


def test_absolute_include_directories_are_named_through_links_in_the_work_directory(tmp_path):
    headers = tmp_path / "some" / "prefix" / "include"
    headers.mkdir(parents=True)
    flags = harness_build._relative_includes([f"-I{headers}", "-DX=1", "-Irelative", f"-I{tmp_path}"], tmp_path)
    assert flags == ["-Iinc/0", "-DX=1", "-Irelative", "-Iinc/1"]
    assert (tmp_path / "inc" / "0").resolve() == headers and (tmp_path / "inc" / "1").resolve() == tmp_path
