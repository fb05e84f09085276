"""What the allowed-domains guard costs: the time to open a page with and without Fetch interception of
documents (each page load waits for one Fetch.requestPaused → continueRequest round trip), median of N loads of
a fixture page in a real headless Chromium over websocket, and the time the approval check takes before a click
(the element's form is read from the page).

    .venv/bin/python bench/bench_guards.py [--runs 21]

Prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from tabpilot.browser.browser import Browser  # noqa: E402
from tabpilot.browser.state import get_state  # noqa: E402
from tabpilot.guards.domains import DomainPolicy  # noqa: E402
from tabpilot.guards.irreversible import pending_action  # noqa: E402
from tabpilot.guards.navigation import NavigationGuard  # noqa: E402
from tabpilot.localfiles import LocalFiles  # noqa: E402

PAGES = ROOT / "tests" / "fixtures" / "pages"


async def loads(browser: Browser, url: str, runs: int) -> list[float]:
    tab = await browser.new_tab(url)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await tab.navigate(url)
        times.append((time.perf_counter() - started) * 1000)
    await browser.close_tab(tab.target_id)
    return times


class _Context:  # what pending_action reads of a ToolContext
    def __init__(self, tab: Any, elements: Any) -> None:
        self.tab, self.elements = tab, elements


class _Click:
    def __init__(self, index: int) -> None:
        self.index = index


async def main(runs: int) -> None:
    with LocalFiles(PAGES) as pages:
        url = pages.url("guard_shop.html")
        plain = await Browser.launch(headless=True)
        try:
            unguarded = await loads(plain, url, runs)
        finally:
            await plain.close()
        guarded_browser = await Browser.launch(headless=True)
        try:
            await guarded_browser.guard_navigation(NavigationGuard(DomainPolicy.of(allowed=["127.0.0.1"]),
                                                                   lambda url, why: None))
            guarded = await loads(guarded_browser, url, runs)
            tab = await guarded_browser.new_tab(url)
            state = await get_state(guarded_browser, tab)
            index = next(i for i, e in state.elements.items() if e.name == "Continue")
            checks = []
            for _ in range(runs):
                started = time.perf_counter()
                asked = await pending_action("irreversible", "click_element_by_index", _Click(index),
                                             _Context(tab, state.elements))  # type: ignore[arg-type]
                checks.append((time.perf_counter() - started) * 1000)
            assert asked is not None
        finally:
            await guarded_browser.close()
    print(f"page load, no guard:          median {statistics.median(unguarded):6.1f} ms  (n={runs})")
    print(f"page load, Fetch guard on:    median {statistics.median(guarded):6.1f} ms  (n={runs})")
    print(f"approval check before a click (reads the element's form): median {statistics.median(checks):5.1f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    asyncio.run(main(parser.parse_args().runs))
