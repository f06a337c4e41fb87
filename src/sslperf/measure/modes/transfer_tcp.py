"""Bulk transfer over a real loopback TCP connection, kernel TLS off and on: per round a fresh server and client,
the client writing the case's write size for the round's time while the server checks every byte. With kernel TLS
the result says whether the kernel really did the sending, or why not (n/a)."""

from __future__ import annotations

from dataclasses import dataclass

from sslperf import figures
from sslperf.libs.model import Lib
from sslperf.measure import certificates, servers
from sslperf import pinning
from sslperf.cases.ids import Case, make
from sslperf.measure.harness_client import HarnessError, Server, call
from sslperf.measure.modes import base
from sslperf.results import Measurement

ROUNDS = 3                 # at least this many fresh server/client pairs
MIN_MS = 250               # a shorter round is mostly connection set-up


@dataclass(frozen=True)
class Options:
    milliseconds: int = MIN_MS          # how long the client writes in each round


def case(protocol: str, suite: str, size: int | str, ktls: bool) -> Case:
    return make("tls/transfer-tcp", protocol=protocol, suite=suite, size=size, kernel="ktls" if ktls else "no-ktls")


def cases(in_memory: list[Case]) -> list[Case]:
    """The in-memory transfer cases' shapes over TCP, kernel TLS off and on."""
    return [case(c.part("protocol"), c.part("suite"), c.part("size"), ktls) for c in in_memory
            if c.template == "tls/transfer" for ktls in (False, True)]


class Session(base.Session):
    def __init__(self, mode, ctx, cases_):
        super().__init__(mode, ctx, cases_)
        servers.placement(ctx.run)

    def take(self, case: Case, lib: Lib):
        return transfer(lib, self.ctx.cert_dir, case, max(MIN_MS, self.options.milliseconds))

    def finish(self, results) -> list:
        kernel = sorted({m.reason.split("the kernel: ", 1)[1] for m in results
                         if m.family == "tls-loopback" and m.reason and "the kernel: " in m.reason})
        return [f"this kernel cannot do TLS itself ({kernel[0]}): every kernel-TLS row is n/a here; on a kernel "
                "with the tls module (modprobe tls) and a library built with enable-ktls (the +ktls variant), those "
                "rows show what handing the records to the kernel saves."] if kernel else []

    def cpus(self) -> set[int]:
        return set(pinning.loopback_cpus())


def transfer(lib: Lib, cert_dir, c: Case, milliseconds: int):
    """One round: a fresh server and client of `lib`, the client writing for `milliseconds`."""
    proto, suite, size, ktls = c.part("protocol"), c.part("suite"), int(c.part("size")), c.part("kernel") == "ktls"
    m = Measurement.of(c, lib.name, unit="bytes", bytes_per_op=size)
    server_cpu, client_cpu = pinning.loopback_cpus()
    on = "on" if ktls else "off"
    with Server(lib, "transfer-server", str(cert_dir), proto, suite, str(size), on, env=certificates.env(cert_dir),
                cpu=server_cpu) as running:
        hello = servers.listening(running, m)
        if hello is None:
            return m
        try:
            sent = call(lib, "transfer-client", str(hello["port"]), hello["ca_file"], proto, suite, str(size),
                        str(milliseconds), on, timeout=120 + milliseconds / 1000, env=certificates.env(cert_dir),
                        ok_codes=None, cpu=client_cpu).last
            received = running.line(timeout=120)
        except HarnessError as failed:
            m.status, m.reason = "error", failed.message
            return m
    if sent.get("type") == "na":
        m.status, m.reason = "n/a", sent.get("reason")
        return m
    if not servers.delivered(m, sent, received):
        return m
    if ktls and not sent["ktls_send"]:
        why = [hello["library_ktls"]] if hello.get("library_ktls") else []
        if not str(hello.get("kernel_tls")).startswith("yes"):
            why.append(f"the kernel: {hello['kernel_tls']}")
        m.status = "n/a"
        m.reason = ("kernel TLS was asked for but not used: "
                    + ("; ".join(why) or f"the library did not hand {sent['cipher']} to the kernel"))
        return m
    servers.took_transfer(m, sent, received)
    m.note = (f"{sent['cipher']}; kernel TLS {'used for sending' if sent['ktls_send'] else 'off'}; "
              f"kernel tls module: {hello['kernel_tls']}")
    return m


MODE = base.Mode("transfer-tcp", "bulk transfer over loopback TCP", ("tls/transfer-tcp",), base.OPENSSL_ONLY,
                 (figures.CLIENT_CPU, figures.SERVER_CPU), base.WALL_ONLY, Session, options=Options)
