"""When the browser goes away mid-wait (it crashed, was killed, the tab was closed), every waiter
learns at once with a clear error, instead of sitting out its timeout and then carrying on as if the
page had loaded."""

from __future__ import annotations

import asyncio
import http.server
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tabpilot.browser import actions
from tabpilot.browser.browser import Browser
from tabpilot.browser.errors import BrowserError, TabClosed
from tabpilot.cdp import CDPConnectionClosed

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

# Far longer than the test may take: a waiter that sits out its timeout fails the test instead.
LONG = 60.0
GUARD = 20.0


class _Stalling(http.server.BaseHTTPRequestHandler):
    """Sends the start of a page, then nothing more: the page never finishes loading."""

    requests = threading.Semaphore(0)  # one release per request that got its page start
    release = threading.Event()

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<!doctype html><title>Loading forever</title><p>Loading" + b" " * 2048)
        self.wfile.flush()
        _Stalling.requests.release()
        _Stalling.release.wait(LONG)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def stalling() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Stalling)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    _Stalling.release.set()
    server.shutdown()
    server.server_close()


async def _until_requested(count: int) -> None:
    for _ in range(count):
        assert await asyncio.to_thread(_Stalling.requests.acquire, timeout=GUARD), "the page was never requested"
    await asyncio.sleep(0.3)  # the navigation commits: what is left is waiting for the load to finish


async def test_closing_the_tab_ends_a_navigation_that_waits_for_the_load(browser: Browser, stalling: str) -> None:
    tab = await browser.new_tab()
    navigating = asyncio.create_task(tab.navigate(f"{stalling}/tab-closed", timeout=LONG))
    await _until_requested(1)
    await browser.close_tab(tab.target_id)
    async with asyncio.timeout(GUARD):
        with pytest.raises(TabClosed):
            await navigating


@pytest.mark.skipif(sys.platform == "win32", reason="kills a process group")
async def test_a_browser_killed_mid_navigation_fails_every_waiter(stalling: str, tmp_path: Path) -> None:
    browser = await Browser.launch(headless=True, env={"HOME": str(tmp_path)})
    try:
        first = await browser.current_tab()
        second = await browser.new_tab()
        waiters = {
            "Tab.navigate": asyncio.create_task(first.navigate(f"{stalling}/one", timeout=LONG)),
            "go_to_url": asyncio.create_task(actions.go_to_url(browser, second, f"{stalling}/two")),
            "wait_for": asyncio.create_task(first.session.wait_for("Page.loadEventFired", timeout=LONG)),
        }
        await _until_requested(2)
        assert not any(task.done() for task in waiters.values())

        assert browser.launched is not None
        os.killpg(browser.launched.process.pid, signal.SIGKILL)  # as if it crashed

        async with asyncio.timeout(GUARD):
            outcomes = await asyncio.gather(*waiters.values(), return_exceptions=True)
        for name, outcome in zip(waiters, outcomes, strict=True):
            assert isinstance(outcome, CDPConnectionClosed | BrowserError), f"{name} returned {outcome!r}"
            assert "connection to the browser" in str(outcome), outcome
        with pytest.raises(CDPConnectionClosed):
            await first.wait_for_load(timeout=LONG)  # and a wait that starts afterwards does not wait either
    finally:
        await browser.close()
