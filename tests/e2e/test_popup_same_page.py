"""Task after task from the popup on one document, with no reload in between, and across a restart of the
native host (killed; the extension starts a new one): every task's typing and clicks reach the page, as
the page's own JS records them; find_text counts the page's words, not the overlay's."""

from __future__ import annotations

import os
import signal
import threading

import pytest
from e2e_support import Harness, act_on, agent_output, configure, done, run_in_popup, wait_status
from test_domain_guard import held
from user_support import wait_overlay

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import ScriptedLLMServer, ToolCall

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


async def _run_task(popup, llm: ScriptedLLMServer, form_tab: Tab, name: str, number: int) -> None:
    problems: list[str] = []
    llm.add(
        act_on("Full name", "input_text", "Type the name", problems, text=name),
        act_on("Sign up", "click_element_by_index", "Press Sign up", problems),
        done(f"Typed {name}"),
    )
    await run_in_popup(popup, f"Type {name} and press Sign up")
    assert await wait_status(popup, "completed", "error", "stopped") == "completed", await popup.cards()
    assert not problems
    cards = " ".join(c["text"] for c in await popup.cards())
    assert "no longer on the page" not in cards, f"task {number}: {cards}"
    received = await form_tab.evaluate("window.received")
    typed = [e for e in received if e["target"] == "name" and e["type"] == "input"]
    clicks = [e for e in received if e["target"] == "submit" and e["type"] == "click"]
    assert typed and typed[-1]["value"] == name and typed[-1]["trusted"], f"task {number}: {received}"
    assert len(clicks) == number and all(c["trusted"] for c in clicks), f"task {number}: {received}"


async def test_tasks_in_a_row_on_one_page_and_after_a_host_restart_all_act(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    popup = await harness.open_popup(form_tab)
    await configure(popup, llm.base_url)
    names = ["Ada Lovelace", "Grace Hopper", "Katherine Johnson", "Margaret Hamilton", "Radia Perlman"]
    for number, name in enumerate(names[:3], start=1):
        await _run_task(popup, llm, form_tab, name, number)

    # a new host process, on the same document
    [pid] = harness.host_pids()
    os.kill(pid, signal.SIGKILL)
    await popup.wait_for("document.body.dataset.host === 'down'", "the popup to see the host go", 10)
    await harness.wait_host_connected()
    await popup.wait_for("document.body.dataset.host === 'connected'", "the popup to see the new host")
    assert harness.host_pids() != [pid]
    for number, name in enumerate(names[3:], start=4):
        await _run_task(popup, llm, form_tab, name, number)
    await harness.browser.close_tab(popup.tab.target_id)


async def test_find_text_counts_the_pages_words_not_the_overlay_showing_the_task(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    """The overlay's panel is a frame of the page: find_text counted the task's own words, shown there, as the page's
    ("place 1 of the 2 places" of words the page shows once), and words only the task said were "found", the agent
    told "the page text now shows it" (a new user's trial). Twice on one page: the second task's overlay is the one
    the first left."""
    popup = await harness.open_popup(form_tab)
    await configure(popup, llm.base_url)
    task = 'Find "I agree to the terms" and "zebra crossing ahead" on this page'

    def find(words: str) -> ToolCall:
        return ToolCall("AgentOutput", agent_output("Look for the words", {"find_text": {"text": words}}))

    for number in (1, 2):
        gate = threading.Event()  # the first search waits until the overlay shows the task, as it does at once
        llm.add(held(gate, find("I agree to the terms")), find("zebra crossing ahead"), done("Found one of the two"))
        await run_in_popup(popup, task)
        await wait_overlay(form_tab, "the overlay to show the task", lambda shown: "zebra" in shown["task"])
        gate.set()
        assert await wait_status(popup, "completed", "error", "stopped") == "completed", await popup.cards()
        results = [card["text"] for card in await popup.cards() if card["type"] == "step"]
        assert 'place 1 of the 1 place on this page showing "I agree to the terms"' in results[0], (number, results)
        assert 'No text on this page shows "zebra crossing ahead"' in results[1], (number, results)
    await harness.browser.close_tab(popup.tab.target_id)
