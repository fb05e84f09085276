"""Reading a busy page again and again must never crash or hang the user's tab: 60 state reads of a page
with hundreds of click listeners that re-renders and allocates all the time, while another CDP client
evaluates in the same page (as DevTools or a second tool would). The old isolated-world listener read crashed
the renderer at read 1; 60 reads keep the other client evaluating between them, where 200 took 28 s of a CI run."""

from __future__ import annotations

import asyncio
import re

import pytest
from state_support import open_page

from tabpilot.browser import actions
from tabpilot.browser.browser import Browser
from tabpilot.browser.state import BrowserState, get_state
from tabpilot.cdp import CDPError

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

READS = 60
HANG = 30.0  # a read that takes this long is a hung tab, not a slow one
ALLOCATE = "(() => { const j = []; for (let k = 0; k < 100000; k++) j.push({k}); return j.length; })()"


def _index(state: BrowserState, text: str) -> int:
    for line in state.text.splitlines():
        found = re.search(r"\[(\d+)\]<[^>]*>" + re.escape(text), line)
        if found:
            return int(found.group(1))
    raise AssertionError(f"no element {text!r} offered:\n{state.text}")


async def test_repeated_reads_of_a_busy_page_with_another_client_evaluating_never_crash_or_hang(
    browser: Browser, pages
) -> None:
    assert browser.launched is not None
    tab = await open_page(browser, pages.url("state_busy.html"))
    crashes: list[dict] = []
    tab.session.on("Inspector.targetCrashed", crashes.append)
    other = await Browser.connect(browser.launched.ws_url)
    other_tab = await other.attach(tab.target_id)
    stop = asyncio.Event()
    evaluations = 0

    async def evaluate_all_along() -> None:
        nonlocal evaluations
        while not stop.is_set():
            try:
                await other_tab.session.send("Runtime.evaluate", {"expression": ALLOCATE, "returnByValue": True})
            except CDPError:
                return  # the tab stopped answering: the reads say so
            evaluations += 1

    other_client = asyncio.create_task(evaluate_all_along())
    state = None
    try:
        for read in range(READS):
            try:
                async with asyncio.timeout(HANG):
                    state = await get_state(browser, tab, state)
            except TimeoutError:
                pytest.fail(f"read {read + 1} hung (crashes seen: {crashes})")
            assert not crashes, f"the renderer crashed at read {read + 1}"
            # click listeners are still found on every read: a plain div, and one in a closed shadow root
            _index(state, "Pick me")
            _index(state, "Inside the card")
    finally:
        stop.set()
        await other_client
        await other.close()
    assert evaluations > READS / 4, "the other client hardly ran"
    assert state is not None
    await actions.click(browser, tab, state.elements[_index(state, "Pick me")])
    assert await tab.evaluate("window.clicks") == ["picker"]
    await browser.close_tab(tab.target_id)
