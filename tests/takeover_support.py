"""A person at the browser, for takeover tests: a second CDP connection of its own (like a real mouse
and keyboard, its input arrives `isTrusted`, and nothing of tabpilot dispatched it)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from tabpilot.cdp import CDPConnection, CDPSession, WebSocketTransport

# The centre of an element in page coordinates, through same-origin frames (`expression` yields it),
# scrolled into view.
CENTRE = """(() => {
  let el = %s;
  el.scrollIntoView({block: "center"});
  const r = el.getBoundingClientRect();
  let x = r.left + r.width / 2, y = r.top + r.height / 2;
  for (let win = el.ownerDocument.defaultView; win.frameElement; win = win.parent) {
    const f = win.frameElement.getBoundingClientRect();
    x += f.left + win.frameElement.clientLeft; y += f.top + win.frameElement.clientTop;
  }
  return [x, y];
})()"""
# Whether the element is under the pointer, as the page itself sees it: a mouse move reaches the page with
# the next animation frame.
POINTED = """(async () => {
  const el = %s;
  await new Promise((done) => requestAnimationFrame(done));
  return el.matches(":hover");
})()"""
POINTER_TRIES = 100  # mouse moves (each looked at a frame later), or Shift presses
# A click whose keys never reach its element's document went where the browser last drew something else (a
# cross-site frame, just scrolled away): a person clicks again. On two workers under load, one such press kept the
# focus in the frame through 100 Shift presses.
CLICK_TRIES = 5
PRESSES_PER_CLICK = 20
# A Shift press (it types nothing) and whether it reached the document of the element (`%s`): the browser
# sends keys to the frame it last heard took the focus, which a press into another process changes later.
KEYS_PROBE = """(() => {
  const win = (%s).ownerDocument.defaultView;
  if (win.__personKeys === undefined) {
    win.__personKeys = 0;
    win.addEventListener("keydown", (e) => { if (e.key === "Shift") win.__personKeys++; }, true);
  }
  return win.__personKeys;
})()"""


async def evaluate(session: CDPSession, expression: str) -> Any:
    reply = await session.send("Runtime.evaluate",
                               {"expression": expression, "returnByValue": True, "awaitPromise": True})
    if "exceptionDetails" in reply:
        raise AssertionError(f"{expression}: {reply['exceptionDetails']}")
    return reply["result"].get("value")


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
        return await evaluate(self.session, expression)

    async def centre(self, expression: str) -> tuple[float, float]:
        x, y = await self.evaluate(CENTRE % expression)
        return float(x), float(y)

    async def move_to(self, x: float, y: float) -> None:
        await self.session.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})

    async def press_button(self, x: float, y: float) -> None:
        for kind, buttons in (("mousePressed", 1), ("mouseReleased", 0)):
            await self.session.send("Input.dispatchMouseEvent", {
                "type": kind, "x": x, "y": y, "button": "left", "buttons": buttons, "clickCount": 1})

    async def click(self, expression: str) -> None:
        """Click the element's centre once the pointer is on it.

        The browser sends a press to what its last drawn picture of the page has at that point, not to what
        the page's layout has: a click just after a scroll can land where a cross-site frame used to be (CI:
        the click on Email went into the frame that the jump to #docs had put there, and the typing after it
        was lost). Waiting two frames after the scroll was not always enough; the page saying `:hover` is."""
        for _ in range(CLICK_TRIES):
            x, y = await self.centre(expression)
            await self.point(self.session, expression, x, y)
            await self.press_button(x, y)
            if await self._keys_reached(self.session, expression, PRESSES_PER_CLICK):
                return
        raise AssertionError(f"keys never reached the document of {expression}")

    async def click_in_frame(self, frame: CDPSession, iframe: str, expression: str) -> None:
        """Click an element of a cross-site frame: `frame` is that frame's own session (its process), `iframe`
        the page's element that hosts it."""
        await self.centre(iframe)  # scrolls it into view
        left, top = await self.evaluate(f"(() => {{ const f = {iframe}, r = f.getBoundingClientRect(); "
                                        "return [r.left + f.clientLeft, r.top + f.clientTop]; })()")
        x, y = await evaluate(frame, f"(() => {{ const r = ({expression}).getBoundingClientRect(); "
                                     "return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        await self.point(frame, expression, left + x, top + y)
        await self.press_button(left + x, top + y)
        await self.keys_reach(frame, expression)

    async def point(self, where: CDPSession, expression: str, x: float, y: float) -> None:
        """Move the pointer to (x, y) until the element (`expression`, evaluated in `where`) is under it."""
        for _ in range(POINTER_TRIES):
            await self.move_to(x, y)
            if await evaluate(where, POINTED % expression):
                return
        raise AssertionError(f"the pointer at ({x:.0f}, {y:.0f}) never got onto {expression}")

    async def keys_reach(self, where: CDPSession, expression: str) -> None:
        """Press Shift until the element's document gets it: from then on what is typed goes there."""
        if not await self._keys_reached(where, expression, POINTER_TRIES):
            raise AssertionError(f"keys never reached the document of {expression}")

    async def _keys_reached(self, where: CDPSession, expression: str, presses: int) -> bool:
        before = await evaluate(where, KEYS_PROBE % expression)
        for _ in range(presses):
            await self.press("Shift", 16)
            if await evaluate(where, KEYS_PROBE % expression) > before:
                return True
        return False

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
