"""Helpers for the browser-state tests: open a fixture page, ask a listed element which DOM node it is."""

from __future__ import annotations

import re

from tabpilot.browser.browser import Browser
from tabpilot.browser.elements import ElementRef
from tabpilot.browser.state import BrowserState
from tabpilot.browser.tab import Tab


async def open_page(browser: Browser, url: str, *, width: int = 1280, height: int = 900) -> Tab:
    """A new tab on `url` with a fixed viewport, so what is "in view" does not depend on the window."""
    tab = await browser.new_tab()
    await tab.session.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )
    await tab.navigate(url)
    return tab


async def node_property(ref: ElementRef, expression: str = "this.id") -> object:
    """Evaluate `expression` with `this` = the node the ref points at, in the ref's own session (so it
    works for closed shadow roots and cross-site frames alike)."""
    backend_node_id = ref.backend_node_id or (await ref.locate() if ref.locate else 0)  # as nodes.node_id
    resolved = await ref.session.send("DOM.resolveNode", {"backendNodeId": backend_node_id})
    reply = await ref.session.send(
        "Runtime.callFunctionOn",
        {
            "objectId": resolved["object"]["objectId"],
            "functionDeclaration": f"function() {{ return {expression}; }}",
            "returnByValue": True,
        },
    )
    return reply["result"].get("value")


async def ids_by_index(state: BrowserState) -> dict[int, object]:
    return {index: await node_property(ref) for index, ref in state.elements.items()}


async def index_of(state: BrowserState, element_id: str) -> int | None:
    for index, ref in state.elements.items():
        if await node_property(ref) == element_id:
            return index
    return None


def line_of(state: BrowserState, index: int) -> str:
    """The text line that shows element `index` (with its new-marker, if any); for an element inside
    running text, the line from that element on."""
    for line in state.text.splitlines():
        stripped = line.lstrip("\t*")
        if stripped.startswith(f"[{index}]<"):
            return line.strip("\t")
        for marker in (f" *[{index}]<", f" [{index}]<"):
            if marker in line:
                return line[line.index(marker) + 1:]
    raise AssertionError(f"[{index}] is not in the state text:\n{state.text}")


def page_lines(state: BrowserState) -> list[str]:
    """The page part of the text: the lines between its edge lines ("[top of page]", "[12px below: …]")."""
    lines = state.text.splitlines()
    edges = [i for i, line in enumerate(lines) if _EDGE.match(line)]
    return lines[edges[0] + 1:edges[-1]]


_EDGE = re.compile(r"^\[(top of page|end of page|\d+px (above|below): .*)\]$")
