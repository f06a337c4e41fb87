"""The certificates the TLS and API cases read: a private directory (0700)
with a CA bundle of about 150 certificates, a key and a certificate, made
by a library's own harness and removed afterwards. The measuring layer
makes them when the cases need them; the harness finds them through
SSLPERF_CERT_DIR."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from sslperf.errors import SslperfError
from sslperf.libs.model import Lib
from sslperf.measure.harness_client import call

CA_CERTIFICATES = 150
FAMILIES = ("api", "tls")          # the families whose cases read them
VARIABLE = "SSLPERF_CERT_DIR"


def needed(cases: Iterable) -> bool:
    return any(case.family in FAMILIES for case in cases)


@contextmanager
def made_by(lib: Lib) -> Iterator[Path]:
    """The directory, made by `lib`'s harness; removed when the block ends."""
    workdir = Path(tempfile.mkdtemp(prefix="sslperf-certs-"))
    try:
        made = call(lib, "mkcerts", str(workdir), str(CA_CERTIFICATES), timeout=300, ok_codes=None)
        if made.returncode != 0 or made.last.get("type") != "certs":
            raise SslperfError(f"Making the test certificates with {lib.name} failed: {made.stderr.strip()[-300:]}")
        yield workdir
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def env(cert_dir: Path | None) -> dict[str, str]:
    """What the harness reads to find them."""
    return {VARIABLE: str(cert_dir)} if cert_dir is not None else {}


def for_cases(lib: Lib, cases: Iterable, cert_dir: Path | None = None):
    """A context giving the directory the cases need (None when they need none): `cert_dir` when one was
    made already (a bisect's steps share one), else one made by `lib` for the block."""
    if cert_dir is not None or not needed(cases):
        return nullcontext(cert_dir)
    return made_by(lib)
