"""Where to press: scroll an element into view, find a point on it in tab viewport coordinates, check
what is really on top there, and dispatch trusted mouse events at that point.

Measured on Chromium 156: DOM.getContentQuads in the tab's session gives tab viewport coordinates, also
for nodes in same-process iframes; in an out-of-process iframe's session it gives coordinates in that
frame's own viewport, so the <iframe>'s content-box origin (DOM.getBoxModel in the parent) is added.
DOM.getNodeForLocation, unlike the quads, takes document coordinates (viewport + the frame's scroll).
Mouse events always go to the tab's session, which routes them into the right frame."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from ..cdp import CDPError, CDPSession
from .elements import ElementRef
from .errors import ActionError
from .nodes import RemoteObject, call, describe, node_id, release, send
from .tab import Tab

CONTAINS_FUNCTION = """function(hit) {
  for (let n = hit; n; n = n.parentNode || n.host) { if (n === this) return true; }
  const el = hit.nodeType === 1 ? hit : hit.parentElement;
  const label = el && el.closest('label');
  return !!(label && label.control === this);
}"""

SHORT_DESCRIPTION_FUNCTION = """function() {
  const e = this.nodeType === 1 ? this : this.parentElement;
  if (!e) return 'something';
  let s = e.localName;
  if (e.id) s += '#' + e.id;
  const role = e.getAttribute('role');
  if (role) s += ` (${role})`;
  const text = (e.getAttribute('aria-label') || e.innerText || '').trim().replace(/\\s+/g, ' ');
  return text ? `${s} '${text.length > 50 ? text.slice(0, 49) + '…' : text}'` : s;
}"""


@dataclass(frozen=True)
class Aim:
    x: float  # tab viewport coordinates
    y: float
    covered_by: str | None = None  # set when every point of the element is under something else


def _owner_chain(element: ElementRef) -> list[ElementRef]:
    """The <iframe> elements around `element`, outermost first."""
    chain: list[ElementRef] = []
    owner = element.frame_owner
    while owner is not None:
        chain.append(owner)
        owner = owner.frame_owner
    return list(reversed(chain))


async def scroll_into_view(tab: Tab, element: ElementRef) -> None:
    for node in [*_owner_chain(element), element]:
        await send(tab, node.session, "DOM.scrollIntoViewIfNeeded", {"backendNodeId": await node_id(tab, node)},
                   element=element)
    if element.frame_owner is not None:
        await _frames_at_rest(tab, element)


async def _frames_at_rest(tab: Tab, element: ElementRef, *, tries: int = 10, interval: float = 0.03) -> None:
    """Scrolling inside an out-of-process frame can also scroll the pages around it, and that happens in
    other renderers after the command has returned: wait until the frame stops moving before aiming."""
    last = await frame_origin(tab, element)
    for _ in range(tries):
        await asyncio.sleep(interval)
        now = await frame_origin(tab, element)
        if now == last:
            return
        last = now


async def frame_origin(tab: Tab, element: ElementRef) -> tuple[float, float]:
    """Where the top-left of the element's own frame viewport is, in tab viewport coordinates."""
    x = y = 0.0
    for owner in _owner_chain(element):
        box = await send(tab, owner.session, "DOM.getBoxModel", {"backendNodeId": await node_id(tab, owner)},
                         element=element)
        content = box["model"]["content"]
        x += content[0]
        y += content[1]
    return x, y


@dataclass(frozen=True)
class _Viewport:
    width: float
    height: float
    scroll_x: float  # DOM.getNodeForLocation takes document coordinates: viewport point + scroll offset
    scroll_y: float


async def _viewport(tab: Tab, session: CDPSession, element: ElementRef) -> _Viewport:
    metrics = await send(tab, session, "Page.getLayoutMetrics", element=element)
    viewport = metrics.get("cssLayoutViewport") or metrics["layoutViewport"]
    return _Viewport(float(viewport["clientWidth"]), float(viewport["clientHeight"]),
                     float(viewport.get("pageX", 0)), float(viewport.get("pageY", 0)))


def _candidate_points(quads: list[list[float]], width: float, height: float) -> list[tuple[float, float]]:
    """Visible points on the element: the centre of each visible part first, then a grid on the first."""
    boxes = []
    for quad in quads:
        xs, ys = quad[0::2], quad[1::2]
        left, right = max(min(xs), 0.0), min(max(xs), width)
        top, bottom = max(min(ys), 0.0), min(max(ys), height)
        if right - left >= 1 and bottom - top >= 1:
            boxes.append((left, top, right, bottom))
    points = [((left + right) / 2, (top + bottom) / 2) for left, top, right, bottom in boxes]
    if boxes:
        left, top, right, bottom = boxes[0]
        for fy in (0.25, 0.5, 0.75):
            for fx in (0.2, 0.5, 0.8):
                points.append((left + (right - left) * fx, top + (bottom - top) * fy))
    return points


async def _node_at(tab: Tab, element: ElementRef, owner: ElementRef | None, x: float, y: float) -> int | None:
    """What is on top at viewport point (x, y) of the element's frame (or of the frame holding `owner`)."""
    session = owner.session if owner is not None else element.session
    viewport = await _viewport(tab, session, element)
    try:
        hit = await session.send(
            "DOM.getNodeForLocation",
            {"x": round(x + viewport.scroll_x), "y": round(y + viewport.scroll_y), "includeUserAgentShadowDOM": False},
            timeout=10,
        )
    except CDPError:
        return None  # nothing there (outside the document) counts as "not the element"
    return hit.get("backendNodeId")


async def _hits_element(tab: Tab, element: ElementRef, object_id: str, hit_backend_id: int | None) -> bool:
    if hit_backend_id is None:
        return False
    if hit_backend_id == await node_id(tab, element):
        return True
    resolved = await send(tab, element.session, "DOM.resolveNode", {"backendNodeId": hit_backend_id},
                          element=element)
    hit_object = resolved["object"].get("objectId")
    if not hit_object:
        return False
    try:
        return bool(await call(tab, element, object_id, CONTAINS_FUNCTION, RemoteObject(hit_object)))
    finally:
        await release(tab, element.session, hit_object)


async def _describe_node(
    tab: Tab, element: ElementRef, backend_id: int | None, session_owner: ElementRef | None
) -> str:
    if backend_id is None:
        return "something outside the page"
    session = session_owner.session if session_owner is not None else element.session
    resolved = await send(tab, session, "DOM.resolveNode", {"backendNodeId": backend_id}, element=element)
    object_id = resolved["object"].get("objectId")
    if not object_id:
        return "something else"
    probe = ElementRef(element.index, backend_id, session, "")
    try:
        return str(await call(tab, probe, object_id, SHORT_DESCRIPTION_FUNCTION))
    finally:
        await release(tab, session, object_id)


async def aim(tab: Tab, element: ElementRef, object_id: str) -> Aim:
    """Scroll the element into view and pick the point a person would press."""
    before = await _viewport(tab, tab.session, element)
    await scroll_into_view(tab, element)
    after = await _viewport(tab, tab.session, element)
    if element.frame_owner is not None or (before.scroll_x, before.scroll_y) != (after.scroll_x, after.scroll_y):
        await _next_frame(tab, element)
    quads = (await send(tab, element.session, "DOM.getContentQuads", {"backendNodeId": await node_id(tab, element)},
                        element=element)).get("quads", [])
    if not quads:
        raise ActionError(f"{describe(element)} is not visible on the page (it has no size), so it cannot be used.")
    viewport = await _viewport(tab, element.session, element)
    points = _candidate_points(quads, viewport.width, viewport.height)
    if not points:
        raise ActionError(f"{describe(element)} is outside the visible part of the page even after scrolling.")
    origin_x, origin_y = await frame_origin(tab, element)
    owners = _owner_chain(element)
    first_blocker: tuple[int | None, ElementRef | None] | None = None
    for x, y in points:
        blocker: tuple[int | None, ElementRef | None] | None = await _frame_blocker(
            tab, element, owners, x + origin_x, y + origin_y)
        if blocker is None:
            hit = await _node_at(tab, element, None, x, y)
            if await _hits_element(tab, element, object_id, hit):
                return Aim(x + origin_x, y + origin_y)
            blocker = (hit, None)
        if first_blocker is None:
            first_blocker = blocker
    assert first_blocker is not None
    covered_by = await _describe_node(tab, element, first_blocker[0], first_blocker[1])
    x, y = points[0]
    return Aim(x + origin_x, y + origin_y, covered_by)


async def _frame_blocker(
    tab: Tab, element: ElementRef, owners: list[ElementRef], tab_x: float, tab_y: float
) -> tuple[int | None, ElementRef] | None:
    """For an element inside iframes: what covers one of its <iframe>s at that point, if anything."""
    x, y = tab_x, tab_y
    for owner in owners:
        origin_x, origin_y = await frame_origin(tab, owner)
        hit = await _node_at(tab, element, owner, x - origin_x, y - origin_y)
        if hit != await node_id(tab, owner):
            return hit, owner
    return None


async def _next_frame(tab: Tab, element: ElementRef) -> None:
    """Wait until the browser has drawn the scrolled page. It routes a mouse event to a frame by what it
    last drew, so right after a scroll an event meant for a cross-site iframe could land beside it (seen:
    the click reached no frame). Bounded, for a tab in the background that draws nothing."""
    await send(tab, tab.session, "Runtime.evaluate", {
        "expression": "new Promise((done) => { requestAnimationFrame(() => requestAnimationFrame(done));"
                      " setTimeout(done, 200); })",
        "awaitPromise": True,
    }, element=element, timeout=5)


async def mouse_click(tab: Tab, x: float, y: float) -> None:
    await mouse_move(tab, x, y)
    for kind, buttons in (("mousePressed", 1), ("mouseReleased", 0)):
        await send(tab, tab.session, "Input.dispatchMouseEvent",
                   {"type": kind, "x": x, "y": y, "button": "left", "buttons": buttons, "clickCount": 1})


async def mouse_move(tab: Tab, x: float, y: float) -> None:
    await send(tab, tab.session, "Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y, "button": "none"})
