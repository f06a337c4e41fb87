"""QUIC over loopback UDP with OpenSSL's own QUIC stack (`sslperf tls --quic`, harness/openssl/quic.c): a real
QUIC connection per request on a built OpenSSL 3.6, checked before it is timed (QUIC, suite, group, ALPN) and
measured beside TLS 1.3 over TCP; a stream's bytes checked by the reader; n/a with the reason on a library without
a QUIC server; the server bound to 127.0.0.1 alone; an emulated path (the UDP relay) that delays and drops as
asked and makes a case of its own."""

import json
import socket
import statistics
import threading
import time

import pytest
from conftest import run_cli

from sslperf.bisect import probe
from sslperf.bisect.space import Point, Space
from sslperf.errors import SslperfError
from sslperf.libs import installed
from sslperf.measure import plan, servers
from sslperf.measure.modes import memory, quic_transfer
from sslperf.measure.suites import parse_case
from sslperf.measure import netpath
from sslperf.measure.certificates import made_by
from sslperf.measure.harness_client import Server
from sslperf.measure.netpath import NetPath
from sslperf.results import Measurement

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("quic")]


def udp_sockets_on(port: int) -> list[str]:
    """The local addresses of the UDP sockets bound to `port`, as /proc/net/udp lists them (hex address:port)."""
    found = []
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        with open(table) as rows:
            for row in list(rows)[1:]:
                local = row.split()[1]
                if int(local.rsplit(":", 1)[1], 16) == port:
                    found.append(local)
    return found


def test_a_quic_get_is_checked_and_set_beside_tcp_on_a_built_36(built_openssl3, in_e2e_cache):
    result = run_cli("tls", "--quic", "--lib", built_openssl3, "--lib", "system", "--requests", "5",
                     "--case", "tls/handshake/tls1.3/x25519/ecdsa-p256/shared",
                     "--case", "tls/handshake/tls1.3/x25519mlkem768/rsa-2048/shared", "--json")
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    got = {(m["lib"], m["case"]): m for m in run["measurements"]}
    lib = next(m["lib"] for m in run["measurements"] if m["lib"] != "system")
    for group, cert, seen in (("x25519", "ecdsa-p256", "group x25519"),
                              ("x25519mlkem768", "rsa-2048", "group X25519MLKEM768")):
        quic, tcp = got[(lib, f"tls/quic/{group}/{cert}")], got[(lib, f"tls/loopback/tls1.3/{group}/{cert}/shared")]
        assert quic["status"] == "ok" and tcp["status"] == "ok", (quic, tcp)
        # The first connection proved QUIC, the TLS 1.3 suite, the group and the ALPN before any request was timed.
        assert f"QUICv1 TLS_AES_128_GCM_SHA256 {seen} ALPN sslperf" in quic["note"], quic["note"]
        assert "against TCP+TLS 1.3: handshake ×" in quic["note"], quic["note"]
        assert ", server CPU per request ×" in quic["note"], quic["note"]
        for m in (quic, tcp):
            # The server's CPU time over every connection it served (the warm-up one too), the client's over its loop.
            assert m["figures"]["served"] == [6] and m["figures"]["server_cpu_ns"][0] > 0, m["figures"]
            assert m["figures"]["client_cpu_ns"][0] > 0
        assert len(quic["figures"]["total_ns"]) == 5 and all(t > h > 0 for t, h in zip(
            quic["figures"]["total_ns"], quic["figures"]["pretransfer_ns"]))
    # The system library (OpenSSL 3.0) has no QUIC server: n/a, saying so; its TCP rows are measured.
    assert got[("system", "tls/quic/x25519/ecdsa-p256")]["status"] == "n/a"
    assert "no QUIC server (OpenSSL 3.5 added one" in got[("system", "tls/quic/x25519/ecdsa-p256")]["reason"]
    assert got[("system", "tls/loopback/tls1.3/x25519/ecdsa-p256/shared")]["status"] == "ok"
    assert run["environment"]["path"] == "loopback, no emulated delay or loss"


def test_the_quic_server_binds_loopback_only(built_openssl3, in_e2e_cache):
    lib = installed.find(built_openssl3)
    with made_by(lib) as cert_dir, Server(lib, "quic-server", str(cert_dir), "x25519", "ecdsa-p256", "1",
                                          env={"SSLPERF_CERT_DIR": str(cert_dir)}) as server:
        hello = server.line(timeout=120)
        assert hello["type"] == "listening" and hello["protocol"] == "quic", hello
        # 0100007F is 127.0.0.1 in /proc's byte order; nothing else (0.0.0.0, ::) listens on the port.
        assert udp_sockets_on(hello["port"]) == [f"0100007F:{hello['port']:04X}"]


def test_quic_transfer_bytes_are_checked_by_the_reader(built_openssl3, in_e2e_cache, monkeypatch):
    lib = installed.find(built_openssl3)
    with made_by(lib) as cert_dir:
        sent = quic_transfer.transfer(lib, cert_dir, quic_transfer.case("chacha20-poly1305", 16384), 200)
        assert sent.status == "ok" and sent.ops[0] > 0, sent.reason
        assert "QUICv1 TLS_CHACHA20_POLY1305_SHA256 group x25519 ALPN sslperf" in sent.note, sent.note
        assert sent.figures["client_cpu_ns"][0] > 0 and sent.figures["server_cpu_ns"][0] > 0
        monkeypatch.setenv("SSLPERF_TRANSFER_FLIP_A_BYTE", "1")      # the writer changes one byte of its buffer
        flipped = quic_transfer.transfer(lib, cert_dir, quic_transfer.case("chacha20-poly1305", 16384), 200)
    assert flipped.status == "error" and "differing from what was written" in flipped.reason, flipped.reason


def test_quic_transfer_runs_beside_tcp(built_openssl3, in_e2e_cache):
    result = run_cli("tls", "--quic", "--transfer", "--lib", built_openssl3, "--time", "50",
                     "--case", "tls/transfer/tls1.3/aes-128-gcm/16384", "--json", "--no-store")
    assert result.returncode == 0, result.stderr
    got = {m["case"]: m for m in json.loads(result.stdout)["measurements"]}
    assert set(got) == {"tls/transfer-tcp/tls1.3/aes-128-gcm/16384/no-ktls", "tls/quic-transfer/aes-128-gcm/16384"}
    assert all(m["status"] == "ok" for m in got.values()), got
    assert "against TCP+TLS 1.3: throughput ×" in got["tls/quic-transfer/aes-128-gcm/16384"]["note"]


def test_memory_per_quic_connection_is_counted_each_side_apart_beside_tcp(built_openssl3, in_e2e_cache):
    result = run_cli("tls", "--quic", "--memory", "--lib", built_openssl3, "--lib", "system", "--connections",
                     "2,20", "--case", "tls/handshake/tls1.3/x25519/ecdsa-p256/shared", "--json", "--no-store")
    assert result.returncode == 0, result.stderr
    got = {(m["lib"], m["case"]): m for m in json.loads(result.stdout)["measurements"]}
    lib = next(name for name, _ in got if name != "system")
    quic, tcp = got[(lib, "tls/quic-memory/x25519/ecdsa-p256")], got[(lib, "tls/memory/tls1.3/x25519/ecdsa-p256")]
    assert quic["status"] == "ok" and tcp["status"] == "ok", (quic, tcp)
    assert "QUICv1 TLS_AES_128_GCM_SHA256 group x25519 ALPN sslperf" in quic["note"], quic["note"]
    assert "against TCP+TLS 1.3 (N=20): client ×" in quic["note"], quic["note"]
    extra = quic["figures"]
    assert extra["connections"] == [2, 20]
    for side in ("client_bytes", "server_bytes"):
        # Bytes per connection: what freeing each side gave back, about the same for 2 connections as for 20
        # (a fixed cost counted once would be ten times smaller per connection at 20).
        assert all(b > 10_000 for b in extra[side]), extra
        assert 0.8 < extra[side][1] / extra[side][0] < 1.25, extra
    # Both sides together are what the established connections hold beyond the baseline, give or take the
    # listener's shared state.
    assert extra["established_bytes"][1] >= 0.95 * (extra["client_bytes"][1] + extra["server_bytes"][1]), extra
    assert got[("system", "tls/quic-memory/x25519/ecdsa-p256")]["status"] == "n/a"
    assert got[("system", "tls/memory/tls1.3/x25519/ecdsa-p256")]["status"] == "ok"


def test_quic_and_tcp_gets_from_client_threads_at_once_against_one_server(built_openssl3, in_e2e_cache):
    result = run_cli("tls", "--quic", "--threads", "1,4", "--lib", built_openssl3, "--requests", "5", "--samples", "3",
                     "--case", "tls/handshake/tls1.3/x25519/ecdsa-p256/shared", "--json", "--no-store")
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    got = {m["case"]: m for m in run["measurements"]}
    assert set(got) == {f"threads/clients/{n:03}/{case}" for n in (1, 4)
                        for case in ("tls/quic/x25519/ecdsa-p256", "tls/loopback/tls1.3/x25519/ecdsa-p256/shared")}
    for case, m in got.items():
        n = int(case.split("/")[2])
        assert m["status"] == "ok", m
        # Three rounds; each sample is every request of all n client threads over the loop's wall time.
        assert m["ops"] == [5 * n] * 3, (case, m["ops"])
        assert len(m["figures"]["total_ns"]) == 15 * n
        # n threads at once: the loop takes less than the sum of its requests' own times (they overlapped).
        if n == 4:
            assert all(wall < sum(m["figures"]["total_ns"][i * 20:(i + 1) * 20]) for i, wall in enumerate(m["wall_ns"]))
        # The server says what it spent once the last of its connections closes, however many workers accepted
        # them (a worker still waiting for a connection that never comes must not hold that line back).
        assert m["figures"]["served"] == [5 * n + 1] * 3 and all(c > 0 for c in m["figures"]["server_cpu_ns"]), m
    assert any("one CPU and every client thread on another" in w for w in run["warnings"])


def test_bisect_measures_a_quic_case_in_rounds_over_the_path_its_id_names(built_openssl3, built_openssl,
                                                                         in_e2e_cache):
    case = parse_case("tls/quic/x25519/ecdsa-p256/rtt10ms")
    assert probe.choose_metric("auto", case)[0] == "wall"
    with pytest.raises(SslperfError, match="cannot judge"):
        probe.choose_metric("instructions", case)
    newer, older = installed.find(built_openssl3), installed.find(built_openssl)
    space = Space([Point(lib.name, lib.name) for lib in (older, newer)], good=0, kind="releases")
    settings = plan.settings(100, 10, None, False, 3)
    judge = probe.Judge("wall", 0.02, 0.05)
    with made_by(newer) as cert_dir:
        step = probe.RealProbe(space, case, settings, judge, probe.Events(), cert_dir)
        step.libs = {0: older, 1: newer}
        run = step.measure([0, 1], False)
        tcp = probe.RealProbe(space, parse_case("tls/loopback/tls1.3/x25519/ecdsa-p256/shared"), settings, judge,
                              probe.Events(), cert_dir)
        tcp.libs = step.libs
        tcp_run = tcp.measure([0, 1], False)
    # OpenSSL 1.1.1 has no QUIC: the step cannot use it, and says why.
    assert "no QUIC server" in step.unusable(run, 0)
    assert step.unusable(run, 1) is None
    measured = next(m for m in run.measurements if m.lib == newer.name)
    # Three rounds of 30 GETs, each sample marked with its round; every one crossed the 10 ms path the id names.
    assert measured.figures["process"] == [0] * 30 + [1] * 30 + [2] * 30
    assert min(measured.wall_ns) > 10_000_000 and "round trip 10 ms" in measured.note
    # Two libraries' samples pair round by round, as the runner's pair process by process.
    assert tcp.unusable(tcp_run, 0) is None and tcp.change(tcp_run, 0, 1).method == "paired"


def test_a_connection_count_that_fails_keeps_the_counts_measured_before_it(built_openssl3, in_e2e_cache):
    lib = installed.find(built_openssl3)
    with made_by(lib) as cert_dir:
        case = parse_case("tls/quic-memory/x25519/ecdsa-p256")
        m = memory.counted(Measurement.of(case, lib.name, unit="bytes"), lib, cert_dir, ("quic-memory", "x25519", "ecdsa-p256"),
                           [2, 30_000])   # the harness takes 20,000
    assert m.status == "ok" and m.figures["connections"] == [2], (m.status, m.reason, m.figures)
    assert "N=30,000 failed: the number of QUIC connections must be 1 to 20000" in m.note, m.note


def test_quic_refusals_are_one_clear_paragraph(built_rustls, in_e2e_cache):
    result = run_cli("tls", "--quic", "--loopback", "--lib", "system", "--no-store")
    assert result.returncode == 2 and "are different measurements" in result.stderr, result.stderr
    result = run_cli("tls", "quic", "--lib", "rustls-0.15+ring", "--no-store")
    assert result.returncode == 2 and result.stderr.startswith("error: "), result.stderr
    assert "QUIC GETs over loopback UDP is not measured for this library's harness yet" in result.stderr
    assert "Traceback" not in result.stderr
    result = run_cli("tls", "--quic", "--memory", "--path", "rtt=50ms", "--lib", "system", "--no-store")
    assert result.returncode == 2 and "--path does not go with it" in result.stderr, result.stderr


@pytest.mark.timing             # round-trip times through the relay: with the timing tests, alone
def test_the_relay_delays_and_drops_each_way_as_asked(built_openssl3, in_e2e_cache):
    # A UDP echo server behind the relay: every datagram crosses it twice, so with 20% loss each way about
    # 64% come back, each no sooner than twice the one-way delay.
    echo = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    echo.bind(("127.0.0.1", 0))
    stop = threading.Event()

    def serve():
        echo.settimeout(0.2)
        while not stop.is_set():
            try:
                data, peer = echo.recvfrom(2048)
            except TimeoutError:
                continue
            echo.sendto(data, peer)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    lib = installed.find(built_openssl3)
    path = NetPath(rtt_ms=20, loss_pct=20)
    try:
        with servers.relayed(lib, echo.getsockname()[1], path, None) as port:
            client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            client.settimeout(0.06)           # three times the round trip: a datagram not back by then was dropped
            back, rtts = 0, []
            for i in range(100):
                sent = time.monotonic()
                client.sendto(i.to_bytes(4, "big"), ("127.0.0.1", port))
                try:
                    while int.from_bytes(client.recv(64), "big") != i:
                        pass
                    back += 1
                    rtts.append(time.monotonic() - sent)
                except TimeoutError:
                    pass
    finally:
        stop.set()
        thread.join()
        echo.close()
    assert 0.45 < back / 100 < 0.82, back            # 0.8 × 0.8 = 0.64 survive both ways
    assert min(rtts) >= 0.020 and statistics.median(rtts) < 0.060, (min(rtts), statistics.median(rtts))


def test_a_quic_get_over_an_emulated_path_is_its_own_case(built_openssl3, in_e2e_cache):
    result = run_cli("tls", "quic", "--path", "rtt=40ms", "--lib", built_openssl3, "--requests", "3", "--rounds", "1",
                     "--case", "tls/handshake/tls1.3/x25519/ecdsa-p256/shared", "--json", "--no-store")
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    got = {m["case"]: m for m in run["measurements"]}
    quic = got["tls/quic/x25519/ecdsa-p256/rtt40ms"]
    assert quic["status"] == "ok" and "round trip 40 ms" in quic["note"], quic
    # a QUIC handshake takes a round trip at least
    assert min(quic["figures"]["pretransfer_ns"]) >= 40e6, quic["figures"]["pretransfer_ns"]
    assert set(got) == {"tls/quic/x25519/ecdsa-p256/rtt40ms"}      # no TCP beside it: the relay carries UDP only
    assert any("there are no TCP rows over it" in w for w in run["warnings"]), run["warnings"]
    assert "round trip 40 ms" in run["environment"]["path"] and run["environment"]["kernel_netem"]


def test_bad_path_settings_are_refused_before_anything_runs(sslperf_here):
    for bad in ("rtt=50", "loss=5ms", "rtt=50ms,rtt=20ms", "delay=5ms", "loss=100%"):
        result = sslperf_here("tls", "--quic", "--path", bad, "--lib", "system", "--no-store")
        assert result.returncode == 2 and "--path" in result.stderr and "Traceback" not in result.stderr, (bad, result)
    result = sslperf_here("tls", "--path", "rtt=50ms", "--lib", "system", "--no-store")
    assert result.returncode == 2 and "--path belongs to `sslperf tls quic`" in result.stderr, result.stderr
    assert netpath.parse("rtt=50ms,jitter=2ms,loss=0.5%").id == "rtt50ms-jitter2ms-loss0.5pct"
    assert netpath.parse("loss=1%").relay_args() == ["0", "0", "10000", str(netpath.SEED)]
