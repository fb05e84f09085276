"""The one headful run (under Xvfb): the user presses Cancel on Chromium's "started debugging this
browser" bar while a task runs. Chromium detaches the extension's debugger (canceled_by_user); the
host must end the task `stopped`, as if the user had pressed Stop."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from e2e_support import (
    Harness,
    VirtualScreen,
    act_on,
    popup_task_id,
    start_connected_harness,
    start_task,
    task_row,
    wait_status,
    wait_until,
)

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import Delay, ScriptedLLMServer

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

INFOBAR_HEIGHT = 56  # measured on Chromium 156


@pytest.fixture(scope="module")
def screen() -> Iterator[VirtualScreen]:
    display = VirtualScreen()
    yield display
    display.close()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def harness(
    browser_binary: str, tmp_path_factory: pytest.TempPathFactory, screen: VirtualScreen
) -> AsyncIterator[Harness]:
    h = await start_connected_harness(
        browser_binary,
        tmp_path_factory.mktemp("headful"),
        headless=False,
        debugger_infobar=True,
        extra_env={"DISPLAY": screen.display},
    )
    yield h
    await h.browser.close()


async def test_cancel_on_the_debugging_infobar_stops_the_task(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab, screen: VirtualScreen
) -> None:
    problems: list[str] = []
    llm.add(act_on("Agree to terms", "click_element_by_index", "Tick the terms box", problems), Delay(30))
    popup = await start_task(harness, form_tab, llm, "Tick the terms box, then wait")
    await popup.wait_for("document.querySelectorAll('#timeline .card-step').length >= 1", "the first step card")
    assert not problems

    # The bar is on every tab while the debugger is attached, just above the page: find it from the
    # popup tab's window geometry and press along it, left to right, until its Cancel button is hit.
    window = await popup.js(
        "({x: screenX, y: screenY, chrome: outerHeight - innerHeight, width: innerWidth})"
    )
    bar_y = window["y"] + window["chrome"] - INFOBAR_HEIGHT // 2
    pressed_at = None
    for x in range(window["x"] + 300, window["x"] + window["width"], 40):  # the button is ~70 px wide
        screen.click(x, bar_y)
        try:  # give Chromium a moment to act on the press before trying further right
            await wait_until(lambda: harness.sw("attachedTabs.size === 0"), "onDetach", timeout=0.3)
        except AssertionError:
            continue
        pressed_at = x
        break
    assert pressed_at is not None, "no press on the debugging bar detached the debugger"
    assert pressed_at < window["x"] + window["width"] - 100, "only the bar's close box (far right) worked"
    assert await wait_status(popup, "stopped", "completed", "error", timeout=15) == "stopped"
    row = task_row(harness, await popup_task_id(popup))
    assert row["status"] == "stopped"
    assert "Cancel" in (row["result"] or "") or any("Cancel" in str(e) for e in row["events"]), row
    assert await harness.sw("attachedTabs.size") == 0
