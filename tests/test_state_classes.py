"""Classes of page the model must read as a person would, each on a fixture page of its own in a real Chromium:
icon-only controls named, long values readable, tree/menu/spinner states, text quirks, and frames of another
origin on the same site. Each asserts the exact text the model gets and acts on what it offers (the page's
own script records the action)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from state_support import node_property, open_page

from tabpilot.browser import actions
from tabpilot.browser.browser import Browser
from tabpilot.browser.state import BrowserState, get_state
from tabpilot.localfiles import LocalFiles

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

PAGES = Path(__file__).parent / "fixtures" / "pages"
EDGE_ABOVE = re.compile(r"^\[(top of page|\d+px above: .*)\]$")
EDGE_BELOW = re.compile(r"^\[(end of page|\d+px below: .*)\]$")


@pytest.fixture(scope="module")
def other_port() -> Iterator[LocalFiles]:
    """The fixture pages again on another port of 127.0.0.1: another origin of the same site."""
    with LocalFiles(PAGES) as server:
        yield server


def body(state: BrowserState) -> list[str]:
    """The page part of the text: the lines between the edge lines above and below it."""
    lines = state.text.splitlines()
    start = next(i for i, line in enumerate(lines) if EDGE_ABOVE.match(line))
    end = max(i for i, line in enumerate(lines) if EDGE_BELOW.match(line))
    return lines[start + 1:end]


async def test_same_site_frame_on_another_port_is_offered_and_used(browser: Browser, pages, other_port) -> None:
    tab = await open_page(browser, pages.url(f"eyes_frame_outer.html?port={other_port.port}"))
    await tab.settle()
    state = await get_state(browser, tab)
    assert body(state) == [
        "# Shop",
        "[1]<button>Outer button",
        "Payment on another port",
        "[2]<input placeholder=\"Card number\">",
        "[3]<button>Pay now",
        "unpaid",
    ], state.text
    card, pay = state.elements[2], state.elements[3]
    assert await node_property(card, "location.port") == str(other_port.port)
    await actions.input_text(browser, tab, card, "4242 4242")
    await actions.click(browser, tab, pay)
    assert await node_property(pay, "window.clicks") == ["pay-now"]
    again = await get_state(browser, tab, state)
    assert "paid 4242 4242" in again.text and "[3]<button>Pay now" in again.text, again.text
    assert await node_property(again.elements[2], "this.value") == "4242 4242"
    await browser.close_tab(tab.target_id)
