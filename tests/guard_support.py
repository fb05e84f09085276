"""A loopback web server that keeps its own record of every request (with the Host it was asked for), so a
test can prove that nothing reached a blocked domain. Chromium is launched with `--host-resolver-rules`
mapping the test's made-up domains (shop.test, evil.test, sub.evil.test) to 127.0.0.1: one server stands in for
all of them, and its record tells them apart by the Host header."""

from __future__ import annotations

import http.server
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

PAGES = Path(__file__).parent / "fixtures" / "pages"
# straße.test is xn--strae-oqa.test to the browser, strasse.test another domain (tests/test_guards_navigation.py)
RESOLVER_RULES = ("--host-resolver-rules=MAP shop.test 127.0.0.1, MAP *.evil.test 127.0.0.1, MAP evil.test 127.0.0.1, "
                  "MAP xn--strae-oqa.test 127.0.0.1, MAP strasse.test 127.0.0.1")


@dataclass(frozen=True)
class Hit:
    host: str  # without the port
    path: str


class RecordingSite:
    def __init__(self, address: str = "127.0.0.1") -> None:
        """`address`: where it listens; "::1" for an IPv6 one."""
        site = self
        self.hits: list[Hit] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
                site.hits.append(Hit(host, self.path))
                parts = urlsplit(self.path)
                wait = parse_qs(parts.query).get("wait")
                if wait:  # a slow answer: ?wait=MS
                    time.sleep(int(wait[0]) / 1000)
                if parts.path == "/redirect":  # a server redirect to wherever `to` says
                    self.send_response(302)
                    self.send_header("Location", parse_qs(parts.query)["to"][0])
                    self.end_headers()
                    return
                file = PAGES / parts.path.lstrip("/")
                body = file.read_bytes() if parts.path.endswith(".html") and file.is_file() else (
                    f"<!doctype html><title>{host}{parts.path}</title><p>You reached {host}{parts.path}</p>".encode())
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

        server_class = http.server.ThreadingHTTPServer
        if ":" in address:
            class IPv6Server(http.server.ThreadingHTTPServer):
                address_family = socket.AF_INET6

            server_class = IPv6Server
        self._server = server_class((address, 0), Handler)
        self.port = int(self._server.server_address[1])
        threading.Thread(target=self._server.serve_forever, name="recording-site", daemon=True).start()

    def url(self, host: str, path: str = "") -> str:
        return f"http://{host}:{self.port}/{path.lstrip('/')}"

    def reached(self, domain: str) -> list[Hit]:
        """Requests that reached `domain` or one of its subdomains."""
        return [hit for hit in self.hits if hit.host == domain or hit.host.endswith("." + domain)]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="module", name="site")
def recording_site() -> Iterator[RecordingSite]:
    """The recording server, for a test module (import this fixture where it is used)."""
    server = RecordingSite()
    yield server
    server.close()
