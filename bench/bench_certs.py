"""The certificates the overhead benchmarks give their minimal loops and the harness: a P-256 CA and a
P-256 leaf for "localhost" (made by the openssl command), the CA file of ~150 certificates a client loads
(made by an OpenSSL-API harness, `mkcerts`), and for the other backends the PEM directory the harness's TLS
cases read (`pem-certs`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from sslperf.libs import installed
from sslperf.libs.model import Lib, harness_backend
from sslperf.measure import harness_client


def make(lib: Lib, work: Path) -> dict[str, str]:
    """Writes leaf.pem, leaf.key and cafile.pem into `work`; returns the harness's environment for them."""
    other_api = harness_backend(lib.flavor) != "openssl"
    maker = installed.find("system") if other_api else lib
    harness_client.call(maker, "mkcerts", str(work), "150", timeout=300)
    env = {"SSLPERF_CERT_DIR": str(work)}
    if other_api:
        (work / "pem").mkdir(mode=0o700)
        harness_client.call(maker, "pem-certs", str(work / "pem"), timeout=300)
        env["SSLPERF_TLS_PEM_DIR"] = str(work / "pem")
    # Any openssl command makes the files; built prefixes have no openssl.cnf for `req`.
    openssl = Path(shutil.which("openssl") or "openssl")

    def run(*args: str) -> None:
        subprocess.run([openssl, *args], check=True, capture_output=True, cwd=work, timeout=120)

    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
        "-out", "ca.pem", "-subj", "/CN=bench CA", "-days", "2")
    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "leaf.key", "-out",
        "leaf.csr", "-subj", "/CN=localhost")
    (work / "ext").write_text("subjectAltName=DNS:localhost\n")
    run("x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
        "leaf.pem", "-days", "2", "-extfile", "ext")
    (work / "cafile.pem").write_text((work / "ca-bundle.pem").read_text() + (work / "ca.pem").read_text())
    return env
