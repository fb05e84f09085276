"""A screenshot of the tab's viewport with each element's index drawn on it, for a multimodal model.

The labels are drawn by a temporary overlay in tabpilot's isolated world, inside a closed shadow root
(page scripts cannot reach into it), put up right before `Page.captureScreenshot` and taken down right
after. The image is a JPEG no wider or taller than `MAX_SIDE` CSS pixels scaled to the device: at
1024×576 it bills OpenAI 4 tiles (765 tokens), where 1280×720 would bill 6 (1,105)."""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..cdp import CDPError
from .dom.fast import WORLD_NAME
from .errors import BrowserError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .elements import ElementRef
    from .tab import Tab

MAX_SIDE = 1024
JPEG_QUALITY = 70

_DRAW = """(labels) => {
  const host = document.createElement('tabpilot-vision');
  host.style.cssText = 'all:initial;position:fixed;left:0;top:0;width:0;height:0;z-index:2147483647;' +
    'pointer-events:none';
  const shadow = host.attachShadow({mode: 'closed'});
  const fixed = (x, y, w, h, css) => {
    const e = document.createElement('div');
    e.style.cssText = `position:fixed;left:${x}px;top:${y}px;width:${w}px;height:${h}px;${css}`;
    shadow.append(e);
    return e;
  };
  const colours = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#008080', '#9a6324', '#800000'];
  for (const [index, x, y, w, h] of labels) {
    const colour = colours[index % colours.length];
    fixed(x, y, w, h, `border:2px solid ${colour};box-sizing:border-box`);
    // at the box's top right corner, just above it: the box's own text and the text before it stay readable
    const tag = fixed(x + w, Math.max(0, y - 14), '', '', `background:${colour};transform:translateX(-100%);` +
      'width:auto;height:auto;color:#fff;font:bold 12px/14px sans-serif;padding:0 3px;border-radius:2px');
    tag.textContent = String(index);
  }
  // Password fields are covered, also one a "show password" button made plain text since the walker saw it
  // as a password (dom/walker.js keeps them in __tabpilotPasswords): a screenshot must not show a password.
  const passwords = globalThis.__tabpilotPasswords || new WeakSet();
  const secret = (e) => e.localName === 'input' && (e.type === 'password' || passwords.has(e) ||
    (e.getAttribute('autocomplete') || '').toLowerCase().includes('password'));
  const cover = (root, dx, dy) => {
    for (const e of root.querySelectorAll('*')) {
      if (secret(e) && e.value) {
        const r = e.getBoundingClientRect();
        fixed(r.left + dx, r.top + dy, r.width, r.height, 'background:#777');
      }
      if (e.shadowRoot) cover(e.shadowRoot, dx, dy);
      if (e.localName === 'iframe' || e.localName === 'frame') {
        let inner = null;
        try { inner = e.contentDocument; } catch (err) {}  // another site's frame: out of reach here
        const r = e.getBoundingClientRect();
        if (inner) cover(inner, dx + r.left + e.clientLeft, dy + r.top + e.clientTop);
      }
    }
  };
  cover(document, 0, 0);
  document.documentElement.append(host);
  globalThis.__tabpilotVision = host;
}"""
_REMOVE = "globalThis.__tabpilotVision && globalThis.__tabpilotVision.remove(); delete globalThis.__tabpilotVision"


@dataclass(frozen=True)
class Screenshot:
    data: bytes
    mime_type: str
    width: int  # pixels of the image
    height: int
    milliseconds: float  # overlay, capture and clean-up

    def data_url(self) -> str:
        return f"data:{self.mime_type};base64,{base64.b64encode(self.data).decode('ascii')}"


async def labelled_screenshot(tab: Tab, elements: Iterable[ElementRef]) -> Screenshot:
    """The viewport as a JPEG, each of `elements` with its index drawn on its box, password fields covered."""
    started = time.perf_counter()
    try:
        metrics = await tab.send("Page.getLayoutMetrics")
        viewport = metrics["cssVisualViewport"]
        width, height = viewport["clientWidth"], viewport["clientHeight"]
        scale = min(1.0, MAX_SIDE / max(width, height, 1))
        context = await _world(tab)
        boxes = [[e.index, *(round(v) for v in e.bounds)] for e in elements if e.bounds is not None]
        drawn = await tab.send("Runtime.evaluate", {"expression": f"({_DRAW})({json.dumps(boxes)})",
                                                    "contextId": context, "returnByValue": True})
        if "exceptionDetails" in drawn:  # never a screenshot without its password covers
            raise BrowserError(f"could not draw the screenshot's overlay: {drawn['exceptionDetails'].get('text')}")
        try:
            shot = await tab.send("Page.captureScreenshot", {
                "format": "jpeg", "quality": JPEG_QUALITY, "optimizeForSpeed": True,
                "clip": {"x": viewport["pageX"], "y": viewport["pageY"], "width": width, "height": height,
                         "scale": scale},
            }, timeout=15)
        finally:
            await tab.send("Runtime.evaluate", {"expression": _REMOVE, "contextId": context})
    except CDPError as exc:
        raise BrowserError(f"could not take a screenshot: {exc}") from exc
    data = base64.b64decode(shot["data"])
    image_width, image_height = jpeg_size(data)
    return Screenshot(data, "image/jpeg", image_width, image_height, (time.perf_counter() - started) * 1000)


async def _world(tab: Tab) -> int:
    frame_id = tab.main_frame_id or (await tab.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
    world: dict[str, Any] = await tab.send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": WORLD_NAME})
    return int(world["executionContextId"])


def jpeg_size(data: bytes) -> tuple[int, int]:
    """A JPEG's width and height, read from its start-of-frame marker."""
    if data[:2] != b"\xff\xd8":
        raise ValueError("not a JPEG")
    position = 2
    while position + 9 < len(data):
        if data[position] != 0xFF:
            raise ValueError("a broken JPEG")
        marker = data[position + 1]
        length = int.from_bytes(data[position + 2 : position + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height = int.from_bytes(data[position + 5 : position + 7], "big")
            width = int.from_bytes(data[position + 7 : position + 9], "big")
            return width, height
        position += 2 + length
    raise ValueError("a JPEG without a frame header")
