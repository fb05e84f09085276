"""Implicit takeover loses nothing the user does right after their first touch (issue 10), end to end: real
Chromium, the real extension, the real host, the scripted model.

Only the service worker can tell the agent's input from the user's, so capture.js hears "record" a round
trip after the user's first input; a quick hand clicks and types within that time. capture.js works the
actions out in "watch" too and, told since when the input was the user's, reports those."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from e2e_support import Harness, act_on, done, wait_until
from test_takeover import (
    account_tab,  # noqa: F401  # the fixture
    account_told,
    configure,
    controlled_by_user,
    ended,
    start,
    takeovers,
)
from user_support import page_box, press_overlay

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import Delay, ScriptedLLMServer

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


async def user_burst(tab: Tab, clicks: list[dict[str, float]], text: str) -> None:
    """Clicks, then typing, sent in one go (no wait for any reply): input as fast as a hand can give it."""
    sends = []
    for box in clicks:
        for kind in ("mousePressed", "mouseReleased"):
            sends.append(tab.send("Input.dispatchMouseEvent",
                                  {"type": kind, "x": box["x"], "y": box["y"], "button": "left", "clickCount": 1}))
    for char in text:
        sends.append(tab.send("Input.dispatchKeyEvent", {"type": "keyDown", "text": char, "key": char}))
        sends.append(tab.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": char}))
    await asyncio.gather(*sends)


async def test_the_first_touch_and_what_follows_within_milliseconds_are_recorded(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab  # noqa: F811
) -> None:
    problems: list[str] = []
    after_handback: list[dict[str, Any]] = []
    llm.add(
        act_on("Full name", "input_text", "Type the name", problems, text="Agent Typed"),
        Delay(60),  # the agent thinks; the user's hand is quicker (this call is cancelled at their first touch)
        account_told(after_handback, done("Thanks")),
    )
    await configure(harness, llm)
    task_id = await start(harness, account_tab, "Fill in the profile")
    await wait_until(lambda: account_tab.evaluate("document.getElementById('name').value === 'Agent Typed'"),
                     "the agent to type the name")
    await wait_until(lambda: asyncio.sleep(0, len(llm.requests) >= 2), "the agent to think again")
    plus, city = await page_box(account_tab, "#plus"), await page_box(account_tab, "#city")
    await user_burst(account_tab, [plus, city], "Lyon")

    assert (await controlled_by_user(harness, task_id))["reason"] == "implicit"
    assert await account_tab.evaluate("count.textContent === '1' && document.getElementById('city').value === 'Lyon'")
    await press_overlay(account_tab, "handback")
    end = await ended(harness, task_id)
    assert not problems, problems
    assert end["status"] == "completed", end
    [event] = takeovers(end["history"])
    # the click that took the controls, the typing right after it; not the agent's typing just before
    done_by_user = [(a["kind"], a["target"], a.get("value")) for a in event["actions"]]
    assert done_by_user == [("click", 'button "Add one"', None), ("input", 'textbox "City"', "Lyon")], event
    [told] = after_handback
    assert 'clicked button "Add one"' in "\n".join(str(m.get("content")) for m in told["messages"])
