"""Reading one frame with tabpilot's walker (`walker.js`) in an isolated world of its own.

The walker returns what `DOMSnapshot.captureSnapshot` would, for the part of the page near the viewport
only, so its cost follows what is shown, not the size of the page. What the page's JS cannot see is
filled in through CDP: click listeners (`DOMDebugger.getEventListeners`) and closed shadow roots (the hosts
the walk met, serialized deep: each says whether its shadow root is closed). An element's backendNodeId is
looked up only when an action touches it (`locate`).

The walker is installed before the page needs it: every new document of a session that tabpilot reads gets it in
tabpilot's world as it is created (`Page.addScriptToEvaluateOnNewDocument`), so the first look after a navigation
only asks for it. The world itself is made as the document is committed (a cross-site frame's as its session
attaches), while the page loads: the first look starts with the listeners. What listens for clicks once the
document is parsed is marked then, while the page goes on loading, so the first look walks once unless something
listens that did not then. Once the page is idle after DOMContentLoaded, the walker of a small document walks once
for nothing (walker.js `warm`), so the first look runs code this world already ran (a new world's first walk was
~3x slower than the next). It is kept as a global of that world named after its source, so a walker of another
tabpilot version is never used; a second task or a restarted host reuses the one there (its ids stay consistent:
they are only ever looked up through the walker that gave them)."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import weakref
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_core import from_json

from ...cdp import CDPError, CDPErrorKind, CDPSession
from ...cdp.connection import DEFAULT_TIMEOUT
from ...textsafety import clean_json
from .. import passwords
from ..errors import BrowserError
from . import formulas, rules
from .snapshot import Document, decode

log = logging.getLogger(__name__)

WORLD_NAME = "tabpilot"
STEP = "tabpilot-step"  # handles used while reading one state, released after it
AHEAD = "tabpilot-ahead"  # and while marking a new document's listeners ahead of its first look
# The field-naming rules come from rules.py, where dom/icons.py reads them for the snapshot reader: one place. The
# icon naming is the extension's names.js (capture.js names what the person clicks with it too), put in whole.
_ICON_RULES = json.dumps({
    "fields": sorted(rules.ICON_FIELDS), "unlabelled": sorted(rules.SELF_NAMED_INPUTS),
    "fieldIdGeneric": sorted(rules.FIELD_ID_GENERIC_WORDS), "boxes": sorted(rules.BOX_INPUTS),
    "labelledRoles": sorted(rules.LABELLED_ROLES), "editable": sorted(rules.EDITABLE_VALUES)})
_FORMULAS = json.dumps({"tags": sorted(formulas.CONTAINER_TAGS), "classes": list(formulas.CONTAINER_CLASSES),
                        "math": formulas.MATH_TAG})
_SECRETS = json.dumps({"hidden": passwords.HIDDEN, "echoed": passwords.ECHOED_MIN_LENGTH,
                       "hints": list(rules.SECRET_HINTS)})
_SOURCE = (Path(__file__).with_name("walker.js")).read_text(encoding="utf-8").replace(
    "/*ICON_RULES*/", f"({_ICON_RULES}) ||").replace("/*SECRETS*/", f"({_SECRETS}) ||").replace(
    "/*FORMULAS*/", f"({_FORMULAS}) ||").replace("/*NAMES*/", rules.NAMES_SCRIPT.read_text(encoding="utf-8"))
_GLOBAL = "__tabpilotWalker_" + hashlib.sha256(_SOURCE.encode()).hexdigest()[:12]
# The walker of this world, made if the document got none yet. (The one an earlier version kept as
# globalThis.__tabpilotWalker is dropped.)
_INSTALL = f"(delete globalThis.__tabpilotWalker, globalThis.{_GLOBAL} || (globalThis.{_GLOBAL} = {_SOURCE}))"
# Installed ahead of time, the walker also warms up when the page is next idle after DOMContentLoaded (walker.js
# `warm`), where the host reads with it: the top document, and a frame whose parent's world cannot enter it
# (another origin's, read through a session of its own). Same-origin frames are walked from their parent's world.
# At most WARM_WAIT_MS later if the page is never idle: a cross-site frame's renderer on a loaded machine (4 busy
# processes on 2 cores) ran no idle callback for 10 s and more while its page's did, and its first look was cold.
# Whatever goes wrong here only leaves the walker cold.
WARM_WAIT_MS = 1000
_WARM_UP = (f"; (() => {{ try {{ let own = window === top; try {{ own = own || !parent.document; }}"
            " catch (e) { own = true; }"
            " const warm = () => requestIdleCallback(() => {"
            f" try {{ globalThis.{_GLOBAL}.warm(); }} catch (e) {{}} }}, {{ timeout: {WARM_WAIT_MS} }});"
            " if (own && document.readyState === 'loading') document.addEventListener('DOMContentLoaded', warm, "
            "{ once: true }); else if (own) warm(); } catch (e) {} })()")
_AHEAD = _INSTALL + _WARM_UP
_PREINSTALLED = "_preinstalled"  # the key, in `CDPSession.kept`, of the script id that installs it in new documents
CLICK_EVENTS = frozenset({"click", "mousedown", "mouseup", "pointerdown", "pointerup", "dblclick"})
Insets = tuple[float, float, float, float]
AUX_TIMEOUT = 5.0


@dataclass(eq=False)
class World:
    """tabpilot's isolated world in one document of one frame, and what is known about its elements."""

    session: CDPSession
    frame_id: str
    context_id: int
    page_document: str  # the document as the page's main world holds it, bound without an object group
    backend: dict[int, int] = field(default_factory=dict)  # walker id -> backendNodeId, where already known
    frame_owners: dict[str, int] = field(default_factory=dict)  # cross-site frame id -> walker id of its <iframe>
    owner_lookups: dict[str, asyncio.Future[int | None]] = field(default_factory=dict)  # those under way
    marked: set[int] = field(default_factory=set)  # backendNodeIds already marked as listening for clicks
    walked: bool = False  # a read was done in this world (its first one asks about every host the walk meets)
    installed: bool = True  # False: the document was made before the walker was installed ahead of time
    reading: bool = False  # a read began here
    marked_ahead: bool = False  # what listened for clicks once the document was parsed is marked (_mark_when_parsed)
    marking: asyncio.Future[None] | None = None  # those being marked
    # Objects (in the AHEAD group) of those resolved for marking when a read began: its walk marks them.
    handed_over: list[str] = field(default_factory=list)


@dataclass
class FrameReading:
    world: World
    documents: list[Document]
    insets: dict[tuple[str | None, int], Insets]
    viewport: tuple[float, float]  # the visual viewport's width and height, CSS px (as Page.getLayoutMetrics)
    # The walker's ids of the iframes in view whose document it could not enter (another origin's).
    sealed: list[int] = field(default_factory=list)


_WORLDS = "fast.worlds"  # the key of this session's worlds in `CDPSession.kept`
# And whether a first look there walks only once the listeners are known: after one that had to walk again
# once they were marked (elements a walk does not offer unless they listen: state_medium.html's 60 took 63 ms
# instead of 40 ms, load 8), until one finds fewer than FEW_LISTENING new elements listening.
_WALK_AFTER_LISTENERS = "fast.walk_after_listeners"
FEW_LISTENING = 10
_MAKING = "fast.making"  # and of the worlds being made there
_NAVIGATIONS = "fast.navigations"  # and of how often each frame's document was replaced
_OWNER_ASKS = "fast.owner_asks"  # and of the DOM.getFrameOwner questions on their way, by frame id
_OWN_FRAME = "fast.own_frame"  # and of the session's own (top) frame, as last committed


def _worlds(session: CDPSession) -> dict[str, World]:
    """This session's worlds, kept on the session (so they go when it goes)."""
    worlds: dict[str, World] = session.kept.setdefault(_WORLDS, {})
    return worlds


async def read_frame(session: CDPSession, frame_id: str) -> FrameReading:
    """Walk the frame's document (and its same-site iframes) in tabpilot's world."""
    world = await world_of(session, frame_id)
    try:
        return await _read(world)
    except CDPError as exc:
        if exc.kind is not CDPErrorKind.CONTEXT_GONE:
            raise
    # The document was replaced since the last state: a new document gets a new world.
    if _worlds(session).get(frame_id) is world:
        _worlds(session).pop(frame_id, None)
    return await _read(await world_of(session, frame_id))


def ask_frame_owner(session: CDPSession, frame_id: str) -> asyncio.Future[dict[str, Any]] | None:
    """`DOM.getFrameOwner` for the cross-site frame `frame_id`, sent now (or the one already on its way),
    unless a world of `session` already knows its <iframe> or is looking it up: it needs no world, so it
    need not wait for one (see `frame_owner`)."""
    if any(frame_id in world.frame_owners or frame_id in world.owner_lookups
           for world in _worlds(session).values()):
        return None
    asks: dict[str, asyncio.Future[dict[str, Any]]] = session.kept.setdefault(_OWNER_ASKS, {})
    asked = asks.get(frame_id)
    if asked is None:
        asked = asks[frame_id] = asyncio.ensure_future(
            session.send("DOM.getFrameOwner", {"frameId": frame_id}, timeout=10.0))
        # Unused if the read failed; forgotten once answered (the lookup that used it keeps what it said).
        asked.add_done_callback(_retrieved)
        asked.add_done_callback(lambda done: asks.pop(frame_id, None) if asks.get(frame_id) is done else None)
    return asked


async def frame_owner(world: World, frame_id: str, asked: asyncio.Future[dict[str, Any]] | None = None) -> int | None:
    """The walker's id for the <iframe> element hosting the cross-site frame `frame_id` (asked once per
    document: the element cannot change without the frame going; a lookup under way is shared, such as the
    one `prepare_owner` started when the frame attached). `asked`: its `ask_frame_owner`."""
    known = world.frame_owners.get(frame_id)
    if known is not None:
        return known
    lookup = world.owner_lookups.get(frame_id)
    if lookup is None:
        lookup = world.owner_lookups[frame_id] = asyncio.ensure_future(_look_up_owner(world, frame_id, asked))
        # Not found (the frame went away, or not yet there): the next read asks again.
        lookup.add_done_callback(lambda _: world.owner_lookups.pop(frame_id, None))
        lookup.add_done_callback(_retrieved)
    return await asyncio.shield(lookup)


def prepare_owner(parent: CDPSession, parent_frame_id: str, frame_id: str) -> None:
    """Look up the <iframe> of a cross-site frame that just attached, in its parent's document, while the
    page loads: the first look then finds it known (it was three round trips after that look's walks). Its
    first question goes out at once, while the parent's world is made; a read meanwhile shares it."""
    asked = ask_frame_owner(parent, frame_id)

    async def look_up() -> None:
        await frame_owner(await world_of(parent, parent_frame_id), frame_id, asked)

    _in_background(look_up(), "looking up a frame's <iframe>")


async def _look_up_owner(world: World, frame_id: str, asked: asyncio.Future[dict[str, Any]] | None) -> int | None:
    element = None
    try:
        owner = await (asked or world.session.send("DOM.getFrameOwner", {"frameId": frame_id}, timeout=10.0))
        backend_node_id = owner["backendNodeId"]
        resolved = await world.session.send("DOM.resolveNode", {
            "backendNodeId": backend_node_id, "executionContextId": world.context_id})
        element = resolved["object"]["objectId"]
        reply = await _call(world, "function(node) { return this.idOf(node); }", element, returnByValue=True)
    except CDPError:
        return None  # the frame went away
    finally:
        if element is not None:
            _release_soon(world.session, "Runtime.releaseObject", {"objectId": element})
    value = reply.get("result", {}).get("value")
    if not isinstance(value, int):
        return None
    world.backend[value] = backend_node_id
    world.frame_owners[frame_id] = value
    return value


async def locate(world: World, walker_id: int) -> int | None:
    """The backendNodeId of the element the walker knows as `walker_id`; None when it is gone. Raises
    CDPError when the world is (the document was replaced: "Cannot find context")."""
    known = world.backend.get(walker_id)
    if known:
        return known
    try:
        reply = await _call(world, "function(id) { return this.element(id); }", walker_id, timeout=AUX_TIMEOUT)
    except CDPError as exc:
        if exc.kind is CDPErrorKind.CONTEXT_GONE:
            return None  # the document it was in was replaced
        raise
    element = reply.get("result", {}).get("objectId")
    if not element:
        return None
    try:
        described = await world.session.send("DOM.describeNode", {"objectId": element}, timeout=AUX_TIMEOUT)
    finally:
        await world.session.send("Runtime.releaseObject", {"objectId": element})
    backend_node_id: int = described["node"]["backendNodeId"]
    world.backend[walker_id] = backend_node_id
    return backend_node_id


# The inputs walker.js remembers as password fields, in the document and its same-origin frames (the
# ones a snapshot of this process shows); those that are password fields now are remembered from here on,
# by the walker's rule (a field masked with CSS, a card's security code...): the walker is installed for it.
_REMEMBERED_PASSWORDS = """(() => {
  const passwords = globalThis.__tabpilotPasswords || (globalThis.__tabpilotPasswords = new WeakSet());
  let walker = null;
  try { walker = INSTALL; } catch (e) { walker = null; }
  const secret = (e) => walker ? walker.isSecret(e) : e.type === 'password' || passwords.has(e);
  const found = [];
  const visit = (doc) => {
    for (const e of doc.querySelectorAll('input, iframe, frame')) {
      if (e.localName !== 'input') {
        let inner = null;
        try { inner = e.contentDocument; } catch (err) { inner = null; }
        if (inner) visit(inner);
      } else if (secret(e)) {
        passwords.add(e);
        found.push(e);
      }
    }
  };
  visit(document);
  return found;
})()""".replace("INSTALL", _INSTALL)


async def remembered_passwords(session: CDPSession, frame_id: str) -> set[int]:
    """backendNodeIds of the inputs that were password fields when tabpilot looked (for a DOM snapshot,
    which only sees what their type is now). Empty when tabpilot's world cannot be asked."""
    try:
        created = await session.send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": WORLD_NAME})
        reply = await session.send("Runtime.evaluate", {
            "expression": _REMEMBERED_PASSWORDS, "contextId": created["executionContextId"], "objectGroup": STEP},
            timeout=AUX_TIMEOUT)
        array = reply.get("result", {}).get("objectId")
        if not array:
            return set()
        properties = await session.send("Runtime.getProperties", {"objectId": array, "ownProperties": True})
        objects = [p["value"]["objectId"] for p in properties.get("result", [])
                   if p["name"].isdigit() and p.get("value", {}).get("objectId")]
        described = await asyncio.gather(*(session.send("DOM.describeNode", {"objectId": o}) for o in objects))
        return {d["node"]["backendNodeId"] for d in described}
    except CDPError:
        return set()
    finally:
        try:
            await session.send("Runtime.releaseObjectGroup", {"objectGroup": STEP})
        except CDPError:
            pass


def forget(session: CDPSession) -> None:
    """Start over in `session`: the next read makes new worlds (after a failed or crashed read)."""
    session.kept.pop(_WORLDS, None)


async def world_of(session: CDPSession, frame_id: str) -> World:
    """tabpilot's world in the frame's document, made once however many ask for it at the same time (a
    frame's read, and the lookup of an <iframe> in it)."""
    world = _worlds(session).get(frame_id)
    if world is not None:
        return world
    making: dict[str, asyncio.Future[World]] = session.kept.setdefault(_MAKING, {})
    made = making.get(frame_id)
    if made is None:
        made = making[frame_id] = asyncio.ensure_future(_world(session, frame_id))
        made.add_done_callback(lambda done: making.pop(frame_id, None) if making.get(frame_id) is done else None)
        made.add_done_callback(_retrieved)  # its waiters may all be gone (a read cancelled as the browser closed)
    return await asyncio.shield(made)


async def _world(session: CDPSession, frame_id: str) -> World:
    navigations = session.kept.setdefault(_NAVIGATIONS, {})
    document_number = navigations.get(frame_id, 0)
    # The main world's document needs no context id: asked for while tabpilot's world is made.
    created, page_document, first_time = await asyncio.gather(
        session.send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": WORLD_NAME}),
        session.send("Runtime.evaluate", {"expression": "document"}), _preinstall(session))
    # A document made before the walker was installed ahead of time gets it with the first call (a round
    # trip less than installing it first; after the listeners, never while getEventListeners runs).
    world = World(session, frame_id, created["executionContextId"], page_document["result"]["objectId"],
                  installed=not first_time)
    if navigations.get(frame_id, 0) == document_number:  # else it is the replaced document's: nobody keeps it
        _worlds(session)[frame_id] = world
    _forget_on_navigation(session)
    return world


async def _preinstall(session: CDPSession) -> bool:
    """Have every new document of this session (after a navigation, and its iframes) made with the walker
    in tabpilot's world, once per session. True the first time: the document there now was made before."""
    if _PREINSTALLED in session.kept:
        return False
    session.kept[_PREINSTALLED] = None
    try:
        added = await session.send("Page.addScriptToEvaluateOnNewDocument",
                                   {"source": _AHEAD, "worldName": WORLD_NAME})
    except CDPError as exc:  # the walker is then installed at each first look
        log.info("cannot install the state walker ahead of time: %s", exc)
        return True
    session.kept[_PREINSTALLED] = added.get("identifier")
    return True


async def _install(session: CDPSession, context_id: int, *, ahead: bool = False) -> None:
    """Install the walker in this world now; `ahead`: before a read needs it (so it warms up when idle)."""
    expression = _AHEAD if ahead else _INSTALL
    installed = await session.send("Runtime.evaluate", {"expression": expression, "contextId": context_id})
    if "exceptionDetails" in installed:
        raise BrowserError(f"could not read the page: {installed['exceptionDetails'].get('text', '')}")


def _forget_on_navigation(session: CDPSession) -> None:
    """Drop a frame's world when its document is replaced (where the session reports navigations), and make
    the new document's world at once when it is the session's own frame: the first look after a navigation
    then starts with the listeners instead of waiting for the world while the page has just loaded."""
    if "_navigation_handler" in session.kept:
        return

    # The connection keeps its handlers for its whole life: a strong reference here would keep every
    # session it ever read (and its task) alive with it (tests/test_cdp.py checks a session is freed).
    kept = weakref.ref(session)

    def navigated(params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        frame_id = frame.get("id")
        alive = kept()
        if frame_id is None or alive is None:
            return
        _worlds(alive).pop(frame_id, None)
        navigations = alive.kept.setdefault(_NAVIGATIONS, {})
        navigations[frame_id] = navigations.get(frame_id, 0) + 1
        alive.kept.get(_MAKING, {}).pop(frame_id, None)  # being made in the replaced document
        if "parentId" not in frame:
            alive.kept[_OWN_FRAME] = frame_id
            prepare(alive, frame_id)

    session.kept["_navigation_handler"] = navigated
    session.on("Page.frameNavigated", navigated)
    _mark_when_parsed(session)


def prepare(session: CDPSession, frame_id: str, *, install: bool = False) -> None:
    """Make the world of a document that was just committed, for its first read (which waits for it).
    `install`: also install the walker now if the document was made without it (a cross-site frame whose
    session is new), instead of with the first read's walk (compiling it took ~5–15 ms of that read)."""
    async def make() -> None:
        world = await world_of(session, frame_id)
        if install and not world.installed:
            await _install(session, world.context_id, ahead=True)
            world.installed = True

    _in_background(make(), "preparing the state walker's world")  # the read will say why, if it comes


async def _call(world: World, function: str, *arguments: str | int | dict[str, Any],
                timeout: float = DEFAULT_TIMEOUT, **options: Any) -> dict[str, Any]:
    """Call `function` with `this` = the world's walker and `arguments` (object ids, numbers, or CDP call
    arguments as they are: `{"value": "some text"}`) as its arguments. The walker is found by its global name
    (no handle to keep): null when the world has none; a world not known to have it yet is given it first."""
    installing = not world.installed
    reply = await world.session.send("Runtime.callFunctionOn", {
        "executionContextId": world.context_id,
        "functionDeclaration": f"function(...a) {{ const w = {_INSTALL if installing else 'globalThis.' + _GLOBAL}; "
                               f"return w ? ({function}).apply(w, a) : null; }}",
        "arguments": [a if isinstance(a, dict) else {"objectId": a} if isinstance(a, str) else {"value": a}
                      for a in arguments], **options},
        timeout=timeout)
    if installing and "exceptionDetails" not in reply:
        world.installed = True
    return reply


async def call_walker(session: CDPSession, frame_id: str, function: str, owners: Sequence[int] = (),
                      *arguments: int | dict[str, Any], timeout: float = AUX_TIMEOUT, group: str = STEP) -> Any:
    """`function`'s value (returned by value), called on the walker of tabpilot's world in the frame's document
    with `arguments`, then the elements `owners` (backendNodeIds) as objects of that world, held in the object
    group `group` meanwhile: for an action that needs what the walker knows (the closed shadow roots handed to it).
    A document replaced meanwhile gets a new world, as in `read_frame`."""
    world = await world_of(session, frame_id)
    try:
        return await _call_by_value(world, function, owners, arguments, timeout, group)
    except CDPError as exc:
        if exc.kind is not CDPErrorKind.CONTEXT_GONE:
            raise
    if _worlds(session).get(frame_id) is world:
        _worlds(session).pop(frame_id, None)
    return await _call_by_value(await world_of(session, frame_id), function, owners, arguments, timeout, group)


async def _call_by_value(world: World, function: str, owners: Sequence[int], arguments: Sequence[int | dict[str, Any]],
                         timeout: float, group: str) -> Any:
    try:
        objects = [o or {"value": None} for o in await _objects(world, list(owners), group)] if owners else []
        reply = await _call(world, function, *arguments, *objects, returnByValue=True, timeout=timeout)
        if reply.get("result", {}).get("subtype") == "null":  # no walker there (refused ahead of time), as in _walk
            await _install(world.session, world.context_id)
            reply = await _call(world, function, *arguments, *objects, returnByValue=True, timeout=timeout)
    finally:
        if owners:
            _release_soon(world.session, "Runtime.releaseObjectGroup", {"objectGroup": group})
    if "exceptionDetails" in reply:
        details = reply["exceptionDetails"]
        raise BrowserError(details.get("exception", {}).get("description") or details.get("text", "script error"))
    return reply.get("result", {}).get("value")


async def _read(world: World) -> FrameReading:
    """One round trip when nothing new listens for clicks and no closed shadow root is met, at a first look
    too: the listener query, the walk with the elements already marked and, in a new world, the question
    about closed shadow roots, all sent together. Elements found listening since are then resolved (their
    objects, asked for as soon as the listeners are known) and marked after the walk, which is done again
    only where that changes what it read: nearly never (a page's listening buttons and links are offered
    anyway). Closed shadow roots met are resolved and handed to a new walk. Where a first look of the session
    had to walk again (a list whose every row listens), the next ones walk once the listeners are known, as
    before: walking again costs more there than the round trip."""
    first = not world.walked
    world.reading = True
    if first and world.marking is not None and not world.marking.done():
        # Their marks must be in the walk (one sent alongside could walk before they are made); the renderer
        # answers what was sent for them before anything sent now anyway. Those not marked yet are handed over
        # to this walk as soon as they are resolved.
        await asyncio.wait([world.marking], timeout=AUX_TIMEOUT)
    handed, world.handed_over = world.handed_over, []
    waits = first and not world.marked_ahead and bool(world.session.kept.get(_WALK_AFTER_LISTENERS))
    # The listener query goes first, so the renderer has answered it before the walk starts. (Chromium 156 once
    # stopped answering a tab when getEventListeners arrived while the walker ran, on the Python docs pages; in
    # this order 100 reads of each bench page, with JS allocating in between, all came back.)
    listened = asyncio.ensure_future(_listening_objects(world))
    walked = asyncio.ensure_future(_walk(world, [*handed, *((await listened)[1] if waits else ())]))
    # The hosts the walk meets are asked about right after it in a new world, where it meets every one.
    hosts_asked = asyncio.ensure_future(_closed_roots(world)) if first else None
    asked = [listened, walked, *([hosts_asked] if hosts_asked else [])]
    for result in await asyncio.gather(*asked, return_exceptions=True):
        if isinstance(result, BaseException):
            raise result
    (listening, marking), reply = listened.result(), walked.result()
    handles = bool(marking) or bool(reply["hosts"])  # resolved objects, or the hosts asked about (none: 0)
    if waits:
        marking = []  # the walk marked them
    if waits and len(listening - world.marked) < FEW_LISTENING:
        world.session.kept[_WALK_AFTER_LISTENERS] = False
    world.marked |= listening
    world.walked = True
    roots = hosts_asked.result() if hosts_asked else None
    if roots is None:  # asked now: the walk met hosts, or the world had no walker yet when asked
        roots = (await _closed_roots(world) or []) if reply["hosts"] else []
    while marking or roots:
        closed = [o for o in await _objects(world, roots) if o] if roots else []
        if closed:
            reply = await _walk(world, marking, closed)
        elif marking:
            reply, again = await _mark(world, marking, reply)
            if first and again:
                world.session.kept[_WALK_AFTER_LISTENERS] = True
        marking = []
        # A closed shadow root opened shows its content to the next walk, which may meet hosts inside it.
        roots = (await _closed_roots(world) or []) if closed and reply["hosts"] else []
    if handles:
        _release_soon(world.session, "Runtime.releaseObjectGroup", {"objectGroup": STEP})
    if handed:
        _release_soon(world.session, "Runtime.releaseObjectGroup", {"objectGroup": AHEAD})
    documents = decode(reply, world.session)
    secrets = tuple(reply.get("secrets") or ())
    for document, points in zip(documents, reply["reach"], strict=False):
        document.secrets = secrets
        document.reachable = {int(node): (p[0], p[1]) if p else None for node, p in points.items()}
        document.real_ids = world.backend
        document.locate = functools.partial(locate, world)
        document.__dict__["_escaping"] = []  # the walker already kept whatever is drawn in view
    session_id = world.session.session_id
    insets = {(session_id, item[0]): (item[1], item[2], item[3], item[4]) for item in reply["insets"]}
    return FrameReading(world, documents, insets, (reply["viewport"][0], reply["viewport"][1]), reply["sealed"])


# Marks the elements found listening for clicks (the first `marking` arguments) and hands over closed shadow
# roots (the rest), then walks; the visual viewport's size comes along, so the walker's reading needs no
# Page.getLayoutMetrics.
_WALK = """function(marking, ...objects) {
  if (marking) this.markClickable(...objects.slice(0, marking));
  for (const root of objects.slice(marking)) this.setRoot(root);
  return visualViewport.width + " " + visualViewport.height + " " + this.walk();
}"""
# Marks elements found listening after the walk: where they are in it, or the walk done again.
_MARK = """function(...elements) {
  const places = this.markAfterWalk(...elements);
  return places ? "places " + JSON.stringify(places)
    : visualViewport.width + " " + visualViewport.height + " " + this.walk();
}"""


async def _walk(world: World, listening: Sequence[str] = (), roots: Sequence[str] = ()) -> dict[str, Any]:
    reply = await _call(world, _WALK, len(listening), *listening, *roots, returnByValue=True, timeout=30.0)
    if reply.get("result", {}).get("subtype") == "null":  # not installed ahead of time (refused)
        await _install(world.session, world.context_id)
        reply = await _call(world, _WALK, len(listening), *listening, *roots, returnByValue=True, timeout=30.0)
    return _walked(reply)


async def _mark(world: World, listening: Sequence[str], walked: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Mark elements found listening since `walked` was read: `walked` with them flagged clickable when that is
    all they change (a button the page handles: nearly always), else a new walk (and True)."""
    reply = await _call(world, _MARK, *listening, returnByValue=True, timeout=30.0)
    value = reply.get("result", {}).get("value")
    if not (isinstance(value, str) and value.startswith("places ")):
        return _walked(reply), True
    for document, node in json.loads(value.removeprefix("places ")):
        walked["documents"][document]["nodes"]["isClickable"]["index"].append(node)
    return walked, False


def _walked(reply: dict[str, Any]) -> dict[str, Any]:
    if "exceptionDetails" in reply:
        details = reply["exceptionDetails"]
        text = details.get("exception", {}).get("description") or details.get("text", "")
        if "Cannot find context" in text:
            raise CDPError("Runtime.evaluate", -1, text)
        raise BrowserError(f"could not read the page: {text}")
    width, height, raw = reply["result"]["value"].split(" ", 2)
    # JSON.stringify escapes a lone surrogate (the page's half emoji), which only json reads: U+FFFD from
    # here on. Other replies take the faster parser (cleaning every string cost ~1 ms a read on a small page).
    walked: dict[str, Any] = clean_json(json.loads(raw)) if "\\ud" in raw else from_json(raw)
    walked["viewport"] = (float(width), float(height))
    return walked


_HOSTS = "function() { return this.hosts(); }"


async def _closed_roots(world: World) -> list[int] | None:
    """backendNodeIds of the closed shadow roots of the custom elements and empty boxes the last walk met
    (page scripts cannot reach them: the next walk is handed them); None when the world has no walker. The
    hosts come back serialized deep, which says of each its shadow root, closed or not: no command per host."""
    try:
        reply = await _call(world, _HOSTS, objectGroup=STEP,
                            serializationOptions={"serialization": "deep", "maxDepth": 1})
    except CDPError:
        return []
    hosts = reply.get("result", {}).get("deepSerializedValue", {})
    if hosts.get("type") != "array":
        return None if hosts.get("type") == "null" else []
    roots = [((host.get("value") or {}).get("shadowRoot") or {}).get("value") or {} for host in hosts["value"]]
    return [root["backendNodeId"] for root in roots if root.get("mode") == "closed" and root.get("backendNodeId")]


_background: set[asyncio.Future[Any]] = set()


def _retrieved(future: asyncio.Future[Any]) -> None:
    """Mark a shared future's failure as seen: whoever awaits it gets it; with nobody left, it is not logged
    as "Task exception was never retrieved"."""
    if not future.cancelled():
        future.exception()


def _in_background(work: Awaitable[Any], what: str) -> None:
    """Run `work` without waiting for it, held until it is done; a failure is only logged."""
    task = asyncio.ensure_future(work)
    _background.add(task)

    def done(finished: asyncio.Future[Any]) -> None:
        _background.discard(finished)
        if not finished.cancelled() and finished.exception() is not None:
            log.debug("%s failed: %s", what, finished.exception())

    task.add_done_callback(done)


def _release_soon(session: CDPSession, method: str, params: dict[str, Any]) -> None:
    """Let go of handles without waiting for the reply (sent before any later command): a round trip less
    at the end of a read (the last one of a first look on a page with a cross-site iframe)."""
    _in_background(session.send(method, params), method)


async def _listening(session: CDPSession, page_document: str) -> set[int]:
    """backendNodeIds of elements with click-like listeners, whichever world added them."""
    # Listeners are read through the main world's document object. Through the isolated world's, Chromium
    # 156's renderer crashes within ~5 reads when JS allocates in between (the same from the main world
    # survived 200 reads of 2,000 listening buttons). Without an object group the reply carries no handler
    # objects: 2,000 buttons × 2 listeners took ~30 ms instead of ~400 ms with them.
    try:
        reply = await session.send("DOMDebugger.getEventListeners", {
            "objectId": page_document, "depth": -1, "pierce": True})
    except CDPError as exc:
        if exc.kind in (CDPErrorKind.CONTEXT_GONE, CDPErrorKind.NO_SUCH_OBJECT):
            raise CDPError("DOMDebugger.getEventListeners", -1, "Cannot find context with specified id") from exc
        return set()
    return {item["backendNodeId"] for item in reply.get("listeners", [])
            if item.get("type") in CLICK_EVENTS and item.get("backendNodeId")}


async def _listening_objects(world: World) -> tuple[set[int], list[str]]:
    """The elements listening for clicks, and objects of those not marked yet, resolved as soon as the
    listeners are known (the renderer answers once the walk sent after the query is done)."""
    listening = await _listening(world.session, world.page_document)
    new = sorted(listening - world.marked)
    return listening, [o for o in await _objects(world, new) if o] if new else []


def _mark_when_parsed(session: CDPSession) -> None:
    """Mark what listens for clicks in the session's own document once it is parsed, while the page goes on
    loading: the first look then walks once, like a later step (modal page, 2 listening buttons: its three
    round trips took 9.3 ms on a settled page, a later step's one 4.5)."""
    kept = weakref.ref(session)  # as in _forget_on_navigation

    def parsed(params: dict[str, Any]) -> None:
        alive = kept()
        frame_id = alive.kept.get(_OWN_FRAME) if alive is not None else None
        if alive is not None and frame_id is not None:
            _in_background(_mark_ahead(alive, frame_id), "marking what listens for clicks")

    session.on("Page.domContentEventFired", parsed)


async def _mark_ahead(session: CDPSession, frame_id: str) -> None:
    world = await world_of(session, frame_id)
    if not world.reading:  # else a read began (meanwhile): it marks them itself
        world.marking = asyncio.ensure_future(_mark_listening(world))
        await asyncio.shield(world.marking)


async def _mark_listening(world: World) -> None:
    listening = await _listening(world.session, world.page_document)
    new = sorted(listening - world.marked)
    if not new:
        world.marked_ahead = True
        return
    try:
        objects = [o for o in await _objects(world, new, AHEAD) if o]
    except BaseException:
        _release_soon(world.session, "Runtime.releaseObjectGroup", {"objectGroup": AHEAD})
        raise
    if world.reading and not world.walked:
        # A first look began meanwhile and waits for this: its walk marks them (and lets go of them), a round trip
        # sooner than marking them first.
        world.handed_over = objects
        world.marked |= listening
        world.marked_ahead = True
        return
    try:
        reply = await _call(world, "function(...e) { this.markClickable(...e); return true; }", *objects,
                            returnByValue=True)
    finally:
        _release_soon(world.session, "Runtime.releaseObjectGroup", {"objectGroup": AHEAD})
    if reply.get("result", {}).get("value") is True:  # else no walker there (it refused it): the read marks them
        world.marked |= listening
        world.marked_ahead = True


async def _objects(world: World, backend_ids: list[int], group: str = STEP) -> list[str | None]:
    async def one(backend_id: int) -> str | None:
        try:
            reply = await world.session.send("DOM.resolveNode", {
                "backendNodeId": backend_id, "executionContextId": world.context_id, "objectGroup": group},
                timeout=AUX_TIMEOUT)
        except CDPError:
            return None
        object_id: str | None = reply["object"].get("objectId")
        return object_id

    return list(await asyncio.gather(*(one(b) for b in backend_ids)))
