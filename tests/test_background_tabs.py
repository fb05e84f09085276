"""A task's tab behind another tab of its window runs and paints like the tab in front.

With several tasks at once all but one of their tabs are in the background, where Chromium hides the
page: it draws nothing and a trusted mouse move waits ~5 s for a frame (bench/bench_background.py).
Attaching a tab makes it render as if shown (Tab.render_as_if_shown); these tests read the effect from
the page's own JS. Headless Chromium hides a background tab the same way as a headful window does
(measured); tests/e2e/test_background_relay.py runs these same tests headful, through the extension."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from tabpilot.browser.browser import Browser
from tabpilot.browser.tab import Tab
from tabpilot.localfiles import LocalFiles

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

# Repaints the page on every animation frame for two seconds of the page's clock and counts the frames
# it got. Measured on Chromium 156 in a background tab: hidden, it gets none (the timer answers instead);
# with focus emulation alone its frames are not drawn and it gets ~10; with the fix ~120 as in front, or
# ~50 on a 2-core machine at load 20 (Chromium runs a background tab's renderer at a lower priority).
PAINTED_ENOUGH = 30
COUNT_PAINTED_FRAMES = """new Promise((done) => {
  let frames = 0;
  const start = performance.now();
  const paint = () => {
    frames += 1;
    document.body.style.backgroundColor = frames % 2 ? '#ffffff' : '#fefefe';
    if (performance.now() - start < 2000) requestAnimationFrame(paint); else done(frames);
  };
  requestAnimationFrame(paint);
  setTimeout(() => done(frames), 4000);
})"""


async def painted_frames(front: Tab, back: Tab) -> tuple[int, int]:
    """Frames each tab painted in two seconds, one after the other: while the tab in front paints, the one
    behind gets its frames drawn too (measured), which would hide the difference."""
    return await front.evaluate(COUNT_PAINTED_FRAMES), await back.evaluate(COUNT_PAINTED_FRAMES)


async def window_of(browser: Browser, tab: Tab) -> int:
    reply = await browser.connection.root.send("Browser.getWindowForTarget", {"targetId": tab.target_id})
    return int(reply["windowId"])


@pytest_asyncio.fixture(loop_scope="module")
async def front_and_back(browser: Browser, pages: LocalFiles) -> AsyncIterator[tuple[Tab, Tab]]:
    """Two task tabs in one window; the first is in front, the second behind it."""
    back = await browser.new_tab(pages.url("actions_click.html"))
    front = await browser.new_tab(pages.url("actions_click.html"))
    await browser.activate(front.target_id)
    assert await window_of(browser, front) == await window_of(browser, back)
    yield front, back
    for tab in (front, back):
        if not tab.closed:
            await browser.close_tab(tab.target_id)


async def test_page_in_a_background_tab_sees_itself_shown_and_focused(front_and_back: tuple[Tab, Tab]) -> None:
    front, back = front_and_back
    seen = "({visibility: document.visibilityState, focused: document.hasFocus(), hidden: document.hidden})"
    assert await front.evaluate(seen) == {"visibility": "visible", "focused": True, "hidden": False}
    assert await back.evaluate(seen) == {"visibility": "visible", "focused": True, "hidden": False}


async def test_page_in_a_background_tab_paints_as_often_as_the_one_in_front(
    front_and_back: tuple[Tab, Tab],
) -> None:
    front, back = front_and_back
    front_frames, back_frames = await painted_frames(front, back)
    assert front_frames >= PAINTED_ENOUGH, f"the tab in front painted only {front_frames} frames in 2 s"
    assert back_frames >= PAINTED_ENOUGH, f"behind: {back_frames} frames in 2 s, in front: {front_frames}"


async def test_a_background_tab_keeps_rendering_after_it_navigates_to_another_site(
    front_and_back: tuple[Tab, Tab], pages: LocalFiles
) -> None:
    front, back = front_and_back
    await back.navigate(pages.url("actions_click.html", host="localhost"))  # another site: another renderer
    assert await back.evaluate("document.visibilityState") == "visible"
    front_frames, back_frames = await painted_frames(front, back)
    assert back_frames >= PAINTED_ENOUGH, f"behind: {back_frames} frames in 2 s, in front: {front_frames}"
