"""find_text: the places of a page that show some words, counted in the order a person reads them (other sites'
frames where their <iframe> stands), and the one asked for brought into view."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from ..cdp import CDPError, CDPSession
from . import scripts
from .dom import fast
from .errors import ActionError, BrowserError
from .nodes import check_open, shorten
from .tab import FrameTarget, Tab


async def find_text(tab: Tab, text: str, occurrence: int = 1) -> str:
    """Bring the `occurrence`-th place of the page showing `text` into view: on a long page (a manual, a table of
    thousands of rows) scrolling a page at a time is dozens of steps. The places are counted in the order a person
    reads them, other sites' frames where their <iframe> stands."""
    check_open(tab)
    wanted = " ".join(text.split())
    if not wanted:
        raise ActionError("Give the words to look for.")
    main_frame = tab.main_frame_id or (await tab.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
    try:
        runs = await _text_places(tab, _TextDocument(tab.session, main_frame, ()), wanted)
        count = sum(run.places for run in runs)
        run, place = _nth_place(runs, occurrence)
        if run is not None:
            for parent, owner in run.document.route:  # its frames into view, outermost first
                await parent.send("DOM.scrollIntoViewIfNeeded", {"backendNodeId": owner})
            await fast.call_walker(run.document.session, run.document.frame_id, scripts.FIND_TEXT, (),
                                   {"value": wanted}, place)
    except CDPError as exc:
        raise BrowserError(f"could not search the page: {exc}") from exc
    quoted = json.dumps(shorten(wanted, 100), ensure_ascii=False)
    if count == 0:
        return f"No text on this page shows {quoted}. Try fewer or other words."
    if run is None:
        return f"Only {count} place(s) on this page show {quoted}: ask for a number from 1 to {count}."
    places = "1 place" if count == 1 else f"{count} places"
    return (f"Scrolled to place {occurrence} of the {places} on this page showing {quoted} (counted top to bottom); "
            "the page text now shows it.")


@dataclass(frozen=True)
class _TextDocument:
    """A document find_text searches: the top one, or another site's frame, reached through the <iframe> elements
    (`route`: each one's session and backendNodeId, outermost first)."""

    session: CDPSession
    frame_id: str
    route: tuple[tuple[CDPSession, int], ...]


@dataclass(frozen=True)
class _TextRun:
    """Places in a row in one document: its places `first` + 1 to `first` + `places`."""

    document: _TextDocument
    first: int
    places: int


async def _text_places(tab: Tab, document: _TextDocument, wanted: str) -> list[_TextRun]:
    """The places showing `wanted` in `document` and the frames of other sites in it, in reading order."""
    frames = [frame for frame in tab.frames.values() if frame.parent is document.session]
    owners = await asyncio.gather(*(_frame_owner(document.session, frame.frame_id) for frame in frames))
    inner = [(frame, owner) for frame, owner in zip(frames, owners, strict=True) if owner is not None]
    found = await fast.call_walker(document.session, document.frame_id, scripts.FIND_TEXT,
                                   [owner for _, owner in inner], {"value": wanted}, 0)
    count, before = int(found["count"]), list(found["frames"])

    async def frame_places(frame: FrameTarget, owner: int) -> list[_TextRun]:
        try:
            return await _text_places(tab, _TextDocument(frame.session, frame.frame_id,
                                                         (*document.route, (document.session, owner))), wanted)
        except (CDPError, BrowserError):
            return []  # the frame went away meanwhile

    shown = [(place if place >= 0 else count, frame, owner)  # -1: not met where it stands, so after the rest
             for place, (frame, owner) in zip(before, inner, strict=True) if place != -2]  # -2: hidden
    shown.sort(key=lambda item: item[0])
    nested = await asyncio.gather(*(frame_places(frame, owner) for _, frame, owner in shown))
    runs, done = [], 0
    for (place, _, _), frame_runs in zip(shown, nested, strict=True):
        if place > done:
            runs.append(_TextRun(document, done, place - done))
            done = place
        runs += frame_runs
    if count > done:
        runs.append(_TextRun(document, done, count - done))
    return runs


def _nth_place(runs: list[_TextRun], nth: int) -> tuple[_TextRun | None, int]:
    """The run holding the `nth` place of all, and its number in that run's document."""
    for run in runs:
        if 0 < nth <= run.places:
            return run, run.first + nth
        nth -= run.places
    return None, 0


async def _frame_owner(parent: CDPSession, frame_id: str) -> int | None:
    try:
        owner = await parent.send("DOM.getFrameOwner", {"frameId": frame_id}, timeout=5.0)
    except CDPError:
        return None  # the frame went away
    backend_node_id = owner.get("backendNodeId")
    return int(backend_node_id) if backend_node_id else None
