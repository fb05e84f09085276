"""Background tabs: an action and a page read in a tab behind another tab of the same window, against the
same in the tab in front; and two scripted tasks at once in two tabs of one window against one alone.

    .venv/bin/python bench/bench_background.py [--runs 5] [--headless | --relay]

Headful by default, on an Xvfb screen this script starts (the background/foreground distinction is a
window's; headless Chromium hides a background tab the same way, measured, so --headless shows it too).
Each figure is measured three ways, each in a fresh browser: without the fix (Tab.render_as_if_shown
replaced by nothing here), with focus emulation alone, and with the fix (focus emulation + a screencast
left unacknowledged). The tasks are the host's Agent against the scripted OpenAI-compatible model server,
each task on its own connection to the browser (as each of several tasks has its own debugger session),
step delay 0. --relay measures the action and the read through the real extension's chrome.debugger and
the real host instead (the user's own browser). Prints medians; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "tests" / "fixtures" / "pages"
sys.path.insert(0, str(ROOT / "tests"))

from actions_support import ref  # noqa: E402

from tabpilot.agent import Agent, AgentConfig  # noqa: E402
from tabpilot.browser import actions  # noqa: E402
from tabpilot.browser.browser import Browser  # noqa: E402
from tabpilot.browser.launcher import find_browser  # noqa: E402
from tabpilot.browser.state import get_state  # noqa: E402
from tabpilot.browser.tab import Tab  # noqa: E402
from tabpilot.llm import LLMClient, LLMConfig  # noqa: E402
from tabpilot.llm.scripted import ScriptedLLMServer, ToolCall  # noqa: E402
from tabpilot.localfiles import LocalFiles  # noqa: E402

PAGE = "actions_click.html"
READ_PAGE = "state_medium.html"  # a news front page: the fixtures' largest state
ORIGINAL = Tab.render_as_if_shown


async def _no_fix(self: Tab) -> None:
    return None


async def _focus_emulation_only(self: Tab) -> None:
    await self.session.send("Emulation.setFocusEmulationEnabled", {"enabled": True})


WAYS: list[tuple[str, Callable[[Tab], Awaitable[None]]]] = [
    ("without the fix", _no_fix),
    ("focus emulation only", _focus_emulation_only),
    ("with the fix", ORIGINAL),
]


@contextmanager
def virtual_screen() -> Iterator[str]:
    if not shutil.which("Xvfb"):
        sys.exit("Xvfb is not installed (apt-get install xvfb), or pass --headless")
    process = subprocess.Popen(["Xvfb", "-displayfd", "1", "-screen", "0", "1280x900x24", "-nolisten", "tcp"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    assert process.stdout is not None
    number = process.stdout.readline().decode().strip()
    try:
        if not number.isdigit():
            sys.exit("Xvfb did not report its display number")
        yield f":{number}"
    finally:
        process.terminate()
        process.wait(5)


async def _times(runs: int, work: Callable[[], Awaitable[object]]) -> list[float]:
    await work()  # warm-up
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await work()
        times.append((time.perf_counter() - started) * 1000)
    return times


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):7.0f} ms"


WindowOf = Callable[[Tab], Awaitable[int]]


def _windows_by_target(browser: Browser) -> WindowOf:
    async def window_of(tab: Tab) -> int:
        reply = await browser.connection.root.send("Browser.getWindowForTarget", {"targetId": tab.target_id})
        return int(reply["windowId"])
    return window_of


async def _front_and_back(browser: Browser, pages: LocalFiles, window_of: WindowOf | None = None) -> tuple[Tab, Tab]:
    back = await browser.new_tab(pages.url(PAGE))
    front = await browser.new_tab(pages.url(PAGE))
    await browser.activate(front.target_id)
    window_of = window_of or _windows_by_target(browser)
    assert await window_of(front) == await window_of(back), "the two tabs should share one window"
    return front, back


async def action_and_read(browser: Browser, pages: LocalFiles, runs: int,
                          window_of: WindowOf | None = None) -> dict[str, list[float]]:
    front, back = await _front_and_back(browser, pages, window_of)
    figures: dict[str, list[float]] = {}
    lost: dict[str, int] = {}
    for where, tab in (("front", front), ("back", back)):
        save = await ref(tab, "#save", name="Save")
        figures[f"click {where}"] = await _times(runs, lambda tab=tab, save=save: actions.click(browser, tab, save))
        clicks = await tab.evaluate("window.__events.filter((e) => e.type === 'click' && e.trusted).length")
        lost[where] = runs + 1 - clicks
        await tab.navigate(pages.url(READ_PAGE))
        # three times the runs: a read takes a few ms, and this machine's load moves that a lot
        figures[f"read {where}"] = await _times(3 * runs, lambda tab=tab: get_state(browser, tab))
    if any(lost.values()):
        print(f"  clicks the page never received: {lost}")
    return figures


# --- tasks -----------------------------------------------------------------------------------------
def _index_of(body: dict[str, Any], label: str) -> int:
    user = body["messages"][1]["content"]
    for line in user[user.index("<browser_state>"):].splitlines():
        match = re.search(r"\[(\d+)\]", line)
        if match and label in line:
            return int(match.group(1))
    raise LookupError(label)


TASK_STEPS: list[tuple[str, Callable[[dict[str, Any]], dict[str, Any]]]] = [
    ("click_element_by_index", lambda body: {"index": _index_of(body, "Save")}),
    ("input_text", lambda body: {"index": _index_of(body, "Search"), "text": "background tabs"}),
    ("click_element_by_index", lambda body: {"index": _index_of(body, "Save")}),
    ("scroll", lambda body: {"down": True, "pixels": 200}),
    ("scroll", lambda body: {"down": False, "pixels": 200}),
    ("done", lambda body: {"text": "Saved twice and searched.", "success": True}),
]


def _script() -> list[Callable[[dict[str, Any]], ToolCall]]:
    def reply(name: str, make: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[dict[str, Any]], ToolCall]:
        return lambda body: ToolCall("AgentOutput", {
            "evaluation_previous_goal": "Success", "memory": "Working through the page.",
            "next_goal": f"Use {name}.", "action": {name: make(body)},
        })

    return [reply(name, make) for name, make in TASK_STEPS]


async def _task(ws_url: str, target_id: str) -> float:
    """One scripted task in the tab target_id, on its own connection; its wall time in ms."""
    browser = await Browser.connect(ws_url)
    try:
        browser.active = await browser.attach(target_id)  # as the host does: work in it, leave the user's view
        with ScriptedLLMServer(_script()) as server:
            client = LLMClient(LLMConfig(base_url=server.base_url, model="scripted", api_key="bench"))
            agent = Agent(browser, client, AgentConfig(max_steps=len(TASK_STEPS) + 2, step_delay=0))
            started = time.perf_counter()
            result = await agent.execute("Save, type a search, save again, look around.")
            elapsed = (time.perf_counter() - started) * 1000
            await client.aclose()
        if not result.success:
            raise RuntimeError(f"the scripted task did not finish: {result.data}")
        return elapsed
    finally:
        await browser.close()


async def tasks(browser: Browser, pages: LocalFiles, runs: int) -> dict[str, list[float]]:
    """One task alone in the tab in front, then two at once (in front and behind), alternately, so a
    machine whose load changes slows both alike."""
    assert browser.launched is not None
    ws_url = browser.launched.ws_url
    figures: dict[str, list[float]] = {"one task alone": [], "two tasks at once": [],
                                       "  the one in front": [], "  the one behind": []}
    for _ in range(runs):
        front, _ = await _front_and_back(browser, pages)
        figures["one task alone"].append(await _task(ws_url, front.target_id))
        front, back = await _front_and_back(browser, pages)
        started = time.perf_counter()
        in_front, behind = await asyncio.gather(_task(ws_url, front.target_id), _task(ws_url, back.target_id))
        figures["two tasks at once"].append((time.perf_counter() - started) * 1000)
        figures["  the one in front"].append(in_front)
        figures["  the one behind"].append(behind)
        for info in await browser.tabs():  # keep the blank first tab, so the window stays open
            if info.url != "about:blank":
                await browser.close_tab(info.target_id)
    return figures


async def measure(way: Callable[[Tab], Awaitable[None]], headless: bool, display: str | None,
                  runs: int, task_runs: int) -> dict[str, list[float]]:
    Tab.render_as_if_shown = way  # type: ignore[method-assign]
    env = {"HOME": tempfile.mkdtemp(prefix="tabpilot-bench-")}
    if display:
        env["DISPLAY"] = display
    browser = await Browser.launch(headless=headless, env=env)
    try:
        with LocalFiles(PAGES) as pages:
            figures = await action_and_read(browser, pages, runs)
            figures.update(await tasks(browser, pages, task_runs))
    finally:
        await browser.close()
        Tab.render_as_if_shown = ORIGINAL  # type: ignore[method-assign]
        shutil.rmtree(env["HOME"], ignore_errors=True)
    return figures


async def measure_relay(way: Callable[[Tab], Awaitable[None]], display: str, runs: int) -> dict[str, list[float]]:
    """The action and the read through the real extension (chrome.debugger) and the real host, headful:
    the user's own browser, whose launch flags are not ours."""
    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    from e2e_support import start_connected_harness

    from tabpilot.native.debug import DebugAccess, DebugLink
    from tabpilot.native.relay import extension_browser

    Tab.render_as_if_shown = way  # type: ignore[method-assign]
    base = Path(tempfile.mkdtemp(prefix="tabpilot-bench-"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        access = DebugAccess.new(int(probe.getsockname()[1]))
    harness = await start_connected_harness(str(find_browser()), base, headless=False,
                                            extra_env={**access.env(), "DISPLAY": display})
    try:
        link = await DebugLink.connect(access)
        relay = await extension_browser(link)
        await relay.current_tab()

        async def window_of(tab: Tab) -> int:
            return int(await harness.sw(f"(await chrome.tabs.get({tab.target_id})).windowId"))

        try:
            with LocalFiles(PAGES) as pages:
                return await action_and_read(relay, pages, runs, window_of)
        finally:
            await relay.close()
            await link.close()
    finally:
        await harness.browser.close()
        Tab.render_as_if_shown = ORIGINAL  # type: ignore[method-assign]
        shutil.rmtree(base, ignore_errors=True)


def report(results: dict[str, dict[str, list[float]]]) -> None:
    names = list(results)
    print(f"{'':<28}" + "".join(f"{name:>22}" for name in names))
    rows = next(iter(results.values()))
    for row in rows:
        print(f"  {row:<26}" + "".join(f"{_median(results[name][row]):>22}" for name in names))
    print("ratios (target: back ≤ 1.5× front, two tasks < 1.8× one)")
    for label, top, bottom in (("click back / front", "click back", "click front"),
                               ("read back / front", "read back", "read front"),
                               ("two tasks / one task", "two tasks at once", "one task alone")):
        if top not in rows:
            continue
        print(f"  {label:<26}" + "".join(
            f"{statistics.median(results[n][top]) / statistics.median(results[n][bottom]):>21.2f}×" for n in names))


async def main(runs: int, task_runs: int, headless: bool, relay: bool) -> None:
    with (virtual_screen() if not headless else _nothing()) as display:
        how = "headless" if headless else f"headful on Xvfb {display}"
        if relay:
            how += ", through the extension's chrome.debugger (tasks not run)"
        print(f"Chromium {how}, both tabs in one window; load average {os.getloadavg()[0]:.2f} on "
              f"{os.cpu_count()} cores; medians of {runs} runs ({task_runs} for tasks, {len(TASK_STEPS)} steps each)")
        results = {}
        for name, way in WAYS:
            print(f"{name}:", flush=True)
            if relay:
                assert display is not None
                results[name] = await measure_relay(way, display, runs)
            else:
                results[name] = await measure(way, headless, display, runs, task_runs)
        report(results)


@contextmanager
def _nothing() -> Iterator[None]:
    yield None


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--task-runs", type=int, default=5)
    parser.add_argument("--headless", action="store_true")
    parser.add_argument("--relay", action="store_true", help="through the real extension and host (headful)")
    options = parser.parse_args()
    if options.relay and options.headless:
        parser.error("--relay measures the user's own browser: a headful one")
    asyncio.run(main(options.runs, options.task_runs, options.headless, options.relay))
