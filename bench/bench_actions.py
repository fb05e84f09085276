"""Action latency in a real headless Chromium: the time each action takes from call to result sentence,
median of N runs after a warm-up, on the tests' fixture pages.

    .venv/bin/python bench/bench_actions.py [--runs 9]

Actions that can start a navigation (click, send_keys) include the settle grace (actions.SETTLE_GRACE, 0.1 s):
the time given for a navigation to start before the page counts as settled. "aim" is the part of a
click before the mouse moves: resolving the node, scrolling it into view, its quads, the hit test.
Prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "tests" / "fixtures" / "pages"
sys.path.insert(0, str(ROOT / "tests"))

from actions_support import frame_session, ref  # noqa: E402

from tabpilot.browser import actions, nodes  # noqa: E402
from tabpilot.browser.browser import Browser  # noqa: E402
from tabpilot.browser.nodes import resolve  # noqa: E402
from tabpilot.browser.pointer import aim  # noqa: E402
from tabpilot.browser.state import get_state  # noqa: E402
from tabpilot.localfiles import LocalFiles  # noqa: E402


async def _time(runs: int, action: Callable[[], Awaitable[object]]) -> list[float]:
    await action()  # warm-up
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await action()
        times.append((time.perf_counter() - started) * 1000)
    return times


def _line(label: str, values: list[float]) -> str:
    return f"  {label:<34} median {statistics.median(values):7.1f} ms  (min {min(values):.1f}, max {max(values):.1f})"


async def bench(runs: int) -> None:
    server = LocalFiles(PAGES)
    port = server.port
    browser = await Browser.launch(headless=True, env={"HOME": tempfile.mkdtemp(prefix="tabpilot-bench-")})
    try:
        print(f"load average before: {os.getloadavg()[0]:.2f} (cores: {os.cpu_count()}), {runs} runs each")
        tab = await browser.new_tab()
        await actions.go_to_url(browser, tab, f"http://127.0.0.1:{port}/actions_click.html")
        save = await ref(tab, "#save", name="Save")

        async def aim_only() -> None:
            await aim(tab, save, await resolve(tab, save))

        print(_line("click: aim only", await _time(runs, aim_only)))
        print(_line("click (incl. 100 ms settle grace)", await _time(runs, lambda: actions.click(browser, tab, save))))
        print(_line("hover", await _time(runs, lambda: actions.hover(browser, tab, save))))
        print(_line("send_keys Escape", await _time(runs, lambda: actions.send_keys(browser, tab, "Escape"))))
        print(_line("scroll page down/up", await _time(runs, lambda: actions.scroll(browser, tab, down=runs % 2 == 0))))
        print(_line("execute_javascript", await _time(runs, lambda: actions.execute_javascript(browser, tab, "1+1"))))
        page = f"http://127.0.0.1:{port}/actions_next.html"
        print(_line("go_to_url (small local page)", await _time(runs, lambda: actions.go_to_url(browser, tab, page))))

        await actions.go_to_url(browser, tab, f"http://127.0.0.1:{port}/actions_forms.html")
        name, fruit, color = await ref(tab, "#name"), await ref(tab, "#fruit"), await ref(tab, "#color")
        print(_line("input_text (20 chars)", await _time(runs, lambda: actions.input_text(
            browser, tab, name, "twenty characters!!!"))))
        print(_line("input_text (100 chars, target 100 ms)", await _time(runs, lambda: actions.input_text(
            browser, tab, name, "a hundred characters of text typed into a field, " * 2))))
        print(_line("select_option native", await _time(runs, lambda: actions.select_option(
            browser, tab, fruit, "Apple"))))
        print(_line("select_option ARIA combobox", await _time(runs, lambda: actions.select_option(
            browser, tab, color, "Green"))))

        if hasattr(nodes, "node_id"):  # the state reader leaves an element's node to the first action on it
            looked_up = []
            for _ in range(runs):
                await actions.go_to_url(browser, tab, f"http://127.0.0.1:{port}/actions_forms.html")
                field = next(iter((await get_state(browser, tab)).elements.values()))
                started = time.perf_counter()
                await nodes.node_id(tab, field)
                looked_up.append((time.perf_counter() - started) * 1000)
            print(_line("first action's node lookup", looked_up))

        inner = f"http://localhost:{port}/actions_frame_inner.html"
        await actions.go_to_url(browser, tab, f"http://127.0.0.1:{port}/actions_frames.html?inner={inner}")
        frame = await frame_session(browser, "localhost")
        button = await ref(frame, "#inner-button", frame_owner=await ref(tab, "#cross"))

        async def aim_in_frame() -> None:
            await aim(tab, button, await resolve(tab, button))

        print(_line("click in cross-site iframe: aim", await _time(runs, aim_in_frame)))
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    finally:
        await browser.close()
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="measured runs per action after one warm-up")
    args = parser.parse_args()
    asyncio.run(bench(max(7, args.runs)))


if __name__ == "__main__":
    main()
