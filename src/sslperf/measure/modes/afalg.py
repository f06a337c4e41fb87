"""The kernel's crypto (AF_ALG sockets, harness/openssl/afalg.c) and the library's own code side by side, per
request size: in memory, in the pinned workers, exactly as the in-memory mode takes a case (the kernel's work shows
only in wall time)."""

from __future__ import annotations

from sslperf.measure.modes import base, in_memory

MODE = base.Mode("afalg", "kernel crypto (AF_ALG) beside the library", ("afalg",), base.OPENSSL_ONLY,
                 in_memory.MODE.figures,
                 ("wall", "cpu"), in_memory.Session)         # the kernel's work: no callgrind count
