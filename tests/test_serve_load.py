"""Real servers under load (`sslperf serve-load`, sslperf/serve_load): nginx and HAProxy from Debian's source
packages built against a built OpenSSL 3.6, each serving HTTPS on 127.0.0.1 to wrk, every round checked (the
body of a GET, the protocol, the server's own count of resumed sessions); the generated configurations passed by
each server's own configuration test; clear errors for bad input; no process left behind, Ctrl-C included."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cli

from sslperf.bisect import probe
from sslperf.errors import SslperfError
from sslperf.libs import installed
from sslperf.measure import certificates, plan, scheduler
from sslperf.measure.suites import parse_case
from sslperf import figures
from sslperf.serve_load import build, config, load
from sslperf.serve_load import rounds as serve_rounds

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("serve")]


def servers_running(root: Path) -> list[str]:
    """The programs of live processes that are servers sslperf built under `root` (nginx, haproxy) or wrk; a wrk
    that loads a server is named `wrk loading` (sslperf also asks wrk for its version, in a process of its own)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            exe = os.readlink(entry / "exe")
            loading = b"https://127.0.0.1:" in (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if exe.startswith(str(root)) or exe.endswith("/wrk"):
            found.append(Path(exe).name + (" loading" if loading else ""))
    return found


def listening_addresses(port: int) -> list[str]:
    """Local addresses (hex, as /proc/net/tcp writes them) of the TCP sockets listening on `port`."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as rows:
            for row in list(rows)[1:]:
                fields = row.split()
                address, state = fields[1], fields[3]
                if state == "0A" and int(address.rsplit(":", 1)[1], 16) == port:
                    found.append(address.rsplit(":", 1)[0])
    return found


def test_nginx_and_haproxy_built_against_a_built_library_serve_wrk_and_every_round_is_checked(
        built_openssl3, in_e2e_cache, tmp_path):
    result = run_cli("serve-load", "--lib", built_openssl3, "--server", "nginx", "--server", "haproxy",
                     "--scenario", "new", "--scenario", "resumed", "--scenario", "keepalive", "--cert", "ecdsa-p256",
                     "--seconds", "1", "--warmup", "0", "--rounds", "3", "--json", timeout=1800)
    assert result.returncode == 0, result.stderr[-3000:]
    run = json.loads(result.stdout)
    got = {m["case"]: m for m in run["measurements"]}
    assert len(got) == 6
    for server in ("nginx", "haproxy"):
        new, resumed, keepalive = (got[f"tls/serve/{server}/{s}/tls1.3/x25519/ecdsa-p256"]
                                   for s in ("new", "resumed", "keepalive"))
        for m in (new, resumed, keepalive):
            assert m["status"] == "ok", m["reason"]
            assert len(m["ops"]) == 3 and all(n > 0 for n in m["ops"]) and m["figures"][figures.PROCESS] == [0, 1, 2]
            # The server checked by a GET of its own first: status, body and protocol.
            assert "TLSv1.3" in m["note"] and f"{server} " in m["note"] and "Debian" in m["note"], m["note"]
            assert m["figures"]["failed"] == [0, 0, 0]
            for r in range(3):
                p = [m["figures"][f"latency_p{q}_ns"][r] for q in (50, 75, 90, 99)]
                assert 0 < p[0] <= p[1] <= p[2] <= p[3], p
            assert all(c > 0 for c in m["cpu_ns"]), m["cpu_ns"]          # the server's processes' CPU time
        # The server's own log: with resumption off no request resumed; with it on, (nearly) every one did.
        assert sum(new["figures"]["resumed"]) == 0 and sum(new["figures"]["logged"]) >= sum(new["ops"])
        # --warmup 0 loads nothing before a round: the server's log holds the round's requests (those wrk had in
        # flight at its end and the checked GET besides), not a warm-up's as many again.
        for m in (new, resumed, keepalive):
            assert all(logged < 1.5 * ops for logged, ops in zip(m["figures"]["logged"], m["ops"])), m["figures"]
        # Every request after each wrk connection's first (a full handshake) resumed, or nearly.
        connections = run["settings"]["serve"]["connections"]
        assert sum(resumed["figures"]["resumed"]) >= 0.9 * sum(max(n - connections, 1)
                                                               for n in resumed["figures"]["logged"]) > 0
    assert "connections" in run["settings"]["serve"] and run["settings"]["serve"]["client"].startswith("wrk ")
    assert any("cannot show how the library scales over many cores" in w for w in run["warnings"])
    assert not servers_running(Path(in_e2e_cache["SSLPERF_CACHE_DIR"]) / "servers")     # every server stopped
    # Stored like any run, and drawn: the report's figure of the servers.
    report = run_cli("report", run["id"], "--out", tmp_path / "report", "--format", "png")
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "report" / "tls-serve.png").stat().st_size > 10_000


def private_dir(parent: Path, name: str) -> Path:
    """A run directory as load.run_dir makes one (0700), inside the test's own temporary directory."""
    path = parent / name
    path.mkdir(mode=0o700)
    return path


def test_the_checked_get_refuses_a_wrong_body_and_the_server_listens_on_loopback_only(built_openssl3, in_e2e_cache,
                                                                                      tmp_path):
    lib = installed.find(built_openssl3)
    nginx = build.build("nginx", lib)
    assert "OpenSSL 3.6" in build.describe(nginx), build.describe(nginx)
    with certificates.made_by(lib, pem=True) as certs:
        setup = config.Setup("nginx", config.SCENARIOS["new"], "tls1.3", "x25519", "ecdsa-p256", load.free_port(),
                             (min(os.sched_getaffinity(0)),), certs, private_dir(tmp_path, "run"))
        conf = config.prepare(setup)
        with load._serving(nginx, setup, conf):
            assert listening_addresses(setup.port) == ["0100007F"]      # 127.0.0.1, nothing else
            assert load._checked_get(setup).startswith("TLSv1.3 ")
            (setup.run_dir / "www" / "index.html").write_text("not what sslperf wrote\n")
            with pytest.raises(SslperfError, match="body"):
                load._checked_get(setup)


def test_generated_configurations_pass_each_servers_own_configuration_test(built_openssl3, in_e2e_cache, tmp_path):
    lib = installed.find(built_openssl3)
    with certificates.made_by(lib, pem=True) as certs:
        for server in ("nginx", "haproxy"):
            binary = build.build(server, lib).binary
            # Built without debug information (both servers add -g of their own), their functions still named.
            sections = subprocess.run(["readelf", "-S", "--wide", str(binary)], capture_output=True, text=True,
                                      timeout=60).stdout
            assert ".symtab" in sections and ".debug_info" not in sections, sections
            for scenario in config.SCENARIOS.values():
                for protocol in config.PROTOCOLS:
                    setup = config.Setup(server, scenario, protocol, "p-256", "rsa-2048", load.free_port(), (0,),
                                         certs, private_dir(tmp_path, f"{server}-{scenario.name}-{protocol}"))
                    config.check(setup, binary, config.prepare(setup))
            # The check can fail: a directive the server does not know is refused, with what the server said.
            conf = config.prepare(setup)
            conf.write_text(conf.read_text() + ("\nbogus_directive on;\n" if server == "nginx" else
                                                "\nfrontend broken\n    bogus-keyword on\n"))
            with pytest.raises(SslperfError, match=f"{server} refused the configuration"):
                config.check(setup, binary, conf)


def test_unknown_server_port_in_use_and_overlapping_cpus_are_clear_errors(sslperf_here):
    unknown = sslperf_here("serve-load", "--server", "apache", "--no-store")
    assert unknown.returncode == 2 and "apache" in unknown.stderr and "Traceback" not in unknown.stderr
    stray = sslperf_here("serve-load", "--case", "tls/serve/apache/new/tls1.3/x25519/rsa-2048", "--no-store")
    assert stray.returncode != 0 and "tls/serve/apache" in stray.stderr + stray.stdout
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        taken = sslperf_here("serve-load", "--port", port, "--no-store")
    assert taken.returncode != 0 and "Traceback" not in taken.stderr
    assert f"Port {port} on 127.0.0.1 cannot be used" in taken.stderr and "--port" in taken.stderr, taken.stderr
    group = sslperf_here("serve-load", "--group", "x9999", "--no-store")
    assert group.returncode != 0 and "Unknown group `x9999`" in group.stderr and "x25519" in group.stderr
    cpu = min(os.sched_getaffinity(0))
    overlap = sslperf_here("serve-load", "--server-cpus", cpu, "--client-cpus", cpu, "--no-store")
    assert overlap.returncode != 0 and "overlap" in overlap.stderr, overlap.stderr


def test_a_library_a_server_cannot_be_built_against_is_refused_before_anything_runs(built_rustls, in_e2e_cache):
    result = run_cli("serve-load", "--lib", built_rustls, "--seconds", "1", "--rounds", "3", "--json", "--no-store")
    assert result.returncode == 2 and result.stderr.startswith("error: "), result.stderr
    assert "cannot be built against this library" in result.stderr and "OpenSSL-API" in result.stderr
    assert not list((Path(in_e2e_cache["SSLPERF_CACHE_DIR"]) / "servers").glob(f"*{built_rustls}*"))


def test_ctrl_c_leaves_no_server_and_no_wrk_behind(built_openssl3, in_e2e_cache):
    build.build("nginx", installed.find(built_openssl3))       # built before, so the run starts serving at once
    servers_root = Path(in_e2e_cache["SSLPERF_CACHE_DIR"]) / "servers"
    assert not servers_running(servers_root)
    child = subprocess.Popen([sys.executable, "-m", "sslperf", "serve-load", "--lib", built_openssl3, "--seconds",
                              "60", "--rounds", "3", "--no-store"], env={**os.environ, **in_e2e_cache},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             # Ctrl-C not ignored, as in a terminal (a test worker started in the background may
                             # ignore SIGINT, and its children inherit that)
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and "wrk loading" not in servers_running(servers_root):
            time.sleep(0.2)
        seen = servers_running(servers_root)
        assert "wrk loading" in seen and "nginx" in seen, seen
        child.send_signal(signal.SIGINT)            # what Ctrl-C sends to sslperf (its children have their own groups)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode != 0
    assert not servers_running(servers_root), servers_running(servers_root)


def test_serve_cases_run_in_rounds_interleaved_across_libraries_as_bisect_measures_them(
        built_openssl3, in_e2e_cache):
    case = parse_case("tls/serve/nginx/keepalive/tls1.3/x25519/ecdsa-p256")
    assert probe.choose_metric("auto", case)[0] == "cpu"           # the server's CPU per request decides a step
    assert probe.choose_metric("wall", case)[0] == "wall"
    with pytest.raises(SslperfError, match="cannot judge"):
        probe.choose_metric("instructions", case)
    # The system's library and a built one: servers the other tests build too (no nginx built for this test alone)
    libs = [installed.find("system"), installed.find(built_openssl3)]
    order = []
    # The shortest load serve-load allows (bisect's default plan loads 1 s + 5 s a round): the order of the rounds and
    # their pairing across libraries do not depend on how long each one loads its server.
    short = serve_rounds.Plan(load.Load(seconds=1, warmup_seconds=0))
    run = scheduler.measure_libs(libs, [case], plan.settings(1000, 1, None, True, 3), None, "test",
                            options={"serve": short}, progress=lambda what, done, total: order.append(what))
    assert order == [f"{case.id} (pass {r} of 3)" for r in (1, 2, 3)] + ["done"]
    for m in run.measurements:
        assert m.status == "ok", m.reason
        assert m.figures[figures.PROCESS] == [0, 1, 2] and len(m.cpu_ns) == 3      # rounds pair across libraries


def test_a_server_of_the_system_library_loads_the_systems_shared_libssl(in_e2e_cache):
    system = installed.find("system")
    nginx = build.build("nginx", system)
    libssl = next(p for name, p in system.info["shared_objects"].items() if name.startswith("libssl"))
    loaded = subprocess.run(["ldd", str(nginx.binary)], capture_output=True, text=True, timeout=60).stdout
    assert str(Path(libssl).resolve()) in {str(Path(p).resolve()) for p in re.findall(r"=> (\S+)", loaded)}, loaded
    result = run_cli("serve-load", "--scenario", "keepalive", "--seconds", "1", "--warmup", "0", "--rounds", "3",
                     "--json", "--no-store")                           # the default library: the system's
    assert result.returncode == 0, result.stderr[-2000:]
    [m] = json.loads(result.stdout)["measurements"]
    assert m["lib"] == "system" and m["status"] == "ok" and "TLSv1.3" in m["note"], m


def test_a_killed_sslperf_takes_its_server_and_wrk_with_it(built_openssl3, in_e2e_cache, tmp_path):
    build.build("nginx", installed.find(built_openssl3))
    servers_root = Path(in_e2e_cache["SSLPERF_CACHE_DIR"]) / "servers"
    child = subprocess.Popen([sys.executable, "-m", "sslperf", "serve-load", "--lib", built_openssl3, "--seconds",
                              "60", "--rounds", "3", "--no-store"],
                             # what a killed sslperf cannot remove (its run directory) stays in the test's own
                             env={**os.environ, **in_e2e_cache, "TMPDIR": str(tmp_path)},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and "wrk loading" not in servers_running(servers_root):
            time.sleep(0.2)
        assert {"wrk loading", "nginx"} <= set(servers_running(servers_root))
        child.kill()                                # SIGKILL: sslperf cannot stop anything itself
        child.wait(timeout=30)
        deadline = time.monotonic() + 15            # the kernel tells them (parent-death signal), they stop
        while time.monotonic() < deadline and servers_running(servers_root):
            time.sleep(0.2)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert not servers_running(servers_root), servers_running(servers_root)
