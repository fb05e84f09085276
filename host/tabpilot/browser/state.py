"""The browser state: what the model sees of the page (`text`) and the index → node map actions use.

`get_state` reads the tab (and each cross-site iframe) with tabpilot's in-page walker (`dom/walker.js`,
in an isolated world: near the viewport only), walks what it returned viewport-first and renders a
compact text. `read_page(..., snapshot=True)` reads whole-page DOM snapshots instead: same output.
Indices are stable: an element keeps its index from step to step for as
long as the document lives; elements that appeared since the previous state are marked `*[n]`."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..cdp import CDPError, CDPErrorKind, CDPSession
from ..textsafety import short_url
from .browser import Browser
from .dom import fast, origins, render
from .dom.icons import name_icons
from .dom.items import Found, MixedLine, TextLine
from .dom.snapshot import STYLES, Document, decode, hide_password_values, hide_shared_secrets, mark_passwords
from .dom.walk import Insets, Walker
from .elements import ElementRef
from .errors import BrowserError, PageCrashed, TabClosed
from .tab import FrameTarget, Tab

log = logging.getLogger(__name__)

Key = tuple[str | None, int]  # (owning session id, backendNodeId)
MAX_TABS_LISTED = 12
CURRENT_URL_LIMIT = 120  # characters of the current tab's URL in the header, read every step
OTHER_URL_LIMIT = 80
CRASH_NOTE = ("[The page crashed and tabpilot reloaded it: anything it held only in memory (typed text, "
              "scroll position, open menus) is gone]")
# No includeDOMRects: computing offset/scroll/client rects for every node doubles Chromium's work.
_SNAPSHOT_PARAMS: dict[str, Any] = {"computedStyles": STYLES, "includePaintOrder": True}


@dataclass(frozen=True)
class TabSummary:
    number: int
    url: str
    title: str
    active: bool


@dataclass
class BrowserState:
    url: str
    title: str
    tabs: list[TabSummary]
    viewport: tuple[int, int]
    scroll: tuple[int, int]
    page_size: tuple[int, int]
    pixels_above: int
    pixels_below: int
    text: str
    elements: dict[int, ElementRef]
    elements_above: int = 0
    elements_below: int = 0
    # Carried to the next step: which document this was, the index of every element seen, and the
    # keys of all interactive elements (listed or not) so that only truly new ones get marked.
    document_key: tuple[str, int] = ("", 0)
    indices: dict[Key, int] = field(default_factory=dict, repr=False)
    seen: set[Key] = field(default_factory=set, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "title": self.title,
            "tabs": [{"number": t.number, "url": t.url, "title": t.title, "active": t.active} for t in self.tabs],
            "viewport": list(self.viewport),
            "scroll": list(self.scroll),
            "page_size": list(self.page_size),
            "pixels_above": self.pixels_above,
            "pixels_below": self.pixels_below,
            "text": self.text,
            "elements": [
                {
                    "index": ref.index,
                    "tag": ref.tag,
                    "name": ref.name,
                    "role": ref.role,
                    "attributes": dict(ref.attributes),
                    "scrollable": ref.scrollable,
                    "new": ref.is_new,
                    "in_frame": ref.frame_owner is not None,
                    "bounds": list(ref.bounds) if ref.bounds else None,
                }
                for ref in self.elements.values()
            ],
        }


@dataclass
class PageReading:
    """Everything read from the browser for one state, before any processing."""

    tab: Tab
    documents: list[Document]  # the tab's own process: the top document, same-site frames
    frames: list[tuple[FrameTarget, list[Document], int]]  # (cross-site frame, its documents, owner <iframe> id)
    metrics: dict[str, Any]
    tabs: list[TabSummary]
    frame_insets: dict[Key, Insets]
    notes: list[str] = field(default_factory=list)  # what the model must know about this reading


async def get_state(
    browser: Browser,
    tab: Tab,
    previous: BrowserState | None = None,
    *,
    transform: Callable[[str], str] | None = None,
) -> BrowserState:
    """Read the tab as the model will see it. `transform` may rewrite the page part of the text
    (everything under the header), e.g. to redact or annotate a site's content."""
    return build_state(await read_page(browser, tab), previous, transform=transform)


async def read_page(browser: Browser, tab: Tab, *, snapshot: bool | None = None) -> PageReading:
    """The browser side of a state, for every process that renders part of the tab, concurrently: by
    default tabpilot's in-page walker (viewport-first); `snapshot=True` (or TABPILOT_STATE_SNAPSHOT=1)
    reads whole-page DOM snapshots instead."""
    if tab.closed:
        raise TabClosed("the tab was closed")
    try:
        await tab.track_frames()
    except CDPError as exc:
        _raise_if_closed(tab, exc)
        # A transport that cannot auto-attach still shows the page, without its cross-site frames.
        log.warning("cannot follow cross-site iframes: %s", exc)
    if snapshot is None:
        snapshot = os.environ.get("TABPILOT_STATE_SNAPSHOT", "") == "1"
    notes = []
    if tab.crashed:
        await _reload_after_crash(tab)
        notes.append(CRASH_NOTE)
    try:
        reading = await tab.unless_crashed(_read_once(browser, tab, snapshot), "tabpilot read it")
    except PageCrashed:
        await _reload_after_crash(tab)
        notes.append(CRASH_NOTE)
        reading = await tab.unless_crashed(_read_once(browser, tab, snapshot), "tabpilot read it")
    except BrowserError as exc:
        if snapshot or isinstance(exc, TabClosed):
            raise
        # The walker could not read this page (it threw, or the page stopped answering it): whole-page DOM
        # snapshots need no script in the page. The next read starts with fresh worlds.
        log.warning("reading the page with DOM snapshots: the in-page walker failed (%s)", exc)
        for session in (tab.session, *(frame.session for frame in tab.frames.values())):
            fast.forget(session)
        reading = await tab.unless_crashed(_read_once(browser, tab, True), "tabpilot read it")
    notes += tab.load_dialogs  # the page's first look says what it showed while it loaded
    tab.load_dialogs.clear()
    reading.notes[:0] = notes
    return reading


async def _reload_after_crash(tab: Tab) -> None:
    log.warning("the page in %r crashed: reloading it", tab)
    fast.forget(tab.session)
    try:
        await tab.reload_after_crash()
    except CDPError as exc:
        _raise_if_closed(tab, exc)
        raise BrowserError(f"the page crashed and could not be reloaded: {exc}") from exc


async def _read_once(browser: Browser, tab: Tab, snapshot: bool) -> PageReading:
    try:
        # The page's commands are sent first: the tab list is not on the way to the answer.
        (metrics, documents, frames, insets), tabs = await asyncio.gather(
            _read_snapshots(tab) if snapshot else _read_with_walker(tab), _tab_summaries(browser, tab, after=2))
    except CDPError as exc:
        _raise_if_closed(tab, exc)
        raise BrowserError(f"could not read the page: {exc}") from exc
    return PageReading(tab, documents, frames, metrics, tabs, insets)


Frames = list[tuple[FrameTarget, list[Document], int]]
Read = tuple[dict[str, Any], list[Document], Frames, dict[Key, Insets]]  # layout metrics and what was read


def _prepare_frame(tab: Tab, frame: FrameTarget) -> None:
    """A cross-site frame that attaches is ready for its first look: its world is made, and its <iframe> is
    looked up in its parent's document while the page loads."""
    fast.prepare(frame.session, frame.frame_id, install=True)
    parent_frame = _frame_of(tab, frame.parent)
    if parent_frame is not None:
        fast.prepare_owner(frame.parent, parent_frame, frame.frame_id)


def _frame_of(tab: Tab, session: CDPSession) -> str | None:
    """The frame whose document `session` reads with the walker: the tab's main frame, or a cross-site frame's."""
    if session is tab.session:
        return tab.main_frame_id
    return next((frame.frame_id for frame in tab.frames.values() if frame.session is session), None)


async def _read_with_walker(tab: Tab) -> Read:
    main_frame = tab.main_frame_id or (await tab.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
    if not any(getattr(watcher, "func", None) is _prepare_frame for watcher in tab.frame_watchers):
        tab.frame_watchers.append(functools.partial(_prepare_frame, tab))

    async def one(frame: FrameTarget) -> tuple[FrameTarget, fast.FrameReading] | None:
        try:
            return frame, await fast.read_frame(frame.session, frame.frame_id)
        except (CDPError, BrowserError):
            return None  # the frame went away, or is not rendered: nothing to show from it

    targets = list(tab.frames.values())
    top_read = asyncio.ensure_future(fast.read_frame(tab.session, main_frame))
    frame_reads = {frame.session.session_id: asyncio.ensure_future(one(frame)) for frame in targets}
    tree = origins.frame_tree_soon(tab.session)  # sent after the walks' commands: nothing waits on it first

    async def owner(frame: FrameTarget) -> tuple[fast.World, int | None] | None:
        # Each frame's <iframe> is looked up as soon as tabpilot's world in its parent is there, while the
        # frames are read: at a first look that was three round trips after all the reads.
        asked = fast.ask_frame_owner(frame.parent, frame.frame_id)
        frame_id = main_frame if frame.parent is tab.session else _frame_of(tab, frame.parent)
        if frame_id is None:
            return None
        try:
            world = await fast.world_of(frame.parent, frame_id)
        except CDPError:
            return None  # the parent's read says why
        return world, await fast.frame_owner(world, frame.frame_id, asked)

    try:
        top, others, owners = await asyncio.gather(
            top_read, asyncio.gather(*frame_reads.values()), asyncio.gather(*(owner(frame) for frame in targets)))
    except BaseException:
        for pending in (top_read, *frame_reads.values()):
            pending.cancel()
        raise
    owners_here = [found[1] for found in owners if found is not None and found[0] is top.world and found[1]]
    documents, insets = await origins.read_other_origins(tab.session, top, main_frame, set(tab.frames), tree,
                                                         owners_elsewhere=owners_here)
    insets.update(top.insets)
    read_in = {tab.session.session_id: top.world, **{r[0].session.session_id: r[1].world for r in others if r}}
    frames = []
    for reading, found in zip(others, owners, strict=True):
        if reading is None:
            continue
        frame = reading[0]
        insets.update(reading[1].insets)
        world = read_in.get(frame.parent.session_id)
        if world is None:
            continue
        # The parent's document was replaced during the read: its <iframe> is looked up in the new one.
        if found is not None and found[0] is world:
            owner_id = found[1]
        else:
            owner_id = await fast.frame_owner(world, frame.frame_id)
        if owner_id is not None:
            frames.append((frame, reading[1].documents, owner_id))
    readings = {tab.session.session_id: documents, **{frame.session.session_id: each for frame, each, _ in frames}}
    parents = {frame.session.session_id: frame.parent.session_id for frame, _, _ in frames}

    def within(outer: str | None, session_id: str | None) -> bool:
        while session_id is not None and session_id != outer:
            session_id = parents.get(session_id)
        return session_id == outer

    for outer, walked in readings.items():
        hide_shared_secrets(walked, [document for session_id, each in readings.items() if within(outer, session_id)
                                     for document in each])
    # The walker measured the visual viewport as it walked (what Page.getLayoutMetrics would say).
    metrics = {"cssVisualViewport": {"clientWidth": top.viewport[0], "clientHeight": top.viewport[1]}}
    return metrics, documents, frames, insets


async def _read_snapshots(tab: Tab) -> Read:
    main_frame = tab.main_frame_id or (await tab.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
    metrics, snapshot, raw_frames, passwords = await asyncio.gather(
        tab.send("Page.getLayoutMetrics"), _capture_with_retry(tab), _capture_frames(tab),
        fast.remembered_passwords(tab.session, main_frame))
    insets = await _frame_insets(tab, snapshot, raw_frames)
    frames = [(frame, decode(reply, frame.session), owner_id) for frame, reply, owner_id in raw_frames]
    documents = decode(snapshot, tab.session)
    mark_passwords(documents, passwords)
    hide_password_values([*documents, *(document for _, each, _ in frames for document in each)])
    for frame_documents in (documents, *(each for _, each, _ in frames)):
        name_icons(frame_documents)
    return metrics, documents, frames, insets


def build_state(
    reading: PageReading, previous: BrowserState | None = None, *, transform: Callable[[str], str] | None = None
) -> BrowserState:
    """The Python side of a state: documents → what is offered → text and index map."""
    tab, metrics, tabs = reading.tab, reading.metrics, reading.tabs
    top_documents = reading.documents
    if not top_documents:
        raise BrowserError("the page has no document to read")
    top = top_documents[0]
    # The tab being read goes by the title its document was read with (the browser's list has it as the page
    # set it, where a password field's value the page echoed there would still be).
    tabs = [dataclasses.replace(t, title=top.title) if t.active else t for t in tabs]
    snapshots: dict[str | None, list[Document]] = {tab.session.session_id: top_documents}
    by_owner: dict[Key, Document] = {}
    for frame, documents, owner_id in reading.frames:
        if documents:
            snapshots[frame.session.session_id] = documents
            by_owner[(frame.parent.session_id, owner_id)] = documents[0]

    def frame_document(document: Document, node: int) -> Document | None:
        index = document.content_document.get(node)
        if index is not None:
            siblings = snapshots.get(document.session.session_id, [])
            return siblings[index] if 0 <= index < len(siblings) else None
        return by_owner.get((document.session.session_id, document.backend_id[node]))

    viewport_css = metrics.get("cssVisualViewport", {})
    width = int(viewport_css.get("clientWidth", 0))
    height = int(viewport_css.get("clientHeight", 0))
    scroll_x, scroll_y = top.scroll_x, top.scroll_y
    walker = Walker((scroll_x, scroll_y, float(width), float(height)), frame_document, reading.frame_insets)
    result = walker.walk(top)
    items = render.merge_single_lines(result.items)

    document_key = (top.frame_id, top.backend_id[0] if top.backend_id else 0)
    same_document = previous is not None and previous.document_key == document_key
    indices: dict[Key, int] = dict(previous.indices) if same_document and previous else {}
    next_index = max(indices.values(), default=0) + 1
    elements: dict[int, ElementRef] = {}
    lines: list[str] = []

    def offer(found: Found, inline: bool = False) -> str:
        """Index `found` (keeping the index it had), make its ElementRef, return its markup."""
        nonlocal next_index
        key = found.key
        if key not in indices:
            indices[key] = next_index
            next_index += 1
        index = indices[key]
        is_new = same_document and previous is not None and key not in previous.seen
        shown = render.shown_attributes(found, top.url)
        elements[index] = _element_ref(found, index, is_new, shown, scroll_x, scroll_y)
        return render.element_line(found, index, is_new, shown, inline=inline)

    for item in items:
        if isinstance(item, TextLine):
            lines.append("\t" * item.depth + item.text)
        elif isinstance(item, MixedLine):
            text = "".join(offer(part, inline=True) if isinstance(part, Found) else part for part in item.parts)
            lines.append("\t" * item.depth + item.prefix + " ".join(text.split()).strip("| "))
        else:
            lines.append("\t" * item.depth + offer(item))

    page_width, page_height = int(top.content_width), int(top.content_height)
    above = max(0, int(scroll_y))
    below = max(0, page_height - height - int(scroll_y))
    body = "\n".join(lines)
    if transform is not None:
        body = transform(body)
    text = "\n".join([
        *_header(top, tabs, width, height, page_width, page_height),
        *reading.notes,
        _edge("above", above, result.above),
        body,
        _edge("below", below, result.below),
    ])
    return BrowserState(
        url=top.url,
        title=top.title,
        tabs=tabs,
        viewport=(width, height),
        scroll=(int(scroll_x), int(scroll_y)),
        page_size=(page_width, page_height),
        pixels_above=above,
        pixels_below=below,
        text=text,
        elements=elements,
        elements_above=result.above,
        elements_below=result.below,
        document_key=document_key,
        indices=indices,
        seen=result.seen,
    )


async def _capture_with_retry(tab: Tab) -> dict[str, Any]:
    """A page in the middle of replacing its document can refuse a snapshot; one retry covers that."""
    try:
        return await tab.send("DOMSnapshot.captureSnapshot", _SNAPSHOT_PARAMS, timeout=30.0)
    except CDPError:
        await asyncio.sleep(0.3)
        return await tab.send("DOMSnapshot.captureSnapshot", _SNAPSHOT_PARAMS, timeout=30.0)


async def _capture_frames(tab: Tab) -> list[tuple[FrameTarget, dict[str, Any], int]]:
    async def one(frame: FrameTarget) -> tuple[FrameTarget, dict[str, Any], int] | None:
        try:
            owner, snapshot = await asyncio.gather(
                frame.parent.send("DOM.getFrameOwner", {"frameId": frame.frame_id}, timeout=10.0),
                frame.session.send("DOMSnapshot.captureSnapshot", _SNAPSHOT_PARAMS, timeout=10.0),
            )
        except CDPError:
            return None  # the frame went away, or is not rendered: nothing to show from it
        return frame, snapshot, owner["backendNodeId"]

    results = await asyncio.gather(*(one(frame) for frame in list(tab.frames.values())))
    return [r for r in results if r is not None]


def _raise_if_closed(tab: Tab, exc: CDPError) -> None:
    """A command failed because the tab itself is gone: say so, as TabClosed."""
    if exc.kind is CDPErrorKind.TARGET_GONE:
        tab.closed = True
        raise TabClosed("the tab was closed") from exc


async def _frame_insets(
    tab: Tab, snapshot: dict[str, Any], frames: list[tuple[FrameTarget, dict[str, Any], int]]
) -> dict[Key, Insets]:
    """Border + padding of every <iframe> whose document is shown: where that document starts inside it."""
    owners: list[tuple[CDPSession, int]] = []
    for session, reply in [(tab.session, snapshot), *((f.session, r) for f, r, _ in frames)]:
        for document in reply.get("documents", []):
            nodes = document["nodes"]
            backend = nodes["backendNodeId"]
            owners += [(session, backend[i]) for i in (nodes.get("contentDocumentIndex") or {}).get("index", [])]
    owners += [(frame.parent, owner_id) for frame, _, owner_id in frames]
    if not owners:
        return {}

    async def one(session: CDPSession, backend_id: int) -> tuple[Key, Insets] | None:
        try:
            model = (await session.send("DOM.getBoxModel", {"backendNodeId": backend_id}, timeout=5.0))["model"]
        except (CDPError, KeyError):
            return None
        border, content = model["border"], model["content"]
        insets = (content[0] - border[0], content[1] - border[1], border[4] - content[4], border[5] - content[5])
        return (session.session_id, backend_id), insets

    results = await asyncio.gather(*(one(session, backend_id) for session, backend_id in owners))
    return dict(r for r in results if r is not None)


async def _tab_summaries(browser: Browser, tab: Tab, *, after: int = 0) -> list[TabSummary]:
    """The tabs, asked for after `after` turns of the event loop: the walker's first commands are sent in the
    read's third turn, so with 2 the tab list goes out in the same write, after them. Sent first, it went out
    alone, and under load the page's commands left up to ~5 ms later (the woken browser took the core)."""
    for _ in range(after):
        await asyncio.sleep(0)
    try:
        infos = await browser.tabs()
    except CDPError:
        return []
    browser.tab_number(tab.target_id)  # the tab being worked in is numbered first: getTargets' order varies
    return [
        TabSummary(browser.tab_number(info.target_id), info.url, info.title, info.target_id == tab.target_id)
        for info in infos
    ]


def _element_ref(found: Found, index: int, is_new: bool, shown: dict[str, str], scroll_x: float,
                 scroll_y: float) -> ElementRef:
    x, y, w, h = found.rect
    document = found.document
    backend_node_id = document.backend_node_id(found.node)
    return ElementRef(
        index=index,
        backend_node_id=backend_node_id,
        locate=functools.partial(document.locate, document.backend_id[found.node])
        if not backend_node_id and document.locate is not None else None,
        session=document.session,
        tag=found.tag,
        name=render.accessible_name(found),
        role=found.attrs.get("role", "").split(" ")[0].lower() or None,
        attributes=shown,
        frame_owner=_frame_owner(found.document),
        scrollable=found.scroll is not None,
        is_new=is_new,
        bounds=(x - scroll_x, y - scroll_y, w, h),
        point=(found.point[0] - scroll_x, found.point[1] - scroll_y) if found.point else None,
    )


def _frame_owner(document: Document) -> ElementRef | None:
    """For a node in a cross-site iframe: the <iframe> element hosting its frame, in the parent's session."""
    while document.owner is not None:
        parent, node = document.owner
        if parent.session is not document.session:
            return ElementRef(
                index=0,
                backend_node_id=parent.backend_node_id(node),
                session=parent.session,
                tag="iframe",
                frame_owner=_frame_owner(parent),
            )
        document = parent
    return None


def _header(top: Document, tabs: list[TabSummary], width: int, height: int, page_width: int,
            page_height: int) -> list[str]:
    current = next((t for t in tabs if t.active), None)
    number = f" [{current.number}]" if current else ""
    lines = [f"Current tab{number}: {_title(top.title)}{short_url(top.url, CURRENT_URL_LIMIT)}"]
    others = [f"[{t.number}] {_title(t.title if t.title != t.url else '')}{_short(t.url)}"
              for t in tabs if not t.active]
    if len(others) > MAX_TABS_LISTED:
        others = [*others[:MAX_TABS_LISTED], f"… {len(others) - MAX_TABS_LISTED} more"]
    if others:
        lines.append("Other tabs: " + "; ".join(others))
    lines.append(f"Viewport {width}x{height} of page {page_width}x{page_height}")
    return lines


def _title(title: str) -> str:
    title = " ".join(title.split())
    return f"{render.rules.shorten(title, 80)} — " if title else ""


def _short(url: str) -> str:
    return short_url(url, OTHER_URL_LIMIT)


def _edge(where: str, pixels: int, elements: int) -> str:
    if pixels <= 0 and elements == 0:
        return "[top of page]" if where == "above" else "[end of page]"
    count = f"{elements} interactive element{'s' if elements != 1 else ''}"
    return f"[{pixels}px {where}: {count}]"

