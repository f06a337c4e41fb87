"""The configuration each server runs with, generated per case: listening on 127.0.0.1 only, one TLS protocol,
one group and one certificate, session resumption on (cache and tickets) or off, its workers pinned to the
server's CPUs, answering every GET with a fixed body (no backend: the TLS library is all that differs; nginx
serves a one-line file, HAProxy answers from its configuration), and logging per request whether the session
was resumed, so each round checks that the scenario happened as named. Workers run as the user sslperf runs as
(the run directory, which holds the key, is private to it). `check` runs the server's own configuration test."""

from __future__ import annotations

import os
import pwd
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sslperf.errors import SslperfError

BODY = "sslperf serve-load: hello from a real server\n"

# Groups as the case id names them → as servers' configurations (and the IANA registry) spell them.
GROUP_NAMES = {"x25519": "X25519", "p-256": "P-256", "p-384": "P-384", "x25519mlkem768": "X25519MLKEM768"}
DEFAULT_GROUP = "default"      # nothing set: the library's own default groups, as a server configured for none offers
PROTOCOLS = {"tls1.3": ("TLSv1.3", "TLSv1.3"), "tls1.2": ("TLSv1.2", "TLSv1.2")}
LOG = "requests.log"     # one line per request: resumed (nginx r or ., HAProxy 1 or 0), protocol, group (nginx)


@dataclass(frozen=True)
class Scenario:
    name: str
    close: bool          # a new connection per request (the client sends Connection: close)
    resumption: bool     # the server keeps sessions (cache and tickets), so a reconnecting client resumes
    what: str


SCENARIOS = {s.name: s for s in (
    Scenario("new", True, False, "a new connection and a full handshake per request (resumption off)"),
    Scenario("resumed", True, True, "a new connection per request, resuming the client's last session"),
    Scenario("keepalive", False, False, "requests on connections kept open (records only, no handshakes)"),
)}


@dataclass(frozen=True)
class Setup:
    """What one case asks of a server."""
    server: str
    scenario: Scenario
    protocol: str
    group: str
    cert: str
    port: int
    cpus: tuple[int, ...]        # one worker (nginx process, HAProxy thread) per CPU, pinned there
    cert_dir: Path               # pem-certs' files: ca.pem, CERT.pem, CERT.key
    run_dir: Path                # private: the configuration, pid file, logs

    @property
    def group_name(self) -> str:
        return GROUP_NAMES.get(self.group, self.group)


def write(setup: Setup) -> Path:
    """The configuration file for `setup`, written into its run directory."""
    if setup.protocol not in PROTOCOLS:
        raise SslperfError(f"Unknown protocol `{setup.protocol}`.", hint=f"Use one of {', '.join(PROTOCOLS)}.")
    if setup.group not in GROUP_NAMES and setup.group != DEFAULT_GROUP:
        raise SslperfError(f"Unknown group `{setup.group}`.", hint=f"Use one of {', '.join(GROUP_NAMES)}.")
    text = (_nginx if setup.server == "nginx" else _haproxy)(setup)
    path = setup.run_dir / f"{setup.server}.conf"
    path.write_text(text)
    return path


def _nginx(s: Setup) -> str:
    masks = " ".join(format(1 << cpu, "b") for cpu in s.cpus)
    cache = "shared:sslperf:10m" if s.scenario.resumption else "off"
    tickets = "on" if s.scenario.resumption else "off"
    return f"""# written by sslperf serve-load: {s.scenario.what}
daemon off;
master_process on;{_nginx_user()}
worker_processes {len(s.cpus)};
worker_cpu_affinity {masks};
pid {s.run_dir / 'nginx.pid'};
error_log {s.run_dir / 'error.log'} warn;
events {{ worker_connections 4096; }}
http {{
    log_format sslperf '$ssl_session_reused $ssl_protocol $ssl_curve';
    access_log {s.run_dir / LOG} sslperf buffer=256k flush=1s;
    client_body_temp_path {s.run_dir / 'tmp'};
    keepalive_requests 100000000;
    keepalive_timeout 60s;
    server {{
        listen 127.0.0.1:{s.port} ssl;
        ssl_certificate {s.cert_dir / (s.cert + '.pem')};
        ssl_certificate_key {s.cert_dir / (s.cert + '.key')};
        ssl_protocols {PROTOCOLS[s.protocol][0]};
{_nginx_groups(s)}        ssl_session_cache {cache};
        ssl_session_tickets {tickets};
        location / {{ root {s.run_dir / 'www'}; index index.html; default_type text/plain; }}
    }}
}}
"""


def _nginx_groups(s: Setup) -> str:
    """nginx's groups line; none for the default group (nginx's `auto`: the library's own list)."""
    return "" if s.group == DEFAULT_GROUP else f"        ssl_ecdh_curve {s.group_name};\n"


def _nginx_user() -> str:
    """As root, nginx's workers would become `nobody`, who cannot read the private run directory."""
    return f"\nuser {pwd.getpwuid(0).pw_name};" if os.geteuid() == 0 else ""


def _haproxy(s: Setup) -> str:
    cpus = ",".join(str(c) for c in s.cpus)
    low, high = PROTOCOLS[s.protocol]
    resumption = "" if s.scenario.resumption else " no-tls-tickets"
    body = BODY.replace("\n", "\\n")
    # HAProxy's session cache is global: off (size 0) when resumption is off.
    cache = "" if s.scenario.resumption else "    tune.ssl.cachesize 0\n"
    bind = (f"bind 127.0.0.1:{s.port} ssl crt {s.run_dir / 'server.pem'} ssl-min-ver {low} ssl-max-ver {high} "
            f"{'' if s.group == DEFAULT_GROUP else f'curves {s.group_name}'}{resumption}")
    return f"""# written by sslperf serve-load: {s.scenario.what}
global
    nbthread {len(s.cpus)}
    cpu-map auto:1/1-{len(s.cpus)} {cpus}
    maxconn 4096
    pidfile {s.run_dir / 'haproxy.pid'}
    log stdout format raw local0 info
{cache}defaults
    mode http
    log global
    log-format "%[ssl_fc_is_resumed,iif(1,0)] %[ssl_fc_protocol] -"
    timeout client 30s
    timeout connect 5s
    timeout server 30s
    timeout http-keep-alive 60s
frontend sslperf
    {bind}
    http-request return status 200 content-type text/plain string "{body}"
"""


def prepare(setup: Setup) -> Path:
    """The run directory's files (HAProxy takes the certificate and key in one file) and the configuration."""
    (setup.run_dir / "tmp").mkdir(exist_ok=True)
    (setup.run_dir / "www").mkdir(exist_ok=True)
    (setup.run_dir / "www" / "index.html").write_text(BODY)      # nginx serves it (its rewrite module is out)
    if setup.server == "haproxy":
        pem = setup.run_dir / "server.pem"
        pem.write_text((setup.cert_dir / f"{setup.cert}.pem").read_text()
                       + (setup.cert_dir / f"{setup.cert}.key").read_text())
        pem.chmod(0o600)
    return write(setup)


def check_command(setup: Setup, binary: Path, conf: Path) -> list[str]:
    """The server's own configuration test."""
    if setup.server == "nginx":
        return [str(binary), "-t", "-q", "-p", str(setup.run_dir), "-e", str(setup.run_dir / "error.log"),
                "-c", str(conf)]
    return [str(binary), "-c", "-q", "-f", str(conf)]


def run_command(setup: Setup, binary: Path, conf: Path) -> list[str]:
    """The server in the foreground (nginx: its master and workers; HAProxy: one process, its threads)."""
    if setup.server == "nginx":
        return [str(binary), "-p", str(setup.run_dir), "-e", str(setup.run_dir / "error.log"), "-c", str(conf)]
    return [str(binary), "-db", "-f", str(conf)]


def check(setup: Setup, binary: Path, conf: Path) -> None:
    """The server accepts the configuration, or an error with what it said."""
    result = subprocess.run(check_command(setup, binary, conf), capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        said = " ".join((result.stderr + result.stdout).split())[-600:]
        raise SslperfError(f"{setup.server} refused the configuration sslperf generated ({conf}): {said}",
                           hint="The library may lack the group or protocol asked for; choose another case.")
