"""Shared fixtures: a loopback HTTP server for fixture pages, and a real headless Chromium."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from tabpilot.browser.browser import Browser
from tabpilot.browser.launcher import BrowserNotFound, find_browser
from tabpilot.browser.tab import Tab

PAGES = Path(__file__).parent / "fixtures" / "pages"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


@dataclass(frozen=True)
class PageServer:
    port: int

    def url(self, path: str = "", host: str = "127.0.0.1") -> str:
        """A fixture page's URL; host="localhost" gives a second site (cross-origin, own renderer)."""
        return f"http://{host}:{self.port}/{path.lstrip('/')}"


@pytest.fixture(scope="session")
def pages() -> Iterator[PageServer]:
    handler = functools.partial(_QuietHandler, directory=str(PAGES))
    # Bind on all loopback names: 127.0.0.1 and localhost are different sites to Chromium.
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield PageServer(server.server_address[1])
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def browser_binary() -> str:
    try:
        return find_browser()
    except BrowserNotFound as exc:
        pytest.skip(str(exc))


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def browser(browser_binary: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Browser]:
    """One headless Chromium per test module (tests in a module share it; each opens its own tab)."""
    home = tmp_path_factory.mktemp("home")
    b = await Browser.launch(
        executable=browser_binary,
        headless=True,
        env={"HOME": str(home)},
        log_path=str(home / "chromium.log"),
    )
    yield b
    await b.close()


@pytest_asyncio.fixture(loop_scope="module")
async def tab(browser: Browser) -> AsyncIterator[Tab]:
    """A fresh tab in the module's browser, closed after the test (unless the test closed it)."""
    tab = await browser.new_tab()
    yield tab
    if not tab.closed:
        await browser.close_tab(tab.target_id)
