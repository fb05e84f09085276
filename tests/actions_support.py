"""Test helpers for the actions: ElementRefs from CSS selectors, cross-origin frame sessions, page logs."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tabpilot.browser.browser import Browser
from tabpilot.browser.elements import ElementRef
from tabpilot.browser.tab import Tab
from tabpilot.cdp import CDPSession

_index = iter(range(1, 1_000_000))


async def ref(
    session: CDPSession | Tab,
    selector: str,
    *,
    name: str = "",
    frame_owner: ElementRef | None = None,
) -> ElementRef:
    """The ElementRef of the first node matching `selector` ("host >>> inner" looks inside an open shadow
    root) in the document of `session` (a Tab, or an out-of-process frame's session)."""
    cdp = session.session if isinstance(session, Tab) else session
    steps = [s.strip() for s in selector.split(">>>")]
    expression = f"document.querySelector({json.dumps(steps[0])})"
    for step in steps[1:]:
        expression = f"({expression}).shadowRoot.querySelector({json.dumps(step)})"
    reply = await cdp.send("Runtime.evaluate", {"expression": expression})
    object_id = reply["result"].get("objectId")
    assert object_id, f"no element matches {selector!r}"
    node = (await cdp.send("DOM.describeNode", {"objectId": object_id}))["node"]
    await cdp.send("Runtime.releaseObject", {"objectId": object_id})
    attributes = node.get("attributes", [])
    attrs = dict(zip(attributes[::2], attributes[1::2], strict=True))
    return ElementRef(
        index=next(_index),
        backend_node_id=node["backendNodeId"],
        session=cdp,
        tag=node["localName"],
        name=name,
        role=attrs.get("role"),
        attributes=attrs,
        frame_owner=frame_owner,
    )


async def frame_session(browser: Browser, url_part: str, timeout: float = 10.0) -> CDPSession:
    """Attach to the out-of-process iframe target whose URL contains `url_part`."""
    root = browser.connection.root
    async with asyncio.timeout(timeout):
        while True:
            targets = (await root.send("Target.getTargets"))["targetInfos"]
            frames = [t for t in targets if t["type"] == "iframe" and url_part in t["url"]]
            if frames:
                break
            await asyncio.sleep(0.05)
    reply = await root.send("Target.attachToTarget", {"targetId": frames[0]["targetId"], "flatten": True})
    session = browser.connection.session(reply["sessionId"])
    await session.send("Runtime.runIfWaitingForDebugger")
    async with asyncio.timeout(timeout):
        while True:
            if await evaluate(session, "document.readyState") == "complete":
                break
            await asyncio.sleep(0.05)
    return session


async def evaluate(session: CDPSession | Tab, expression: str) -> Any:
    cdp = session.session if isinstance(session, Tab) else session
    reply = await cdp.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
    assert "exceptionDetails" not in reply, reply["exceptionDetails"]
    return reply["result"].get("value")


async def events(session: CDPSession | Tab, type_: str | None = None) -> list[dict[str, Any]]:
    """What the page's own script recorded in window.__events (optionally only one type)."""
    recorded = await evaluate(session, "window.__events")
    return [e for e in recorded if type_ is None or e["type"] == type_]


async def wait_until(predicate, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while True:
            if await predicate():
                return
            await asyncio.sleep(0.05)
