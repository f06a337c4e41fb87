"""A probe against sslperf itself, on the same machine (issue 55): the same cases and plan measured twice — by a probe
run in a clean container with no Python (podman, the base image scripts/base-image.sh makes: Debian's essential
packages), imported, and by `sslperf speed` directly — then each case's ratio between the two libraries (the second
against the first, with its 95% interval, as `compare` gives it) from each run, side by side. The ratios should agree
within the noise floor: the probe's driver runs the scheduler's plan with the same harness.

    .venv/bin/python bench/probe_vs_direct.py --lib openssl-1.1.1w --lib openssl-3.6 \
        --case digest/sha256/1024 --case tls/handshake/tls1.3/x25519/ecdsa-p256/shared [--samples 10 --processes 5]

Needs podman and the base image (`bash scripts/base-image.sh`). Run it alone on the machine.
"""

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = "localhost/sslperf-base:bookworm"


def sslperf(*args: str, timeout: int = 3600) -> str:
    done = subprocess.run([sys.executable, "-m", "sslperf", *args], capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        sys.exit(f"sslperf {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def ratios(run_id: str) -> dict[str, tuple[float, float, float, str]]:
    """Each case's change of the second library against the first: ratio, its interval, the verdict."""
    table = json.loads(sslperf("compare", run_id, "--format", "json"))
    found = {}
    for row in table["rows"]:
        change = row["changes"][1]
        if change:
            found[row["case"]] = (change["ratio"], change["low"], change["high"], change["verdict"])
    return found


def latest_run() -> str:
    return json.loads(sslperf("runs", "export", "latest", "--format", "json"))["id"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", action="append", required=True)
    parser.add_argument("--case", action="append", required=True)
    parser.add_argument("--samples", default="10")
    parser.add_argument("--processes", default="5")
    parser.add_argument("--time", default="20")
    o = parser.parse_args()
    if len(o.lib) != 2:
        sys.exit("give two libraries: the ratio is the second's against the first")
    plan = ["--samples", o.samples, "--processes", o.processes, "--time", o.time]
    cases = [a for c in o.case for a in ("--case", c)]
    libs = [a for lib in o.lib for a in ("--lib", lib)]
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        sslperf("probe", "build", *libs, *cases, *plan, "-o", str(work / "probe.tar.gz"))
        script = ("if command -v python3 || command -v python; then exit 9; fi; cd /probe && tar xzf probe.tar.gz "
                  "&& sh sslperf-probe-*/run.sh /probe/results")
        ran = subprocess.run(["bash", str(ROOT / "scripts" / "podman.sh"), "run", "--rm", "--network=none",
                              "-v", f"{work}:/probe:Z", BASE, "sh", "-c", script], capture_output=True, text=True,
                             timeout=3600)
        if ran.returncode != 0:
            sys.exit(f"the probe failed in the container:\n{ran.stdout[-1000:]}{ran.stderr[-1000:]}")
        with tarfile.open(work / "results.tar.gz") as tar:
            assert any(n.endswith("samples.tsv") for n in tar.getnames())
        sslperf("import", str(work / "results.tar.gz"))
        probe_run = latest_run()
    sslperf("speed", *libs, *cases, *plan)
    direct_run = latest_run()
    by_probe, direct = ratios(probe_run), ratios(direct_run)
    print(f"probe run {probe_run} (in a container with no Python), direct run {direct_run}; "
          f"{o.lib[1]} against {o.lib[0]}")
    print(f"{'case':52s} {'probe ratio [95% CI]':>26s} {'direct ratio [95% CI]':>26s} {'probe/direct':>13s}")
    for case in o.case:
        p, d = by_probe.get(case), direct.get(case)
        if not p or not d:
            print(f"{case:52s} {'n/a':>26s} {'n/a':>26s}")
            continue
        inside = "inside" if d[1] <= p[0] <= d[2] else "outside"
        print(f"{case:52s} {p[0]:8.3f} [{p[1]:6.3f}, {p[2]:6.3f}] {p[3][:3]:>4s} "
              f"{d[0]:8.3f} [{d[1]:6.3f}, {d[2]:6.3f}] {d[3][:3]:>4s} {p[0] / d[0] - 1:+12.1%} ({inside} direct CI)")


if __name__ == "__main__":
    main()
