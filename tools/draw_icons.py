"""Render extension/icons/icon.svg to the PNG sizes the manifest names (16, 32, 48, 128 px) in a real
headless Chromium (no image library needed). Run after changing the SVG; the PNGs are committed.

    .venv/bin/python tools/draw_icons.py
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

from tabpilot.browser.browser import Browser
from tabpilot.browser.tab import Tab

ICONS = Path(__file__).resolve().parents[1] / "extension" / "icons"
SIZES = (16, 32, 48, 128)


async def draw() -> None:
    svg = base64.b64encode((ICONS / "icon.svg").read_bytes()).decode()
    browser = await Browser.launch(headless=True)
    try:
        tab = await browser.new_tab("about:blank")
        await tab.send("Emulation.setDefaultBackgroundColorOverride", {"color": {"r": 0, "g": 0, "b": 0, "a": 0}})
        for size in SIZES:
            html = (f"<html><body style='margin:0;background:transparent'><img width={size} height={size}"
                    f" src='data:image/svg+xml;base64,{svg}'></body></html>")
            await tab.send("Page.setDocumentContent", {"frameId": await _frame(tab), "html": html})
            await asyncio.sleep(0.2)
            shot = await tab.send("Page.captureScreenshot", {
                "format": "png", "clip": {"x": 0, "y": 0, "width": size, "height": size, "scale": 1},
            })
            (ICONS / f"icon-{size}.png").write_bytes(base64.b64decode(shot["data"]))
            print(f"icon-{size}.png")
    finally:
        await browser.close()


async def _frame(tab: Tab) -> str:
    tree = await tab.send("Page.getFrameTree")
    return str(tree["frameTree"]["frame"]["id"])


if __name__ == "__main__":
    asyncio.run(draw())
