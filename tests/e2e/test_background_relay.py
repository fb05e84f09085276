"""Background tabs in the user's own browser: headful (under Xvfb), two tabs of one window, CDP only
through the real extension's chrome.debugger, whose launch flags are not ours. The browser-layer tests
of tests/test_background_tabs.py run here unchanged on a Browser over the extension's tabs: the commands
that make a tab behind another render as if shown must be ones chrome.debugger allows."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from e2e_support import Harness, VirtualScreen, start_connected_harness
from test_background_tabs import (
    test_a_background_tab_keeps_rendering_after_it_navigates_to_another_site,
    test_page_in_a_background_tab_paints_as_often_as_the_one_in_front,
    test_page_in_a_background_tab_sees_itself_shown_and_focused,
)

from tabpilot.browser.browser import Browser
from tabpilot.browser.tab import Tab
from tabpilot.localfiles import LocalFiles
from tabpilot.native.debug import DebugAccess, DebugLink
from tabpilot.native.relay import extension_browser

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

__all__ = [
    "test_a_background_tab_keeps_rendering_after_it_navigates_to_another_site",
    "test_page_in_a_background_tab_paints_as_often_as_the_one_in_front",
    "test_page_in_a_background_tab_sees_itself_shown_and_focused",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def screen() -> Iterator[VirtualScreen]:
    display = VirtualScreen()
    yield display
    display.close()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def headful_harness(
    browser_binary: str, tmp_path_factory: pytest.TempPathFactory, screen: VirtualScreen
) -> AsyncIterator[Harness]:
    access = DebugAccess.new(free_port())
    h = await start_connected_harness(
        browser_binary,
        tmp_path_factory.mktemp("background"),
        headless=False,
        extra_env={**access.env(), "DISPLAY": screen.display},
    )
    h.debug_access = access  # type: ignore[attr-defined]
    yield h
    await h.browser.close()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def browser(headful_harness: Harness) -> AsyncIterator[Browser]:
    """The user's browser as the host sees it through the extension."""
    link = await DebugLink.connect(headful_harness.debug_access)  # type: ignore[attr-defined]
    relay = await extension_browser(link)
    await relay.current_tab()
    yield relay
    await relay.close()
    await link.close()


@pytest_asyncio.fixture(loop_scope="module")
async def front_and_back(
    browser: Browser, headful_harness: Harness, pages: LocalFiles
) -> AsyncIterator[tuple[Tab, Tab]]:
    """Two task tabs in one window, as chrome.tabs sees them: the first active, the second behind it."""
    back = await browser.new_tab(pages.url("actions_click.html"))
    front = await browser.new_tab(pages.url("actions_click.html"))
    await browser.activate(front.target_id)
    seen = json.loads(await headful_harness.sw(
        f"JSON.stringify(await Promise.all([{front.target_id}, {back.target_id}].map(async (id) => {{"
        " const tab = await chrome.tabs.get(id); return [tab.windowId, tab.active]; })))"
    ))
    assert seen[0][0] == seen[1][0], f"the two tabs are in different windows: {seen}"
    assert [active for _, active in seen] == [True, False]
    yield front, back
    for tab in (front, back):
        if not tab.closed:
            await browser.close_tab(tab.target_id)
