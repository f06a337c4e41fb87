"""`sslperf recommend` for real: it measures the system library (and a
built 1.1.1w), and the servers' own parsers — nginx -t, haproxy -c,
apache2 -t, `openssl ciphers` and the library's SSL_CTX_config — accept
what it prints."""

import json
import os
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import DATA, run_cli

from sslperf.cli import main
from sslperf.errors import SslperfError
from sslperf.recommend import advise, decide, evidence, weigh
from sslperf.recommend.check import LibraryCheck
from sslperf.recommend.costs import Evidence
from sslperf.results import Run

HAS_AES = " aes " in f" {Path('/proc/cpuinfo').read_text().replace(chr(10), ' ')} "


def measured_order(advice: dict, env: dict) -> tuple[str, bool]:
    """What the advice's own figures and verdicts say: the TLS 1.3 suite of the AEAD it puts first, checked to be
    the cheapest for this server or one the verdict rule does not call dearer than the cheapest (asked of the rule
    on the advice's own runs: a tie need not be with the next in the order), and whether ChaCha20 is called cheaper
    on a CPU without AES instructions, checked against the medians. The AEAD order must follow these, whichever
    cipher this machine (perhaps busy with builds) measured faster."""
    figures = advice["figures_us"]
    cost = {a: figures[a.case] for a in decide.AEADS if figures.get(a.case)}
    cheapest = min(cost, key=cost.get)
    first = next(a for a in decide.AEADS if a.tls13 == advice["tls13_suites"][0])
    record = next(p for p in advice["points"] if p["topic"] == "record cipher")
    if cheapest is not first:
        rule = weigh.Weigh(advice_evidence(advice, env))
        as_cheap = rule.cheaper(weigh.Cost(cheapest.label, (cheapest.case,)), weigh.Cost(first.label, (first.case,)))
        assert not as_cheap, (first, cheapest, record["ties"])
    masked = {a.name: figures.get(f"{a.case}@no-aesni") for a in cost}
    aes_masked = min(v for name, v in masked.items() if name != "chacha20-poly1305")
    chacha_wins = any("ChaCha20 is" in line and "cheaper there" in line for line in record["because"])
    assert not chacha_wins or masked["chacha20-poly1305"] < aes_masked
    return first.tls13, chacha_wins


def advice_evidence(advice: dict, env: dict) -> Evidence:
    """The evidence `advice` rests on, read back from the runs it names."""
    runs = []
    for run_id in advice["runs"]:
        exported = run_cli("runs", "export", run_id, "--format", "json", env=env)
        assert exported.returncode == 0, exported.stderr
        runs.append(Run.from_dict(json.loads(exported.stdout)))
    plain, masked, origin = evidence.from_runs(SimpleNamespace(name=advice["lib"]), runs)
    return Evidence(list(plain.values()), list(masked.values()), advice["runs"], origin,
                    {r.id: r.noise() for r in runs})


# One worker takes the whole module, so its module fixtures (real measurements) are made once.
pytestmark = pytest.mark.xdist_group("recommend")


def _cli(*args, env):
    result = run_cli(*args, env=env, timeout=600)
    assert result.returncode == 0, result.stderr + result.stdout
    return result.stdout


@pytest.fixture(scope="module")
def store_env(tmp_path_factory):
    root = tmp_path_factory.mktemp("recommend")
    return {"SSLPERF_DB": f"sqlite:///{root / 'runs.db'}", "root": root}


@pytest.fixture(scope="module")
def system_advice(store_env):
    """One real measurement of the system library; later calls reuse its runs."""
    env = {"SSLPERF_DB": store_env["SSLPERF_DB"]}
    advice = json.loads(_cli("recommend", "--json", env=env))
    assert len(advice["runs"]) == 2          # as the CPU is, and with AES-NI hidden
    return advice, [x for run in advice["runs"] for x in ("--from-run", run)], env


@pytest.fixture(scope="module")
def server_cert(tmp_path_factory):
    """An ECDSA P-256 certificate and key in a private directory."""
    d = tmp_path_factory.mktemp("cert")
    os.chmod(d, 0o700)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", d / "key.pem", "-out", d / "cert.pem", "-subj", "/CN=localhost", "-days", "2"],
                   check=True, capture_output=True, timeout=60)
    (d / "both.pem").write_text((d / "cert.pem").read_text() + (d / "key.pem").read_text())
    return d


def test_system_advice_is_argued_with_measured_numbers(system_advice):
    advice, _, _ = system_advice
    topics = [p["topic"] for p in advice["points"]]
    assert topics[:3] == ["record cipher", "key exchange groups", "certificate"]
    assert "session resumption" in topics and "client code" in topics
    for point in advice["points"]:
        assert point["because"], point
    figures = advice["figures_us"]
    assert figures[f"cipher/chacha20-poly1305/encrypt/{decide.TLS_RECORD}@no-aesni"] > 0
    # The floor holds whatever the speeds: nothing under 128 bits, no CBC/SHA-1/RSA key exchange.
    assert "rsa-2048" not in advice["certificates"]
    for name in advice["cipher_string"].split(":"):
        assert name.startswith("ECDHE-") and ("GCM" in name or "CHACHA20" in name), name
    assert advice["certificates"][0].startswith("ecdsa")     # orders of magnitude cheaper to sign


@pytest.mark.skipif(not HAS_AES, reason="this CPU has no AES instructions to hide, so there is no masked figure")
def test_aead_order_follows_the_measurement_and_flips_to_chacha_for_mobile_clients(system_advice):
    advice, from_runs, env = system_advice
    first, chacha_wins_without_aes = measured_order(advice, env)
    # mixed clients (the default): ChaCha20 prioritized for the clients that ask for it first, when it is what
    # such clients are cheaper with and not already first
    assert advice["prioritize_chacha"] is (chacha_wins_without_aes and first != "TLS_CHACHA20_POLY1305_SHA256")
    mobile = json.loads(_cli("recommend", "--json", "--clients", "mobile", *from_runs, env=env))
    assert (mobile["tls13_suites"][0] == "TLS_CHACHA20_POLY1305_SHA256") is chacha_wins_without_aes
    if chacha_wins_without_aes:
        assert mobile["cipher_string"].split(":")[0] == "ECDHE-ECDSA-CHACHA20-POLY1305"
    assert mobile["runs"] == advice["runs"]        # nothing measured again


def test_a_recent_run_is_reused_and_named_and_fresh_measures_anew(system_advice, monkeypatch, capsys):
    """Back to back, recommend argues from the same figures: the runs the first call measured, named; --fresh
    asks the scheduler for every case again, though those runs are there (the scheduler replaced by one that
    records what it is asked and stops: a real measurement is what the fixture above is)."""
    advice, _, env = system_advice
    again = run_cli("recommend", "--json", env=env, timeout=600)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["runs"] == advice["runs"]          # nothing measured again
    plain, masked = advice["runs"]
    assert f"figures from run {plain} (recommend, " in again.stderr
    assert f"run {masked} (recommend with AES-NI hidden, " in again.stderr
    assert "--fresh measures anew" in again.stderr

    asked = []

    def record_and_stop(request, *args, **kwargs):
        asked.append((request.libs, request.cases, request.settings.mask))
        raise SslperfError("measured nothing (test)")
    monkeypatch.setattr(advise.scheduler, "measure", record_and_stop)
    monkeypatch.setenv("SSLPERF_DB", env["SSLPERF_DB"])
    with pytest.raises(SystemExit) as done:
        main(["recommend", "--json", "--fresh"])
    assert done.value.code == 2 and "measured nothing (test)" in capsys.readouterr().err
    plain_cases, _ = decide.needed_cases(128)
    assert asked == [(["system"], plain_cases, None)]       # every case, as the CPU is, before anything else


def test_min_security_raises_every_choice(system_advice):
    _, from_runs, env = system_advice
    strict = json.loads(_cli("recommend", "--json", "--min-security", "192", "--compat", *from_runs, env=env))
    assert "TLS_AES_128_GCM_SHA256" not in strict["tls13_suites"]
    assert not {"X25519", "P-256"} & set(strict["groups"])
    # One ECDSA certificate (P-384 or P-521, whichever signs cheaper here): no RSA size reaches 192 bits.
    assert len(strict["certificates"]) == 1 and strict["certificates"][0] in ("ecdsa-p384", "ecdsa-p521")
    assert all("sha256" not in s for s in strict["sigalgs"])


def test_nginx_accepts_the_nginx_snippet(system_advice, server_cert, tmp_path):
    _, from_runs, env = system_advice
    for clients in ("mixed", "mobile"):
        snippet = _cli("recommend", "--format", "nginx", "--clients", clients, *from_runs, env=env)
        assert "ssl_conf_command Ciphersuites" in snippet and snippet.lstrip().startswith("# sslperf recommend")
        _nginx_check(snippet, server_cert, tmp_path)


def _nginx_check(snippet: str, cert: Path, tmp_path: Path) -> None:
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    (tmp_path / "logs").mkdir(exist_ok=True)
    (tmp_path / "tls.conf").write_text(snippet)
    (tmp_path / "nginx.conf").write_text(f"""
pid {tmp_path}/nginx.pid;
error_log {tmp_path}/logs/error.log;
events {{}}
http {{
  access_log off;
  server {{
    listen 127.0.0.1:8443 ssl;
    ssl_certificate {cert}/cert.pem;
    ssl_certificate_key {cert}/key.pem;
    include {tmp_path}/tls.conf;
  }}
}}
""")
    done = subprocess.run([nginx, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr + snippet
    assert "test is successful" in done.stderr


def test_nginx_check_fails_on_a_group_the_library_lacks(server_cert, tmp_path):
    """The check above can fail: nginx -t really applies the groups."""
    with pytest.raises(AssertionError, match="cannot be set|failed"):
        _nginx_check("ssl_ecdh_curve NoSuchGroup;\n", server_cert, tmp_path)


def test_openssl_accepts_the_cipher_strings_and_the_cnf(system_advice, tmp_path):
    advice, from_runs, env = system_advice
    ciphers = subprocess.run(["openssl", "ciphers", "-s", "-tls1_2", advice["cipher_string"]], capture_output=True,
                             text=True, timeout=60)
    assert ciphers.returncode == 0, ciphers.stderr
    tls12 = [c for c in ciphers.stdout.strip().split(":") if not c.startswith("TLS_")]
    assert tls12 == advice["cipher_string"].split(":")
    cnf = tmp_path / "tls.cnf"
    _cli("recommend", "--format", "openssl-cnf", "--out", cnf, *from_runs, env=env)
    resolved = subprocess.run(["openssl", "ciphers", "-s"], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "OPENSSL_CONF": str(cnf)})
    assert resolved.stdout.strip().split(":") == advice["tls13_suites"] + tls12
    # The library itself applies the system_default section (a bad value fails it).
    check = _cli("recommend", "--format", "text", *from_runs, env=env)   # compiles the harness if needed
    assert "settings:" in check
    from sslperf.libs import installed
    library = LibraryCheck(installed.find("system"))
    assert library.run(f"conf={cnf}")["prioritize_chacha"] is advice["prioritize_chacha"]
    cnf.write_text(cnf.read_text().replace("Groups = ", "Groups = NoSuchGroup:"))
    assert library.run(f"conf={cnf}")["type"] == "error"


def test_haproxy_and_apache_accept_their_snippets(system_advice, server_cert, tmp_path):
    _, from_runs, env = system_advice
    haproxy = _cli("recommend", "--format", "haproxy", *from_runs, env=env)
    (tmp_path / "haproxy.cfg").write_text(haproxy + f"""
defaults
    mode http
    timeout client 5s
    timeout server 5s
    timeout connect 5s
frontend tls
    bind 127.0.0.1:8443 ssl crt {server_cert}/both.pem
    default_backend none
backend none
    server s1 127.0.0.1:8080
""")
    done = subprocess.run(["haproxy", "-c", "-f", str(tmp_path / "haproxy.cfg")], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    apache = _cli("recommend", "--format", "apache", *from_runs, env=env)
    modules = "/usr/lib/apache2/modules"
    (tmp_path / "apache.conf").write_text(f"""
ServerRoot {tmp_path}
ServerName localhost
PidFile {tmp_path}/apache.pid
ErrorLog {tmp_path}/apache-error.log
Define APACHE_RUN_DIR {tmp_path}
LoadModule mpm_event_module {modules}/mod_mpm_event.so
LoadModule authz_core_module {modules}/mod_authz_core.so
LoadModule socache_shmcb_module {modules}/mod_socache_shmcb.so
LoadModule ssl_module {modules}/mod_ssl.so
Listen 127.0.0.1:8443
{apache}
<VirtualHost 127.0.0.1:8443>
SSLEngine on
SSLCertificateFile {server_cert}/cert.pem
SSLCertificateKeyFile {server_cert}/key.pem
</VirtualHost>
""")
    done = subprocess.run(["apache2", "-t", "-f", str(tmp_path / "apache.conf")], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "Syntax OK" in done.stdout + done.stderr, done.stdout + done.stderr


def test_boringssl_gets_equal_preference_groups():
    """decide() on a real recorded BoringSSL run (boring-sys 5.4.0, measured with and without AES-NI)."""
    run = Run.from_dict(json.loads((DATA / "recommend" / "boringssl-5.4.0.json").read_text()))
    plain = [m for m in run.measurements if m.lib == "boringssl-5.4.0"]
    masked = [m for m in run.measurements if m.lib == "boringssl-5.4.0@no-aesni"]
    evidence = decide.Evidence(plain, masked)
    result = decide.decide(evidence, "boringssl-5.4.0", "boringssl", "BoringSSL")
    assert result.cipher_string().startswith("[ECDHE-ECDSA-AES128-GCM-SHA256|ECDHE-ECDSA-CHACHA20-POLY1305]")
    assert result.prioritize_chacha is False
    assert result.groups[0].tls_name == "X25519MLKEM768"
    mobile = decide.decide(evidence, "boringssl-5.4.0", "boringssl", "BoringSSL", clients="mobile")
    assert mobile.cipher_string().startswith("[ECDHE-ECDSA-CHACHA20-POLY1305|")


def test_openssl_cnf_is_refused_for_boringssl_and_bad_runs_are_explained(store_env):
    env = {"SSLPERF_DB": store_env["SSLPERF_DB"]}
    bad = run_cli("recommend", "--from-run", "no-such-run", env=env)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    run = Run.from_dict(json.loads((DATA / "recommend" / "boringssl-5.4.0.json").read_text()))
    evidence = decide.Evidence([m for m in run.measurements if m.lib == "boringssl-5.4.0"], [])
    from sslperf.errors import SslperfError
    from sslperf.recommend.snippets import render
    with pytest.raises(SslperfError, match="does not read openssl.cnf"):
        render(decide.decide(evidence, "boringssl-5.4.0", "boringssl", "BoringSSL"), "openssl-cnf")


@pytest.mark.slow
def test_built_library_advice_is_valid(built_openssl, in_e2e_cache, server_cert, tmp_path):
    env = {"SSLPERF_DB": f"sqlite:///{tmp_path / 'runs.db'}"}
    advice = json.loads(_cli("recommend", "--json", "--lib", built_openssl, env=env))
    assert advice["version"].startswith("OpenSSL 1.1.1w")
    assert not any("MLKEM" in g for g in advice["groups"])        # 1.1.1 has no ML-KEM
    from_runs = [x for run in advice["runs"] for x in ("--from-run", run)]
    snippet = _cli("recommend", "--lib", built_openssl, "--format", "nginx", *from_runs, env=env)
    _nginx_check(snippet, server_cert, tmp_path)
    from sslperf.libs import installed
    own_openssl = Path(installed.find(built_openssl).prefix) / "bin" / "openssl"
    ciphers = subprocess.run([own_openssl, "ciphers", "-s", "-tls1_2", advice["cipher_string"]],
                             capture_output=True, text=True, timeout=60)
    assert ciphers.returncode == 0 and advice["cipher_string"] in ciphers.stdout, ciphers.stderr
    # Its openssl.cnf: the library applies it, and its own `openssl ciphers` resolves to the advice.
    cnf = tmp_path / "tls.cnf"
    _cli("recommend", "--lib", built_openssl, "--format", "openssl-cnf", "--out", cnf, *from_runs, env=env)
    assert LibraryCheck(installed.find(built_openssl)).run(f"conf={cnf}")["type"] == "config"
    resolved = subprocess.run([own_openssl, "ciphers", "-s"], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "OPENSSL_CONF": str(cnf)})
    assert resolved.stdout.strip().split(":") == advice["tls13_suites"] + advice["cipher_string"].split(":")
    if HAS_AES:
        _, chacha_wins_without_aes = measured_order(advice, env)
        mobile = json.loads(_cli("recommend", "--json", "--lib", built_openssl, "--clients", "mobile", *from_runs,
                                 env=env))
        assert (mobile["tls13_suites"][0] == "TLS_CHACHA20_POLY1305_SHA256") is chacha_wins_without_aes
