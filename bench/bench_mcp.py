"""`tabpilot mcp` figures, in the user's browser (headless Chromium with extension/ loaded and the host
installed into the profile, as tests/e2e/ does; the model is the scripted server on 127.0.0.1):

1. time from the `run_task` call to its first progress notification (the MCP SDK's ClientSession over
   stdio, as Claude Desktop or Cursor start the server), beside the same moment — the first step's
   `task.event` push — for the same task run directly through the host protocol (the local endpoint,
   `task.start` and the `task.*` pushes, no MCP layer);
2. the overhead per step of the MCP path over the direct one: for each step, the time from its event
   being recorded (the store's created_at) to the client hearing of it (a `task.event` push on the
   direct path, a progress notification through MCP); and the whole task's time, (MCP - direct) / steps;
3. `--launch --headless` (a Chromium of its own, no extension): run_task → first progress notification
   on the first call (which starts the browser) and on the calls after it.

    .venv/bin/python bench/bench_mcp.py [--rounds N]

A task of STEPS steps (scrolls, then done) on the e2e form page, in a new tab each time. Rounds
alternate the two paths. TABPILOT_HOME and HOME in temporary folders. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STEPS = 8


def reply(step: int) -> Any:
    from tabpilot.llm.scripted import ToolCall

    action: dict[str, Any] = {"scroll": {"down": step % 2 == 0, "num_pages": 0.5}}
    if step == STEPS - 1:
        action = {"done": {"text": "Scrolled.", "success": True}}
    return ToolCall("AgentOutput", {"evaluation_previous_goal": "Success", "memory": f"step {step}",
                                    "next_goal": "Scroll the page", "action": action})


Figure = tuple[float, float, str, list[float]]  # ms to the first step, ms to the result, task id, arrivals


async def direct(url: str) -> Figure:
    """Through the host protocol itself."""
    from tabpilot.mcp.hostlink import HostLink

    link = HostLink("bench", connect_wait=10)
    try:
        began = time.perf_counter()
        tab = (await link.request("tabs.create", {"url": "about:blank"}))["tab"]["tabId"]
        task_id = (await link.request("task.start", {"task": "Scroll the page", "tabId": tab, "url": url,
                                                    "source": "mcp"}))["taskId"]
        updates, first, arrivals = link.updates(task_id), None, []
        while True:
            push = await updates.get()
            assert isinstance(push, dict), push
            if push["type"] == "task.event" and push["event"]["type"] == "step":
                arrivals.append(time.time())
                first = first or time.perf_counter()
            if push["type"] == "task.result":
                assert push["result"]["success"], push["result"]
                ended = time.perf_counter()
                break
        assert first is not None
        return (first - began) * 1000, (ended - began) * 1000, task_id, arrivals
    finally:
        await link.close()


async def through_mcp(session: Any, url: str) -> Figure:
    """run_task over MCP."""
    first: list[float] = []
    arrivals: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        first.append(time.perf_counter())
        arrivals.append(time.time())

    began = time.perf_counter()
    result = await session.call_tool("run_task", {"task": "Scroll the page", "url": url},
                                     progress_callback=on_progress)
    ended = time.perf_counter()
    data = json.loads(result.content[0].text)
    assert not result.is_error and data["success"], result
    assert len(first) == STEPS, first
    return (first[0] - began) * 1000, (ended - began) * 1000, data["taskId"], arrivals


def relay_ms(database: Path, figure: Figure) -> list[float]:
    """Per step: recorded (created_at) → heard by the client, in ms."""
    import sqlite3

    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        recorded = [row[0] for row in db.execute(
            "SELECT created_at FROM events WHERE task_id = ? AND type = 'step' ORDER BY seq", (figure[2],))]
    return [(heard - at) * 1000 for at, heard in zip(recorded, figure[3], strict=True)]


async def launch_figures(harness: Any, pages: Any, llm: Any, rounds: int) -> list[float]:
    """ms to the first progress notification for each run_task of a `--launch --headless` server."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from tabpilot.browser.launcher import find_browser

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tabpilot", "mcp", "--launch", "--headless", "--browser", find_browser()],
        env={"HOME": str(harness.home), "TABPILOT_HOME": str(harness.tabpilot_home), "PATH": os.environ["PATH"]},
    )
    firsts = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for n in range(rounds + 1):
            llm.add(*[reply(i) for i in range(STEPS)])
            firsts.append((await through_mcp(session, pages.url(f"form.html?launched{n}")))[0])
    return firsts


async def main(rounds: int) -> None:
    sys.path.insert(0, str(ROOT / "tests"))  # e2e_support imports tests/required.py
    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    from e2e_support import API_KEY, start_connected_harness
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from tabpilot.browser.launcher import find_browser
    from tabpilot.llm.scripted import ScriptedLLMServer
    from tabpilot.localfiles import LocalFiles

    with tempfile.TemporaryDirectory() as base, LocalFiles(ROOT / "tests" / "e2e" / "pages") as pages, \
            ScriptedLLMServer([]) as llm:
        harness = await start_connected_harness(find_browser(), Path(base))
        os.environ["TABPILOT_HOME"] = str(harness.tabpilot_home)  # this process's HostLink finds the host
        try:
            settings = {"type": "settings.set", "baseURL": llm.base_url, "model": "scripted", "apiKey": API_KEY,
                        "maxSteps": STEPS + 2}
            await harness.sw(f"await requestHost({json.dumps(settings)}); true")
            params = StdioServerParameters(
                command=sys.executable, args=["-m", "tabpilot", "mcp", "--approve", "always"],
                env={"HOME": str(harness.home), "TABPILOT_HOME": str(harness.tabpilot_home),
                     "PATH": os.environ["PATH"]},
            )
            figures: dict[str, list[Figure]] = {"direct": [], "mcp": []}
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                for n in range(rounds + 1):  # the first round warms both paths up (imports, first tab)
                    for path in ("direct", "mcp"):
                        llm.add(*[reply(i) for i in range(STEPS)])
                        url = pages.url(f"form.html?bench={path}{n}")
                        figure = await (direct(url) if path == "direct" else through_mcp(session, url))
                        if n:
                            figures[path].append(figure)
            launched = await launch_figures(harness, pages, llm, rounds)
            relay = {path: [ms for figure in figures[path] for ms in relay_ms(harness.database(), figure)]
                     for path in figures}
        finally:
            await harness.browser.close()

    def median(path: str, which: int) -> float:
        return statistics.median(f[which] for f in figures[path])

    print(f"{rounds} rounds of a {STEPS}-step task (median ms)")
    print(f"run_task call → first progress notification: {median('mcp', 0):.0f} ms "
          f"(direct through the host protocol, to the first step event: {median('direct', 0):.0f} ms)")
    print(f"whole task: MCP {median('mcp', 1):.0f} ms, direct {median('direct', 1):.0f} ms")
    overhead = [(m[1] - d[1]) / STEPS for m, d in zip(figures["mcp"], figures["direct"], strict=True)]
    print(f"whole task, (MCP - direct) / steps: {statistics.median(overhead):.1f} ms "
          f"(rounds: {', '.join(f'{o:.1f}' for o in overhead)})")
    for path, label in (("direct", "task.event push"), ("mcp", "MCP progress notification")):
        values = sorted(relay[path])
        print(f"step recorded → {label}: median {statistics.median(values):.1f} ms, "
              f"p90 {values[int(len(values) * 0.9)]:.1f} ms ({len(values)} steps)")
    print(f"overhead per step through MCP: {statistics.median(relay['mcp']) - statistics.median(relay['direct']):.1f}"
          " ms (difference of the medians above)")
    print(f"--launch --headless, run_task → first progress notification: first call (starts Chromium) "
          f"{launched[0]:.0f} ms, later calls median {statistics.median(launched[1:]):.0f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main(parser.parse_args().rounds))
