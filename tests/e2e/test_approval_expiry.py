"""An approval nobody answers (issue 13's follow-up): after the approval timeout the action is not done, the
overlay and the side panel stop asking, the side panel's timeline says *Not answered in time* and the model is
told. The host gets a short timeout (3 s) through TABPILOT_APPROVAL_TIMEOUT in the browser's environment, as a
user would set it; the default is 5 minutes."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from e2e_support import SCREENS, Harness, done, start_connected_harness
from test_approvals import order_asked, recorded_and_told, shop_tab  # noqa: F401  (shop_tab: a fixture, used by name)
from test_takeover import ended
from user_support import open_panel, wait_overlay

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import ScriptedLLMServer

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def harness(browser_binary: str, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Harness]:
    h = await start_connected_harness(browser_binary, tmp_path_factory.mktemp("e2e-expiry"),
                                      extra_env={"TABPILOT_APPROVAL_TIMEOUT": "3"})
    yield h
    await h.browser.close()


async def test_an_approval_nobody_answers_is_denied_and_the_timeline_says_so(
    harness: Harness, llm: ScriptedLLMServer, shop_tab: Tab  # noqa: F811
) -> None:
    task_id, problems, after = await order_asked(harness, llm, shop_tab,
                                                 done("Nobody allowed the order", success=False))
    panel = await open_panel(harness, shop_tab)
    # nobody presses anything: the overlay stops asking by itself
    await wait_overlay(shop_tab, "the overlay to stop asking", lambda o: o["state"] != "approval", timeout=30)
    snap = await ended(harness, task_id)
    assert not problems, problems
    assert await shop_tab.evaluate("window.shopLog") == []  # the page never got the click
    expired = 'Nobody answered within 3.0 s whether to allow click button "Place order" on 127.0.0.1'
    recorded_and_told(snap, after, "expired", expired)
    await panel.wait_for("document.querySelectorAll('#timeline .card-expired').length === 1", "the expired card")
    cards = await panel.cards()
    said = 'Nobody answered in time: click button "Place order" on 127.0.0.1 was not done.'  # to the person
    assert any(card["type"] == "expired" and card["text"].lower().startswith("not answered in time")  # CSS capitals
               and card["text"].endswith(said) for card in cards), cards
    assert not await panel.visible("#approve-allow")
    await panel.screenshot(SCREENS / "approval-expired-panel.png")
    await harness.browser.close_tab(panel.tab.target_id)
