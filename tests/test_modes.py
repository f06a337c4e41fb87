"""The mode registry against the harness's case catalog, and every mode's round under the one scheduler against
a fake harness that logs each program it is asked to start: loopback GETs, curl, QUIC, TCP and QUIC transfer,
memory, threads, N clients at once and real servers all interleave their libraries A B / B A, and each round's
figures land in the result. (The real harness runs these modes in test_tls.py, test_quic.py, test_transfer.py,
test_memory.py and test_serve_load.py.)"""

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from fakes import FakeLib

from sslperf import figures
from sslperf.cases import ids as case_ids
from sslperf.measure import scheduler, servers
from sslperf.measure.modes import (clients, curl, loopback, memory, quic, quic_transfer, registry, serve, threads,
                                   transfer_tcp)
from sslperf.measure.settings import Settings
from sslperf.measure.suites import parse_case
from sslperf.results import Measurement, Run


@dataclass
class Harness:
    """What the fake harness was asked to run, in order: (library, program)."""
    started: list = field(default_factory=list)


def replies(command: str, args: tuple) -> list[dict]:
    """The lines a fake harness program prints: a server's hello and closing line, a client's reply."""
    if command in ("https-server", "quic-server", "transfer-server", "quic-transfer-server"):
        closing = ({"type": "served", "connections": 4, "cpu_ns": 4000} if command.endswith("server")
                   and "transfer" not in command else
                   {"ok": True, "bytes": 1600, "mismatched_pieces": 0, "cpu_ns": 700})
        return [{"type": "listening", "port": 1, "ca_file": "ca.pem", "protocol": "tcp", "kernel_tls": "no: test"},
                closing]
    if command in ("https-get", "quic-get"):
        fixed = 4 if command == "quic-get" else 6        # port, CA file, then its own arguments; then the count
        count = int(args[fixed]) * (int(args[fixed + 1]) if len(args) > fixed + 1 else 1)     # × client threads
        return [{"type": "requests", "total_ns": [3000] * count, "connect_ns": [1000] * count,
                 "pretransfer_ns": [2000] * count, "loop_ns": 3000 * count, "cpu_ns": 900 * count,
                 "checked": "TLSv1.3"}]
    if command in ("transfer-client", "quic-transfer-client"):
        return [{"type": "sent", "ok": True, "bytes": 1600, "writes": 100, "wall_ns": 10_000, "cpu_ns": 800,
                 "ktls_send": False, "cipher": "TLS_AES_128_GCM_SHA256", "checked": "QUICv1"}]
    if command in ("memory", "quic-memory"):
        n = int(args[-1])
        return [{"type": "memory", "method": "allocator hooks", "client_bytes": 100 * n, "server_bytes": 200 * n,
                 "established": 400 * n, "baseline": 0, "peak": 500 * n}]
    if command == "threads":
        n = int(args[1])
        return [{"type": "threads", "ops": [10] * n, "wall_ns": 1_000_000, "bytes_per_op": 0}]
    raise AssertionError(f"the fake harness has no {command}")


@pytest.fixture
def harness(monkeypatch):
    log = Harness()

    class FakeServer:
        pid = None          # no process: its run delay is not known

        def __init__(self, lib, command, *args, env=None, cpu=None):
            log.started.append((lib.name, command))
            self.lines = replies(command, args)

        def line(self, timeout):
            return self.lines.pop(0)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

    @dataclass
    class Output:
        lines: list
        returncode: int = 0
        stderr: str = ""

        @property
        def last(self):
            return self.lines[-1]

    def fake_call(lib, command, *args, timeout=None, env=None, ok_codes=None, cpu=None, **kwargs):
        if args[-1] != "1" or command not in ("https-get", "quic-get"):       # the warm-up GET is not logged
            log.started.append((lib.name, command))
        return Output(replies(command, args))

    for module in (servers, transfer_tcp, quic_transfer):
        monkeypatch.setattr(module, "Server", FakeServer, raising=False)
    for module in (servers, transfer_tcp, quic_transfer, memory, threads):
        monkeypatch.setattr(module, "call", fake_call, raising=False)
    monkeypatch.setattr(scheduler, "new_run", lambda libs, settings, mask=None: Run.new(settings, {"cpus": 2}))
    monkeypatch.setattr(scheduler.certificates, "for_cases",
                        lambda libs, cases, cert_dir=None: contextlib.nullcontext(Path("/certs")))
    monkeypatch.setattr(scheduler.pinning, "busy_cpus", lambda cpus: {})
    monkeypatch.setattr(scheduler.environment, "capture", lambda mask=None: {"cpus": 2, "loadavg": [0, 0, 0]})
    return log


def measure(case_ids_, options=None, rounds=3, libs=("a", "b")):
    return scheduler.measure_libs([FakeLib(n) for n in libs], [c if isinstance(c, case_ids.Case) else parse_case(c)
                                                           for c in case_ids_],
                             Settings(1, 1, processes=rounds, cpu=None), None, "test", options=options or {})


def order(log: Harness, *programs: str) -> list[str]:
    return [lib for lib, command in log.started if command in programs]


ABBAAB = ["a", "b", "b", "a", "a", "b"]


def test_loopback_gets_interleave_their_libraries_and_keep_each_rounds_requests(harness):
    run = measure(["tls/loopback/tls1.3/x25519/ecdsa-p256/shared"], {"loopback": loopback.Options(4)})
    assert order(harness, "https-get") == ABBAAB and order(harness, "https-server") == ABBAAB
    for m in run.measurements:
        assert m.status == "ok" and len(m.wall_ns) == 12                   # 4 GETs in each of 3 rounds
        assert m.figures[figures.ROUND] == [0] * 4 + [1] * 4 + [2] * 4
        assert m.figures[figures.PROCESS] == m.figures[figures.ROUND]      # each round: fresh processes
        assert m.figures[figures.LOOP] == [12_000] * 3 and m.figures[figures.SERVED] == [4] * 3


def test_quic_gets_interleave_and_each_says_what_it_costs_against_tcp(harness):
    run = measure(quic.cases([("x25519", "ecdsa-p256")], quic.netpath.NetPath()),
                  {"quic": quic.Options(2), "loopback": loopback.Options(2)})
    assert order(harness, "quic-get") == ABBAAB and order(harness, "https-get") == ABBAAB
    got = {m.case: m for m in run.measurements if m.lib == "a"}
    assert "against TCP+TLS 1.3: handshake ×1.00, whole request ×1.00" in got["tls/quic/x25519/ecdsa-p256"].note


def test_transfers_over_tcp_and_quic_interleave_and_check_every_round(harness):
    cases = quic_transfer.cases([parse_case("tls/transfer/tls1.3/aes-128-gcm/16")], quic.netpath.NetPath())
    run = measure(cases)
    assert order(harness, "transfer-client") == ABBAAB and order(harness, "quic-transfer-client") == ABBAAB
    for m in run.measurements:
        assert m.status == "ok" and m.ops == [100] * 3 and m.unit == "bytes" and m.bytes_per_op == 16
        assert m.figures[figures.CLIENT_CPU] == [800] * 3 and m.figures[figures.SERVER_CPU] == [700] * 3


def test_memory_takes_one_pass_each_library_once_in_turn(harness):
    run = measure([memory.case("tls1.3", "x25519", "ecdsa-p256")], {"memory": memory.Options((10, 100))})
    assert order(harness, "memory") == ["a", "a", "b", "b"]          # one round: every count of a, then of b
    for m in run.measurements:
        assert m.figures[figures.CONNECTIONS] == [10, 100] and m.figures[figures.CLIENT_BYTES] == [100, 100]


def test_thread_counts_and_libraries_interleave_in_every_round(harness):
    inner = parse_case("sig/ed25519/sign")
    run = measure([threads.case(inner, n, "own") for n in (1, 2)], {"threads": threads.Options(100)})
    # each pass: 1 thread twice (its rate divides every efficiency), then 2 threads; the libraries alternating,
    # each pass starting with the other
    one, two = ["a", "b", "b", "a"], ["a", "b"]
    assert order(harness, "threads") == one + two + ["b", "a", "a", "b"] + two[::-1] + one + two
    two = next(m for m in run.measurements if m.lib == "a" and m.size == 2)
    assert two.ops == [20] * 3 and two.figures[figures.PER_THREAD] == [10] * 6


def test_n_clients_at_once_interleave_with_the_libraries(harness):
    inner = parse_case("tls/quic/x25519/ecdsa-p256")
    run = measure([clients.case(inner, 4)], {"quic": quic.Options(2)})
    assert order(harness, "quic-get") == ABBAAB
    m = run.measurements[0]
    assert m.ops == [8] * 3 and m.wall_ns == [24_000] * 3             # each round: 2 GETs × 4 threads over the loop


def test_real_servers_are_built_first_then_interleaved_round_by_round(harness, monkeypatch):
    built, rounds = [], []
    monkeypatch.setattr(serve.serve_rounds, "prepare",
                        lambda libs, cases, plan, progress=None: built.extend(l.name for l in libs) or {
                            ("nginx", l.name): "built" for l in libs})

    def one(case, lib, cert_dir, plan, build):
        rounds.append(lib.name)
        m = Measurement.of(case, lib.name, unit="ops", ops=[100], wall_ns=[10**9], cpu_ns=[10**8])
        m.figures = {figures.CLIENT_CPU: [10**8], figures.SERVER_CPUS: [1], figures.CLIENT_CPUS: [1]}
        return m

    monkeypatch.setattr(serve.serve_rounds, "one", one)
    run = measure(["tls/serve/nginx/new/tls1.3/x25519/rsa-2048"])
    assert built == ["a", "b"] and rounds == ABBAAB
    assert all(m.ops == [100] * 3 for m in run.measurements)


def test_curl_is_built_for_each_library_before_the_first_round(harness, monkeypatch):
    builds, gets = [], []
    monkeypatch.setattr(curl.curl_builds, "build", lambda lib, curl_spec=None: builds.append(lib.name) or lib.name)
    monkeypatch.setattr(curl, "requests", lambda built, lib, server, cert_dir, case, count: gets.append(lib.name)
                        or Measurement.of(case, lib.name, ops=[1] * count, wall_ns=[5] * count))
    measure(["tls/loopback/tls1.3/x25519/ecdsa-p256/curl"], {"curl": curl.Options(3)})
    assert builds == ["a", "b"] and gets == ABBAAB


def test_every_catalog_template_is_measured_by_exactly_one_mode():
    """The registry against the harness's own catalog: each template a mode of its own (instructions: the counting
    mode for every case that runs in one process; exec-instructions for the user's command), nothing claimed twice,
    no mode naming a template that is not there."""
    templates = {t.prefix for t in case_ids.templates()}
    for mode in registry.MODES:
        assert set(mode.templates) <= templates, (mode.name, set(mode.templates) - templates)
    for template in case_ids.templates():
        if template.key in registry.IMPORTED_ONLY:
            continue
        example = _example(template)
        claims = [m.name for m in registry.MODES if m.claims(example)]
        assert len(claims) == 1, (example.id, claims)
        counted = [m.name for m in registry.MODES if m.claims(example, "instructions")]
        counter = "exec-instructions" if example.family == "exec" else "instructions"
        assert counted == ([counter] if "instructions" in registry.mode_of(example).metrics else []), \
            (example.id, counted)


def test_a_case_its_mode_cannot_count_is_refused_with_the_metric_it_can_take():
    from sslperf.errors import SslperfError

    with pytest.raises(SslperfError, match="cannot judge"):
        registry.metric(parse_case("tls/loopback/tls1.3/x25519/ecdsa-p256/new"), "instructions")
    assert registry.metric(parse_case("tls/serve/nginx/new/tls1.3/x25519/rsa-2048"), "auto")[0] == "cpu"
    with pytest.raises(SslperfError, match="cannot be counted in instructions"):
        registry.mode_of(parse_case("tls/quic/x25519/ecdsa-p256"), "instructions")


def _example(template) -> case_ids.Case:
    """A case of `template`, its parts the catalog's first values (any value where it lists none)."""
    from sslperf.cases import catalog

    entry = catalog.load()[template.key]
    if entry.get("cases"):
        listed = [c["id"] for c in entry["cases"] if template.regex.fullmatch(c["id"])]
        if listed:
            return parse_case(listed[0])
    parts = {}
    for name in template.parts:
        values = entry.get(name + "s", entry.get(name))
        first = values[0] if isinstance(values, list) and values else None
        parts[name] = (first["name"] if isinstance(first, dict) else first) if first is not None else \
            {"size": "16", "case": "sig/ed25519/sign", "mode": "own", "workload": None, "path": None}.get(name, "x")
    return case_ids.parse(case_ids.format_id(template, parts), strict=False)


def test_a_mode_read_beside_another_names_that_case_and_finds_its_result():
    """Issue 53: the QUIC modes declare the TCP case each result is read beside (Mode.beside), matched by the parsed
    case, not by id prefixes: each QUIC case maps to a case another registry row measures, and base.beside pairs the
    two results of one library."""
    from sslperf.measure.modes import base, loopback, memory, quic, quic_memory, quic_transfer, transfer_tcp

    examples = {quic.MODE: (quic.case("x25519", "ecdsa-p256"), loopback.MODE),
                quic_memory.MODE: (parse_case("tls/quic-memory/x25519/ecdsa-p256"), memory.MODE),
                quic_transfer.MODE: (parse_case("tls/quic-transfer/aes-128-gcm/16384"), transfer_tcp.MODE)}
    for mode, (case, other) in examples.items():
        partner = mode.beside(case)
        assert mode.claims(case) and other.claims(partner) and not mode.claims(partner), (mode.name, partner.id)
        results = [Measurement.of(case, "a"), Measurement.of(partner, "a"), Measurement.of(partner, "b")]
        assert [(m.case, o.case, o.lib) for m, o in base.beside(mode, results)] == [(case.id, partner.id, "a")]
    assert [m.name for m in registry.MODES if m.beside] == ["quic", "quic-transfer", "quic-memory"]
