"""Frames of another origin that the tab's own process renders: 127.0.0.1:8001 inside 127.0.0.1:8000 is the
same site, so Chromium keeps it in the tab's process and gives it no target of its own. The walker cannot
reach into it (a cross-origin contentDocument is null), so each such frame is read by a world of its own
and joined to the page where its <iframe> stands, as a same-origin frame's document would be."""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import Any

from ...cdp import CDPError, CDPSession
from ..errors import BrowserError
from . import fast
from .snapshot import Document

Key = tuple[str | None, int]
Insets = tuple[float, float, float, float]


# The key, in `CDPSession.kept`, of "the last read met iframes of this tab's process that it could not enter".
_SEALED = "origins.sealed"


def frame_tree_soon(session: CDPSession) -> asyncio.Future[dict[str, Any]] | None:
    """The frame tree, asked for alongside the walk when the last read of this session needed it (a page with
    another origin's iframe keeps it from step to step): then it costs no round trip of its own."""
    if not session.kept.get(_SEALED):
        return None
    asked = asyncio.ensure_future(session.send("Page.getFrameTree"))
    asked.add_done_callback(lambda done: done.cancelled() or done.exception())  # unused when the iframe went
    return asked


async def read_other_origins(session: CDPSession, top: fast.FrameReading, main_frame: str, elsewhere: set[str],
                             asked: asyncio.Future[dict[str, Any]] | None = None, *,
                             owners_elsewhere: Collection[int] = ()) -> tuple[list[Document], dict[Key, Insets]]:
    """`top`'s documents with those of its other-origin frames in this process appended (each <iframe>
    pointing at its document), and the insets of the frames the added worlds found. `elsewhere`: frame ids
    rendered by other processes (their own targets), left to their sessions; `owners_elsewhere`: the walker's
    ids of their <iframe>s, where known. `asked`: the frame tree, if already asked for (`frame_tree_soon`)."""
    documents = list(top.documents)
    # Every iframe in view was walked from its parent, or is a frame with a target of its own (a cross-site
    # frame): no frame tree to ask for. (Asked at every step of a page with a cross-site frame, it cost ~0.5 ms.)
    in_process = set(top.sealed).difference(owners_elsewhere)
    session.kept[_SEALED] = bool(in_process)
    if not in_process:
        return documents, {}
    try:
        tree = (await (asked or session.send("Page.getFrameTree")))["frameTree"]
    except CDPError:
        return documents, {}
    roots: list[tuple[str, str]] = []  # (frame that needs a world of its own, the frame whose world holds its <iframe>)

    def visit(node: dict[str, Any], world_root: str, origin: str) -> None:
        for child in node.get("childFrames", []):
            frame = child["frame"]
            if frame["id"] in elsewhere:
                continue
            child_origin = frame.get("securityOrigin", "")
            if child_origin == origin:
                visit(child, world_root, origin)
            else:
                roots.append((frame["id"], world_root))
                visit(child, frame["id"], child_origin)

    visit(tree, main_frame, tree["frame"].get("securityOrigin", ""))
    if not roots:
        return documents, {}

    async def read(frame_id: str) -> fast.FrameReading | None:
        try:
            return await fast.read_frame(session, frame_id)
        except (CDPError, BrowserError):
            return None  # not loaded yet, or gone: nothing to show from it

    readings = dict(zip((frame for frame, _ in roots),
                        await asyncio.gather(*(read(frame) for frame, _ in roots)), strict=True))
    by_root: dict[str, fast.FrameReading | None] = {main_frame: top, **readings}
    insets: dict[Key, Insets] = {}
    for frame_id, parent_root in roots:
        reading, parent = readings[frame_id], by_root.get(parent_root)
        if reading is None or parent is None or not reading.documents:
            continue
        owner = await fast.frame_owner(parent.world, frame_id)
        place = _iframe_node(parent.documents, owner) if owner is not None else None
        if place is None:
            continue
        scope = f"{session.session_id}#{frame_id}"
        base = len(documents)
        for document in reading.documents:
            document.scope = scope
            document.content_document = {node: index + base for node, index in document.content_document.items()}
        documents.extend(reading.documents)
        place[0].content_document[place[1]] = base
        insets.update({(scope, node): value for (_, node), value in reading.insets.items()})
    return documents, insets


def _iframe_node(documents: list[Document], walker_id: int) -> tuple[Document, int] | None:
    for document in documents:
        for node, node_id in enumerate(document.backend_id):
            if node_id == walker_id and document.node_type[node] == 1 and document.tag(node) in ("iframe", "frame"):
                return document, node
    return None
