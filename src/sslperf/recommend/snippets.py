"""Advice written in each server's own configuration syntax. Every format
starts with the argument as comments, so a pasted snippet still says which
measured numbers it rests on. `as_dict` is the advice as data (--json)."""

from __future__ import annotations

import textwrap

from sslperf.errors import SslperfError
from sslperf.libs.model import is_bssl
from sslperf.recommend.decide import Advice, Evidence
from sslperf.recommend.evidence import MASK

FORMATS = ("text", "nginx", "haproxy", "apache", "openssl-cnf")
NO_BREAKS = {"break_long_words": False, "break_on_hyphens": False}     # keep cipher and group lists whole


def refuse_unreadable(lib: str, flavor: str, fmt: str) -> None:
    """An SslperfError when `lib` would not read a snippet in `fmt` (BoringSSL
    and AWS-LC have no openssl.cnf): checked before anything is measured."""
    if fmt == "openssl-cnf" and is_bssl(flavor):
        raise SslperfError(f"{lib} is {flavor}, which does not read openssl.cnf.",
                           hint="Use --format nginx, haproxy, apache or text.")


def render(advice: Advice, fmt: str) -> str:
    if fmt == "text":
        return text(advice)
    return {"nginx": nginx, "haproxy": haproxy, "apache": apache, "openssl-cnf": openssl_cnf}[fmt](advice)


def header(advice: Advice) -> list[str]:
    return [f"sslperf recommend: {advice.lib} ({advice.version}), clients: {advice.clients}, "
            f"floor: {advice.min_security}-bit"]


def argument(advice: Advice, width: int = 100) -> list[str]:
    lines = header(advice)
    for warning in advice.warnings:      # before the points: what they rest on is weaker than it looks
        lines += textwrap.wrap(warning, width, subsequent_indent="    ", **NO_BREAKS)
    for point in advice.points:
        lines += textwrap.wrap(f"{point.topic}: {point.decision}", width, subsequent_indent="    ", **NO_BREAKS)
        for reason in point.because:
            lines += textwrap.wrap(reason, width, initial_indent="  - ", subsequent_indent="    ", **NO_BREAKS)
    lines += advice.notes
    return lines


def text(advice: Advice) -> str:
    lines = argument(advice)
    lines += ["", "settings:",
              f"  TLS 1.2 cipher string:  {advice.cipher_string()}",
              f"  TLS 1.3 cipher suites:  {':'.join(advice.tls13_suites)}"
              + ("  (BoringSSL's are fixed; it orders them by the client's hardware)"
                 if advice.flavor == "boringssl" else ""),
              f"  groups:                 {':'.join(g.tls_name for g in advice.groups)}",
              f"  signature algorithms:   {':'.join(advice.sigalgs)}",
              f"  certificates:           {', '.join(c.label for c in advice.certs)}",
              "  options:                " + ", ".join(["ServerPreference"]
                                                        + (["PrioritizeChaCha"] if advice.prioritize_chacha else []))]
    return "\n".join(lines) + "\n"


def _comments(advice: Advice) -> list[str]:
    return ["# " + line if line else "#" for line in argument(advice, 96)]


def nginx(advice: Advice) -> str:
    """Directives for an nginx `server` (or `http`) block."""
    lines = _comments(advice) + [
        "ssl_protocols TLSv1.2 TLSv1.3;",
        f"ssl_ciphers {advice.cipher_string()};",
        "ssl_prefer_server_ciphers on;",
        f"ssl_ecdh_curve {':'.join(g.tls_name for g in advice.groups)};",
    ]
    if advice.boringssl_family:
        # nginx built with BoringSSL/AWS-LC has no ssl_conf_command (they have no SSL_CONF).
        lines.append("# TLS 1.3 suites and signature algorithms: the library's own order (no ssl_conf_command)")
    else:
        lines.append(f"ssl_conf_command Ciphersuites {':'.join(advice.tls13_suites)};")
        lines.append(f"ssl_conf_command SignatureAlgorithms {':'.join(advice.sigalgs)};")
        if advice.prioritize_chacha:
            lines.append("ssl_conf_command Options PrioritizeChaCha;")
    lines += ["ssl_session_cache shared:SSL:10m;", "ssl_session_timeout 1h;", "ssl_session_tickets on;"]
    lines += [f"# ssl_certificate / ssl_certificate_key: your {c.label} certificate and key" for c in advice.certs]
    return "\n".join(lines) + "\n"


def haproxy(advice: Advice) -> str:
    """A `global` section (HAProxy merges several) with the bind defaults."""
    lines = _comments(advice) + [
        "global",
        "    ssl-default-bind-options ssl-min-ver TLSv1.2",
        f"    ssl-default-bind-ciphers {advice.cipher_string()}",
    ]
    if not advice.flavor == "boringssl":
        lines.append(f"    ssl-default-bind-ciphersuites {':'.join(advice.tls13_suites)}")
    lines += [f"    ssl-default-bind-curves {':'.join(g.tls_name for g in advice.groups)}",
              "    tune.ssl.cachesize 20000",
              "    tune.ssl.lifetime 3600",
              f"    # HAProxy 2.8 and later: ssl-default-bind-sigalgs {':'.join(advice.sigalgs)}"]
    if advice.prioritize_chacha:
        lines.append("    # PrioritizeChaCha has no HAProxy keyword: set it in openssl.cnf "
                     "(sslperf recommend --format openssl-cnf), which libssl applies to HAProxy's contexts too")
    lines.append(f"    # on each bind line: ssl crt <pem with your {' and '.join(c.label for c in advice.certs)} "
                 "certificate>")
    return "\n".join(lines) + "\n"


def apache(advice: Advice) -> str:
    """mod_ssl directives for the server config (SSLSessionCache is server-wide) or a virtual host."""
    lines = _comments(advice) + [
        "SSLProtocol -all +TLSv1.2 +TLSv1.3",
        f"SSLCipherSuite {advice.cipher_string()}",
    ]
    if not advice.boringssl_family:
        lines.append(f"SSLCipherSuite TLSv1.3 {':'.join(advice.tls13_suites)}")
    lines.append("SSLHonorCipherOrder on")
    if not advice.boringssl_family:
        lines.append(f"SSLOpenSSLConfCmd Groups {':'.join(g.tls_name for g in advice.groups)}")
        lines.append(f"SSLOpenSSLConfCmd SignatureAlgorithms {':'.join(advice.sigalgs)}")
        if advice.prioritize_chacha:
            lines.append("SSLOpenSSLConfCmd Options PrioritizeChaCha")
    lines += ["SSLSessionCache shmcb:${APACHE_RUN_DIR}/ssl_scache(512000)", "SSLSessionCacheTimeout 3600",
              "SSLSessionTickets on"]
    lines += [f"# SSLCertificateFile / SSLCertificateKeyFile: your {c.label} certificate and key"
              for c in advice.certs]
    return "\n".join(lines) + "\n"


def openssl_cnf(advice: Advice) -> str:
    """A complete file for OPENSSL_CONF, or the sections to merge into an
    existing openssl.cnf: libssl applies system_default to every SSL_CTX."""
    refuse_unreadable(advice.lib, advice.flavor, "openssl-cnf")
    options = ["ServerPreference"] + (["PrioritizeChaCha"] if advice.prioritize_chacha else [])
    lines = _comments(advice) + [
        "# Merge into openssl.cnf: an existing openssl_conf section gets the ssl_conf line.",
        "openssl_conf = openssl_init",
        "",
        "[openssl_init]",
        "ssl_conf = ssl_module",
        "",
        "[ssl_module]",
        "system_default = tls_defaults",
        "",
        "[tls_defaults]",
        "MinProtocol = TLSv1.2",
        f"CipherString = {advice.cipher_string()}",
        f"Ciphersuites = {':'.join(advice.tls13_suites)}",
        f"Groups = {':'.join(g.tls_name for g in advice.groups)}",
        f"SignatureAlgorithms = {':'.join(advice.sigalgs)}",
        f"Options = {','.join(options)}",
    ]
    return "\n".join(lines) + "\n"


def as_dict(result: Advice, evidence: Evidence) -> dict:
    """The advice, its argument and the figures it rests on (µs per operation; for TLS cases, what each connection
    negotiated, with the bytes each side sent), as data."""
    return {
        "lib": result.lib, "version": result.version, "clients": result.clients,
        "min_security": result.min_security,
        "cipher_string": result.cipher_string(), "tls13_suites": result.tls13_suites,
        "groups": [g.tls_name for g in result.groups], "sigalgs": result.sigalgs,
        "certificates": [c.name for c in result.certs], "prioritize_chacha": result.prioritize_chacha,
        "equal_preference": [a.name for a in result.equal_preference],
        "points": [{"topic": p.topic, "decision": p.decision, "because": p.because,
                    "ties": [t.as_dict() for t in p.ties]} for p in result.points],
        "notes": result.notes, "warnings": result.warnings,
        "figures_us": {**{c: evidence.micros(c) for c in evidence.plain},
                       **{f"{c}@{MASK}": evidence.micros(c, True) for c in evidence.masked}},
        "negotiated": {c: m.negotiated for c, m in evidence.plain.items() if m.negotiated},   # TLS cases' own
        "runs": evidence.sources,
    }
