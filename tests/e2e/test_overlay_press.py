"""A person's press on the overlay's buttons is never lost in silence (the real extension, the host Chromium spawned,
the scripted model; the person is trusted input from the test's own CDP connection, user_support.py): it takes effect,
or the overlay says why not, and the button can be pressed again."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from e2e_support import Harness, done, wait_until
from test_takeover import (
    account_tab,  # noqa: F401  # the fixture
    agent_call,
    ask_host,
    configure,
    controlled_by_user,
    ended,
    start,
)
from user_support import (
    overlay,
    overlay_button,
    wait_overlay,
)

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import ScriptedLLMServer

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


def held_until(gate: threading.Event, then: Any) -> Any:
    """A model reply that comes once `gate` is set (the scripted server answers in a thread of its own)."""

    def reply(_body: dict[str, Any]) -> Any:
        gate.wait(60)
        return then

    return reply


async def mouse(tab: Tab, kind: str, box: dict[str, float]) -> None:
    await tab.send("Input.dispatchMouseEvent",
                   {"type": kind, "x": box["x"], "y": box["y"], "button": "left", "clickCount": 1})


async def test_a_question_that_comes_while_take_over_is_held_down_does_not_take_the_press(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab  # noqa: F811
) -> None:
    # The agent's question comes while the person's button is down on Take over. Drawn at once, it put Send where Take
    # over was: the button went up on Send, the click went to neither button, and nothing happened (no takeover, no
    # word). The buttons stay as they were until the press is over: the press the person made is the one that counts.
    gate = threading.Event()
    llm.add(held_until(gate, agent_call("Ask for the city", {"ask_user": {"question": "Which city?"}})), done("ok"))
    await configure(harness, llm)
    task_id = await start(harness, account_tab, "Set my city")
    try:
        await wait_overlay(account_tab, "the overlay to show the running task", lambda o: o["state"] == "running")
        box = await overlay_button(account_tab, "takeover")
        await mouse(account_tab, "mouseMoved", box)
        await mouse(account_tab, "mousePressed", box)
        gate.set()  # the model asks now, while the button is down
        posted = ("JSON.stringify([...tasks.values()].map((t) => t.question))"
                  ".includes('Which city?')")
        await wait_until(lambda: harness.sw(posted), "the worker to hear the question")
        # the panel drawing the question (it did, without the fix; it waits for the release, with it)
        try:
            await wait_overlay(account_tab, "the question in the overlay", lambda o: o["state"] == "question", 2)
        except AssertionError:
            pass
        await mouse(account_tab, "mouseReleased", box)
        control = await controlled_by_user(harness, task_id)
        assert control["reason"] == "user", control
        shown = await wait_overlay(account_tab, "the overlay to give the person the controls",
                                   lambda o: o["state"] == "user")
        assert shown["error"] == "" and "handback" in shown["buttons"], shown
    finally:
        gate.set()
        await ask_host(harness, {"type": "task.stop", "taskId": task_id})
    await ended(harness, task_id)
    assert (await overlay(account_tab) or {}).get("error", "") == ""

