"""A mask pattern that backtracks without end on the text a page chose: a real host subprocess on a real Chromium
(the extension's relay played by `relay_support.ExtensionStandIn`), the scripted model over HTTP, the real SQLite
record. The host keeps answering while the pattern runs, the task ends with an error that names the pattern, and
nothing of the page reaches the model (privacy/masking.py PATTERN_SECONDS)."""

from __future__ import annotations

import asyncio
import json

import pytest
from test_native_masks import start_host
from test_native_relay import (
    configure,
    database_rows,
    llm,  # noqa: F401  # the fixture
    open_tab,
    output,
    prompt_of,
)

from tabpilot.llm.scripted import ToolCall

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

# Passes the nested-repeat check; Python's re took 8.9 s on 24 "a"s and a "!" (the attack run), 40 would take days.
HOSTILE_PATTERN = "/(?:a|a)*$/"
HOSTILE_TEXT = "a" * 40 + "!"  # on privacy_backtracking.html


async def test_a_pattern_that_never_ends_on_the_pages_text_ends_the_task_not_the_host(
    stand_in, llm, pages, tmp_path  # noqa: F811
):
    """The page shows 40 "a"s and a "!", on which the user's /(?:a|a)*$/ backtracks for days. Pings sent all
    along are answered within 5 s each (Python's re held the host's only thread: none was); the task ends `error`
    with words naming the pattern and the setting, and the model was never asked. The same host then runs the task
    again with the pattern taken out: the page's text reaches the model, the other pattern's text masked."""
    home = tmp_path / "tabpilot"
    host = await start_host(home, stand_in)
    try:
        await configure(host, llm)
        set_patterns = await host.request("settings.set", maskPatterns=[HOSTILE_PATTERN, "Project Falcon"])
        assert set_patterns["ok"], set_patterns
        tab_id = await open_tab(stand_in, pages.url("privacy_backtracking.html"))
        started = await host.request("task.start", task="Note the reference", tabId=tab_id)
        task_id = started["data"]["taskId"]

        def ended(push: dict[str, object]) -> bool:
            return push.get("taskId") == task_id and push["type"] == "task.result"

        answered = 0
        while not any(ended(push) for push in host.pushes):
            assert (await host.request("ping", timeout=5))["data"] == {"pong": True}
            answered += 1
            await asyncio.sleep(0.02)
        result = await host.wait_push(ended)
        assert result["result"]["success"] is False, result
        assert answered > 0 and llm.requests == [], [prompt_of(request)[-800:] for request in llm.requests]
        status, events = database_rows(home, task_id)
        [error] = [event for event in events if event["type"] == "error"]
        assert status == "error" and error["code"] == "mask_too_slow", events
        assert error["message"].startswith(f"The mask pattern {HOSTILE_PATTERN} took more than 0.1 s"), error
        assert "mask-patterns setting" in error["message"] and HOSTILE_TEXT not in json.dumps(events)

        assert (await host.request("settings.set", maskPatterns=["Project Falcon"]))["ok"]
        llm.add(ToolCall("AgentOutput", output("Report", {"done": {"text": "Noted", "success": True}})))
        again = (await host.request("task.start", task="Note the reference", tabId=tab_id))["data"]["taskId"]
        result = await host.wait_push(lambda p: p.get("taskId") == again and p["type"] == "task.result")
        assert result["result"]["success"] is True, result
        page = prompt_of(llm.requests[0])
        assert f"Reference: {HOSTILE_TEXT}" in page and "Code name: [masked 1]" in page, page
        assert "Falcon" not in json.dumps(llm.requests)
    finally:
        await host.stop()
