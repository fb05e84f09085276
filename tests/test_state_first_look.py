"""The first look at a page after a navigation: the walker is already in the new document's tabpilot world
(installed as the document was made), the world of the replaced document is let go, and an element's node is
looked up only when an action touches it — so a page read right after each of several navigations is read
and acted on correctly every time, and an element of a replaced document is known to be gone."""

from __future__ import annotations

import pytest
from state_support import open_page

from tabpilot.browser import actions
from tabpilot.browser.browser import Browser
from tabpilot.browser.dom import fast
from tabpilot.browser.elements import ElementRef
from tabpilot.browser.errors import ActionError
from tabpilot.browser.state import BrowserState, get_state
from tabpilot.browser.tab import Tab

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


def _named(state: BrowserState, name: str) -> ElementRef:
    found = [ref for ref in state.elements.values()
             if name in (ref.name, ref.attributes.get("placeholder"), ref.attributes.get("name"))]
    assert len(found) == 1, (name, state.text)
    return found[0]


async def test_a_page_navigated_three_times_is_read_and_acted_on_at_each_first_look(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("speed_login.html"))
    before = await get_state(browser, tab)
    old_email = _named(before, "you@example.com")
    for visit in (1, 2, 3):
        await tab.navigate(pages.url(f"speed_flight.html?visit={visit}"))
        flights = await get_state(browser, tab)
        assert "Find flights" in flights.text and "you@example.com" not in flights.text, flights.text
        await actions.click(browser, tab, _named(flights, "direct"))
        assert await tab.evaluate("document.querySelector('[name=direct]').checked") is True

        await tab.navigate(pages.url(f"speed_login.html?visit={visit}"))
        login = await get_state(browser, tab)
        assert "Sign in" in login.text and "Find flights" not in login.text, login.text
        await actions.input_text(browser, tab, _named(login, "you@example.com"), f"user{visit}@example.org")
        assert await tab.evaluate("document.getElementById('email').value") == f"user{visit}@example.org"
        await actions.click(browser, tab, _named(login, "Sign in"))
        assert await tab.evaluate("window.submitted") is True
        # The email field read before the navigations belonged to a document that is gone.
        with pytest.raises(ActionError, match="no longer on the page"):
            await actions.input_text(browser, tab, old_email, "stale@example.org")
        assert await tab.evaluate("document.getElementById('email').value") == f"user{visit}@example.org"
    await browser.close_tab(tab.target_id)


async def _walker_in_new_document(tab: Tab) -> bool:
    created = await tab.session.send("Page.createIsolatedWorld",
                                     {"frameId": tab.main_frame_id, "worldName": fast.WORLD_NAME})
    reply = await tab.session.send("Runtime.evaluate", {
        "expression": "Object.keys(globalThis).some((name) => name.startsWith('__tabpilotWalker_'))",
        "contextId": created["executionContextId"], "returnByValue": True})
    return bool(reply["result"]["value"])


async def test_the_walker_is_in_each_new_document_before_the_first_look(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("speed_login.html"))
    assert not await _walker_in_new_document(tab)  # tabpilot never read this tab yet
    await get_state(browser, tab)
    for page in ("speed_flight.html", "speed_shadow_frames.html", "speed_login.html"):
        await tab.navigate(pages.url(page))
        assert await _walker_in_new_document(tab), page
        state = await get_state(browser, tab)
        assert "[top of page]" in state.text and state.elements, state.text
    await browser.close_tab(tab.target_id)


async def test_an_element_removed_after_the_read_is_reported_gone(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("speed_login.html"))
    state = await get_state(browser, tab)
    await tab.evaluate("document.querySelector('button[type=submit]').remove()")
    with pytest.raises(ActionError, match="no longer on the page"):
        await actions.click(browser, tab, _named(state, "Sign in"))
    assert await tab.evaluate("window.submitted") is None
    await browser.close_tab(tab.target_id)


async def test_a_document_made_without_the_walker_gets_it_at_its_first_look(browser: Browser, pages) -> None:
    # As in a browser that refuses scripts for new documents: the walker is installed when first needed.
    tab = await open_page(browser, pages.url("speed_login.html"))
    await get_state(browser, tab)
    await tab.session.send("Page.removeScriptToEvaluateOnNewDocument",
                           {"identifier": tab.session.kept[fast._PREINSTALLED]})
    await tab.navigate(pages.url("speed_flight.html"))
    assert not await _walker_in_new_document(tab)
    state = await get_state(browser, tab)
    assert "Find flights" in state.text, state.text
    await actions.click(browser, tab, _named(state, "direct"))
    assert await tab.evaluate("document.querySelector('[name=direct]').checked") is True
    await browser.close_tab(tab.target_id)
