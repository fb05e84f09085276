"""The index → node map that the model's view of the page refers to, and that actions act on."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from ..cdp import CDPSession


@dataclass(eq=False)
class ElementRef:
    """One interactive element the model can name by index.

    `session` is the CDP session of the frame target that owns the node: the tab's own session for the
    top document, same-origin iframes and shadow roots; an out-of-process iframe's own session for a
    frame on another site. `frame_owner` is then the <iframe> element (in the parent's session) that
    hosts that frame, so an action can turn frame coordinates into tab viewport coordinates.

    `backend_node_id` is 0 until an action needs it when the state reader left it to `locate` (the first
    look at a page would otherwise look up every listed element): use `nodes.node_id`."""

    index: int
    backend_node_id: int
    session: CDPSession
    tag: str
    name: str = ""
    role: str | None = None
    attributes: dict[str, str] = field(default_factory=dict)
    frame_owner: ElementRef | None = None
    scrollable: bool = False
    is_new: bool = False
    # The element's visible box (x, y, width, height) in CSS px of the tab's viewport when the state was
    # read: a hint only, the page may have moved since.
    bounds: tuple[float, float, float, float] | None = None
    # A point (x, y) of it, in the same coordinates, where nothing else was on top (a sticky header may
    # cover its centre).
    point: tuple[float, float] | None = None
    locate: Callable[[], Awaitable[int | None]] | None = field(default=None, repr=False)
