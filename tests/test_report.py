"""`sslperf report` on a real run: figures as files, and the HTML page opened
in a real headless Chromium that must render it with no console errors."""

import json
import shutil
import subprocess

import pytest

from conftest import run_cli

CASES = ["cipher/aes-128-gcm/encrypt/64", "cipher/aes-128-gcm/encrypt/1024", "cipher/aes-128-gcm/encrypt/16384",
         "digest/sha256/64", "digest/sha256/16384", "sig/rsa-2048/sign", "sig/rsa-3072/sign",
         "sig/ecdsa-p256/sign", "sig/ecdsa-p384/sign", "kex/x25519/derive"]


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    env = {"SSLPERF_CACHE_DIR": str(root / "cache"), "SSLPERF_DATA_DIR": str(root / "data")}
    args = ["speed", "--time", "3", "--samples", "5", "--json"] + [a for c in CASES for a in ("--case", c)]
    plain = json.loads(run_cli(*args, env=env).stdout)
    masked = json.loads(run_cli(*args, "--cpu-mask", "no-aesni", env=env).stdout)
    out = root / "out"
    result = run_cli("report", plain["id"], masked["id"], "--out", out, env=env)
    assert result.returncode == 0, result.stderr
    return out


def test_figures_are_written_as_png_and_svg(report_dir):
    names = {p.name for p in report_dir.iterdir()}
    for stem in ("throughput-aead-ciphers-encrypt-record", "throughput-digests-hash-record", "ops-signatures",
                 "scaling-rsa", "scaling-ecdsa-nist-curves", "versions"):
        assert f"{stem}.png" in names and f"{stem}.svg" in names, (stem, sorted(names))
    assert (report_dir / "ops-signatures.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in (report_dir / "scaling-rsa.svg").read_text()


def test_html_is_self_contained(report_dir):
    html = (report_dir / "report.html").read_text()
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html
    assert html.count("<img ") >= 6 and "data:image/svg+xml;base64," in html
    assert "system@no-aesni" in html    # the same lib from two runs is told apart, by its mask
    assert "slower" in html             # no AES-NI: GCM is significantly slower


def test_chromium_renders_the_report_without_console_errors(report_dir):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.fail("chromium is not installed; scripts/bootstrap.sh installs it for the tests")
    screenshot = report_dir / "screenshot.png"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={report_dir / 'profile'}", "--enable-logging=stderr", "--v=0",
             "--window-size=1280,3000"]
    url = (report_dir / "report.html").as_uri()
    shot = subprocess.run([chromium, *flags, f"--screenshot={screenshot}", url], capture_output=True, text=True,
                          timeout=120)
    assert screenshot.exists() and screenshot.stat().st_size > 20_000, shot.stderr[-2000:]
    dom = subprocess.run([chromium, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120)
    assert "sslperf report" in dom.stdout and dom.stdout.count("<table") >= 5
    console_errors = [line for line in (shot.stderr + dom.stderr).splitlines()
                      if "CONSOLE" in line and ("ERROR" in line or "Uncaught" in line or "Failed to load" in line)]
    assert console_errors == []
