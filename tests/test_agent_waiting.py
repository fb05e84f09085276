"""A slow model: the agent tells its listeners (popup, overlay) that the model has not answered yet."""

from __future__ import annotations

import pytest
from agent_support import done

from tabpilot.agent import Agent, AgentConfig
from tabpilot.agent.types import WaitingActivity
from tabpilot.browser.browser import Browser
from tabpilot.llm import LLMConfig
from tabpilot.llm.scripted import Delay, ScriptedLLMServer

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


async def test_a_slow_model_gets_waiting_notes_and_the_task_still_completes(browser: Browser, pages) -> None:
    await browser.new_tab(pages.url("basic.html"))
    activities: list = []
    with ScriptedLLMServer([Delay(1.4, then=done("read it"))]) as server:
        config = LLMConfig(base_url=server.base_url, model="scripted", api_key="sk-test-not-real-0000",
                           wait_note_interval=0.5)
        agent = Agent(browser, config, AgentConfig(step_delay=0))
        agent.on("activity", activities.append)
        result = await agent.execute("Read the page")
    assert result.success and result.data == "read it"
    waiting = [activity for activity in activities if isinstance(activity, WaitingActivity)]
    assert [activity.to_wire() for activity in waiting] == [
        {"type": "waiting", "seconds": 0.5, "message": "the model has not answered for 0.5 s"},
        {"type": "waiting", "seconds": 1.0, "message": "the model has not answered for 1 s"},
    ]
