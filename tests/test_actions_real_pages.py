"""Actions on real saved web pages nobody on this project wrote (the same pages the state tests use):
scrolling reports what the page's own scroll position says, and clicking a link lands where it points."""

from __future__ import annotations

import pytest
from actions_support import evaluate
from real_pages import MISSING_REASON, PAGES

from tabpilot.browser import actions
from tabpilot.browser.nodes import node_id
from tabpilot.browser.state import get_state

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


DISTINCT = list({p.name: p for p in PAGES}.values())[:3]


@pytest.mark.skipif(not DISTINCT, reason=MISSING_REASON)
@pytest.mark.parametrize("page", DISTINCT, ids=[p.name for p in DISTINCT])
async def test_scroll_and_follow_a_link_on_a_real_page(browser, tab, page) -> None:
    await tab.navigate(page.as_uri())  # the person's start (the model opens files only from a file: page)
    assert (await actions.go_to_url(browser, tab, page.as_uri())).startswith(f"Opened {page.as_uri()} ('")
    result = await actions.scroll(browser, tab, down=True, pixels=300)
    room = await evaluate(tab, "document.scrollingElement.scrollHeight - document.scrollingElement.clientHeight")
    moved = await evaluate(tab, "Math.round(scrollY)")
    if room > 0:
        assert moved == min(300, room) and f"down {moved}px" in result
    else:
        assert "cannot scroll down" in result or "nothing more to scroll" in result

    state = await get_state(browser, tab)
    for link in (e for e in state.elements.values() if e.tag == "a"):
        reply = await tab.session.send("DOM.resolveNode", {"backendNodeId": await node_id(tab, link)})
        href = (await tab.session.send("Runtime.callFunctionOn", {
            "objectId": reply["object"]["objectId"], "functionDeclaration": "function() { return this.href; }",
            "returnByValue": True}))["result"]["value"]
        if href.startswith("file:"):  # the web is out of reach here; the saved pages are not
            break
    else:
        pytest.skip(f"{page.name} has no local link to follow")
    result = await actions.click(browser, tab, link)
    assert result.startswith(f"Clicked [{link.index}] ")
    assert await tab.url() == href  # the page the link points to is open (or its anchor reached)
