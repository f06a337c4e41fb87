"""Opening pages in a real headless Chromium for the report tests, with
every request the page makes recorded.

Chromium is told to send all its traffic, loopback included, through a
proxy that is a listening socket here: a page that asks the network for
anything (a CDN script, a font, an image) opens a connection to it, and the
first line of each request is kept. file:// pages reach the proxy only
when they ask for something outside the file."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# Chromium's own services, which it calls whatever page it shows (clock check, updates, sign-in): not the page's.
BROWSER_OWN = ("clients2.google.com", "update.googleapis.com", "accounts.google.com", "redirector.gvt1.com",
               "optimizationguide-pa.googleapis.com", "safebrowsing.googleapis.com", "edgedl.me.gvt1.com",
               "content-autofill.googleapis.com", "android.clients.google.com")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-domain-reliability", "--no-pings", "--enable-logging=stderr", "--v=0",
         "--proxy-bypass-list=<-loopback>", "--virtual-time-budget=10000"]


@dataclass
class Opened:
    dom: str
    log: str
    requests: list[str] = field(default_factory=list)

    def page_requests(self) -> list[str]:
        """The requests the page made (Chromium's calls to its own services left out)."""
        return [r for r in self.requests if not any(f" {host}" in r or f"//{host}/" in r for host in BROWSER_OWN)]

    def console_errors(self) -> list[str]:
        return [line for line in self.log.splitlines()
                if "CONSOLE" in line and ("ERROR" in line or "Uncaught" in line or "Failed to load" in line)]


class _Recorder:
    """A proxy that answers nothing and keeps each request's first line."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.requests: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    first = conn.recv(4096).split(b"\r\n", 1)[0].decode(errors="replace")
                except OSError:
                    first = "(connection without a request line)"
                self.requests.append(first)
                try:
                    conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                except OSError:
                    pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.server.close()


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("chromium is not installed; scripts/bootstrap.sh installs it for the tests")
    return path


def open_page(url: str, profile: Path, screenshot: Path | None = None, size: str = "1280,2400") -> Opened:
    """Load `url` (a file:// URI, with a #fragment if wanted): its DOM after the
    scripts ran, Chromium's log, the requests it made, and a screenshot."""
    recorder = _Recorder()
    try:
        base = [chromium(), *FLAGS, f"--proxy-server=http://127.0.0.1:{recorder.port}",
                f"--user-data-dir={profile}", f"--window-size={size}"]
        log = ""
        if screenshot is not None:
            shot = subprocess.run([*base, f"--screenshot={screenshot}", url], capture_output=True, text=True,
                                  timeout=180)
            log += shot.stderr
        dom = subprocess.run([*base, "--dump-dom", url], capture_output=True, text=True, timeout=180)
        return Opened(dom.stdout, log + dom.stderr, list(recorder.requests))
    finally:
        recorder.close()
