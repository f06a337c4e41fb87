"""What each measuring verb's options become: one Request (measure.request) per command — its cases, settings and
each mode's options — so that the CLI only parses and prints, and the fleet sends the very object a verb would run.
The limits a request must keep are checked here, before anything runs."""

from __future__ import annotations

from sslperf.errors import SslperfError
from sslperf.measure import netpath, plan, suites
from sslperf.cases.ids import Case
from sslperf.measure.modes import clients, curl, loopback, memory, quic, quic_memory, quic_transfer, threads
from sslperf.measure.modes import transfer_tcp
from sslperf.measure.request import TWIN, Request

# The curl regression's two connection shapes: what `tls loopback` measures when no case is chosen.
CURL_SHAPES = (("tls1.3", "x25519", "ecdsa-p256"), ("tls1.2", "x25519", "rsa-2048"))
MAX_SHAPES = 4                # chosen cases: the first four shapes


def _chosen(case_ids: tuple[str, ...], patterns: tuple[str, ...], default: list[Case]) -> list[Case]:
    """The cases given with --case (else `default`), kept by --filter."""
    return suites.select([suites.parse_case(c) for c in case_ids] if case_ids else default, patterns)


def _request(source: str, lib_names, cases: list[Case], settings, labels: dict, options: dict | None = None,
             providers=(), fips_modules=()) -> Request:
    return Request(source, list(lib_names or ("system",)), [c.id for c in cases], settings, options or {}, labels,
                   list(providers), list(fips_modules))


def speed(lib_names, patterns, case_ids, depth, sizes, workload, settings, providers=(), fips_modules=()) -> Request:
    """The primitives suite of a depth (or the cases given), with extra sizes and workloads. `workload` None: not
    given (record); given with --case, it is applied to the cases it can apply to, and refused where it cannot."""
    given, workload = workload is not None, workload or "record"
    workloads = ("record", "speed-compat") if workload == "both" else (workload,)
    extra = suites.parse_sizes(sizes) if sizes else ()      # a bad size is said first, whatever else is wrong
    if case_ids and sizes:
        raise SslperfError("--sizes adds sizes to the suite's cases; with --case the ids name their sizes. Nothing "
                           "was measured.", hint="Give each size as a case, e.g. --case cipher/aes-128-gcm/encrypt/"
                                                 "1350, or drop --case to measure the suite with --sizes.")
    cases = _chosen(case_ids, patterns, suites.suite(depth, extra, workloads) if not case_ids else [])
    if case_ids and given:
        cases = _in_workloads(cases, workloads)
    return _request("sslperf speed", lib_names, cases, settings, {"depth": depth, "workload": workload,
                                                                   "metric": settings.counter}, None, providers,
                    fips_modules)


def _in_workloads(cases: list[Case], workloads: tuple[str, ...]) -> list[Case]:
    """The given cases in each of `workloads` (--workload with --case): what the suite applies workloads to
    (encryption and digests, the loops `openssl speed` times); any other case, or one whose id names another
    workload, is refused rather than measured in a workload the user did not ask for."""
    found: list[Case] = []
    for case in cases:
        takes = case.family == "digest" or (case.family == "cipher" and case.operation == "encrypt")
        named = case.id.endswith("/" + case.workload)
        if not takes and workloads == ("record",):       # what every case measures anyway: applied
            found.append(case)
            continue
        if not takes or (named and case.workload not in workloads):
            what = (f"names the {case.workload} workload" if named and takes else
                    "is not an encryption or digest case, which are what the workloads apply to")
            raise SslperfError(f"--workload {' and '.join(workloads)} cannot apply to {case.id}: it {what}. "
                               "Nothing was measured.",
                               hint="Drop --workload, or give cases it applies to, e.g. --case "
                                    "cipher/aes-128-gcm/encrypt/16384 --workload speed-compat.")
        if named:
            found.append(case)
            continue
        for workload in workloads:
            found.append(suites.cipher(case.algorithm, case.operation, case.size, workload) if case.family == "cipher"
                         else suites.digest(case.algorithm, case.size, workload))
    return list({c.id: c for c in found}.values())


def api(lib_names, patterns, settings, providers=(), fips_modules=()) -> Request:
    return _request("sslperf api", lib_names, _chosen((), patterns, suites.api_cases()), settings, {"suite": "api"},
                    None, providers, fips_modules)


def tls_handshake(lib_names, patterns, case_ids, depth, settings, providers=(), fips_modules=()) -> Request:
    """Handshakes and resumption in memory: the suite of a depth, or the cases given."""
    cases = _chosen(case_ids, patterns, suites.tls_suite(depth) if not case_ids else [])
    return _request("sslperf tls", lib_names, cases, settings, {"suite": "tls"}, None, providers, fips_modules)


def tls_transfer(lib_names, patterns, case_ids, depth, settings, tcp: bool, rounds: int | None,
                 providers=(), fips_modules=()) -> Request:
    """Bulk transfer after one handshake, in memory; with `tcp`, the same shapes over loopback TCP, kernel TLS off
    and on, each round `settings.target_ms` of writing (at least transfer_tcp.MIN_MS)."""
    cases = _chosen(case_ids, patterns, suites.transfer_suite(depth) if not case_ids else [])
    if not tcp:
        return _request("sslperf tls", lib_names, cases, settings, {"suite": "tls-transfer"}, None, providers,
                        fips_modules)
    settings.processes = rounds or transfer_tcp.ROUNDS
    ms = int(max(settings.target_ms, transfer_tcp.MIN_MS))
    return _request("sslperf tls", lib_names, transfer_tcp.cases(cases), settings, {"suite": "tls-transfer-tcp"},
                    {"transfer-tcp": transfer_tcp.Options(ms)}, providers, fips_modules)


def _shapes(cases: list[Case], protocol: str | None = None) -> list[tuple[str, ...]]:
    """(protocol, group, cert) of the handshake or loopback cases given, in order, each once; at most MAX_SHAPES."""
    found = [(c.part("protocol"), c.part("group"), c.part("cert")) for c in cases
             if c.part("template") in ("tls/handshake", "tls/loopback", "tls/memory")
             and (protocol is None or c.part("protocol") == protocol)]
    return list(dict.fromkeys(found))[:MAX_SHAPES]


def tls_loopback(lib_names, patterns, case_ids, requests: int, rounds: int, client: str, curl_spec, server_lib,
                 settings, providers=(), fips_modules=()) -> Request:
    """HTTPS GETs over loopback: the shapes of the cases given (at most four), else the curl regression's two,
    each with a new and a shared client SSL_CTX (the harness's client) and/or a real curl; `requests` GETs per
    library in each of `rounds` rounds."""
    given = _chosen(case_ids, patterns, []) if case_ids or patterns else []
    shapes = _shapes(given) or list(CURL_SHAPES)
    kinds = {"harness": ("new", "shared"), "curl": ("curl",), "both": ("new", "shared", "curl")}[client]
    cases = [c for c in given if c.part("template") == "tls/loopback"] or \
        [loopback.case(p, g, c, kind) for p, g, c in shapes for kind in kinds]
    settings.processes = rounds
    return _request("sslperf tls", lib_names, cases, settings, {"suite": "tls-loopback", "client": client},
                    {"loopback": loopback.Options(requests, server_lib),
                     "curl": curl.Options(requests, curl_spec, server_lib)}, providers, fips_modules)


def tls_memory(lib_names, patterns, case_ids, connections: str, providers=(), fips_modules=()) -> Request:
    """Bytes per connection: the shapes of the cases given, else the curl regression's two."""
    given = _chosen(case_ids, patterns, []) if case_ids or patterns else []
    cases = [memory.case(*shape) for shape in (_shapes(given) or memory.SHAPES)]
    counts = tuple(plan.counts(connections, "--connections", plan.MAX_CONNECTIONS))
    settings = plan.settings(0, 1, None, True, 1)
    return _request("sslperf tls", lib_names, cases, settings, {"suite": "tls-memory"},
                    {"memory": memory.Options(counts)}, providers, fips_modules)


def across_threads(source: str, lib_names, inner: list[Case], thread_list: str, seconds: float, mode: str,
                   rounds: int, settings, providers=(), fips_modules=()) -> Request:
    """The cases with each thread count (shared mode: the first handshake case, default the curl pattern's)."""
    counts = plan.counts(thread_list, "--threads", plan.MAX_THREADS)
    if mode == "shared":
        inner = [next((c for c in inner if c.template == "tls/handshake"),
                      suites.parse_case("tls/handshake/tls1.3/x25519/ecdsa-p256/shared"))]
    plan.check_threads(inner, lib_names or ("system",), counts, seconds, rounds)
    settings.processes = rounds
    cases = [threads.case(c, n, mode) for c in inner for n in counts]
    return _request(source, lib_names, cases, settings, {"suite": "threads", "threads": ",".join(map(str, counts)),
                                                         "thread_mode": mode},
                    {"threads": threads.Options(int(seconds * 1000))}, providers, fips_modules)


def tls_quic(lib_names, patterns, case_ids, requests: int, rounds: int, path_text, transfer: bool, memory_: bool,
             client_threads: str | None, connections: str, settings, server_lib=None) -> Request:
    """QUIC over loopback UDP beside TLS 1.3 over TCP: GETs (default), bulk transfer, memory per connection or
    GETs from N client threads at once; the groups and certificates of the TLS 1.3 cases given (at most four),
    else quic.SHAPES; over an emulated path where one is given."""
    given = [suites.parse_case(c) for c in case_ids]
    path = netpath.parse(path_text) if path_text else netpath.from_id(_path_of(given))
    named = [c for c in given if c.part("template") == "tls/quic"]
    shapes = list(dict.fromkeys([(c.part("group"), c.part("cert")) for c in named] +
                                [(g, c) for _, g, c in _shapes(given, "tls1.3")]))[:MAX_SHAPES] or list(quic.SHAPES)
    if sum(map(bool, (transfer, memory_, client_threads))) > 1:
        raise SslperfError("--transfer, --memory and --clients are different QUIC measurements; give one of them.",
                           hint="Run them one after the other.")
    if memory_ and path.emulated:
        raise SslperfError("--memory counts the bytes a connection holds once established; a network path does "
                           "not change them, so --path does not go with it.",
                           hint="Drop --path, or measure GETs or transfers over it.")
    settings.processes = rounds
    options = {"quic": quic.Options(requests, server_lib), "loopback": loopback.Options(requests, server_lib)}
    if transfer:
        in_memory = [c for c in given if c.part("template") != "tls/quic-transfer"] + [
            suites.parse_case(f"tls/transfer/tls1.3/{c.part('suite')}/{c.part('size')}") for c in given
            if c.part("template") == "tls/quic-transfer"]
        ms = int(max(settings.target_ms, transfer_tcp.MIN_MS))
        # Patterns choose among the in-memory ids a transfer stands for, else among the ids --list prints.
        by_pattern = [] if in_memory or not patterns else \
            [c for c in suites.transfer_suite("quick") if suites.matches(c.id, patterns)]
        cases = quic_transfer.cases(in_memory or by_pattern or suites.transfer_suite("quick"), path)
        return _request("sslperf tls", lib_names, cases if by_pattern else _kept(cases, patterns), settings,
                        {"suite": "tls-quic-transfer", "path": path.id}, {"transfer-tcp": transfer_tcp.Options(ms)})
    if memory_:
        counts = tuple(plan.counts(connections, "--connections", plan.MAX_CONNECTIONS))
        settings.processes = 1
        return _request("sslperf tls", lib_names, _kept(quic_memory.cases(shapes), patterns), settings,
                        {"suite": "tls-quic-memory"},
                        {"memory": memory.Options(counts)})
    gets = quic.cases(shapes, path)
    if client_threads:
        counts = plan.counts(client_threads, "--clients", plan.MAX_THREADS)
        return _request("sslperf tls", lib_names, _kept([clients.case(c, n) for c in gets for n in counts],
                                                          patterns), settings,
                        {"suite": "tls-quic-threads", "threads": ",".join(map(str, counts)), "path": path.id},
                        options)
    return _request("sslperf tls", lib_names, _kept(gets, patterns), settings, {"suite": "tls-quic", "path": path.id},
                    options)


def _path_of(given: list[Case]) -> str | None:
    """The emulated path the QUIC ids given name (they name one at most), for a run without --path."""
    paths = {c.part("path") for c in given if c.part("template") in ("tls/quic", "tls/quic-transfer")} - {None}
    if len(paths) > 1:
        raise SslperfError(f"The QUIC cases given name {len(paths)} network paths ({', '.join(sorted(paths))}); "
                           "one run goes over one path.", hint="Give the cases of one path per run, or --path.")
    return next(iter(paths), None)


def _kept(cases: list[Case], patterns) -> list[Case]:
    """The QUIC (and beside them TCP) cases a run makes, kept by --filter: patterns match what --list prints."""
    return suites.select(cases, patterns) if patterns else cases


# ---- each command's parsed options (click's ctx.params) → its request: what the CLI and the fleet both call ----
# Each option's default is declared once, on its click option: `p` holds every option the command declares (click
# fills in the defaults; cli.declared_params does the same for callers that are not a command line), so a value
# read here is never given a second default. Where a verb declares no --time/--samples, the mode's own is given.

def _settings(p: dict, time_ms=None, samples=None):
    """`time_ms` and `samples`: what a run takes when the verb leaves them to its depth or declares none."""
    given_ms, given_samples = p.get("time_ms"), p.get("samples")
    return plan.settings(time_ms if given_ms is None else given_ms, samples if given_samples is None else given_samples,
                         p.get("cpu"), p.get("no_pin", False), p.get("processes"), p.get("cpu_mask"),
                         p.get("metric", "wall"), p.get("fixed_layout", False))


def _lib_args(p: dict) -> dict:
    return {"providers": p["providers"], "fips_modules": p["fips_modules"]}


def _speed(p: dict) -> Request:
    depth = suites.DEPTHS[p["depth"] or "default"]
    if p["thread_list"]:
        return _across(p, "sslperf speed", suites.select([suites.parse_case(c) for c in p["case_ids"]] if
                                                         p["case_ids"] else suites.suite(depth.name), p["patterns"]))
    return speed(p["lib_names"], p["patterns"], p["case_ids"], depth.name, p["sizes"], p["workload"],
                 _settings(p, depth.target_ms, depth.samples), **_lib_args(p))


def _api(p: dict) -> Request:
    if p["thread_list"]:
        return _across(p, "sslperf api", suites.select(suites.api_cases(), p["patterns"]))
    return api(p["lib_names"], p["patterns"], _settings(p), **_lib_args(p))


def _across(p: dict, source: str, inner: list[Case]) -> Request:
    """speed and api across threads (--threads): rounds of --thread-seconds, a third of --samples."""
    rounds = max((p["samples"] or 0) // 3, threads.ROUNDS)
    return across_threads(source, p["lib_names"], inner, p["thread_list"], p["thread_seconds"], p["thread_mode"],
                          rounds, _settings(p, 1, 1), **_lib_args(p))


def _tls_threads(p: dict) -> Request:
    given = [suites.parse_case(c) for c in p["case_ids"]]
    # The pinned handshake first (the quick suite's as-deployed case negotiates differently per library).
    default = suites.transfer_suite("quick") if p["transfer"] else \
        [c for c in suites.tls_suite("quick") if c.part("group") != "default"]
    inner = suites.select(given or default, p["patterns"])
    return across_threads("sslperf tls", p["lib_names"], inner, p["thread_list"], p["thread_seconds"],
                          p["thread_mode"], p["rounds"], _settings(p, 1, 1), **_lib_args(p))


def _noise(p: dict) -> Request:
    """`sslperf noise`: the quick primitives suite with one library as two columns, `--runs` runs back to back."""
    depth = suites.DEPTHS["quick"]
    cases = suites.select(suites.suite("quick"), p["patterns"])
    return Request("sslperf noise", [p["lib_name"], p["lib_name"] + TWIN], [c.id for c in cases],
                   _settings(p, depth.target_ms, depth.samples),
                   labels={"suite": "noise", "threshold": p["threshold"] / 100}, repeat=p["count"])


REQUESTS = {
    "noise": _noise,
    "speed": _speed,
    "api": _api,
    "tls handshake": lambda p: tls_handshake(p["lib_names"], p["patterns"], p["case_ids"], p["depth"] or "default",
                                             _settings(p), **_lib_args(p)),
    "tls transfer": lambda p: tls_transfer(p["lib_names"], p["patterns"], p["case_ids"], p["depth"] or "default",
                                           _settings(p), p["tcp"], p["rounds"], **_lib_args(p)),
    "tls loopback": lambda p: tls_loopback(p["lib_names"], p["patterns"], p["case_ids"], p["requests"], p["rounds"],
                                           p["client_kind"], p["curl_spec"], p["server_lib"], _settings(p, 1, 1),
                                           **_lib_args(p)),
    "tls memory": lambda p: tls_memory(p["lib_names"], p["patterns"], p["case_ids"], p["connections"],
                                       **_lib_args(p)),
    "tls threads": _tls_threads,
    "tls quic": lambda p: tls_quic(p["lib_names"], p["patterns"], p["case_ids"], p["requests"], p["rounds"],
                                   p["net_path"], p["transfer"], p["memory_"], p["client_threads"], p["connections"],
                                   _settings(p, samples=1), p["server_lib"]),
}


def from_params(command: str, params: dict) -> Request:
    """The request of `command` ("speed", "tls loopback", "serve-load" …) given its parsed options."""
    if command == "serve-load":         # its own package's policy (which needs the servers' facts)
        from sslperf.measure import serve_plan

        request = serve_plan.request(params)
    elif command == "exec":
        from sslperf.measure import exec_plan

        request = exec_plan.request(params)
    else:
        request = REQUESTS[command](params)
    request.tuning = [flag for key, flag in TUNING if key in params]
    return request


# A verb's options that lengthen its samples or add more (its parsed options' keys): what a warning may suggest.
TUNING = (("time_ms", "--time"), ("samples", "--samples"), ("rounds", "--rounds"), ("round_count", "--rounds"),
          ("requests", "--requests"), ("processes", "--processes"), ("runs", "--runs"))
