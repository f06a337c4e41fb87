"""The network path a QUIC case runs over: loopback as it is, or an emulated one with a round-trip delay, jitter
and loss (`--path rtt=50ms,jitter=2ms,loss=1%`). The kernel's netem would emulate it for UDP and TCP alike; where
the kernel has no netem (this VM's has none), sslperf's user-space UDP relay (`harness udp-relay`) does it for
QUIC. A path is part of the case id (`tls/quic/x25519/ecdsa-p256/rtt50ms-loss1pct`), so results taken over
different paths are never compared with each other."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sslperf.errors import SslperfError

_PART = re.compile(r"^(rtt|jitter|loss)=([0-9]+(?:\.[0-9]+)?)(ms|%)?$")
MAX_RTT_MS = 10_000
SEED = 1          # the relay's loss and jitter draws: the same path is the same sequence of drops


@dataclass(frozen=True)
class NetPath:
    rtt_ms: float = 0.0
    jitter_ms: float = 0.0        # each datagram's delay moves by up to this much either way, per direction
    loss_pct: float = 0.0         # each datagram's chance of being dropped, per direction

    @property
    def emulated(self) -> bool:
        return bool(self.rtt_ms or self.jitter_ms or self.loss_pct)

    @property
    def id(self) -> str | None:
        """The case id's part for this path; None for loopback as it is."""
        if not self.emulated:
            return None
        parts = [f"rtt{_num(self.rtt_ms)}ms"]
        if self.jitter_ms:
            parts.append(f"jitter{_num(self.jitter_ms)}ms")
        if self.loss_pct:
            parts.append(f"loss{_num(self.loss_pct)}pct")
        return "-".join(parts)

    def describe(self) -> str:
        if not self.emulated:
            return "loopback, no emulated delay or loss"
        return (f"emulated by sslperf's UDP relay: round trip {_num(self.rtt_ms)} ms, jitter ±{_num(self.jitter_ms)} "
                f"ms, loss {_num(self.loss_pct)}% per datagram each way")

    def relay_args(self) -> list[str]:
        """The relay's delay and jitter (µs, one way) and loss (per million), and its seed."""
        return [str(round(self.rtt_ms * 500)), str(round(self.jitter_ms * 1000)), str(round(self.loss_pct * 10_000)),
                str(SEED)]


def _num(value: float) -> str:
    return f"{value:g}"


def parse(text: str | None) -> NetPath:
    """`rtt=50ms,jitter=2ms,loss=0.5%` (any of them, in any order) into a NetPath; a clear error for anything else."""
    if not text:
        return NetPath()
    values = {}
    for part in text.split(","):
        match = _PART.match(part.strip())
        unit_ok = match and ((match.group(1) == "loss") == (match.group(3) == "%")) and match.group(3) is not None
        if not unit_ok or match.group(1) in values:
            raise SslperfError(f"`--path {text}`: `{part.strip()}` is not a path setting.",
                               hint="Give rtt=MSms, jitter=MSms and loss=PERCENT%, comma-separated, e.g. "
                               "`--path rtt=50ms,loss=1%`.")
        values[match.group(1)] = float(match.group(2))
    path = NetPath(values.get("rtt", 0.0), values.get("jitter", 0.0), values.get("loss", 0.0))
    if path.rtt_ms > MAX_RTT_MS or path.loss_pct >= 100 or path.jitter_ms > 1000:
        raise SslperfError(f"`--path {text}` is out of range.",
                           hint=f"A round trip up to {MAX_RTT_MS} ms, loss under 100%, jitter up to 1000 ms.")
    return path


_ID = re.compile(r"^rtt([0-9.]+)ms(?:-jitter([0-9.]+)ms)?(?:-loss([0-9.]+)pct)?$")


def from_id(text: str | None) -> NetPath:
    """The path a case id's last part names (NetPath.id), loopback as it is for None."""
    if text is None:
        return NetPath()
    match = _ID.match(text)
    if not match:
        raise SslperfError(f"`{text}` does not name a network path.",
                           hint="A path part looks like rtt50ms, rtt50ms-jitter2ms or rtt50ms-jitter2ms-loss0.5pct.")
    return NetPath(*(float(v) if v else 0.0 for v in match.groups()))


def kernel_netem() -> str:
    """Whether this kernel could emulate the path itself: "yes", or "no: WHY"."""
    if Path("/sys/module/sch_netem").exists():
        return "yes (sch_netem loaded)"
    release = Path("/proc/sys/kernel/osrelease").read_text().strip() if Path("/proc/sys/kernel/osrelease").exists() \
        else ""
    modules = Path("/lib/modules") / release
    if release and any((modules / "kernel" / "net" / "sched").glob("sch_netem.ko*")):
        return "yes (sch_netem available as a module)"
    return "no: this kernel has no sch_netem (neither loaded nor among its modules)"
