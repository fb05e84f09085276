"""Browser state on real saved web pages that nobody on this project wrote (see real_pages.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from real_pages import MISSING_REASON, PAGES
from required import missing
from state_support import node_property

from tabpilot.browser.browser import Browser
from tabpilot.browser.state import get_state

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


async def test_real_pages_are_there_on_ci() -> None:
    if not PAGES:
        missing(MISSING_REASON)


@pytest.mark.skipif(not PAGES, reason=MISSING_REASON)
@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
async def test_state_on_a_real_page_is_sane(browser: Browser, page: Path) -> None:
    tab = await browser.new_tab()
    await tab.navigate(page.as_uri(), timeout=20)
    state = await get_state(browser, tab)
    body = state.text.splitlines()[3:-1]  # without the header and the edges
    assert sum(len(line) for line in body) > 200, state.text  # the page was read
    assert len(state.text) < 20_000  # one screenful, not the whole document
    document_text = await tab.evaluate("document.body.innerText")
    # The page's text in the state comes from the page (tags and their attributes left aside).
    visible_text = re.sub(r"<[^>]*>", " ", "\n".join(body))
    words = [w for w in visible_text.split() if len(w) > 6 and w.isalpha()]
    assert words and sum(w in document_text for w in words) / len(words) > 0.9, state.text
    for ref in list(state.elements.values())[:10]:  # every index points at a live node of that page
        assert await node_property(ref, "this.isConnected") is True
    if len(state.elements) > 1:
        repeat = await get_state(browser, tab, state)
        assert list(repeat.elements) == list(state.elements) and "*[" not in repeat.text
    await browser.close_tab(tab.target_id)
