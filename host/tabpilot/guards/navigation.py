"""Stopping a navigation to a domain the task may not reach, before its request leaves the browser.

Every tab of a task gets CDP Fetch interception for documents at the request stage: each page load
(the agent's `go_to_url`, a link it clicks, a form, a script setting `location`) and each redirect hop
of one is paused, judged by the task's `DomainPolicy`, and continued or failed. Fetch is one of the
domains chrome.debugger lets an extension use, so this works the same in the user's browser (the
extension relay) and in a launched one (websocket). Frames and popups: an out-of-process iframe's own
requests are not intercepted (subresources and subframes are out of scope); a popup or `target=_blank`
tab is guarded from its first request in a browser reached over websocket (`DevToolsTabs.guard_new_tabs`); in
the extension relay, where chrome.debugger cannot hold a tab before it exists, the extension's own
declarativeNetRequest rules block that first request (`ExtensionTabs.guard_new_tabs`, `guard.rules`) and Fetch
takes over once the host attaches. A click the agent makes on a link or a form's submit is judged before the
click (`click_refusal`), so nothing is requested at all.

A page that arrives in a task's tab on a refused domain all the same (its request left before the guard held the
tab: the page sent itself there as the task started) is reported the same way and the tab goes back a page.

A refused request fails as `Aborted`, which leaves the page where it was (measured on Chromium 156:
`BlockedByClient` replaces the page with chrome-error://chromewebdata/, losing the agent's page); a
popup's first request fails as `BlockedByClient`, and the popup is closed: it never showed anything the task
may see (the extension relay closes such a popup too, `ExtensionTabs`). The guard is the agent's: while the user
has the controls (a takeover) their own navigations go through."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..cdp import CDPError

if TYPE_CHECKING:
    from ..browser.elements import ElementRef
    from ..browser.tab import Tab
    from ..cdp import CDPSession
    from .domains import DomainPolicy

log = logging.getLogger(__name__)

DOCUMENTS = [{"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}]
# a page that arrived from another process is not ready for commands at once (measured: "Not attached to an
# active page" when asked from its frameNavigated)
SEND_BACK_TRIES, SEND_BACK_PAUSE = 40, 0.05
Blocked = Callable[[str, str], None]  # (the URL refused, the words saying why) — told to the model and the user


class NavigationGuard:
    def __init__(self, policy: DomainPolicy, on_blocked: Blocked, *, task_id: str = "") -> None:
        self.policy = policy
        self.on_blocked = on_blocked
        self.task_id = task_id  # the extension keeps its own rules of this guard under it
        self.on_suspended: list[Callable[[bool], None]] = []  # told when `suspended` changes
        self._watched: set[int] = set()
        self._main_frames: dict[int, str] = {}  # id(session) → its page's main frame id (stable across navigations)
        # id(session) → how to close it, of popups whose first document was not asked for yet
        self._unloaded_popups: dict[int, Callable[[], Awaitable[object]]] = {}
        self._pending: set[asyncio.Task[None]] = set()
        self.blocked: list[str] = []  # the URLs refused so far, in order
        self._suspended = False

    @property
    def suspended(self) -> bool:
        """While the user has the controls, where they go is their business."""
        return self._suspended

    @suspended.setter
    def suspended(self, value: bool) -> None:
        changed = value != self._suspended
        self._suspended = value
        for listener in list(self.on_suspended) if changed else []:
            listener(value)

    async def watch(self, session: CDPSession, *, close_popup: Callable[[], Awaitable[object]] | None = None) -> None:
        """Intercept the document requests of this session's target from now on (idempotent). `close_popup`: the
        target is a popup one of the task's tabs opened, closed this way when its first document is refused."""
        if id(session) in self._watched:
            return
        self._watched.add(id(session))
        if close_popup is not None:
            self._unloaded_popups[id(session)] = close_popup
        popup = close_popup is not None
        session.on("Fetch.requestPaused", lambda params: self._on_paused(session, params, popup))
        if not popup:  # a popup's first page is judged by its request; one that got through is closed instead
            session.on("Page.frameNavigated", lambda params: self._on_committed(session, params))
        try:
            tree = await session.send("Page.getFrameTree")
            self._main_frames[id(session)] = tree["frameTree"]["frame"]["id"]
        except CDPError:
            pass  # no frame tree (yet): every document request is judged, as for a main frame
        await session.send("Fetch.enable", {"patterns": DOCUMENTS})

    def _on_paused(self, session: CDPSession, params: dict[str, Any], popup: bool) -> None:
        # a task of its own: Fetch events are handled in order with no await holding the others up
        job = asyncio.ensure_future(self._decide(session, params, popup))
        self._pending.add(job)
        job.add_done_callback(self._pending.discard)

    def _on_committed(self, session: CDPSession, params: dict[str, Any]) -> None:
        """A page arrived in the tab's main frame. One on a refused domain got past interception: its request had
        left before the guard held the tab (a page that sent itself elsewhere as the task started). It is reported
        like a refused navigation and the tab goes back where it was."""
        frame = params.get("frame", {})
        url = str(frame.get("url", ""))
        if frame.get("parentId") or self.suspended or self.policy.refusal(url) is None:
            return
        job = asyncio.ensure_future(self._send_back(session, url))
        self._pending.add(job)
        job.add_done_callback(self._pending.discard)

    async def _send_back(self, session: CDPSession, url: str) -> None:
        refusal = self.policy.refusal(url)
        assert refusal is not None
        log.info("a page on a refused domain arrived past the guard: %s", url)
        self.blocked.append(url)
        self.on_blocked(url, refusal)
        for attempt in range(SEND_BACK_TRIES):
            if self.suspended:  # the person took the controls meanwhile: where the tab goes is theirs
                return
            try:
                history = await session.send("Page.getNavigationHistory")
                entries, current = history["entries"], history["currentIndex"]
                previous = entries[current - 1] if current > 0 else None
                if previous is not None and self.policy.refusal(str(previous.get("url", ""))) is None:
                    await session.send("Page.navigateToHistoryEntry", {"entryId": previous["id"]})
                else:
                    await session.send("Page.navigate", {"url": "about:blank"})
                return
            except CDPError as exc:  # the page is still changing process ("Not attached to an active page"), or gone
                log.debug("sending the tab back from %s failed (try %d): %s", url, attempt + 1, exc)
                await asyncio.sleep(SEND_BACK_PAUSE)

    async def _decide(self, session: CDPSession, params: dict[str, Any], popup: bool) -> None:
        request_id = params["requestId"]
        url = str(params.get("request", {}).get("url", ""))
        main_frame = self._main_frames.get(id(session))
        # the page's own iframes (a map, a payment form, an ad) are not navigations of the task: let them load
        subframe = main_frame is not None and params.get("frameId") not in (None, main_frame)
        refusal = None if self.suspended or subframe else self.policy.refusal(url)
        close_popup = None if subframe else self._unloaded_popups.pop(id(session), None)
        try:
            if refusal is None:
                await session.send("Fetch.continueRequest", {"requestId": request_id})
                return
            reason = "BlockedByClient" if popup and not params.get("redirectedRequestId") else "Aborted"
            await session.send("Fetch.failRequest", {"requestId": request_id, "errorReason": reason})
        except CDPError as exc:  # the request went away meanwhile (tab closed, navigation replaced)
            log.debug("Fetch answer for %s failed: %s", url, exc)
        if refusal is None:
            return
        log.info("blocked a navigation to %s", url)
        self.blocked.append(url)
        self.on_blocked(url, refusal)
        if close_popup is not None:
            try:
                await close_popup()
            except CDPError as exc:  # closed already
                log.debug("closing the refused popup failed: %s", exc)


# Where clicking this element would send the browser: the link it is in (a target=_blank one too), or the
# URL the form it submits goes to (its button's formaction, else the form's action; GET or POST alike).
# null when the click navigates nowhere known up front (a script may still; interception covers that).
CLICK_DESTINATION = r"""function() {
  const link = this.closest ? this.closest('a[href], area[href]') : null;
  if (link) return link.href;
  const tag = this.tagName ? this.tagName.toLowerCase() : '';
  const type = (this.getAttribute && this.getAttribute('type') || '').toLowerCase();
  const submits = (tag === 'button' && (type === '' || type === 'submit'))
    || (tag === 'input' && (type === 'submit' || type === 'image'));
  const form = submits ? this.form : null;
  if (!form) return null;
  return this.hasAttribute('formaction') ? this.formAction : form.action;
}"""


async def click_refusal(policy: DomainPolicy, tab: Tab, element: ElementRef) -> str | None:
    """Why clicking `element` may not happen (it opens a link or submits a form to a refused domain), in the
    words `go_to_url` refuses with; None when it may. Checked before the click, so nothing is requested at
    all, also where interception cannot hold a new tab (the extension relay's popups)."""
    from ..browser import nodes

    try:
        destination = await nodes.call(tab, element, await nodes.resolve(tab, element), CLICK_DESTINATION)
    except Exception:
        return None  # a stale element: the click itself says so
    return policy.refusal(destination) if isinstance(destination, str) else None
