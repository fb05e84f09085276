"""What a CDP failure means (`CDPError.kind`), decided where the error is made, for both transports' wordings:
Chromium's own over the DevTools websocket (tests/test_cdp.py checks them against a real Chromium), and
chrome.debugger's and chrome.tabs' over the extension relay, sent as the service worker sends them
(extension/service_worker.js: a CDP error's own message, else `<method>: <chrome.debugger's message>`).
The relay ones go through the host's real relay code: Peer → RelayTransport/ExtensionTabs → CDPConnection."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

import pytest

from tabpilot.browser import actions, nodes
from tabpilot.browser.browser import Browser
from tabpilot.browser.elements import ElementRef
from tabpilot.browser.errors import TabClosed
from tabpilot.cdp import CDPConnectionClosed, CDPError, CDPErrorKind, CDPTimeout
from tabpilot.native.messages import parse_incoming
from tabpilot.native.peer import Peer
from tabpilot.native.relay import ExtensionTabs, extension_browser, tab_session_id
from tabpilot.native.replies import reply_error

T = TypeVar("T")
TARGET_GONE, CONTEXT_GONE, NODE_GONE = CDPErrorKind.TARGET_GONE, CDPErrorKind.CONTEXT_GONE, CDPErrorKind.NODE_GONE
NO_SUCH_OBJECT, OTHER = CDPErrorKind.NO_SUCH_OBJECT, CDPErrorKind.OTHER

# Chromium's replies over the DevTools websocket (and relayed as they are by chrome.debugger.sendCommand).
CDP_WORDINGS = [
    ("Runtime.evaluate", -32001, "Session with given id not found.", TARGET_GONE),
    ("Target.closeTarget", -32602, "No target with given id found", TARGET_GONE),
    ("Runtime.evaluate", -32000, "Cannot find context with specified id", CONTEXT_GONE),
    ("Runtime.callFunctionOn", -32000, "Execution context was destroyed.", CONTEXT_GONE),
    ("Runtime.evaluate", -32000, "Cannot find default execution context", CONTEXT_GONE),
    ("Page.createIsolatedWorld", -32000, "No frame for given id found", CONTEXT_GONE),
    ("DOM.getBoxModel", -32000, "Inspected target navigated or closed", CONTEXT_GONE),
    ("DOM.resolveNode", -32000, "No node with given id found", NODE_GONE),
    ("DOM.describeNode", -32000, "No node found for given backend id", NODE_GONE),
    ("DOM.resolveNode", -32000, "Node with given id does not belong to the document", NODE_GONE),
    ("DOM.scrollIntoViewIfNeeded", -32000, "Node is detached from document", NODE_GONE),
    ("DOM.describeNode", -32000, "Could not find node with given id", NODE_GONE),
    ("DOM.focus", -32000, "Node is not an Element", NODE_GONE),
    ("Runtime.callFunctionOn", -32000, "Could not find object with given id", NO_SUCH_OBJECT),
    ("Nope.doesNotExist", -32601, "'Nope.doesNotExist' wasn't found", OTHER),
    ("Page.navigate", -32602, "Invalid parameters", OTHER),
]


@pytest.mark.parametrize(("method", "code", "message", "kind"), CDP_WORDINGS)
def test_chromiums_wordings_have_their_kind(method: str, code: int, message: str, kind: CDPErrorKind) -> None:
    error = CDPError(method, code, message)
    assert error.kind is kind
    assert error.cdp_message == message  # the browser's words stay for the user to read


def test_a_timeout_and_a_closed_connection_say_so_whatever_their_words() -> None:
    assert CDPTimeout("Runtime.evaluate", 2).kind is CDPErrorKind.TIMEOUT
    # a reason that happens to hold a target-gone wording is still a closed connection
    closed = CDPConnectionClosed("Runtime.evaluate", "extension link closed: Target closed")
    assert closed.kind is CDPErrorKind.CONNECTION_CLOSED


def test_only_a_lost_context_reads_as_a_page_that_keeps_reloading() -> None:
    assert "keeps reloading" in str(CDPError("Runtime.evaluate", -32000, "Execution context was destroyed."))
    assert "busy or showing a dialog" in str(CDPTimeout("Runtime.evaluate", 2))
    assert str(CDPError("DOM.resolveNode", -32000, "No node with given id found")) == (
        "DOM.resolveNode failed: No node with given id found [code -32000]")


class Extension:
    """The extension's side of the link, as frames: it sees the host's requests and answers each one."""

    browser: Browser

    def __init__(self) -> None:
        self.requests: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.peer = Peer(self.requests.put_nowait)
        self.tabs: list[dict[str, Any]] = []  # what chrome.tabs.query answers
        self.closed_meanwhile: set[int] = set()  # listed, but closed by the user before tabpilot's tabs.close

    @classmethod
    async def open(cls) -> Extension:
        """The extension, and the host's browser on its tabs (`browser`)."""
        extension = cls()
        extension.browser = await extension_browser(extension.peer)
        return extension

    def answer(self, request: dict[str, Any]) -> None:
        if request["type"] == "tabs.close" and request["tabId"] in self.closed_meanwhile:
            self.tabs = [tab for tab in self.tabs if tab["tabId"] != request["tabId"]]
            self.peer.resolve(parse_incoming(reply_error(request["id"], f"No tab with id: {request['tabId']}.")))
            return
        data: dict[str, Any] = {}
        if request.get("method") == "Page.getFrameTree":
            data = {"frameTree": {"frame": {"id": "F"}}}
        elif request["type"] == "tabs.query":
            data = {"tabs": self.tabs}
        self.peer.resolve(parse_incoming({"type": "reply", "id": request["id"], "ok": True, "data": data}))

    async def answering(self, work: Awaitable[T]) -> T:
        """`work`'s result, every request it makes answered with success."""
        doing = asyncio.ensure_future(work)
        while not doing.done():
            try:
                self.answer(await asyncio.wait_for(self.requests.get(), 0.05))
            except TimeoutError:
                continue
        return await doing

    async def failing(self, work: Awaitable[Any], request_type: str, message: str, code: int | None = None
                      ) -> BaseException:
        """What `work` raises when the extension answers its next request (of `request_type`) with an error."""
        doing = asyncio.ensure_future(work)
        request = await asyncio.wait_for(self.requests.get(), 5)
        assert request["type"] == request_type
        self.peer.resolve(parse_incoming(reply_error(request["id"], message, code)))  # parsed as the host does
        with pytest.raises(Exception) as caught:
            await asyncio.wait_for(doing, 5)
        return caught.value

    async def close(self) -> None:
        await self.answering(self.browser.close())


# chrome.debugger.sendCommand's own failures reach the host as `<method>: <message>` with no code (the service
# worker's cdpError); a CDP error it relays keeps Chromium's message and code (the list above).
RELAYED_SEND_WORDINGS = [
    ("Runtime.evaluate: Debugger is not attached to the tab with id: 1234.", None, TARGET_GONE),
    ("DOM.resolveNode: No tab with given id 1234.", None, TARGET_GONE),
    ("Input.dispatchMouseEvent: Detached while handling command.", None, TARGET_GONE),
    ("Runtime.evaluate: Cannot access a chrome:// URL", None, OTHER),
    ("Cannot find context with specified id", -32000, CONTEXT_GONE),
    ("Session with given id not found.", -32001, TARGET_GONE),
]


@pytest.mark.parametrize(("message", "code", "kind"), RELAYED_SEND_WORDINGS)
async def test_the_relays_wordings_of_a_failed_command_have_their_kind(
        message: str, code: int | None, kind: CDPErrorKind) -> None:
    extension = await Extension.open()
    backend = extension.browser.backend
    assert isinstance(backend, ExtensionTabs)
    backend.transport.tabs.add(1234)
    session = extension.browser.connection.session(tab_session_id(1234))
    error = await extension.failing(session.send("Runtime.evaluate"), "cdp.send", message, code)
    assert isinstance(error, CDPError) and error.kind is kind
    assert error.cdp_message == message
    await extension.close()


async def test_a_child_session_the_relay_does_not_know_is_a_gone_target() -> None:
    extension = await Extension.open()
    with pytest.raises(CDPError) as caught:
        await extension.browser.connection.session("7F3A-child").send("Runtime.evaluate")
    assert caught.value.kind is TARGET_GONE
    with pytest.raises(CDPError) as caught:  # no browser-level session: a mistake, not a gone tab
        await extension.browser.connection.root.send("Target.getTargets")
    assert caught.value.kind is OTHER
    await extension.close()


# chrome.debugger.attach's and chrome.tabs' failures, as the service worker passes them on (error.message).
TAB_REQUEST_WORDINGS = [
    ("tabs.close", "No tab with id: 1234.", TARGET_GONE),
    ("cdp.attach", "No tab with given id 1234.", TARGET_GONE),
    ("cdp.attach", "Cannot access a chrome:// URL", OTHER),
    ("cdp.attach", "Cannot access a chrome-extension:// URL of different extension", OTHER),
    ("cdp.attach", "Another debugger is already attached to the tab with id: 1234.", OTHER),
    ("cdp.attach", "Cannot attach to this target.", OTHER),
]


@pytest.mark.parametrize(("request_type", "message", "kind"), TAB_REQUEST_WORDINGS)
async def test_the_relays_wordings_of_a_failed_tab_request_have_their_kind(
        request_type: str, message: str, kind: CDPErrorKind) -> None:
    extension = await Extension.open()
    browser = extension.browser
    work = browser.close_tab("1234") if request_type == "tabs.close" else browser.attach("1234")
    error = await extension.failing(work, request_type, message)
    if request_type == "cdp.attach":  # the browser layer's own words, the CDP error under them
        assert isinstance(error, TabClosed) and "cannot work in tab 1234" in str(error)
        error = error.__cause__
    assert isinstance(error, CDPError) and error.kind is kind
    await extension.close()


# --- what the browser layer makes of them -------------------------------------------------------------
async def test_an_action_in_a_tab_chrome_debugger_no_longer_finds_ends_with_tab_closed() -> None:
    # chrome.debugger says "No tab with given id" once the tab is gone; the browser layer used to look for
    # "No tab with id" (chrome.tabs' wording) and reported "DOM.describeNode failed" instead.
    extension = await Extension.open()
    tab = await extension.answering(extension.browser.attach("1234"))
    action = nodes.send(tab, tab.session, "DOM.describeNode", {"backendNodeId": 5})
    error = await extension.failing(action, "cdp.send", "DOM.describeNode: No tab with given id 1234.")
    assert isinstance(error, TabClosed) and "has been closed" in str(error)
    assert tab.closed
    await extension.close()


async def test_a_command_chrome_debugger_is_no_longer_attached_for_closes_the_tab_object() -> None:
    # Tab.send knew only the websocket's words for a gone target: over the relay the raw CDPError went up.
    extension = await Extension.open()
    tab = await extension.answering(extension.browser.attach("1234"))
    message = "Page.getLayoutMetrics: Debugger is not attached to the tab with id: 1234."
    error = await extension.failing(tab.send("Page.getLayoutMetrics"), "cdp.send", message)
    assert isinstance(error, TabClosed)
    assert tab.closed
    await extension.close()


@pytest.mark.parametrize("message", ["Cannot find context with specified id", "Execution context was destroyed.",
                                     "Inspected target navigated or closed", "Node is detached from document"])
async def test_an_action_on_an_element_whose_document_went_says_it_is_no_longer_on_the_page(message: str) -> None:
    # Only "Cannot find context" used to: the other ways Chromium says the document went read "... failed: ...".
    extension = await Extension.open()
    tab = await extension.answering(extension.browser.attach("1234"))
    save = ElementRef(index=7, backend_node_id=55, session=tab.session, tag="button", name="Save")
    action = nodes.send(tab, tab.session, "DOM.scrollIntoViewIfNeeded", {"backendNodeId": 55}, element=save)
    error = await extension.failing(action, "cdp.send", message, -32000)
    assert str(error).startswith("[7] button 'Save' is no longer on the page")
    assert not tab.closed
    await extension.close()


async def test_closing_a_tab_the_user_closed_a_moment_before_still_ends_as_closed_over_the_relay() -> None:
    # actions.close_tab let only the websocket's "No target with given id" pass; chrome.tabs' "No tab with id"
    # came back as "Could not close tab 2".
    extension = await Extension.open()
    extension.tabs = [{"tabId": 1234, "url": "https://a.example/", "title": "A"},
                      {"tabId": 1235, "url": "https://b.example/", "title": "B"}]
    assert (await extension.answering(actions.switch_tab(extension.browser, 1))).startswith("Switched to tab 1")
    extension.closed_meanwhile.add(1235)
    said = await extension.answering(actions.close_tab(extension.browser, 2))
    assert said == "Closed tab 2."
    await extension.close()
