"""What vision costs (issue 15, item 7): for a few pages in a real headless Chromium, the labelled
screenshot's time (median of 7 after a warm-up: overlay, capture, clean-up), its size, and its token
cost by OpenAI's formula for GPT-4o-class models (high detail: 85 + 170 per 512-px tile; low: 85),
next to the page text's tokens (o200k, via quicktok).

    .venv/bin/python bench/bench_vision.py

Prints; asserts nothing.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [
    ("demo form", ROOT / "host" / "tabpilot" / "demo", "page.html"),
    ("icon toolbar", ROOT / "tests" / "fixtures" / "pages", "vision.html"),
    ("busy list", ROOT / "tests" / "fixtures" / "pages", "state_busy.html"),
]
RUNS = 7


async def main() -> None:
    import quicktok

    from tabpilot.browser.browser import Browser
    from tabpilot.browser.screenshot import labelled_screenshot
    from tabpilot.browser.state import get_state
    from tabpilot.llm.vision import openai_image_tokens
    from tabpilot.localfiles import LocalFiles

    encoding = quicktok.get_encoding("o200k_base")
    browser = await Browser.launch(headless=True, env={"HOME": os.environ["TABPILOT_HOME"]})
    print(f"{'page':<14} {'elements':>8} {'image':>9} {'KB':>5} {'ms (median)':>11} "
          f"{'tokens high':>11} {'low':>4} {'page text tokens':>16}")
    try:
        for label, folder, name in PAGES:
            pages = LocalFiles(folder)
            try:
                tab = await browser.new_tab(pages.url(name))
                state = await get_state(browser, tab)
                elements = list(state.elements.values())
                await labelled_screenshot(tab, elements)  # warm-up
                shots = [await labelled_screenshot(tab, elements) for _ in range(RUNS)]
                shot = shots[-1]
                milliseconds = statistics.median(s.milliseconds for s in shots)
                print(f"{label:<14} {len(elements):>8} {shot.width:>4}x{shot.height:<4} {len(shot.data) / 1024:>5.0f} "
                      f"{milliseconds:>11.1f} {openai_image_tokens(shot.width, shot.height):>11} "
                      f"{openai_image_tokens(shot.width, shot.height, 'low'):>4} "
                      f"{len(encoding.encode(state.text)):>16}")
                await browser.close_tab(tab.target_id)
            finally:
                pages.close()
    finally:
        await browser.close()


if __name__ == "__main__":
    if not (ROOT / "tests" / "fixtures" / "pages" / "state_busy.html").exists():
        sys.exit("run from a checkout: the fixture pages are under tests/")
    with tempfile.TemporaryDirectory() as home:
        os.environ["TABPILOT_HOME"] = home
        asyncio.run(main())
