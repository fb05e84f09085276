"""The CDP client against a real Chromium over the websocket transport."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

import pytest

from tabpilot.browser.browser import Browser
from tabpilot.cdp import CDPConnection, CDPConnectionClosed, CDPError, CDPErrorKind, CDPTimeout, WebSocketTransport

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


async def test_text_with_lone_surrogates_from_a_page_arrives_with_u_fffd(browser: Browser) -> None:
    tab = await browser.new_tab()
    assert await tab.evaluate("'a' + String.fromCharCode(0xD800) + 'b'") == "a\ufffdb"
    assert await tab.evaluate("['\\ud83d\\ude00', '\\udc00x']") == ["😀", "\ufffdx"]  # a whole pair stays
    await browser.close_tab(tab.target_id)


async def test_a_page_in_an_alert_loop_is_reported_as_busy_or_showing_a_dialog(browser: Browser, pages) -> None:
    tab = await browser.new_tab()
    await tab.session.send("Page.navigate", {"url": pages.url("alert_loop.html")})
    await asyncio.sleep(1.0)  # the first alert is up
    with pytest.raises(CDPTimeout) as caught:
        await tab.session.send("Page.getLayoutMetrics", timeout=2)
    assert str(caught.value) == ("Page.getLayoutMetrics failed: the page is busy or showing a dialog "
                                 "(no reply within 2 s) [code -1]")
    await tab.session.send("Page.handleJavaScriptDialog", {"accept": True})
    await browser.close_tab(tab.target_id)


async def test_a_page_that_keeps_reloading_is_reported_as_such(browser: Browser, pages) -> None:
    # (The state read itself recovers from this by reading with DOM snapshots: tests/test_state_recovery.py.)
    tab = await browser.new_tab()
    await tab.session.send("Page.navigate", {"url": pages.url("reloading.html")})
    await asyncio.sleep(0.5)
    with pytest.raises(CDPError) as caught:
        for _ in range(20):  # a context made between two reloads is gone by the next one
            frame_id = (await tab.session.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
            world = await tab.session.send("Page.createIsolatedWorld", {"frameId": frame_id})
            await asyncio.sleep(0.3)
            await tab.session.send("Runtime.evaluate", {"expression": "1", "contextId": world["executionContextId"]})
    assert "the page keeps reloading or navigating away, so it could not be read" in str(caught.value)
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


async def test_closing_while_a_page_floods_events_does_not_wait_out_the_close_timeout(browser: Browser) -> None:
    """A page logging without pause sends events up to the moment the connection closes: they are read and dropped,
    so the browser's answer to the close is read too. (Left unread, they filled the websocket's queue, which then
    stopped reading: each close waited out its 10 s timeout.)"""
    connection = CDPConnection(await WebSocketTransport.connect(browser.launched.ws_url))
    target = await connection.root.send("Target.createTarget", {"url": "about:blank"})
    session = connection.session((await connection.root.send(
        "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}))["sessionId"])
    logged: list[dict] = []
    flooding = asyncio.Event()

    def log(params: dict) -> None:
        logged.append(params)
        if len(logged) >= 200:
            flooding.set()

    session.on("Runtime.consoleAPICalled", log)
    await session.send("Runtime.enable")
    await session.send("Runtime.evaluate", {"expression": "setInterval(() => { for (let i = 0; i < 50; i++) "
                                                          "console.log('tick', i); }, 1)"})
    await asyncio.wait_for(flooding.wait(), 10)
    try:
        async with asyncio.timeout(5):  # far under the websocket's 10 s close timeout
            await connection.close()
    finally:
        await browser.close_tab(target["targetId"])
    with pytest.raises(CDPConnectionClosed):
        await connection.root.send("Browser.getVersion")


async def test_a_session_read_by_the_state_walker_is_freed_with_its_connection(browser: Browser, pages) -> None:
    # What leaked ~75 KB a task in the host: the walker's per-session worlds, in a module-level
    # WeakKeyDictionary whose values referred to their session, kept every session (and its task) alive.
    import gc
    import weakref

    from tabpilot.browser.dom.fast import read_frame

    connection = CDPConnection(await WebSocketTransport.connect(browser.launched.ws_url))
    target = await connection.root.send("Target.createTarget", {"url": pages.url("basic.html")})
    attached = await connection.root.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
    session = connection.session(attached["sessionId"])
    await session.send("Page.enable")
    frame_tree = await session.send("Page.getFrameTree")
    await read_frame(session, frame_tree["frameTree"]["frame"]["id"])
    gone = weakref.ref(session)
    await connection.root.send("Target.closeTarget", {"targetId": target["targetId"]})
    await connection.close()
    del session
    # freed once what was under way for it has seen the connection close (a marking ahead or a warm-up the document's
    # load began may still be awaiting its answer: CI once collected before it had)
    for _ in range(100):
        gc.collect()
        if gone() is None:
            break
        await asyncio.sleep(0.05)
    assert gone() is None


async def test_chromiums_failures_have_the_kind_the_browser_layer_acts_on(browser: Browser, pages) -> None:
    # The wordings these come in are in tests/test_cdp_errors.py (with the relay's): here, that they are real.
    tab = await browser.new_tab(pages.url("basic.html"))
    session, root = tab.session, browser.connection.root

    async def kind_of(command: Awaitable[Any]) -> CDPErrorKind:
        with pytest.raises(CDPError) as caught:
            await command
        return caught.value.kind

    async def new_object(expression: str) -> str:
        return str((await session.send("Runtime.evaluate", {"expression": expression}))["result"]["objectId"])

    loose, text = await new_object("document.createElement('div')"), await new_object("document.createTextNode('x')")
    released = await new_object("document.createElement('p')")
    await session.send("Runtime.releaseObject", {"objectId": released})
    kinds = [
        (await kind_of(session.send("Runtime.evaluate", {"expression": "1", "contextId": 987654})), "CONTEXT_GONE"),
        (await kind_of(session.send("Page.createIsolatedWorld", {"frameId": "gone"})), "CONTEXT_GONE"),
        (await kind_of(session.send("DOM.resolveNode", {"backendNodeId": 987654})), "NODE_GONE"),
        (await kind_of(session.send("DOM.describeNode", {"backendNodeId": 987654})), "NODE_GONE"),
        (await kind_of(session.send("DOM.scrollIntoViewIfNeeded", {"objectId": loose})), "NODE_GONE"),
        (await kind_of(session.send("DOM.focus", {"objectId": text})), "NODE_GONE"),
        (await kind_of(session.send("Runtime.callFunctionOn", {
            "objectId": released, "functionDeclaration": "function() {}"})), "NO_SUCH_OBJECT"),
        (await kind_of(session.send("Nope.doesNotExist")), "OTHER"),
        (await kind_of(session.send("Runtime.evaluate", {
            "expression": "new Promise(() => {})", "awaitPromise": True}, timeout=0.2)), "TIMEOUT"),
        (await kind_of(root.send("Target.closeTarget", {"targetId": "gone"})), "TARGET_GONE"),
    ]
    detached = asyncio.ensure_future(root.wait_for(
        "Target.detachedFromTarget", lambda params: params.get("sessionId") == session.session_id, timeout=10))
    await browser.close_tab(tab.target_id)
    await detached  # (a command sent while the tab is still closing may get no answer at all)
    kinds.append((await kind_of(session.send("Runtime.evaluate", {"expression": "1"}, timeout=5)), "TARGET_GONE"))
    assert [kind.name for kind, _ in kinds] == [expected for _, expected in kinds]


async def test_commands_sent_in_one_turn_leave_in_one_write_and_run_in_order(browser: Browser, pages) -> None:
    tab = await browser.new_tab(pages.url("basic.html"))
    socket = browser.connection._transport._socket  # type: ignore[attr-defined]  # the DevTools websocket
    writes: list[int] = []
    write = socket.transport.write

    def counted(data: bytes) -> None:
        writes.append(len(data))
        write(data)

    socket.transport.write = counted
    try:
        sent = [tab.session.send("Runtime.evaluate", {"expression": f"(window.order ||= []).push({n})"})
                for n in range(40)]
        sent.insert(20, tab.session.send("Nope.doesNotExist"))
        replies = await asyncio.gather(*sent, return_exceptions=True)
    finally:
        del socket.transport.write
    assert len(writes) == 1, writes  # 41 commands, one write: one wake of the browser instead of 41
    assert isinstance(replies[20], CDPError) and "Nope.doesNotExist" in str(replies[20])
    assert [r["result"]["value"] for r in replies[:20] + replies[21:]] == list(range(1, 41))  # type: ignore[index]
    assert await tab.evaluate("window.order") == list(range(40))
    await browser.close_tab(tab.target_id)


async def test_a_run_of_commands_is_answered_in_order_or_by_its_first_failure(browser: Browser, pages) -> None:
    tab = await browser.new_tab(pages.url("basic.html"))
    connection, session_id = browser.connection, tab.session.session_id
    push = [("Runtime.evaluate", {"expression": f"(window.order ||= []).push({n})"}) for n in range(30)]
    replies = await connection.send_run(push, session_id=session_id)
    assert [reply["result"]["value"] for reply in replies] == list(range(1, 31))
    failing = [*push[:10], ("Nope.first", {}), *push[10:20], ("Nope.second", {})]
    with pytest.raises(CDPError, match=r"Nope\.first"):
        await connection.send_run(failing, session_id=session_id)
    assert await tab.evaluate("window.order.length") == 50  # all were sent, in order, failure or not
    assert not connection._pending and not connection._outbox  # nothing left waiting for an answer
    await browser.close_tab(tab.target_id)


async def test_commands_to_a_closed_tabs_session_fail_as_gone_without_waiting_for_an_answer(
        browser: Browser, pages) -> None:
    tab = await browser.new_tab(pages.url("basic.html"))
    session, root = tab.session, browser.connection.root
    # In flight as the tab closes: a promise that never settles (Chromium may never answer it).
    waiting = asyncio.ensure_future(session.send(
        "Runtime.evaluate", {"expression": "new Promise(() => {})", "awaitPromise": True}, timeout=60))
    detached = asyncio.ensure_future(root.wait_for(
        "Target.detachedFromTarget", lambda params: params.get("sessionId") == session.session_id, timeout=10))
    await asyncio.sleep(0)
    await root.send("Target.closeTarget", {"targetId": tab.target_id})
    await detached
    with pytest.raises(CDPError) as in_flight:
        await asyncio.wait_for(waiting, 10)  # (well before its own 60 s)
    assert in_flight.value.kind in (CDPErrorKind.TARGET_GONE, CDPErrorKind.CONTEXT_GONE), in_flight.value
    # Sent after: refused here, never written to the browser.
    sent: list[dict[str, Any]] = []
    transport = browser.connection._transport  # type: ignore[attr-defined]
    send_burst = transport.send_burst

    async def recorded(messages: list[dict[str, Any]]) -> None:
        sent.extend(messages)
        await send_burst(messages)

    transport.send_burst = recorded
    try:
        with pytest.raises(CDPError) as after:
            await session.send("Runtime.evaluate", {"expression": "1"})
    finally:
        del transport.send_burst
    assert after.value.kind is CDPErrorKind.TARGET_GONE, after.value
    assert not [m for m in sent if m.get("sessionId") == session.session_id], sent
