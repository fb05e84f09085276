"""capture.js over CDP (`tabpilot run` without the extension): the same script the extension runs as its
content script, injected into an isolated world of every frame of a tab, new documents included.

`Page.addScriptToEvaluateOnNewDocument` (with `worldName`) runs it in each document to come, and
`Page.createIsolatedWorld` + `Runtime.evaluate` in the frames already there; `Runtime.addBinding`
(`executionContextName` = that world) gives it `tabpilotCapture(json)` to report through. Cross-site
iframes are their own targets: each gets the same treatment on its session. The script starts "off" and
says hello; the host answers with the current mode, so a frame loaded mid-takeover records at once."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..cdp import CDPError

if TYPE_CHECKING:
    from ..cdp import CDPSession
    from .tab import Tab

log = logging.getLogger(__name__)

WORLD = "tabpilot-capture"
BINDING = "tabpilotCapture"
Mode = str  # "record" | "watch" | "off"


def capture_source() -> str:
    """capture.js after names.js, which names the controls it reports (as the extension loads them)."""
    from ..installer import extension_dir

    content = extension_dir() / "content"
    return "\n".join((content / name).read_text(encoding="utf-8") for name in ("names.js", "capture.js"))


class PageCapture:
    """capture.js in every frame of one tab; each message it sends goes to `on_message(message)`."""

    def __init__(self, tab: Tab, on_message: Callable[[dict[str, Any]], None]) -> None:
        self.tab = tab
        self.on_message = on_message
        self.mode: Mode = "off"
        self.since: int | None = None  # with "record": the page time of the user's input that took the controls
        self._source = capture_source()
        self._contexts: dict[tuple[str | None, int], CDPSession] = {}  # (session id, context id) → session
        self._sessions: set[str | None] = set()
        self._tasks: set[asyncio.Task[Any]] = set()

    async def start(self, mode: Mode = "watch") -> None:
        self.mode = mode
        await self._set_up(self.tab.session, main=True)
        self.tab.session.on("Target.attachedToTarget", self._on_attached)
        await self.tab.track_frames()
        for frame in list(self.tab.frames.values()):
            await self._set_up(frame.session)

    async def set_mode(self, mode: Mode, since: int | None = None) -> list[dict[str, Any]]:
        """Tell every frame; returns the actions flushed by leaving "record" (a field being typed in, a
        scroll), in frame order, so they come before whatever is sent after this. `since` (going from
        "watch" to "record"): what the user did from their input at that time on is reported, though it
        came before this mode did."""
        self.mode, self.since = mode, since
        flushed: list[dict[str, Any]] = []
        for (_, context_id), session in list(self._contexts.items()):
            flushed.extend(await self._tell_mode(session, context_id))
        return flushed

    # --- setting a session up --------------------------------------------------------------------
    async def _set_up(self, session: CDPSession, *, main: bool = False) -> None:
        if session.session_id in self._sessions:
            return
        self._sessions.add(session.session_id)
        session.on("Runtime.executionContextCreated", lambda p: self._on_context(session, p))
        session.on("Runtime.executionContextDestroyed", lambda p: self._forget(session, p.get("executionContextId")))
        session.on("Runtime.executionContextsCleared", lambda p: self._forget(session, None))
        session.on("Runtime.bindingCalled", lambda p: self._on_binding(session, p))
        try:
            if not main:
                await session.send("Page.enable")
            await session.send("Runtime.addBinding", {"name": BINDING, "executionContextName": WORLD})
            await session.send("Page.addScriptToEvaluateOnNewDocument", {"source": self._source, "worldName": WORLD})
            await session.send("Runtime.enable")
            tree = await session.send("Page.getFrameTree")
            for frame_id in _frame_ids(tree["frameTree"]):
                await self._inject_now(session, frame_id)
        except CDPError as exc:  # the frame went away meanwhile
            log.debug("capture could not set up %s: %s", session, exc)

    async def _inject_now(self, session: CDPSession, frame_id: str) -> None:
        """Into a document already loaded (new ones get the script on their own)."""
        try:
            world = await session.send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": WORLD})
            context_id = world["executionContextId"]
            await session.send("Runtime.evaluate", {"expression": self._source, "contextId": context_id})
        except CDPError as exc:
            log.debug("capture could not run in frame %s: %s", frame_id, exc)

    def _on_attached(self, params: dict[str, Any]) -> None:
        if params.get("targetInfo", {}).get("type") != "iframe":
            return
        session = self.tab.session.connection.session(params["sessionId"])
        self._spawn(self._set_up(session))

    # --- contexts and messages -------------------------------------------------------------------
    def _on_context(self, session: CDPSession, params: dict[str, Any]) -> None:
        context = params.get("context", {})
        if context.get("name") == WORLD:
            self._contexts[(session.session_id, context["id"])] = session

    def _forget(self, session: CDPSession, context_id: int | None) -> None:
        for key in [k for k in self._contexts if k[0] == session.session_id and context_id in (None, k[1])]:
            del self._contexts[key]

    def _on_binding(self, session: CDPSession, params: dict[str, Any]) -> None:
        if params.get("name") != BINDING:
            return
        try:
            message = json.loads(params.get("payload") or "")
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        context_id = params.get("executionContextId")
        if message.get("type") == "capture.hello" and isinstance(context_id, int):
            self._contexts[(session.session_id, context_id)] = session
            self._spawn(self._answer_hello(session, context_id))
            return
        try:
            self.on_message(message)
        except Exception:
            log.exception("handling a capture message failed")

    async def _answer_hello(self, session: CDPSession, context_id: int) -> None:
        actions = await self._tell_mode(session, context_id)
        for action in actions:  # none: a new document starts "off"; kept in case it was told before
            self.on_message({"type": "capture.action", "action": action})

    async def _tell_mode(self, session: CDPSession, context_id: int) -> list[dict[str, Any]]:
        try:
            reply = await session.send("Runtime.evaluate", {
                "expression": f"tabpilotCaptureMode({json.dumps(self.mode)}, {json.dumps(self.since)})",
                "contextId": context_id,
                "returnByValue": True,
            }, timeout=5.0)
            value = json.loads(reply.get("result", {}).get("value") or "[]")
        except (CDPError, ValueError, TimeoutError):
            return []  # the document is gone
        return [action for action in value if isinstance(action, dict)] if isinstance(value, list) else []

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _frame_ids(tree: dict[str, Any]) -> list[str]:
    ids = [tree["frame"]["id"]]
    for child in tree.get("childFrames", []):
        ids.extend(_frame_ids(child))
    return ids
