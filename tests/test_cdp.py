"""The CDP client against a real Chromium over the websocket transport."""

from __future__ import annotations

import asyncio

import pytest

from tabpilot.browser.browser import Browser
from tabpilot.cdp import CDPConnection, CDPConnectionClosed, CDPError, CDPTimeout, WebSocketTransport

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


async def test_command_reply_and_typed_error_naming_method(browser: Browser) -> None:
    version = await browser.connection.root.send("Browser.getVersion")
    assert "Chrome" in version["product"] or "Chromium" in version["product"]
    with pytest.raises(CDPError) as info:
        await browser.connection.root.send("Nope.doesNotExist")
    assert "Nope.doesNotExist" in str(info.value)
    assert info.value.code != 0


async def test_flattened_session_and_several_handlers_per_event(browser: Browser, pages) -> None:
    tab = await browser.new_tab()
    seen_sync: list[str] = []
    seen_async: list[str] = []
    release = asyncio.Event()

    def sync_handler(params: dict) -> None:
        seen_sync.append(params["frame"]["url"])

    async def slow_handler(params: dict) -> None:
        await release.wait()  # a blocked async handler must not delay command replies
        seen_async.append(params["frame"]["url"])

    tab.session.on("Page.frameNavigated", sync_handler)
    tab.session.on("Page.frameNavigated", slow_handler)
    await tab.navigate(pages.url("basic.html"))
    assert await tab.evaluate("1 + 1") == 2  # replies flow while slow_handler waits
    assert seen_sync and seen_sync[-1].endswith("basic.html")
    release.set()
    await asyncio.sleep(0.05)
    assert seen_async and seen_async[-1].endswith("basic.html")
    await browser.close_tab(tab.target_id)


async def test_per_call_timeout(browser: Browser) -> None:
    tab = await browser.new_tab()
    with pytest.raises(CDPTimeout) as info:
        await tab.session.send(
            "Runtime.evaluate", {"expression": "new Promise(() => {})", "awaitPromise": True}, timeout=0.3
        )
    assert "Runtime.evaluate" in str(info.value)
    await browser.close_tab(tab.target_id)


async def test_large_message_over_64_mb(browser: Browser) -> None:
    tab = await browser.new_tab()
    size = 70 * 1024 * 1024
    length = await tab.evaluate(f"'x'.repeat({size}).length")
    assert length == size
    text = await tab.evaluate(f"'y'.repeat({size})", timeout=60)
    assert len(text) == size
    await browser.close_tab(tab.target_id)


async def test_text_with_lone_surrogates_from_a_page_is_received(browser: Browser) -> None:
    tab = await browser.new_tab()
    assert await tab.evaluate("'a' + String.fromCharCode(0xD800) + 'b'") == "a\ud800b"
    await browser.close_tab(tab.target_id)


async def test_closed_connection_fails_pending_calls(browser: Browser) -> None:
    connection = CDPConnection(await WebSocketTransport.connect(browser.launched.ws_url))
    target = await connection.root.send("Target.createTarget", {"url": "about:blank"})
    session_id = (
        await connection.root.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
    )["sessionId"]
    pending = asyncio.ensure_future(
        connection.send(
            "Runtime.evaluate",
            {"expression": "new Promise(() => {})", "awaitPromise": True},
            session_id=session_id,
        )
    )
    await asyncio.sleep(0.1)
    await connection._transport.close()  # the peer goes away under a pending call
    with pytest.raises(CDPConnectionClosed) as info:
        await asyncio.wait_for(pending, 5)
    assert "Runtime.evaluate" in str(info.value)
    with pytest.raises(CDPConnectionClosed):
        await connection.root.send("Browser.getVersion")
    await connection.close()
    await browser.close_tab(target["targetId"])
