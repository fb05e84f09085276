"""What is far from the viewport, what a person cannot see, and what the header costs: on both read paths
(the in-page walker users get, and whole-page DOM snapshots).

- "new" (`*[n]`) means appeared in the page since the previous state, not "shown for the first time":
  scrolling to elements that were there all along marks nothing;
- the "[Npx below: M interactive elements]" count follows the same rules as what is then offered;
- screen-reader-only boxes (clipped away, or under 2×2 px) are not offered;
- the header shortens a long current URL."""

from __future__ import annotations

import base64
import re

import pytest
from state_support import ids_by_index, index_of, open_page

from tabpilot.browser import actions
from tabpilot.browser.browser import Browser
from tabpilot.browser.state import BrowserState, build_state, read_page

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

PATHS = [pytest.param(False, id="walker"), pytest.param(True, id="snapshot")]
FAR = {"far-button", "far-focus", "far-pointer", "far-listener", "card", "pay"}  # card, pay: in each frame


async def state_of(browser: Browser, tab, previous: BrowserState | None, snapshot: bool) -> BrowserState:
    return build_state(await read_page(browser, tab, snapshot=snapshot), previous)


async def wait_for_frames(tab) -> None:
    await tab.evaluate(
        "new Promise(r => { const f = document.getElementById('far-cross');"
        " const go = () => setTimeout(r, 300); if (f.dataset.loaded) go(); else f.addEventListener('load', go); })"
    )


@pytest.mark.parametrize("snapshot", PATHS)
async def test_scrolling_to_elements_that_were_there_marks_nothing_new(browser: Browser, pages, snapshot) -> None:
    tab = await open_page(browser, pages.url("state_far.html"), height=700)
    await wait_for_frames(tab)
    first = await state_of(browser, tab, None, snapshot)
    assert not FAR & set((await ids_by_index(first)).values()), first.text
    await actions.scroll(browser, tab, down=True, num_pages=10)
    second = await state_of(browser, tab, first, snapshot)
    offered = await ids_by_index(second)
    listed = [element_id for element_id in offered.values() if element_id in FAR]
    assert sorted(listed) == sorted(["far-button", "far-focus", "far-pointer", "far-listener",
                                     "card", "pay", "card", "pay"]), second.text
    assert "*[" not in second.text, second.text
    assert not any(ref.is_new for ref in second.elements.values())
    # What was counted below is what is now offered beyond the first state (not the invisible button, not
    # the bare anchor): the six far controls, four of them inside the two frames.
    newly_listed = set(second.elements) - set(first.elements)
    assert first.elements_below == len(newly_listed) == 8, (first.text, second.text)
    assert "[2" in first.text.splitlines()[-1] and ": 8 interactive elements]" in first.text, first.text

    await tab.evaluate(
        "const b = document.createElement('button'); b.id = 'added'; b.textContent = 'Added now';"
        "document.getElementById('far-button').before(b);"
    )
    third = await state_of(browser, tab, second, snapshot)
    marked = [index for index, ref in third.elements.items() if ref.is_new]
    assert marked == [await index_of(third, "added")], third.text
    assert re.findall(r"\*\[\d+\]<[^\n]*", third.text) == [f"*[{marked[0]}]<button>Added now"], third.text
    await browser.close_tab(tab.target_id)


@pytest.mark.parametrize("snapshot", PATHS)
async def test_screen_reader_only_boxes_are_not_offered(browser: Browser, pages, snapshot) -> None:
    tab = await open_page(browser, pages.url("state_far.html"), height=700)
    state = await state_of(browser, tab, None, snapshot)
    offered = set((await ids_by_index(state)).values())
    assert {"close", "top-button"} <= offered, state.text
    assert not {"skip", "skip-path", "tiny"} & offered, state.text
    assert "Skip to main content" not in state.text and "Skip to search" not in state.text
    # A visually hidden label still names the icon button it is in.
    close = state.elements[await index_of(state, "close")]
    assert close.name == "Close banner" and f"[{close.index}]<button>Close banner" in state.text, state.text
    await browser.close_tab(tab.target_id)


@pytest.mark.parametrize("snapshot", PATHS)
async def test_the_header_shortens_a_long_current_url(browser: Browser, pages, snapshot) -> None:
    query = "q=" + "+".join(["red", "leather", "shoes"] * 60) + "&session=" + "f3a9" * 50
    url = pages.url("state_far.html") + "?" + query + "#reviews"
    tab = await open_page(browser, url, height=700)
    state = await state_of(browser, tab, None, snapshot)
    header = state.text.splitlines()[0]
    assert state.url == url  # the state itself keeps the whole URL
    assert header.startswith("Current tab [") and url not in header, header
    assert pages.url("state_far.html") + "?q=red+leather+shoes" in header and header.endswith("…"), header
    assert len(header) < 200, header

    payload = "<title>Inline</title><button>Inline button</button>" + "<p>" + "x" * 3000 + "</p>"
    data_url = "data:text/html;charset=utf-8;base64," + base64.b64encode(payload.encode()).decode()
    await tab.navigate(data_url)
    state = await state_of(browser, tab, None, snapshot)
    header = state.text.splitlines()[0]
    assert header.endswith("Inline — data:text/html,…"), header
    assert "base64" not in state.text and "[1]<button>Inline button" in state.text, state.text
    await browser.close_tab(tab.target_id)
