"""The fleet's credentials: a CA of its own and a certificate for each role (scheduler, worker, client), so that
the scheduler, its workers and its clients talk TLS and each refuses a peer whose certificate the fleet's CA did
not sign. Dask lets any client run any code on the scheduler and on every worker (`Client.run`): these
certificates are all that keeps someone who can reach the port from doing so.

They live in SSLPERF_CONFIG_DIR/fleet (the user's config dir), the directory 0700 and every key 0600. The machine
that made them holds the CA's key; another machine gets a bundle with the CA's certificate and one role's
certificate and key (`export` / `install`), never the CA's key."""

from __future__ import annotations

import datetime as dt
import io
import ipaddress
import os
import socket
import tarfile
from pathlib import Path

from sslperf import paths
from sslperf.fleet.cluster import FleetError

ROLES = ("scheduler", "worker", "client")
CA_CERT, CA_KEY = "ca.pem", "ca-key.pem"
YEARS = 5                   # a fleet is remade (`fleet credentials --renew`) rather than trusted forever
MAX_BUNDLE = 64 * 1024      # a bundle holds three PEM files


def directory() -> Path:
    return paths.config_path() / "fleet"


def cert_file(role: str, where: Path | None = None) -> Path:
    return (where or directory()) / f"{role}.pem"


def key_file(role: str, where: Path | None = None) -> Path:
    return (where or directory()) / f"{role}-key.pem"


def present(role: str, where: Path | None = None) -> bool:
    """Whether this machine holds what `role` needs: the CA's certificate and the role's certificate and key."""
    where = where or directory()
    return all(p.is_file() for p in ((where / CA_CERT), cert_file(role, where), key_file(role, where)))


def make(hosts: list[str], where: Path | None = None, renew: bool = False) -> list[Path]:
    """A new CA and a certificate for every role (the scheduler's naming `hosts`, this host and loopback), written
    to `where`; the files written. Existing credentials are kept unless `renew` (then every machine needs new
    bundles)."""
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    where = where or directory()
    if (where / CA_CERT).exists() and not renew:
        raise FleetError(f"This machine already has fleet credentials in {where}.",
                         hint="Keep them (every machine of the fleet trusts their CA), or make new ones with "
                              "`sslperf fleet credentials --renew` and give every machine a new bundle.")
    _private_dir(where)
    now = dt.datetime.now(dt.timezone.utc)
    until = now + dt.timedelta(days=365 * YEARS)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"sslperf fleet CA ({socket.gethostname()})")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(until)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
          .sign(ca_key, _sha256()))
    written = [_write(where / CA_KEY, _pem_key(ca_key)), _write(where / CA_CERT, _pem_cert(ca))]
    names = _names(hosts)
    for role in ROLES:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"sslperf fleet {role}")]))
                .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now).not_valid_after(until)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                # Each role both listens and connects (the scheduler calls its workers back).
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                      ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
                .add_extension(x509.SubjectAlternativeName(names), critical=False)
                .sign(ca_key, _sha256()))
        written += [_write(key_file(role, where), _pem_key(key)), _write(cert_file(role, where), _pem_cert(cert))]
    return written


def security(role: str, where: Path | None = None):
    """Dask's TLS settings for `role`: this machine's certificate for it, the fleet's CA required of every peer."""
    from sslperf.fleet.cluster import dask

    where = where or directory()
    if not present(role, where):
        made_here = (where / CA_KEY).exists()
        raise FleetError(
            f"A tls:// scheduler needs this machine's fleet credentials for the {role} role, and {where} does not "
            f"hold them ({CA_CERT}, {role}.pem and {role}-key.pem).",
            hint=("Make them with `sslperf fleet credentials` (the first `sslperf fleet scheduler` does) on the "
                  "scheduler's machine" if not made_here else "They are incomplete; remake them with "
                  "`sslperf fleet credentials --renew`") + f"; on another machine, install the bundle made there "
                  f"with `sslperf fleet credentials --export {role} FILE`: `sslperf fleet credentials --install FILE`.")
    return dask().Security(tls_ca_file=str(where / CA_CERT), require_encryption=True,
                           **{f"tls_{role}_cert": str(cert_file(role, where)),
                              f"tls_{role}_key": str(key_file(role, where))})


def export(role: str, out: Path, where: Path | None = None, force: bool = False) -> Path:
    """A bundle (tar.gz, 0600) of what `role` needs on another machine: the CA's certificate, the role's certificate
    and key; never the CA's key. An existing `out` is replaced only with `force`, a link never."""
    where = where or directory()
    if out.is_symlink() or (out.exists() and not force):
        raise FleetError(f"{out} exists; a bundle holds a private key and is never written over another file "
                         "unasked.", hint="Choose a new file name, or add --force to replace a regular file.")
    if not present(role, where):
        raise FleetError(f"There are no fleet credentials for the {role} role in {where} to export.",
                         hint="Make them first with `sslperf fleet credentials` on the scheduler's machine.")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path in (where / CA_CERT, cert_file(role, where), key_file(role, where)):
            data = path.read_bytes()
            info = tarfile.TarInfo(path.name)
            info.size, info.mode = len(data), 0o600
            tar.addfile(info, io.BytesIO(data))
    return _write(out, buffer.getvalue())


def install(bundle: Path, where: Path | None = None) -> tuple[str, list[Path]]:
    """A bundle made by `export` installed here: (its role, the files written). Anything else in it is refused."""
    where = where or directory()
    wanted = {CA_CERT: None, **{f"{r}.pem": r for r in ROLES}, **{f"{r}-key.pem": r for r in ROLES}}
    try:
        if bundle.stat().st_size > MAX_BUNDLE:
            raise tarfile.TarError(f"it is larger than {MAX_BUNDLE // 1024} KiB")
        with tarfile.open(bundle, mode="r:gz") as tar:
            members = tar.getmembers()
            if any(not m.isfile() or m.name not in wanted for m in members):
                raise tarfile.TarError("it holds files other than a CA certificate and one role's certificate and key")
            files = {m.name: tar.extractfile(m).read() for m in members}
    except (OSError, EOFError, tarfile.TarError) as exc:
        raise FleetError(f"{bundle} is not a fleet credentials bundle: {exc}.",
                         hint="Make one on the scheduler's machine with `sslperf fleet credentials --export ROLE FILE`"
                              " and copy it here unchanged.") from None
    roles = {wanted[name] for name in files if wanted[name]}
    if CA_CERT not in files or len(roles) != 1 or len(files) != 3:
        raise FleetError(f"{bundle} does not hold a CA certificate and one role's certificate and key.",
                         hint="Export it again with `sslperf fleet credentials --export ROLE FILE`.")
    role = next(iter(roles))
    _check_bundle(bundle, files[CA_CERT], files[f"{role}.pem"], files[f"{role}-key.pem"])
    if (where / CA_KEY).exists():
        raise FleetError(f"This machine made the fleet's credentials ({where} holds the CA's key); a bundle installed "
                         "here would replace the certificates they made.",
                         hint="Install bundles on the other machines; this one already holds every role.")
    _private_dir(where)
    return role, [_write(where / name, data) for name, data in sorted(files.items())]


def _check_bundle(bundle: Path, ca_pem: bytes, cert_pem: bytes, key_pem: bytes) -> None:
    """The role's certificate signed by the bundle's CA, and its key the certificate's."""
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import serialization

    try:
        ca, cert = x509.load_pem_x509_certificate(ca_pem), x509.load_pem_x509_certificate(cert_pem)
        key = serialization.load_pem_private_key(key_pem, password=None)
        cert.verify_directly_issued_by(ca)
        matches = key.public_key().public_bytes(serialization.Encoding.DER,
                                                serialization.PublicFormat.SubjectPublicKeyInfo) == \
            cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    except (ValueError, TypeError, InvalidSignature) as exc:
        raise FleetError(f"{bundle} holds certificates that do not check out ({exc}).",
                         hint="Export it again on the scheduler's machine and copy it unchanged.") from None
    if not matches:
        raise FleetError(f"{bundle}: the key is not the certificate's.",
                         hint="Export it again on the scheduler's machine and copy it unchanged.")


def _names(hosts: list[str]) -> list:
    from cryptography import x509

    names, seen = [], set()
    for host in [*hosts, socket.gethostname(), "localhost", "127.0.0.1", "::1"]:
        if not host or host in seen:
            continue
        seen.add(host)
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return names


def _private_dir(where: Path) -> None:
    try:
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(where, 0o700)
    except OSError as exc:
        raise FleetError(f"Cannot make the fleet's credentials directory {where}: {exc.strerror or exc}.",
                         hint="Set SSLPERF_CONFIG_DIR to a directory you can write to.") from None


def _write(path: Path, data: bytes) -> Path:
    """`data` into `path`, readable by its owner only from the first byte (O_CREAT with 0600, then chmod for a file
    that existed)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:
        os.fchmod(out.fileno(), 0o600)
        out.write(data)
    return path


def _pem_key(key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _pem_cert(cert) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return cert.public_bytes(serialization.Encoding.PEM)


def _sha256():
    from cryptography.hazmat.primitives import hashes

    return hashes.SHA256()
