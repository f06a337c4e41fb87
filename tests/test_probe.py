"""Probes (issue 55): the POSIX sh driver runs the scheduler's plan, and `sslperf import` takes back only what a
probe this sslperf built wrote. The driver's plan is checked against fake harnesses (shell scripts that speak the
serve protocol); the real thing — static harnesses of built libraries, run by dash — in the slow tests."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from conftest import ARM_LIB, WINDOWS_LIB, run_cli

from sslperf import figures
from sslperf.measure import plan, suites
from sslperf.measure.modes import base, in_memory
from sslperf.probe import archive, results

CASES = ["digest/sha256/1024", "cipher/aes-128-gcm/encrypt/16384"]
SH = shutil.which("dash") or "/bin/sh"

# A harness that speaks the serve protocol and measures nothing. FAKE_WAIT: every sample says it waited that many
# ns for its CPU (of a 1 ms sample); FAKE_DIE: this harness exits at its Nth sample (the first is the warm-up);
# FAKE_HANG: it answers nothing from its Nth sample on.
FAKE = r"""#!/bin/sh
n=0
while IFS= read -r line; do
  set -- $line
  case "$1" in
    info) echo '{"type":"info","version_string":"fake '"$FAKE_NAME"'"}' ;;
    clock) echo '{"type":"clock","monotonic_ns":'$(date +%s%N)'}' ;;
    prepare) echo '{"type":"prepared","case":"'$2'","unit":"bytes","bytes_per_op":1024}' ;;
    calibrate) echo '{"type":"calibrated","case":"'$2'","iters":'"$FAKE_ITERS"'}' ;;
    sample) n=$((n + 1)); [ "$n" = "${FAKE_DIE:-0}" ] && exit 3; [ "$n" = "${FAKE_HANG:-0}" ] && exec sleep 600
            echo '{"type":"samples","case":"'$2'","unit":"bytes","bytes_per_op":1024,"ops":['$3'],"wall_ns":[1000000],"cpu_ns":[990000],"wait_ns":['"${FAKE_WAIT:-0}"'],"slices":[1]}' ;;
    release) echo '{"type":"released","case":"'$2'"}' ;;
    quit) exit 0 ;;
  esac
done
"""


def fake_probe(tmp_path: Path, processes: int = 3, samples: int = 5, env: dict[str, dict[str, str]] | None = None):
    """A probe of two fake libraries (its manifest kept, as `probe build` keeps one), unpacked; its directory."""
    described, harnesses = [], {}
    for index, (name, iters) in enumerate((("fake-a", 100), ("fake-b", 300))):
        extra = "".join(f"{k}={v} " for k, v in (env or {}).get(name, {}).items())
        script = FAKE.replace("while IFS=", f"export FAKE_NAME={name} FAKE_ITERS={iters} {extra}\nwhile IFS=", 1)
        described.append({"name": name, "flavor": "openssl", "version": "1.0", "variant": "default"})
        harnesses[f"bin/{index}/sslperf-harness"] = script.encode()
    settings = plan.settings(1, samples, None, True, processes)
    built = archive.write(described, harnesses, [suites.parse_case(c) for c in CASES], settings, "x86_64-linux",
                          "sslperf probe", {"suite": "speed"}, tmp_path / "probe.tar.gz")
    with tarfile.open(built.path) as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / f"sslperf-probe-{built.manifest['probe']}"


def drive(probe: Path) -> Path:
    done = subprocess.run([SH, str(probe / "run.sh")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return probe / "results"


def lines(out: Path, kind: str) -> list[list[str]]:
    return [line.split("\t") for line in (out / "samples.tsv").read_text().splitlines() if line.startswith(kind)]


def test_the_driver_runs_the_schedulers_passes_rounds_and_alternating_order(sslperf_dirs, tmp_path):
    out = drive(fake_probe(tmp_path, processes=3, samples=5))
    taken = lines(out, "sample\t")
    assert len(taken) == len(CASES) * 2 * 5
    # What the scheduler does with the same plan: each pass's libraries in base.pass_order, its share of the rounds
    # (in_memory's rounds_this_pass), the order reversed every other round.
    libs = [type("L", (), {"name": n})() for n in ("0", "1")]
    session = in_memory.Session.__new__(in_memory.Session)
    session.passes = 3
    for case in CASES:
        expected, round_number = [], 0
        for number in range(3):
            first = [lib.name for lib in base.pass_order(libs, number)]
            for index in range(session.rounds_this_pass(base.Prepared({}, 5), round_number, number)):
                for lib in first if index % 2 == 0 else first[::-1]:
                    expected.append((str(number), str(round_number), lib))
                round_number += 1
        assert [(p, r, lib) for _, p, r, lib, c, *_ in taken if c == case] == expected
    # Fresh worker processes each pass, one per library; the same one for every case of a pass.
    pids = {(p, lib): set() for _, p, _, lib, *_ in taken}
    for _, p, _, lib, _, pid, *_ in taken:
        pids[(p, lib)].add(pid)
    assert all(len(s) == 1 for s in pids.values()) and len({next(iter(s)) for s in pids.values()}) == 6
    machine = dict(line.split("\t", 1) for line in (out / "machine.tsv").read_text().splitlines())
    assert machine["pinned_cpu"].isdigit() and machine["cpus"].isdigit()
    assert (out.parent / "results.tar.gz").is_file()


def test_import_makes_the_run_every_output_reads(sslperf_dirs, tmp_path):
    out = drive(fake_probe(tmp_path, processes=2, samples=4))
    run = results.read((out.parent / "results.tar.gz").read_bytes(), "results.tar.gz")
    assert [lib.name for lib in run.libs] == ["fake-a", "fake-b"] and run.libs[0].version_string == "fake fake-a"
    assert run.settings["probe"] == json.loads((out / "manifest.json").read_text())["probe"]
    assert run.environment["probe"]["target"] == "x86_64-linux" and run.environment["pinned_cpu"] is not None
    by = {(m.case, m.lib): m for m in run.measurements}
    for case in CASES:
        a, b = by[(case, "fake-a")], by[(case, "fake-b")]
        assert a.status == b.status == "ok" and a.ops == [100] * 4 and b.ops == [300] * 4
        assert a.figures[figures.ROUND] == [0, 1, 2, 3] and len(set(a.figures[figures.PROCESS])) == 2
        assert a.figures[figures.START] == sorted(a.figures[figures.START]) and min(
            a.figures[figures.START] + b.figures[figures.START]) >= 0
        assert a.unit == "bytes" and a.bytes_per_op == 1024


def test_a_sample_that_waited_is_taken_again_until_retakes_prove_futile(sslperf_dirs, tmp_path):
    # Every sample waits 50 µs of its 1 ms: over verdict.waits.WAITED, so each is taken again, as in_memory does:
    # at most RETAKES times, and no more in the pass once FUTILE_RETAKES retakes in a row waited too.
    out = drive(fake_probe(tmp_path, processes=1, samples=4, env={"fake-a": {"FAKE_WAIT": 50000},
                                                                "fake-b": {"FAKE_WAIT": 50000}}))
    for case in CASES:
        retaken = [int(line[7]) for line in lines(out, "sample\t") if line[4] == case]
        assert retaken == [2, 1, 0, 0, 0, 0, 0, 0]
    assert in_memory.RETAKES == 2 and in_memory.FUTILE_RETAKES == 3


def test_a_worker_that_dies_costs_its_library_the_case_not_the_probe(sslperf_dirs, tmp_path):
    out = drive(fake_probe(tmp_path, processes=1, samples=4, env={"fake-b": {"FAKE_DIE": 3}}))
    run = results.read((out.parent / "results.tar.gz").read_bytes(), "results.tar.gz")
    by = {(m.case, m.lib): m for m in run.measurements}
    assert by[(CASES[0], "fake-a")].status == "ok" and len(by[(CASES[0], "fake-a")].ops) == 4
    dead = by[(CASES[0], "fake-b")]
    assert dead.status == "error" and "exited (status 3)" in dead.reason and len(dead.ops) == 1, dead.reason


def test_a_worker_that_stops_answering_is_stopped_and_the_probe_goes_on(sslperf_dirs, tmp_path):
    probe = fake_probe(tmp_path, processes=1, samples=4, env={"fake-a": {"FAKE_HANG": 3}})
    plan_sh = probe / "plan.sh"
    plan_sh.write_text(plan_sh.read_text().replace("ANSWER_SECONDS=600", "ANSWER_SECONDS=5"))
    run = results.read((drive(probe).parent / "results.tar.gz").read_bytes(), "results.tar.gz")
    by = {(m.case, m.lib): m for m in run.measurements}
    hung = by[(CASES[0], "fake-a")]
    assert hung.status == "error" and "no answer for 5 s" in hung.reason and len(hung.ops) == 1, hung.reason
    assert by[(CASES[0], "fake-b")].status == "ok" and len(by[(CASES[0], "fake-b")].ops) == 4
    assert by[(CASES[1], "fake-b")].status == "ok"


def _repacked(archive_path: Path, change) -> bytes:
    """The results archive with `change(name, data)` applied to each file."""
    source = tarfile.open(archive_path)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else None
            if data is not None:
                data = change(member.name.split("/")[-1], data)
                member.size = len(data)
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


@pytest.mark.parametrize("tamper, said", [
    (lambda n, d: d.replace(b'"sha256": "', b'"sha256": "0') if n == "manifest.json" else d, "differs"),
    (lambda n, d: d.replace(b"digest_1\t", b"digest_1\tff") if n == "machine.tsv" else d, "sha256 differs"),
    (lambda n, d: d.replace(b"\t1\tdigest/", b"\t7\tdigest/", 1) if n == "samples.tsv" else d, "line"),
    (lambda n, d: d.replace(b'"probe": "2', b'"probe": "1') if n == "manifest.json" else d, "did not build"),
])
def test_a_tampered_results_archive_is_refused_and_nothing_is_stored(sslperf_dirs, tmp_path, tamper, said):
    out = drive(fake_probe(tmp_path, processes=1, samples=3))
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(_repacked(out.parent / "results.tar.gz", tamper))
    refused = run_cli("import", bad)
    assert refused.returncode == 2 and said in " ".join(refused.stderr.split()), refused.stderr
    assert "Traceback" not in refused.stderr
    assert run_cli("import", out.parent / "results.tar.gz").returncode == 0    # the untouched one is taken
    assert len(json.loads(run_cli("runs", "list", "--json").stdout)) == 1


def test_probe_build_refuses_what_a_probe_cannot_carry(sslperf_here):
    system = sslperf_here("probe", "build", "--lib", "system", "--case", CASES[0], "-o", "p.tar.gz")
    assert system.returncode == 2 and "not a library sslperf built" in system.stderr
    loopback = sslperf_here("probe", "build", "--lib", "system", "--case",
                            "tls/loopback/tls1.3/x25519/ecdsa-p256/shared", "-o", "p.tar.gz")
    assert loopback.returncode == 2 and "in-memory cases" in loopback.stderr, loopback.stderr


@pytest.mark.slow
def test_a_probe_of_built_libraries_runs_under_dash_and_imports_as_a_run(built_openssl, built_openssl3, in_e2e_cache,
                                                                        tmp_path):
    probe = tmp_path / "probe.tar.gz"
    made = run_cli("probe", "build", "--lib", built_openssl, "--lib", built_openssl3, "--case", CASES[0],
                   "--case", "tls/handshake/tls1.3/x25519/ecdsa-p256/shared", "--samples", "4", "--processes", "2",
                   "--time", "5", "-o", probe, timeout=900)
    assert made.returncode == 0, made.stderr
    with tarfile.open(probe) as tar:
        names = tar.getnames()
        tar.extractall(tmp_path, filter="data")
    top = names[0].split("/")[0]
    for index in (0, 1):        # statically linked: nothing to load on the target
        elf = subprocess.run(["file", str(tmp_path / top / f"bin/{index}/sslperf-harness")], capture_output=True,
                             text=True, timeout=60).stdout
        assert "statically linked" in elf, elf
    done = subprocess.run([SH, str(tmp_path / top / "run.sh")], capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    imported = run_cli("import", tmp_path / top / "results.tar.gz", "--show")
    assert imported.returncode == 0, imported.stderr
    assert "measured by probe" in imported.stdout and "OpenSSL 3.6" in imported.stdout, imported.stdout
    run = json.loads(run_cli("runs", "export", "latest", "--format", "json").stdout)
    by = {(m["case"], m["lib"]): m for m in run["measurements"]}
    shake = by[("tls/handshake/tls1.3/x25519/ecdsa-p256/shared", "openssl-3.6.3")]
    assert shake["status"] == "ok" and len(shake["wall_ns"]) == 4 and shake["negotiated"]["group"] == 0x001d   # x25519, as negotiated on the target
    compared = run_cli("compare", "latest")          # the verdicts between the two columns, as for any run
    assert compared.returncode == 0 and "openssl-3.6.3" in compared.stdout, compared.stderr


@pytest.mark.slow
def test_an_aarch64_probe_runs_under_qemu_and_is_marked_emulated_never_compared_with_native(
        built_openssl, e2e_env, in_e2e_cache, tmp_path):
    built = run_cli("libs", "build", ARM_LIB, env=e2e_env, timeout=1800)
    assert built.returncode == 0, built.stderr + built.stdout
    # Measured here natively: refused, in one paragraph, before anything runs.
    here = run_cli("speed", "--lib", ARM_LIB, "--case", CASES[0])
    assert here.returncode == 2 and "cross-compiled for aarch64-linux" in " ".join(here.stderr.split()), here.stderr
    probe = tmp_path / "arm.tar.gz"
    made = run_cli("probe", "build", "--lib", ARM_LIB, "--case", CASES[0], "--case",
                   "tls/handshake/tls1.3/x25519/ecdsa-p256/shared", "--samples", "3", "--processes", "2", "--time", "5",
                   "-o", probe, timeout=900)
    assert made.returncode == 0, made.stderr
    with tarfile.open(probe) as tar:
        top = tar.getnames()[0].split("/")[0]
        tar.extractall(tmp_path, filter="data")
    elf = subprocess.run(["file", str(tmp_path / top / "bin/0/sslperf-harness")], capture_output=True, text=True,
                         timeout=60).stdout
    assert "ARM aarch64" in elf and "statically linked" in elf, elf
    done = subprocess.run([SH, str(tmp_path / top / "run.sh")], capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "SSLPERF_PROBE_EMULATOR": "qemu-aarch64"})
    assert done.returncode == 0, done.stderr
    imported = run_cli("import", tmp_path / top / "results.tar.gz", "--show")
    assert imported.returncode == 0, imported.stderr
    shown = " ".join(imported.stdout.split())
    assert "emulated: aarch64-linux code under qemu-aarch64 on x86_64" in shown, shown
    assert "timings not comparable with native ones" in shown
    run = json.loads(run_cli("runs", "export", "latest", "--format", "json").stdout)
    assert all(m["status"] == "ok" for m in run["measurements"]), run["measurements"]
    # Beside a native run of the same case: refused, not compared.
    native = run_cli("speed", "--lib", built_openssl, "--case", CASES[0], "--samples", "3", "--processes", "1")
    assert native.returncode == 0, native.stderr
    compared = run_cli("compare", run["id"], built_openssl)
    assert compared.returncode == 2 and "not read side by side" in " ".join(compared.stderr.split()), compared.stderr


@pytest.mark.slow
def test_a_windows_probe_times_openssl_exe_speed_under_wine_and_is_drawn_beside_the_native_build(
        built_openssl, e2e_env, in_e2e_cache, tmp_path):
    built = run_cli("libs", "build", WINDOWS_LIB, env=e2e_env, timeout=1800)
    assert built.returncode == 0, built.stderr + built.stdout
    probe = tmp_path / "win.tar.gz"
    made = run_cli("probe", "build", "--lib", WINDOWS_LIB, "--case", CASES[0], "--processes", "2", "-o", probe,
                   timeout=300)
    assert made.returncode == 0 and "run.cmd" in made.stderr, made.stderr
    with tarfile.open(probe) as tar:
        top = tar.getnames()[0].split("/")[0]
        tar.extractall(tmp_path, filter="data")
    assert sorted(p.name for p in (tmp_path / top).iterdir()) == ["bin", "manifest.json", "run.cmd"]
    ran = subprocess.run(["wine", "cmd", "/c", "run.cmd"], cwd=tmp_path / top, capture_output=True, text=True,
                         timeout=600, env={**os.environ, "WINEDEBUG": "-all", "SSLPERF_PROBE_RUNNER": "wine"})
    assert ran.returncode == 0 and "round 2 of 2" in ran.stdout, ran.stdout + ran.stderr
    # Wine has no tar.exe (Windows 10 has): the results are packed here.
    # Where certutil says the program's sha256 (Windows; Wine's says nothing), another one than the manifest's is
    # refused.
    digest = tmp_path / top / "results" / "digest-0.txt"
    kept = digest.read_bytes()
    digest.write_text("SHA256 hash of openssl.exe:\r\n" + "00 " * 31 + "00\r\nCertUtil: done\r\n")
    with tarfile.open(tmp_path / "changed.tar.gz", "w:gz") as tar:
        tar.add(tmp_path / top / "results", "results")
    changed = run_cli("import", tmp_path / "changed.tar.gz")
    assert changed.returncode == 2 and "sha256 differs" in " ".join(changed.stderr.split()), changed.stderr
    digest.write_bytes(kept)
    with tarfile.open(tmp_path / "results.tar.gz", "w:gz") as tar:
        tar.add(tmp_path / top / "results", "results")
    imported = run_cli("import", tmp_path / "results.tar.gz", "--show")
    assert imported.returncode == 0, imported.stderr
    shown = " ".join(imported.stdout.split())
    assert "x86_64-windows" in shown and "run by wine" in shown and "sha256 1024 B [speed-compat]" in shown, shown
    windows_run = json.loads(run_cli("runs", "export", "latest", "--format", "json").stdout)
    sha = next(m for m in windows_run["measurements"] if m["case"] == "digest/sha256/1024/speed-compat")
    assert len(sha["reported_rates"]) == 2            # one rate a round
    # The native build's own `openssl speed`, imported, and both drawn in one report (seed 003's picture).
    from sslperf.libs import installed

    native = installed.find(built_openssl).prefix / "bin" / "openssl"
    text = subprocess.run([str(native), "speed", "-seconds", "1", "sha256"], capture_output=True, text=True,
                          timeout=120).stdout
    (tmp_path / "native.txt").write_text(text)
    assert run_cli("import", tmp_path / "native.txt", "--lib-name", built_openssl).returncode == 0
    native_run = json.loads(run_cli("runs", "export", "latest", "--format", "json").stdout)
    report = run_cli("report", windows_run["id"], native_run["id"], "--format", "html", "--out", tmp_path / "report")
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "report" / "report.html").read_text()
    assert WINDOWS_LIB in page and built_openssl in page
    compared = run_cli("compare", windows_run["id"], native_run["id"])      # Wine is not an emulator: compared
    assert compared.returncode == 0 and "sha256" in compared.stdout, compared.stderr


def test_target_takes_each_librarys_cross_build_and_threads_take_scales_plan():
    from sslperf.errors import SslperfError
    from sslperf.probe import plans

    assert plans.on_target(["openssl-3.6", "openssl-1.1.1w+minimal+aarch64"], "aarch64-linux") == \
        ["openssl-3.6+aarch64", "openssl-1.1.1w+minimal+aarch64"]
    assert plans.on_target(["openssl-3.6"], "x86_64-windows") == ["openssl-3.6+mingw"]
    with pytest.raises(SslperfError, match="not a target"):
        plans.on_target(["openssl-3.6"], "riscv64-linux")
    swept = plans.request(["system"], [CASES[0]], "speed", None, (), None, None, 2, thread_list="1,2",
                          thread_mode="own", seconds=0.5)
    assert swept.cases == [f"threads/own/00{n}/{CASES[0]}" for n in (1, 2)]
    assert swept.options["threads"].milliseconds == 500 and swept.settings.processes == 2
    assert swept.labels["suite"] == "scale" and swept.source == "sslperf probe"


def test_the_driver_needs_nothing_but_busybox(sslperf_dirs, tmp_path):
    # A board's userland: BusyBox's shell and applets, nothing else on the PATH (the fake harness's clock aside).
    busybox = shutil.which("busybox")
    if busybox is None:
        pytest.skip("busybox is not installed (EXTRAS=test bash scripts/bootstrap.sh installs busybox-static)")
    applets = tmp_path / "applets"
    applets.mkdir()
    listed = subprocess.run([busybox, "--list"], capture_output=True, text=True, timeout=60).stdout.split()
    for name in listed:
        (applets / name).symlink_to(busybox)
    probe = fake_probe(tmp_path / "p", processes=2, samples=3)
    done = subprocess.run([busybox, "sh", str(probe / "run.sh")], capture_output=True, text=True, timeout=120,
                          env={"PATH": str(applets)})
    assert done.returncode == 0, done.stderr
    taken = lines(probe / "results", "sample\t")
    assert len(taken) == len(CASES) * 2 * 3 and (probe / "results.tar.gz").is_file()
    machine = dict(line.split("\t", 1) for line in (probe / "results" / "machine.tsv").read_text().splitlines())
    assert machine["pinned_cpu"].isdigit() and machine["digest_0"] != "" and not machine["digest_0"].startswith("none")


def test_keys_a_killed_driver_left_are_removed_by_the_next_run_and_a_live_ones_kept(sslperf_dirs, tmp_path):
    scratch = tmp_path / "tmp"
    dead, alive = scratch / "sslperf-probe.999999999", scratch / f"sslperf-probe.{os.getpid()}"
    for d in (dead, alive):
        (d / "certs").mkdir(parents=True)
        (d / "certs" / "key.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    probe = fake_probe(tmp_path / "p", processes=1, samples=3)
    done = subprocess.run([SH, str(probe / "run.sh")], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TMPDIR": str(scratch)})
    assert done.returncode == 0, done.stderr
    assert not dead.exists() and (alive / "certs" / "key.pem").exists()
    assert sorted(p.name for p in scratch.iterdir()) == [alive.name]        # its own work directory gone too


@pytest.mark.slow
def test_a_sweep_probe_gives_scales_curves_and_where_perf_records_the_cpu_shares_that_grew(built_openssl3,
                                                                                          in_e2e_cache, tmp_path):
    from sslperf.measure.perf import perf_problem

    sweep = tmp_path / "sweep.tar.gz"
    made = run_cli("scale", "--lib", built_openssl3, "--case", "api/digest/sha256/implicit-fetch/64", "--threads",
                   "1,2", "--seconds", "0.3", "--rounds", "2", "--probe", sweep, timeout=900)
    assert made.returncode == 0, made.stderr
    with tarfile.open(sweep) as tar:
        top = tar.getnames()[0].split("/")[0]
        tar.extractall(tmp_path, filter="data")
    # The test command gives each worker one CPU; the target here is every CPU online (the sweep explains the
    # largest count with a CPU per thread: at least 2 are needed).
    online = sorted(int(c) for c in Path("/sys/devices/system/cpu/online").read_text().strip().replace("-", ",").split(","))
    cpus = list(range(online[0], online[-1] + 1))
    done = subprocess.run(["taskset", "-c", ",".join(map(str, cpus)), SH, str(tmp_path / top / "run.sh")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    imported = run_cli("import", tmp_path / top / "results.tar.gz", "--show")
    assert imported.returncode == 0, imported.stderr
    shown = " ".join(imported.stdout.split())
    assert "2 threads" in shown and "efficiency" in shown, shown           # scale's table: rates, efficiency
    run = json.loads(run_cli("runs", "export", "latest", "--format", "json").stdout)
    assert run["environment"]["placement"]["threads_pinned"] is True
    rounds = {m["case"]: len(m["ops"]) for m in run["measurements"]}
    assert rounds == {"threads/own/001/api/digest/sha256/implicit-fetch/64": 4,        # 1 thread: twice a round
                      "threads/own/002/api/digest/sha256/implicit-fetch/64": 2}
    if perf_problem() or len(cpus) < 2:
        assert not run["settings"].get("contention"), run["settings"]
        return
    (found,) = run["settings"]["contention"]
    assert found["threads"] == 2 and found["lib"] == "openssl-3.6.3" and "interposer" in found["locks"]
    assert found.get("growing") is not None, found          # the target's CPU profiles were read
    assert "lock waits at 2 threads not measured" in shown


def test_two_cross_variants_are_refused_and_a_cross_build_names_its_cross_compiler():
    from sslperf.errors import SslperfError
    from sslperf.libs import variants

    with pytest.raises(SslperfError, match="each choose the machine"):
        variants.lookup(("aarch64", "mingw"), "openssl")
    chosen = variants.lookup(("minimal", "aarch64"), "openssl")
    assert variants.compilers(chosen, "openssl") == {"cc": "aarch64-linux-gnu-gcc", "cxx": "aarch64-linux-gnu-g++"}
    assert variants.compilers(variants.lookup(("minimal",), "openssl"), "openssl") == {}


def test_a_sweep_beyond_the_targets_cpus_is_said_to_time_share():
    from sslperf.measure.modes import threads

    swept = [suites.parse_case(f"threads/shared/{n:03}/tls/handshake/tls1.3/x25519/ecdsa-p256/shared") for n in (1, 2, 32)]
    (said,) = threads.oversubscribed(swept, 2)
    assert said.startswith("32 threads on 2 CPUs: beyond 2 the threads share cores")
    assert threads.oversubscribed(swept, 32) == []
