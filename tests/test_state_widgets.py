"""Styled widgets as component libraries build them, read by both readers (the in-page walker and whole-page
DOM snapshots) into the exact lines the model gets, and used through them (the page's own script records
what happened): a transparent native <select> over a drawn face, switches made of invisible checkboxes
(inside their label or named by its `for`), a card wrapped in a link, a read-only field, a contenteditable
area, and buttons that are <input>s."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from state_support import node_property, open_page

from tabpilot.browser import actions
from tabpilot.browser.browser import Browser
from tabpilot.browser.errors import ActionError
from tabpilot.browser.state import BrowserState, build_state, get_state, read_page

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

PAGES = Path(__file__).parent / "fixtures" / "pages"
EDGE = re.compile(r"^\[(top of page|end of page|\d+px (above|below): .*)\]$")

EXPECTED = [
    "Size Medium",
    "[1]<select value=Medium options=Small|Medium|Large>",
    "[2]<label role=switch checked=false>Airplane mode",
    "[3]<label checked=false>Dark theme",
    "[4]<a>Red shoe $40",
    "Code",
    "[5]<input value=ABC-123 readonly>",
    "[6]<div editable>Draft body",
    "[7]<input type=submit>Place order",
    "[8]<input type=button>Cancel",
    "[9]<input type=image>Go",
]


def body(state: BrowserState) -> list[str]:
    lines = state.text.splitlines()
    start = next(i for i, line in enumerate(lines) if EDGE.match(line))
    end = max(i for i, line in enumerate(lines) if EDGE.match(line))
    return lines[start + 1:end]


async def test_styled_widgets_read_alike_by_both_readers(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("eyes_widgets.html"))
    await tab.settle()
    walked = await get_state(browser, tab)
    assert body(walked) == EXPECTED, walked.text
    snapshot = build_state(await read_page(browser, tab, snapshot=True))
    assert body(snapshot) == EXPECTED, snapshot.text
    await browser.close_tab(tab.target_id)


async def test_styled_widgets_work_through_what_the_model_reads(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("eyes_widgets.html"))
    await tab.settle()
    state = await get_state(browser, tab)
    await actions.select_option(browser, tab, state.elements[1], "Large")
    await actions.click(browser, tab, state.elements[2])
    await actions.click(browser, tab, state.elements[3])
    for index in (7, 8, 9):
        await actions.click(browser, tab, state.elements[index])
    assert await node_property(state.elements[1], "window.events") == [
        "size Large", "airplane true", "dark-box true", "order", "cancel", "go"]
    with pytest.raises(ActionError, match="read-only"):
        await actions.input_text(browser, tab, state.elements[5], "x")
    await actions.input_text(browser, tab, state.elements[6], "New body")
    again = await get_state(browser, tab, state)
    lines = body(again)
    assert lines[:4] == [
        "Size Large",
        "[1]<select value=Large options=Small|Medium|Large>",
        "[2]<label role=switch checked=true>Airplane mode",
        "[3]<label checked=true>Dark theme",
    ], again.text
    assert "[6]<div editable>New body" in lines, again.text
    await browser.close_tab(tab.target_id)
