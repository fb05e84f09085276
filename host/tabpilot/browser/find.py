"""find_text: the places of a page that show some words, counted in the order a person reads them (each frame's
where its <iframe> stands, whichever process renders it), and the one asked for brought into view."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from ..cdp import CDPError, CDPErrorKind, CDPSession
from . import passwords, scripts
from .dom import fast
from .errors import ActionError, BrowserError
from .nodes import check_open, shorten
from .tab import Tab

# A frame's document is searched by a walk of all of its text: seconds on a page of 100,000 nodes on a loaded machine.
# The whole search's time, every frame's walk within it: a page whose other-site frames' renderer hangs took 30 s a
# frame, one after another (4 such frames: more than 110 s for one find_text).
SEARCH_TIMEOUT = 30.0
# What tells that a frame went away while it was searched (it holds no places), not that it could not be searched.
_GONE = frozenset({CDPErrorKind.TARGET_GONE, CDPErrorKind.CONTEXT_GONE, CDPErrorKind.NODE_GONE,
                   CDPErrorKind.NO_SUCH_OBJECT})
Route = tuple[tuple[CDPSession, int], ...]


@dataclass(frozen=True)
class _TextDocument:
    """A document find_text searches: the top one or a frame's, in the session of the process that renders it,
    reached through the <iframe> elements `route` names (each one's session and backendNodeId, outermost first).
    `owners`: the <iframe> elements in it searched as documents of their own; `hidden`: the secret fields' values of
    the documents around it, which it may show (a strength meter in a frame), hidden there as in its own."""

    session: CDPSession
    frame_id: str
    route: Route = ()
    owners: tuple[int, ...] = ()
    hidden: frozenset[str] = frozenset()


@dataclass
class _Searched:
    """One document's places, and its frames' where each stands: (places of this document before it, order met)."""

    document: _TextDocument
    count: int
    frames: list[tuple[int, int, _Searched]] = field(default_factory=list)
    unanswered: int = 0  # frames in it that did not answer (not gone: those hold no places)
    secrets: frozenset[str] = frozenset()  # the secret fields' values its search hid (its own, and those around it)


@dataclass(frozen=True)
class _TextRun:
    """Places in a row in one document: its places `first` + 1 to `first` + `places`."""

    document: _TextDocument
    first: int
    places: int


async def find_text(tab: Tab, text: str, occurrence: int = 1) -> str:
    """Bring the `occurrence`-th place of the page showing `text` into view: on a long page (a manual, a table of
    thousands of rows) scrolling a page at a time is dozens of steps."""
    check_open(tab)
    wanted = " ".join(text.split())
    if not wanted:
        raise ActionError("Give the words to look for.")
    quoted = json.dumps(shorten(wanted, 100), ensure_ascii=False)
    try:
        await tab.track_frames()
    except CDPError:
        pass  # a transport that cannot follow other sites' frames: the rest of the page is searched (as state.py reads)
    deadline = asyncio.get_running_loop().time() + SEARCH_TIMEOUT
    try:
        main_frame = tab.main_frame_id or (await tab.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
        top = _TextDocument(tab.session, main_frame)
        if not tab.frames and not await _frames_in(tab.session, main_frame):
            # one document, a page's most common kind: counted and shown in one walk
            found = await _search(top, wanted, occurrence, deadline)
            searched, shown = _Searched(top, int(found["count"])), "shown" in found
        else:
            searched = await _search_process(tab, tab.session, main_frame, (), wanted, deadline)
            run, place = _nth_place(_runs(searched), occurrence)
            shown = False
            if run is not None:
                for parent, owner in run.document.route:  # its frames into view, outermost first
                    await parent.send("DOM.scrollIntoViewIfNeeded", {"backendNodeId": owner})
                shown = "shown" in await _search(run.document, wanted, place,
                                                 asyncio.get_running_loop().time() + SEARCH_TIMEOUT)
    except (CDPError, BrowserError) as exc:  # the top document's: a frame's is said below
        raise BrowserError(f"could not search the page: {exc}") from exc
    count, unanswered = _totals(searched)
    missed = f" ({unanswered} frame(s) of the page did not answer and were not searched)" if unanswered else ""
    if count == 0:
        return f"No text on this page shows {quoted}{missed}. Try fewer or other words."
    if occurrence > count:
        return f"Only {count} place(s) on this page show {quoted}{missed}: ask for a number from 1 to {count}."
    if not shown:
        return f"The page changed while tabpilot searched it for {quoted}: search again."
    places = "1 place" if count == 1 else f"{count} places"
    return (f"Scrolled to place {occurrence} of the {places} on this page showing {quoted} (counted top to bottom)"
            f"{missed}; the page text now shows it.")


async def _search(document: _TextDocument, wanted: str, nth: int, deadline: float) -> dict[str, Any]:
    left = max(deadline - asyncio.get_running_loop().time(), 0.1)
    found = await fast.call_walker(document.session, document.frame_id, scripts.FIND_TEXT, document.owners,
                                   {"value": wanted}, nth, passwords.ECHOED_MIN_LENGTH,
                                   {"value": sorted(document.hidden)}, timeout=left, group="tabpilot-find")
    if not isinstance(found, dict):
        raise BrowserError("its frame gave no answer")
    return found


async def _search_process(tab: Tab, session: CDPSession, frame_id: str, route: Route, wanted: str,
                          deadline: float, hidden: frozenset[str] = frozenset()) -> _Searched:
    """`frame_id`'s document in `session`, the frames inside it that the same process renders, and, through their
    own sessions, those another process renders (tab.frames), all searched at once. The latter are named to each
    document of this process: the one holding its <iframe> meets it; one met nowhere is counted after the rest.
    Each frame is searched with the secret values of the documents around it hidden (`hidden`, then theirs): a
    password a page shows in a frame of its own; never a frame's in the page (an ad's password field held the page's
    words, and find_text said no text showed them)."""
    elsewhere = [frame for frame in tab.frames.values() if frame.parent is session]
    owners = await asyncio.gather(*(_frame_owner(session, frame.frame_id) for frame in elsewhere))
    others = [(frame, owner) for frame, owner in zip(elsewhere, owners, strict=True) if owner is not None]
    met: dict[str, tuple[int, int, _Searched]] = {}  # another process's frame -> where it stands, in which document

    async def search(frame_id: str, route: Route, hidden: frozenset[str]) -> _Searched:
        here = await _frames_in(session, frame_id)
        inner = [(child, owner) for child, owner in zip(
            here, await asyncio.gather(*(_frame_owner(session, child) for child in here)), strict=True) if owner]
        document = _TextDocument(session, frame_id, route, (*(o for _, o in inner), *(o for _, o in others)), hidden)
        found = await _search(document, wanted, 0, deadline)
        searched = _Searched(document, int(found["count"]), secrets=frozenset(found.get("secrets") or ()))
        places = list(zip(found["frames"], found["met"], strict=True))
        nested = await asyncio.gather(*(
            _unless_unanswered(search(child, (*route, (session, owner)), searched.secrets)) for child, owner in inner))
        for (place, order), result in zip(places, nested, strict=False):
            _add(searched, place, order, result)
        for (frame, _), (place, order) in zip(others, places[len(inner):], strict=True):
            if place != -1:
                met[frame.frame_id] = (place, order, searched)
        return searched

    top = await search(frame_id, route, hidden)
    shown = [(frame, owner, met.get(frame.frame_id, (-1, len(others), top))) for frame, owner in others]
    shown = [(frame, owner, where) for frame, owner, where in shown if where[0] != -2]  # hidden: nothing in it is shown
    results = await asyncio.gather(*(_unless_unanswered(_search_process(
        tab, frame.session, frame.frame_id, (*parent.document.route, (session, owner)), wanted, deadline,
        parent.secrets))
        for frame, owner, (_, _, parent) in shown))
    for (_, _, (place, order, parent)), result in zip(shown, results, strict=True):
        _add(parent, place, order, result)
    return top


def _add(searched: _Searched, place: int, order: int, result: _Searched | bool) -> None:
    """A frame's search into the document it stands in: `place` -1 after the rest, -2 hidden (left out)."""
    if result is False:
        searched.unanswered += 1
    elif isinstance(result, _Searched) and place != -2:
        searched.frames.append((place if place >= 0 else searched.count, order, result))


async def _unless_unanswered(searching: Awaitable[_Searched]) -> _Searched | bool:
    """A frame's search; False when it did not answer, True when it went away meanwhile (it holds no places)."""
    try:
        return await searching
    except CDPError as exc:
        return exc.kind in _GONE
    except BrowserError:
        return False


def _runs(searched: _Searched) -> list[_TextRun]:
    """Every place of the document and its frames, in reading order, as runs of places in one document."""
    runs, done = [], 0
    for place, _, inner in sorted(searched.frames, key=lambda frame: (frame[0], frame[1])):
        if place > done:
            runs.append(_TextRun(searched.document, done, place - done))
            done = place
        runs += _runs(inner)
    if searched.count > done:
        runs.append(_TextRun(searched.document, done, searched.count - done))
    return runs


def _totals(searched: _Searched) -> tuple[int, int]:
    """(places, frames that did not answer), the document's and its frames'."""
    inner = [_totals(frame) for _, _, frame in searched.frames]
    return searched.count + sum(c for c, _ in inner), searched.unanswered + sum(u for _, u in inner)


def _nth_place(runs: list[_TextRun], nth: int) -> tuple[_TextRun | None, int]:
    """The run holding the `nth` place of all, and its number in that run's document."""
    for run in runs:
        if 0 < nth <= run.places:
            return run, run.first + nth
        nth -= run.places
    return None, 0


async def _frames_in(session: CDPSession, frame_id: str) -> list[str]:
    """The frames in `frame_id`'s document that `session`'s process renders (same-site ones, another origin's too)."""
    tree = (await session.send("Page.getFrameTree"))["frameTree"]
    nodes = [tree]
    while nodes:
        node = nodes.pop()
        if node["frame"]["id"] == frame_id:
            return [child["frame"]["id"] for child in node.get("childFrames", [])]
        nodes += node.get("childFrames", [])
    return []


async def _frame_owner(parent: CDPSession, frame_id: str) -> int | None:
    """The backendNodeId of the <iframe> showing `frame_id`, in `parent`'s process; None when the frame is gone."""
    try:
        owner = await parent.send("DOM.getFrameOwner", {"frameId": frame_id}, timeout=5.0)
    except CDPError:
        return None
    backend_node_id = owner.get("backendNodeId")
    return int(backend_node_id) if backend_node_id else None
