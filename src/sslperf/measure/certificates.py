"""The certificates the TLS and API cases read: a private directory (0700)
with a CA bundle of about 150 certificates, a key and a certificate, made
by a library's own harness and removed afterwards (after a kill -9, by the
next sslperf: see tempdirs). The measuring layer
makes them when the cases need them; the harness finds them through
SSLPERF_CERT_DIR. A harness of another backend (rustls), which cannot make
certificates, also finds there the TLS cases' CA, certificates and keys as
PEM files, made by an OpenSSL-API harness (SSLPERF_TLS_PEM_DIR)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from sslperf import tempdirs
from sslperf.errors import SslperfError
from sslperf.libs import installed
from sslperf.libs.model import Lib, harness_backend
from sslperf.measure.harness_client import call

CA_CERTIFICATES = 150
FAMILIES = ("api", "tls")          # the families whose cases read them
SERVE_FAMILY = "tls-serve"         # real servers, which read the PEM files
VARIABLE = "SSLPERF_CERT_DIR"
PEM_VARIABLE = "SSLPERF_TLS_PEM_DIR"


def needed(cases: Iterable) -> bool:
    """Whether any of `cases` reads them (a case across threads: if the case it runs does)."""
    return any(case.family in FAMILIES or case.family == SERVE_FAMILY or case.family.startswith("tls")
               or case.family == "threads" and str(case.part("case")).split("/")[0] in FAMILIES for case in cases)


def pem_needed(cases: Iterable) -> bool:
    """Whether a real server (tls/serve cases) reads the PEM files."""
    return any(case.family == SERVE_FAMILY for case in cases)


def _makes_mldsa(lib: Lib) -> bool:
    """Whether `lib` is an OpenSSL that makes ML-DSA keys (3.5 on)."""
    parts = [int(p) for p in str(lib.version).split(".")[:2] if p.isdigit()]
    return lib.flavor == "openssl" and len(parts) == 2 and tuple(parts) >= (3, 5)


def _maker(libs: tuple[Lib, ...], mldsa: bool = False) -> Lib:
    """The first of `libs` with an OpenSSL-API harness, else any such library in hand; for ML-DSA certificates
    (read as PEM files by another backend), first one that can make them."""
    in_hand = [lib for lib in installed.all_libs() if lib.linkage is not None]
    able = [lib for lib in (*libs, *in_hand) if harness_backend(lib.flavor) == "openssl"]
    for lib in able if mldsa else ():
        if _makes_mldsa(lib):
            return lib
    for lib in able:
        return lib
    raise SslperfError(f"{libs[0].name} cannot make test certificates, and no OpenSSL-API library is in hand to "
                       "make them.", hint="Install the system OpenSSL headers (`sudo apt-get install libssl-dev`) or "
                       "build one with `sslperf libs build openssl-3.6`.")


@contextmanager
def made_by(*libs: Lib, pem: bool = False, mldsa: bool = False) -> Iterator[Path]:
    """The directory, made by the first OpenSSL-API harness among `libs` (the PEM files too when one of them
    has another backend, or `pem`: a real server reads them; `mldsa`: by one that makes ML-DSA certificates, where
    one is in hand); removed when the block ends."""
    maker = _maker(libs, mldsa)
    with tempdirs.private_dir("certs") as workdir:      # a killed sslperf's is swept by the next one
        made = call(maker, "mkcerts", str(workdir), str(CA_CERTIFICATES), timeout=300, ok_codes=None)
        if made.returncode != 0 or made.last.get("type") != "certs":
            raise SslperfError(f"Making the test certificates with {maker.name} failed: {made.stderr.strip()[-300:]}")
        if pem or any(harness_backend(lib.flavor) != "openssl" for lib in libs):
            made = call(maker, "pem-certs", str(workdir), timeout=300, ok_codes=None)
            if made.returncode != 0 or made.last.get("type") != "certs":
                raise SslperfError(f"Making the TLS cases' PEM certificates with {maker.name} failed: "
                                   f"{made.stderr.strip()[-300:]}")
        yield workdir


def env(cert_dir: Path | None) -> dict[str, str]:
    """What the harness reads to find them."""
    return {VARIABLE: str(cert_dir), PEM_VARIABLE: str(cert_dir)} if cert_dir is not None else {}


def for_cases(libs: Lib | Iterable[Lib], cases: Iterable, cert_dir: Path | None = None):
    """A context giving the directory the cases need (None when they need none): `cert_dir` when one was
    made already (a bisect's steps share one), else one made for `libs` for the block."""
    if cert_dir is not None or not needed(cases):
        return nullcontext(cert_dir)
    cases = list(cases)
    return made_by(*((libs,) if isinstance(libs, Lib) else tuple(libs)), pem=pem_needed(cases),
                   mldsa=any("/ml-dsa-" in case.id for case in cases))
