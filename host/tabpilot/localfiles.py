"""A folder served over HTTP on 127.0.0.1 from a background thread: the demo's bundled page, and the
fixture pages of the tests and benchmarks. Quiet (no request log) and uncached."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


class LocalFiles:
    def __init__(self, directory: str | Path) -> None:
        handler = functools.partial(_QuietHandler, directory=str(directory))
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = int(self._server.server_address[1])
        threading.Thread(target=self._server.serve_forever, name="local-files", daemon=True).start()

    def url(self, path: str = "", host: str = "127.0.0.1") -> str:
        """A file's URL; host="localhost" gives a second site (cross-origin, its own renderer)."""
        return f"http://{host}:{self.port}/{path.lstrip('/')}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> LocalFiles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
