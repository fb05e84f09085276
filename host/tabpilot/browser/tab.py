"""One page target: navigation, load waiting, script evaluation. The base that state and actions use."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from ..cdp import CDPConnectionClosed, CDPError, CDPErrorKind, CDPSession
from .errors import NavigationFailed, PageCrashed, PageScriptError, TabClosed
from .inputlog import InputLog

T = TypeVar("T")

log = logging.getLogger(__name__)

ERROR_PAGE_WAIT = 2.0  # s: a failed navigation waits this long at most for Chromium's error page to load
# Smallest frames Chromium will encode: nobody looks at them (see Tab.render_as_if_shown).
_SCREENCAST = {"format": "jpeg", "quality": 0, "maxWidth": 16, "maxHeight": 16}


@dataclass
class FrameTarget:
    """An out-of-process iframe (a frame from another site, rendered by its own process)."""

    frame_id: str  # its target id, which is also its frame id in the parent's frame tree
    session: CDPSession
    parent: CDPSession  # the session that owns the <iframe> element hosting it
    url: str


class Tab:
    """A page the agent can see and act on, reached through one CDP session (any transport)."""

    def __init__(self, session: CDPSession, target_id: str) -> None:
        self.session = session
        self.target_id = target_id
        self.main_frame_id: str | None = None
        self.documents = 0  # main-frame documents committed while watched: one more on each reload or navigation
        self._gone = asyncio.Event()
        self._crashed = asyncio.Event()
        self._loading = False
        self._stopped_loading = asyncio.Event()
        self._stopped_loading.set()
        self._last_activity = time.monotonic()
        session.on("Page.frameStartedLoading", self._on_started)
        session.on("Page.frameStoppedLoading", self._on_stopped)
        session.on("Page.frameNavigated", self._on_navigated)
        session.on("Inspector.targetCrashed", lambda _: self._crashed.set())
        # back without `reload_after_crash`: the person pressed Reload on the sad tab (or navigated it) meanwhile
        session.on("Inspector.targetReloadedAfterCrash", lambda _: self._crashed.clear())
        self.frames: dict[str, FrameTarget] = {}  # out-of-process iframes, by frame id
        self._tracking_frames = False
        self._frame_setups: set[asyncio.Future[Any]] = set()
        self.frame_watchers: list[Callable[[FrameTarget], None]] = []  # told of each iframe attached from now on
        self._frame_handlers: set[str | None] = set()
        self.input_log = InputLog()  # when this host dispatched input here (the user's input is the rest)
        self.load_dialogs: list[str] = []  # notes of the dialogs `navigate` accepted, until a state says them

    @property
    def closed(self) -> bool:
        return self._gone.is_set()

    @closed.setter
    def closed(self, value: bool) -> None:
        if value:
            self._gone.set()  # wakes whoever waits on this tab
        else:
            self._gone.clear()

    async def unless_gone(self, awaitable: Awaitable[T], what: str) -> T:
        """Await `awaitable` (e.g. an event), unless the tab closes (TabClosed) or the connection to the
        browser does (CDPConnectionClosed) first: nothing would ever come, so no point waiting out a timeout."""
        work = asyncio.ensure_future(awaitable)
        gone = asyncio.ensure_future(self._gone.wait())
        try:
            either = asyncio.wait((work, gone), return_when=asyncio.FIRST_COMPLETED)
            done, _ = await self.session.connection.unless_closed(either, what)
            if work in done:
                return work.result()
            raise TabClosed("the tab was closed")
        finally:
            work.cancel()
            gone.cancel()

    @property
    def crashed(self) -> bool:
        """The renderer died and the page was not reloaded since: every command would go unanswered."""
        return self._crashed.is_set()

    async def unless_crashed(self, awaitable: Awaitable[T], what: str) -> T:
        """Await `awaitable`, unless the renderer crashes first (PageCrashed): no reply would ever come."""
        work = asyncio.ensure_future(awaitable)
        crash = asyncio.ensure_future(self._crashed.wait())
        try:
            done, _ = await asyncio.wait((work, crash), return_when=asyncio.FIRST_COMPLETED)
            if work in done:
                return work.result()
            raise PageCrashed(f"the page crashed while {what}")
        finally:
            work.cancel()
            crash.cancel()

    async def reload_after_crash(self, *, timeout: float = 30.0) -> None:
        """Bring a crashed page back: Page.reload starts a new renderer for the same URL (as the sad tab's
        Reload button does). What the page held only in memory is lost."""
        self._crashed.clear()
        self._loading = True
        self._stopped_loading.clear()
        try:
            await self.send("Page.reload", {}, timeout=timeout)
        except BaseException:
            self._mark_loaded()
            raise
        await self.wait_for_load(timeout=timeout)

    async def enable(self) -> None:
        await self.session.send("Page.enable")
        await self.session.send("Page.setLifecycleEventsEnabled", {"enabled": True})
        tree = await self.session.send("Page.getFrameTree")
        self.main_frame_id = tree["frameTree"]["frame"]["id"]
        await self.render_as_if_shown()

    async def render_as_if_shown(self) -> None:
        """Let the page run and paint as if it were the tab in front, for as long as this session lasts.

        With several tasks, all but one of their tabs are in the background of the user's window, where
        Chromium hides the page: no animation frames, and every trusted mouse move waits ~5 s for a frame
        that never comes (measured on Chromium 156, headful and headless: bench/bench_background.py).
        Focus emulation makes the page visible and focused, but it then paints ~4 frames/s and a mouse
        move after a change on the page still waits ~1 s; a screencast keeps its frames drawn at the
        display's rate. Its frames are never acknowledged: Chromium then sends two or three and drops the
        rest, yet keeps drawing. Both are CDP commands chrome.debugger allows, so this works in the user's
        own browser, whose launch flags are not ours; both end with the session (the debugger detaching).
        Not changed: Chromium still runs a background tab's renderer at a lower OS priority (nice 5 vs 0),
        which shows only on a machine short of CPU. Side effect, wanted: while tabpilot works in a tab, its
        page believes it is shown and focused (so does anyone else asking it, e.g. Browser._frontmost)."""
        try:
            await self.session.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
            await self.session.send("Page.startScreencast", _SCREENCAST)
        except CDPError as exc:  # a browser without them still works, slowly in the background
            log.warning("tab %s may be slow while in the background: %s", self.target_id, exc)

    def _on_started(self, params: dict[str, Any]) -> None:
        if params.get("frameId") == self.main_frame_id:
            self._loading = True
            self._stopped_loading.clear()
            self._last_activity = time.monotonic()

    def _on_stopped(self, params: dict[str, Any]) -> None:
        if params.get("frameId") == self.main_frame_id:
            self._loading = False
            self._stopped_loading.set()
            self._last_activity = time.monotonic()

    def _on_navigated(self, params: dict[str, Any]) -> None:
        frame = params.get("frame", {})
        if not frame.get("parentId"):
            self._crashed.clear()  # a new document: a new renderer, if the last one had crashed
            self.main_frame_id = frame.get("id", self.main_frame_id)
            self.documents += 1  # a jump within the page is Page.navigatedWithinDocument, not this

    async def send(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        if self.closed:
            raise TabClosed("the tab was closed")
        try:
            return await self.session.send(method, params, **kw)
        except CDPError as exc:
            if exc.kind is CDPErrorKind.TARGET_GONE:
                self.closed = True
                raise TabClosed("the tab was closed") from exc
            raise

    async def navigate(self, url: str, *, timeout: float = 30.0) -> None:
        """Open `url` and wait until it has loaded. A dialog the page opens meanwhile (an alert in a script that
        runs as it loads) is accepted: it would hold up the load, and every command to the page, for good (`tabpilot
        run --url` and `state` waited forever on such a page). The next state says what each said, as an action's
        result does (actions.py)."""
        # Mark loading before asking: a fast page can stop loading before Page.navigate even replies.
        self._loading = True
        self._stopped_loading.clear()
        self.session.on("Page.javascriptDialogOpening", self._accept_dialog)
        try:
            await self._navigate(url, timeout)
        finally:
            self.session.off("Page.javascriptDialogOpening", self._accept_dialog)

    def _accept_dialog(self, params: dict[str, Any]) -> None:
        from .nodes import dialog_note  # (nodes is built on this module)

        log.info("accepted a %s the page showed while it loaded", params.get("type", "dialog"))  # not its words
        # The model is told in its next look at the page (state.read_page), as an action is of what it set off.
        self.load_dialogs.append(dialog_note(params.get("type", "alert"), params.get("message", "")))
        reply: dict[str, Any] = {"accept": True}
        if params.get("type") == "prompt":
            reply["promptText"] = params.get("defaultPrompt", "")
        answered = asyncio.ensure_future(self.session.send("Page.handleJavaScriptDialog", reply, timeout=5))
        answered.add_done_callback(lambda done: done.cancelled() or done.exception())  # answered elsewhere: fine

    async def request_navigation(self, url: str, *, timeout: float) -> dict[str, Any]:
        """Page.navigate's reply. A site that never answers holds that reply back, and with it every later command
        to the tab, the old page's reads included (measured on Chromium 156: Runtime.evaluate and Page.getLayoutMetrics
        went unanswered until Page.stopLoading), so the agent's next look waited 30 s twice and the task ended saying
        the page was busy or showing a dialog. At the deadline the load is stopped instead: the tab keeps the page
        it showed, and NavigationFailed says the site did not answer."""
        try:
            return await self.send("Page.navigate", {"url": url}, timeout=timeout)
        except CDPError as exc:
            if exc.kind is not CDPErrorKind.TIMEOUT:
                raise
        try:
            await self.send("Page.stopLoading", timeout=5)
        except CDPError as exc:
            log.info("could not stop loading %s: %s", url, exc)
        raise NavigationFailed(url, f"the site did not answer within {timeout:g} s, so its loading was stopped")

    async def _navigate(self, url: str, timeout: float) -> None:
        try:
            result = await self.request_navigation(url, timeout=timeout)
        except BaseException:
            self._mark_loaded()
            raise
        if result.get("errorText"):
            # Chromium then shows its error page (a new document, ~20 ms later): loaded before this returns, it
            # is part of the navigation that failed, not a change the agent finds on the page afterwards.
            if not result.get("loaderId") or not await self.wait_for_load(timeout=ERROR_PAGE_WAIT):
                self._mark_loaded()
            raise NavigationFailed(url, result["errorText"])
        if not result.get("loaderId"):
            self._mark_loaded()  # same-document navigation (#fragment): nothing will load
        await self.wait_for_load(timeout=timeout)

    def _mark_loaded(self) -> None:
        self._loading = False
        self._stopped_loading.set()

    async def wait_for_load(self, *, timeout: float = 30.0) -> bool:
        """Wait until the main frame has stopped loading and the document is complete.

        Returns False when the page is still busy at the deadline: a slow page is still a page the agent
        can look at. Raises TabClosed / CDPConnectionClosed as soon as the tab or the browser is gone."""
        deadline = time.monotonic() + timeout
        try:
            async with asyncio.timeout(timeout):
                await self.unless_gone(self._stopped_loading.wait(), "waiting for the page to load")
        except TimeoutError:
            return False
        while time.monotonic() < deadline:
            try:
                state = await self.evaluate("document.readyState", timeout=max(0.5, deadline - time.monotonic()))
            except CDPConnectionClosed:
                raise
            except (PageScriptError, CDPError):
                state = None
            if state == "complete":
                return True
            await asyncio.sleep(0.05)
        return False

    async def settle(self, *, navigation_grace: float = 0.25, timeout: float = 15.0) -> None:
        """After an action: give a navigation a moment to start, then wait for it to finish."""
        await asyncio.sleep(navigation_grace)
        if self._loading:
            await self.wait_for_load(timeout=timeout)

    async def evaluate(self, expression: str, *, timeout: float = 30.0, await_promise: bool = True) -> Any:
        result = await self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": await_promise},
            timeout=timeout,
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text", "script error")
            raise PageScriptError(text)
        return result.get("result", {}).get("value")

    # A crashed page answers no script: PageCrashed at once, not the caller's timeout (a takeover's record reads the
    # URL before and after it: each waited 3 s on a crashed page before the person had the controls or handed back).
    async def url(self) -> str:
        return str(await self.unless_crashed(self.evaluate("location.href"), "its address was read"))

    async def address(self) -> str:
        """The address the browser keeps for the tab's current history entry (a script's pushState and hash changes
        included): unlike `url`, answered while the page's own script hangs (Stop on such a page, with the person at
        the controls, waited the 3 s `url` is given to say where the takeover ended)."""
        return str((await self._current_entry())["url"])

    async def history_entry(self) -> int:
        """The id of the tab's current history entry: a document the tab goes back or forward to comes back under
        its entry's id (with what its fields held), where `documents` counts it as a new one."""
        return int((await self._current_entry())["id"])

    async def _current_entry(self) -> dict[str, Any]:
        history = await self.send("Page.getNavigationHistory")
        return dict(history["entries"][history["currentIndex"]])

    async def title(self) -> str:
        return str(await self.unless_crashed(self.evaluate("document.title"), "its title was read"))

    # --- out-of-process iframes ------------------------------------------------------------------
    async def track_frames(self) -> None:
        """Attach to every out-of-process iframe (now and later, nested too) as a flattened session.

        Idempotent. Chromium reports frames that already exist before it answers setAutoAttach, so
        when this returns, `frames` holds every OOPIF of the page as it is now."""
        if not self._tracking_frames:
            await self._auto_attach(self.session)
            self._tracking_frames = True
        while self._frame_setups:
            await asyncio.gather(*list(self._frame_setups), return_exceptions=True)

    async def _auto_attach(self, session: CDPSession) -> None:
        if session.session_id not in self._frame_handlers:  # once per session, even after a failed try
            self._frame_handlers.add(session.session_id)
            session.on("Target.attachedToTarget", lambda params: self._on_frame_attached(session, params))
            session.on("Target.detachedFromTarget", self._on_frame_detached)
        params: dict[str, Any] = {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True}
        try:
            await session.send("Target.setAutoAttach", {**params, "filter": [{"type": "iframe"}]})
        except CDPError:  # a browser without target filters: attach to everything, keep the iframes
            await session.send("Target.setAutoAttach", params)

    def _on_frame_attached(self, parent: CDPSession, params: dict[str, Any]) -> None:
        info = params.get("targetInfo", {})
        if info.get("type") != "iframe":
            return
        child = parent.connection.session(params["sessionId"])
        frame = self.frames[info["targetId"]] = FrameTarget(info["targetId"], child, parent, info.get("url", ""))
        for watcher in self.frame_watchers:
            watcher(frame)
        setup = asyncio.ensure_future(self._set_up_frame(child, bool(params.get("waitingForDebugger"))))
        self._frame_setups.add(setup)
        setup.add_done_callback(self._frame_setups.discard)

    async def _set_up_frame(self, child: CDPSession, waiting: bool) -> None:
        try:
            await self._auto_attach(child)  # its own cross-site iframes
            if waiting:
                await child.send("Runtime.runIfWaitingForDebugger")
        except CDPError:
            pass  # the frame went away while we were attaching

    def _on_frame_detached(self, params: dict[str, Any]) -> None:
        target_id = params.get("targetId")
        if target_id is None:
            target_id = next((k for k, f in self.frames.items() if f.session.session_id == params.get("sessionId")),
                             None)
        gone = [self.frames.pop(target_id)] if target_id in self.frames else []
        # Its own cross-site frames went with it: their detach came on its session, which was already gone.
        while gone:
            session = gone.pop().session
            gone += [self.frames.pop(k) for k, f in list(self.frames.items()) if f.parent is session]

    def __repr__(self) -> str:
        return f"Tab({self.target_id[:8]})"


def js_string(value: str) -> str:
    """A JS string literal for value (JSON is a subset of JS)."""
    return json.dumps(value)
