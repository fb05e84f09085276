"""Agent figures from a scripted 30-step task in a real headless Chromium:

1. prompt tokens (o200k, via quicktok) at step 30 over step 3 — how well the history stays bounded;
2. host-side time per step, the model's time excluded (the scripted model answers at once): the
   median of the whole step, and its parts (reading the page, the client round trip, the action).

    .venv/bin/python bench/bench_agent.py

Uses the bundled demo page, TABPILOT_HOME in a temporary folder, step delay 0. Prints; asserts nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
from typing import Any

STEPS = 30


def index_of(body: dict[str, Any], needle: str) -> int:
    user = body["messages"][1]["content"]
    for line in user[user.index("<browser_state>"):].splitlines():
        match = re.search(r"\[(\d+)\]", line)
        if match and needle in line:
            return int(match.group(1))
    raise LookupError(needle)


def reply_for(step: int, steps: int = STEPS):  # type: ignore[no-untyped-def]
    """The scripted model's reply at `step` of a `steps`-long task on the demo page (done at the last)."""
    from tabpilot.llm.scripted import ToolCall

    plan = [
        ("input_text", lambda b: {"index": index_of(b, "Your name"), "text": f"Reader number {step}"}),
        ("input_text", lambda b: {"index": index_of(b, "you@example.com"), "text": f"reader{step}@example.com"}),
        ("select_dropdown_option",
         lambda b: {"index": index_of(b, "genre"), "text": "Poetry" if step % 2 else "History"}),
        ("scroll", lambda b: {"down": step % 2 == 0, "pixels": 120}),
    ]
    action, make_input = plan[step % len(plan)]

    def reply(body: dict[str, Any]) -> ToolCall:
        if step == steps - 1:
            action_part: dict[str, Any] = {"done": {"text": f"Filled the form {steps} times over.", "success": True}}
        else:
            action_part = {action: make_input(body)}
        return ToolCall("AgentOutput", {
            "evaluation_previous_goal": f"Success: step {step} found the page as expected and the last action worked.",
            "memory": f"Working through the form; {step} of {steps} steps done. Name and email fields hold the "
                      f"latest values; the genre alternates between poetry and history.",
            "next_goal": f"Step {step + 1}: use {action} on the form to keep the values current.",
            "action": action_part,
        })

    return reply


async def main() -> None:
    import quicktok

    from tabpilot.agent import Agent, AgentConfig
    from tabpilot.browser.browser import Browser
    from tabpilot.demo import DEMO_DIR, PAGE
    from tabpilot.llm import LLMClient, LLMConfig
    from tabpilot.llm.scripted import ScriptedLLMServer
    from tabpilot.localfiles import LocalFiles

    pages = LocalFiles(DEMO_DIR)

    invoke_ms: list[float] = []

    class TimedClient(LLMClient):
        async def invoke(self, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await super().invoke(*args, **kwargs)
            finally:
                invoke_ms.append((time.perf_counter() - started) * 1000)

    step_ms: list[float] = []
    action_ms: list[float] = []
    started_at: list[float] = []

    with ScriptedLLMServer([reply_for(i) for i in range(STEPS)]) as server:
        browser = await Browser.launch(headless=True, env={"HOME": os.environ["TABPILOT_HOME"]})
        try:
            await browser.new_tab(pages.url(PAGE))
            client = TimedClient(LLMConfig(base_url=server.base_url, model="scripted", api_key="bench"))
            agent = Agent(browser, client, AgentConfig(
                max_steps=STEPS + 5, step_delay=0,
                on_before_step=lambda agent, n: started_at.append(time.perf_counter()),
                on_after_step=lambda agent, history: step_ms.append((time.perf_counter() - started_at[-1]) * 1000),
            ))
            agent.on("activity", lambda a: a.type == "executed" and action_ms.append(a.duration))
            result = await agent.execute("Keep the reading-club form filled in, thirty steps long.")
            await client.aclose()
        finally:
            await browser.close()
    pages.close()
    if not result.success:
        sys.exit(f"the scripted task did not finish: {result.data}")

    encoding = quicktok.get_encoding("o200k_base")

    def tokens(request: dict[str, Any], with_tools: bool) -> int:
        text = "\n".join(m["content"] for m in request["messages"])
        if with_tools:
            text += json.dumps(request["tools"])
        return len(encoding.encode(text))

    at3, at30 = server.requests[2], server.requests[STEPS - 1]
    print(f"steps run: {len(step_ms)} (scripted model, headless Chromium, step delay 0)")
    print("prompt tokens (o200k)          step 3   step 30   ratio")
    for label, with_tools in (("messages", False), ("messages + tool schema", True)):
        a, b = tokens(at3, with_tools), tokens(at30, with_tools)
        print(f"  {label:<28} {a:>6}   {b:>7}   {b / a:.2f}x")
    page3 = len(encoding.encode(at3["messages"][1]["content"].split("<browser_state>")[1]))
    print(f"  (of which the page state at step 3: {page3})")
    page_ms = [s - i - a for s, i, a in zip(step_ms, invoke_ms, action_ms, strict=False)]
    print("host-side time per step, model time excluded (median ms):")
    print(f"  whole step                     {statistics.median(step_ms):7.1f}")
    print(f"  client round trip (HTTP+parse) {statistics.median(invoke_ms):7.1f}")
    print(f"  action                         {statistics.median(action_ms):7.1f}")
    print(f"  page read + prompt + rest      {statistics.median(page_ms):7.1f}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as home:
        os.environ["TABPILOT_HOME"] = home
        asyncio.run(main())
