"""One `Browser` over either tab backend: the agent's actions give the same results and fail with the same typed
errors whether the tabs are a Chromium's DevTools Target domain (`DevToolsTabs`, a launched or connected
browser) or the extension's `tabs.*` and chrome.debugger (`ExtensionTabs`, the user's browser; played here by
`relay_support.ExtensionStandIn` over the same Chromium, so both runs meet the same pages and the same
Chromium answers). Nothing above the `Browser` is told which backend it is on."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from relay_support import ExtensionStandIn, LoopbackLink

from tabpilot.browser import actions
from tabpilot.browser.browser import Browser
from tabpilot.browser.devtools_tabs import DevToolsTabs
from tabpilot.browser.errors import BrowserError
from tabpilot.browser.state import get_state
from tabpilot.cdp import CDPConnection, CDPError, WebSocketTransport
from tabpilot.localfiles import LocalFiles
from tabpilot.native.relay import extension_browser

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

Transcript = list[tuple[str, str]]


def outcome(result: Any, ids: list[str]) -> str:
    """What a step came to, as the layers above can tell it: its text, or the error's type, its kind and its
    words (tab ids, which differ by backend, as <tab>)."""
    if isinstance(result, CDPError):
        return f"{type(result).__name__} {result.kind.value}"
    text = f"{type(result).__name__}: {result}" if isinstance(result, BaseException) else str(result)
    for n, target_id in enumerate(ids, 1):
        text = re.sub(rf"\b{re.escape(target_id)}\b", f"<tab {n}>", text)
    return text


async def scenario(browser: Browser, pages: LocalFiles, browser_gone: Callable[[], Awaitable[None]]) -> Transcript:
    """Open a tab, act in it, follow a tab it opens, close the first; then everything that meets the closed tab,
    and everything once the browser itself is gone."""
    said: Transcript = []
    ids: list[str] = []

    async def step(name: str, work: Awaitable[Any]) -> Any:
        try:
            result = await work
        except (BrowserError, CDPError) as exc:
            said.append((name, outcome(exc, ids)))
            return None
        said.append((name, outcome(result if isinstance(result, str) else "done", ids)))
        return result

    await step("open a tab", actions.open_tab(browser, pages.url("actions_click.html")))
    first = browser.active
    assert first is not None
    ids.append(first.target_id)
    state = await get_state(browser, first)
    save = next(e for e in state.elements.values() if e.name == "Save")
    link = next(e for e in state.elements.values() if e.name == "Open in a new tab")
    await step("click Save", actions.click(browser, first, save))
    seen = await first.evaluate("window.__events")  # the page's own script
    said.append(("the page saw", str([(e["type"], e["id"], e["trusted"]) for e in seen])))
    await step("click a link to a new tab", actions.click(browser, first, link))
    second = browser.active
    assert second is not None and second is not first
    ids.append(second.target_id)
    await step("close tab 1", actions.close_tab(browser, 1))

    await step("evaluate in the closed tab", first.evaluate("document.title"))
    await step("click in the closed tab", actions.click(browser, first, save))
    await step("read the closed tab", get_state(browser, first))
    await step("switch to tab 1", actions.switch_tab(browser, 1))
    await step("attach to the closed tab", browser.attach(first.target_id))
    await step("close the closed tab again", browser.close_tab(first.target_id))
    await step("read tab 2", second.evaluate("document.title"))
    # a new tab's "created" and "updated" events each ask for it at once: one attach, one Tab
    fresh = await browser.backend.create_tab()
    tabs = await asyncio.gather(*(browser.attach(fresh) for _ in range(3)))
    said.append(("attach a new tab three times at once", f"{len({id(tab) for tab in tabs})} Tab"))
    await browser.close_tab(fresh)

    await browser_gone()
    await step("list tabs, the browser gone", browser.tabs())
    await step("attach, the browser gone", browser.attach(first.target_id))
    await step("open a tab, the browser gone", browser.new_tab())
    await step("evaluate, the browser gone", second.evaluate("document.title"))
    await browser.close()
    return said


def without_other_tabs(transcript: Transcript) -> Transcript:
    """The list of open tabs an ActionError names depends on what else is open in the shared Chromium."""
    return [(name, said.split(" Open tabs:")[0]) for name, said in transcript]


async def close_what_is_left(chromium: Browser) -> None:
    """A scenario's tab 2, left open when its browser went: the next one meets the same tabs as the first."""
    for tab in await chromium.tabs():
        if "actions_next.html" in tab.url:
            await chromium.close_tab(tab.target_id)


async def test_the_same_scenario_gives_the_same_results_and_errors_over_both_backends(browser, pages) -> None:
    chromium: Browser = browser  # the module's launched one (its own DevTools connection)
    websocket = await WebSocketTransport.connect(chromium.launched.ws_url)
    devtools = await Browser.open(DevToolsTabs(CDPConnection(websocket)))
    over_devtools = await scenario(devtools, pages, websocket.close)
    await close_what_is_left(chromium)

    stand_in = await ExtensionStandIn.connect(chromium.launched.ws_url)
    link = LoopbackLink(stand_in)

    async def extension_gone() -> None:
        link.peer.close("the extension went away")

    try:
        over_extension = await scenario(await extension_browser(link), pages, extension_gone)
    finally:
        await stand_in.close()
    await close_what_is_left(chromium)

    url, next_url = pages.url("actions_click.html"), pages.url("actions_next.html?from=blank")
    assert without_other_tabs(over_devtools) == without_other_tabs(over_extension) == [
        ("open a tab", f"Opened tab 1 with {url} ('Click page'); it is now the active tab."),
        ("click Save", "Clicked [1] button 'Save'."),
        ("the page saw", "[('click', 'save', True)]"),
        ("click a link to a new tab", "Clicked [9] a 'Open in a new tab'. It opened a new tab "
         f"(tab 3: 'Next page', {next_url}), which is now the active tab."),  # 2: Chromium's first blank tab
        ("close tab 1", "Closed tab 1."),
        ("evaluate in the closed tab", "TabClosed: the tab was closed"),
        ("click in the closed tab",
         "TabClosed: The tab the agent was working in has been closed. Switch to an open tab."),
        ("read the closed tab", "TabClosed: the tab was closed"),
        ("switch to tab 1", "ActionError: There is no open tab 1."),
        ("attach to the closed tab", "TabClosed: cannot work in tab <tab 1>: No target with given id found"),
        ("close the closed tab again", "CDPError target_gone"),
        ("read tab 2", "Next page"),
        ("attach a new tab three times at once", "1 Tab"),
        ("list tabs, the browser gone", "CDPConnectionClosed connection_closed"),
        ("attach, the browser gone", "CDPConnectionClosed connection_closed"),
        ("open a tab, the browser gone", "CDPConnectionClosed connection_closed"),
        ("evaluate, the browser gone", "CDPConnectionClosed connection_closed"),
    ]
