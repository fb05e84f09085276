"""A person at the browser, for takeover tests: a second CDP connection of its own (like a real mouse
and keyboard, its input arrives `isTrusted`, and nothing of tabpilot dispatched it)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from tabpilot.cdp import CDPConnection, CDPSession, WebSocketTransport

# The centre of an element in page coordinates, through same-origin frames (`expression` yields it).
# Two frames after scrolling: the browser hit-tests cross-site frames where the compositor last drew them.
CENTRE = """(async () => {
  let el = %s;
  el.scrollIntoView({block: "center"});
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const r = el.getBoundingClientRect();
  let x = r.left + r.width / 2, y = r.top + r.height / 2;
  for (let win = el.ownerDocument.defaultView; win.frameElement; win = win.parent) {
    const f = win.frameElement.getBoundingClientRect();
    x += f.left + win.frameElement.clientLeft; y += f.top + win.frameElement.clientTop;
  }
  return [x, y];
})()"""


class Person:
    def __init__(self, connection: CDPConnection, session: CDPSession) -> None:
        self.connection = connection
        self.session = session

    @classmethod
    async def at(cls, ws_url: str, target_id: str) -> Person:
        connection = CDPConnection(await WebSocketTransport.connect(ws_url))
        reply = await connection.root.send("Target.attachToTarget", {"targetId": target_id, "flatten": True})
        return cls(connection, connection.session(reply["sessionId"]))

    async def close(self) -> None:
        await self.connection.close()

    async def evaluate(self, expression: str) -> Any:
        reply = await self.session.send("Runtime.evaluate",
                                        {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in reply:
            raise AssertionError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    async def centre(self, expression: str) -> tuple[float, float]:
        x, y = await self.evaluate(CENTRE % expression)
        return float(x), float(y)

    async def click_at(self, x: float, y: float) -> None:
        await self.session.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
        for kind, buttons in (("mousePressed", 1), ("mouseReleased", 0)):
            await self.session.send("Input.dispatchMouseEvent", {
                "type": kind, "x": x, "y": y, "button": "left", "buttons": buttons, "clickCount": 1})

    async def click(self, expression: str) -> None:
        await self.click_at(*await self.centre(expression))

    async def type(self, text: str) -> None:
        for char in text:
            await self.session.send("Input.dispatchKeyEvent", {"type": "keyDown", "key": char, "text": char})
            await self.session.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": char})

    async def press(self, key: str, code: int, *, modifiers: int = 0, text: str | None = None) -> None:
        down: dict[str, Any] = {"type": "rawKeyDown" if text is None else "keyDown", "key": key, "code": key,
                                "windowsVirtualKeyCode": code, "modifiers": modifiers}
        if text is not None:
            down["text"] = text
        await self.session.send("Input.dispatchKeyEvent", down)
        await self.session.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": key, "code": key,
                                                            "windowsVirtualKeyCode": code, "modifiers": modifiers})

    async def enter(self) -> None:
        await self.press("Enter", 13, text="\r")

    async def wheel(self, x: float, y: float, delta_y: float) -> None:
        await self.session.send("Input.dispatchMouseEvent",
                                {"type": "mouseWheel", "x": x, "y": y, "deltaX": 0, "deltaY": delta_y})

    async def select(self, expression: str, label: str) -> None:
        """Choose an option the way a keyboard user does: focus the select, type the option's start."""
        await self.evaluate(f"({expression}).focus()")
        await self.type(label)


async def wait_for(predicate: Any, timeout: float = 10.0, interval: float = 0.05) -> None:
    """Poll `predicate` (it looks at what arrived from another process or connection) until true."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return
        if time.monotonic() > deadline:
            raise TimeoutError("the awaited condition did not come true in time")
        await asyncio.sleep(interval)


def dumps(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages, ensure_ascii=False)
