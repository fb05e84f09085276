"""Shared fixtures: a loopback HTTP server for fixture pages, and a real headless Chromium."""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from file_order import slowest_files_first
from required import missing

from tabpilot.browser.browser import Browser
from tabpilot.browser.launcher import BrowserNotFound, find_browser
from tabpilot.browser.tab import Tab
from tabpilot.localfiles import LocalFiles

# Tests press Ctrl-C on the programs they start, which get SIGINT as a terminal gives it. A test run started in the
# background of a script (`cmd &`, no job control) has SIGINT ignored, and so had every program it started: Ctrl-C
# did nothing (three fresh-clone runs, started so, failed the two tests that interrupt `state` and the key prompt).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

PAGES = Path(__file__).parent / "fixtures" / "pages"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slowest_files_first(items)


@pytest.fixture(scope="session")
def pages() -> Iterator[LocalFiles]:
    """The fixture pages; pages.url(path, host="localhost") is a second site (cross-origin)."""
    with LocalFiles(PAGES) as server:
        yield server


@pytest.fixture(scope="session")
def browser_binary() -> str:
    try:
        return find_browser()
    except BrowserNotFound as exc:
        missing(str(exc))


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


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def stand_in(browser: Browser) -> AsyncIterator[Any]:
    """The extension played over the module's browser's websocket (relay_support.ExtensionStandIn)."""
    from relay_support import ExtensionStandIn

    assert browser.launched is not None
    extension = await ExtensionStandIn.connect(browser.launched.ws_url)
    yield extension
    await extension.close()
