"""Implicit takeover in `tabpilot run` (no extension): does the agent's own input ever look like the user's?

A scripted 20-step agent task in a real headless Chromium (clicks, typing, selects, scrolling, keys)
runs with capture.js injected in watch mode, as `tabpilot run --headed` does. Every trusted input event
capture.js reports is checked against the host's own dispatch windows (`Tab.input_log`): one the host
did not dispatch would be a (false) takeover. At the end a second CDP connection, playing the user,
clicks once: that one must count.

    .venv/bin/python bench/bench_takeover.py

Prints; asserts nothing.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import tempfile
import time
from typing import Any

STEPS = 20


def index_of(body: dict[str, Any], needle: str) -> int:
    user = body["messages"][1]["content"]
    for line in user[user.index("<browser_state>"):].splitlines():
        match = re.search(r"\[(\d+)\]", line)
        if match and needle in line:
            return int(match.group(1))
    raise LookupError(needle)


def reply_for(step: int):  # type: ignore[no-untyped-def]
    from tabpilot.llm.scripted import ToolCall

    plan = [
        ("click_element_by_index", lambda b: {"index": index_of(b, "Your name")}),
        ("input_text", lambda b: {"index": index_of(b, "Your name"), "text": f"Reader {step}"}),
        ("input_text", lambda b: {"index": index_of(b, "you@example.com"), "text": f"r{step}@example.com"}),
        ("select_dropdown_option",
         lambda b: {"index": index_of(b, "genre"), "text": "Poetry" if step % 2 else "History"}),
        ("scroll", lambda b: {"down": step % 2 == 0, "pixels": 150}),
        ("send_keys", lambda b: {"keys": "Tab"}),
    ]
    action, make_input = plan[step % len(plan)]

    def reply(body: dict[str, Any]) -> ToolCall:
        part = ({"done": {"text": "done", "success": True}} if step == STEPS - 1 else {action: make_input(body)})
        return ToolCall("AgentOutput", {"evaluation_previous_goal": "ok", "memory": "", "next_goal": action,
                                        "action": part})

    return reply


async def main() -> None:
    from tabpilot.agent import Agent, AgentConfig
    from tabpilot.browser.browser import Browser
    from tabpilot.browser.capture import PageCapture
    from tabpilot.demo import DEMO_DIR, PAGE
    from tabpilot.llm import LLMConfig
    from tabpilot.llm.scripted import ScriptedLLMServer
    from tabpilot.localfiles import LocalFiles

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
    from takeover_support import Person

    pages = LocalFiles(DEMO_DIR)
    seen: list[tuple[str, float, float, bool]] = []  # kind, at, received, ours
    with ScriptedLLMServer([reply_for(i) for i in range(STEPS)]) as server:
        browser = await Browser.launch(headless=True, env={"HOME": os.environ["TABPILOT_HOME"]})
        try:
            tab = await browser.new_tab(pages.url(PAGE))

            def on_message(message: dict[str, Any]) -> None:
                if message.get("type") == "capture.input":
                    at = float(message["at"])
                    seen.append((message["kind"], at, time.time() * 1000, tab.input_log.ours(at)))

            capture = PageCapture(tab, on_message)
            await capture.start("watch")
            agent = Agent(browser, LLMConfig(base_url=server.base_url, model="scripted", api_key="bench"),
                          AgentConfig(max_steps=STEPS + 2, step_delay=0))
            result = await agent.execute("Keep the form filled in")
            await agent.dispose()
            agent_events = len(seen)
            await asyncio.sleep(1.0)  # past the last dispatch window's slack
            person = await Person.at(browser.launched.ws_url, tab.target_id)
            await person.click("document.querySelector('#email')")
            await asyncio.sleep(0.5)
            await person.close()
        finally:
            await browser.close()
    pages.close()
    if not result.success:
        sys.exit(f"the scripted task did not finish: {result.data}")
    agents, persons = seen[:agent_events], seen[agent_events:]
    false_takeovers = [event for event in agents if not event[3]]
    lags = sorted(received - at for _, at, received, _ in seen)
    windows = list(tab.input_log.windows)
    after_end = []
    for _, at, _, _ in agents:
        started = [(start, end) for start, end in windows if start - 50 <= at]
        if started:
            after_end.append(max(0.0, at - max(started)[1]))  # after the latest window that began before it
    print(f"agent steps: {STEPS} (click, type, select, scroll, key), headless Chromium, step delay 0")
    print(f"trusted input events capture.js reported during the agent's steps: {len(agents)}")
    print(f"false takeovers (reported input the host did not dispatch): {len(false_takeovers)}")
    print(f"the user's click afterwards: {len(persons)} events, taken for the user's: "
          f"{sum(1 for e in persons if not e[3])}")
    print(f"report lag, page event → host (ms): median {lags[len(lags) // 2]:.1f}, max {lags[-1]:.1f}")
    if after_end:
        print(f"latest agent event after its dispatch window ended (ms): {max(after_end):.1f}"
              " (the window's slack is 300)")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as home:
        os.environ["TABPILOT_HOME"] = home
        asyncio.run(main())
