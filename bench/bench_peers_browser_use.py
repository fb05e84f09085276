"""browser-use's part of bench_peers.py, run by it with the python of a venv holding browser-use 0.13.0 (its pins,
openai==2.16.0 and pydantic==2.12.5, clash with tabpilot's, so it never shares tabpilot's venv):

    <venv>/bin/python bench/bench_peers_browser_use.py CDP_URL PAGE_URL RUNS WIDTHxHEIGHT OUT_JSON

Connects to the running Chromium over CDP (BrowserSession(cdp_url=...)), opens its own tab with the viewport the
other systems read in (WIDTHxHEIGHT: headless, browser-use would emulate 1920x1080), and times what
browser-use's agent does each step to get its page text (Agent._prepare_context, then the message manager):
`BrowserSession.get_browser_state_summary()` (its DOM watchdog: tabs, DomService.get_serialized_dom_tree, title,
page info, all through its event bus) and `AgentMessagePrompt._get_browser_state_description()`, the text inside
<browser_state> of the model's message. The agent asks for a screenshot too; the other systems take none, so neither
does this. Also times the DOM service alone (get_serialized_dom_tree + llm_representation), the floor of a step
without the event bus (login, 2 cores: 16 ms of a 34 ms step; the rest is its event bus validating each event's
result with a pydantic TypeAdapter it builds anew, tabs, title and page info). Timed as bench_peers times the
others: wall time from Python, first look = a fresh navigation (browser-use's own navigate_to) then one read, later
step = repeated reads of one document after a warm-up read. Writes the figures, the first look's text and its tab's
target id (bench_peers closes the tab) as JSON to OUT_JSON; asserts nothing.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from browser_use import BrowserSession
from browser_use.agent.prompts import AgentMessagePrompt

# a read slower than this (page-agent and browser-use on the 18k-element table) is timed once, not RUNS times
SLOW_MS = 2000.0


async def _timed(read: Callable[[], Awaitable[str]]) -> tuple[float, str]:
    started = time.perf_counter()
    text = await read()
    return (time.perf_counter() - started) * 1000, text


async def measure(cdp_url: str, url: str, runs: int, width: int, height: int) -> dict[str, Any]:
    session = BrowserSession(cdp_url=cdp_url, viewport={"width": width, "height": height})
    await session.start()
    try:
        await session.navigate_to(url, new_tab=True)
        tab = session.agent_focus_target_id

        async def step() -> str:
            summary = await session.get_browser_state_summary(include_screenshot=False)
            if summary.dom_state is None or summary.dom_state._root is None:
                # its DOM watchdog logs a failed build (the accessibility tree not back within its 10 + 2 s) and
                # goes on with an empty page: a step that reads nothing is not a read
                raise TimeoutError("no page read: its DOM service failed (the accessibility tree timed out?)")
            # its tab list would also name the tab the other systems read in; alone in a browser it names its own
            summary.tabs = [info for info in summary.tabs if info.target_id == tab]
            return AgentMessagePrompt(browser_state_summary=summary, file_system=None)._get_browser_state_description()

        async def dom_service() -> str:
            cached = session._cached_browser_state_summary
            service = session._dom_watchdog._dom_service
            state, _, _ = await service.get_serialized_dom_tree(
                previous_cached_state=cached.dom_state if cached else None)
            return str(state.llm_representation())

        figures: dict[str, Any] = {"target": tab}
        try:
            warm_ms, _ = await _timed(step)
        except TimeoutError as error:
            return {**figures, "error": str(error)}
        timed_runs = 1 if warm_ms > SLOW_MS else runs
        for name, read in (("step", step), ("dom", dom_service)):
            first, later = [], []
            try:
                for _ in range(timed_runs):
                    await session.navigate_to(url)
                    ms, text = await _timed(read)
                    first.append(ms)
                    if name == "step":
                        figures["text"] = text
                await session.navigate_to(url)
                await read()
                for _ in range(timed_runs):
                    later.append((await _timed(read))[0])
            except TimeoutError as error:
                return {**figures, "error": f"{name}: {error}"}
            figures[f"{name}_first"], figures[f"{name}_later"] = first, later
        page = await session.get_or_create_cdp_session(tab, focus=True)
        shown = await page.cdp_client.send.Runtime.evaluate(
            params={"expression": "[innerWidth, innerHeight, document.visibilityState]", "returnByValue": True},
            session_id=page.session_id)
        figures["window"] = shown["result"]["value"]
        return figures
    finally:
        await session.stop()


def main() -> None:
    cdp_url, url, runs, size, out = sys.argv[1:6]
    width, height = (int(n) for n in size.split("x"))
    Path(out).write_text(json.dumps(asyncio.run(measure(cdp_url, url, int(runs), width, height))))


if __name__ == "__main__":
    main()
