"""Stopping a navigation to a domain the task may not reach, before its request leaves the browser.

Every tab of a task gets CDP Fetch interception for documents at the request stage: each page load
(the agent's `go_to_url`, a link it clicks, a form, a script setting `location`) and each redirect hop
of one is paused, judged by the task's `DomainPolicy`, and continued or failed. Fetch is one of the
domains chrome.debugger lets an extension use, so this works the same in the user's browser (the
extension relay) and in a launched one (websocket). Frames and popups: an out-of-process iframe's own
requests are not intercepted (subresources and subframes are out of scope); a popup or `target=_blank`
tab is guarded from its first request in a browser reached over websocket (`Browser.guard_navigation`),
and from the moment the host attaches to it in the extension relay (`RelayBrowser`).

A refused request fails as `Aborted`, which leaves the page where it was (measured on Chromium 156:
`BlockedByClient` replaces the page with chrome-error://chromewebdata/, losing the agent's page); a
popup's first request fails as `BlockedByClient`, so that tab says it was blocked. The guard is the agent's:
while the user has the controls (a takeover) their own navigations go through."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..cdp import CDPError

if TYPE_CHECKING:
    from ..cdp import CDPSession
    from .domains import DomainPolicy

log = logging.getLogger(__name__)

DOCUMENTS = [{"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}]
Blocked = Callable[[str, str], None]  # (the URL refused, the words saying why) — told to the model and the user


class NavigationGuard:
    def __init__(self, policy: DomainPolicy, on_blocked: Blocked) -> None:
        self.policy = policy
        self.on_blocked = on_blocked
        self._watched: set[int] = set()
        self._main_frames: dict[int, str] = {}  # id(session) → its page's main frame id (stable across navigations)
        self._pending: set[asyncio.Task[None]] = set()
        self.blocked: list[str] = []  # the URLs refused so far, in order
        self.suspended = False  # while the user has the controls, where they go is their business

    async def watch(self, session: CDPSession, *, popup: bool = False) -> None:
        """Intercept the document requests of this session's target from now on (idempotent)."""
        if id(session) in self._watched:
            return
        self._watched.add(id(session))
        session.on("Fetch.requestPaused", lambda params: self._on_paused(session, params, popup))
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

    async def _decide(self, session: CDPSession, params: dict[str, Any], popup: bool) -> None:
        request_id = params["requestId"]
        url = str(params.get("request", {}).get("url", ""))
        main_frame = self._main_frames.get(id(session))
        # the page's own iframes (a map, a payment form, an ad) are not navigations of the task: let them load
        subframe = main_frame is not None and params.get("frameId") not in (None, main_frame)
        refusal = None if self.suspended or subframe else self.policy.refusal(url)
        try:
            if refusal is None:
                await session.send("Fetch.continueRequest", {"requestId": request_id})
                return
            reason = "BlockedByClient" if popup and not params.get("redirectedRequestId") else "Aborted"
            await session.send("Fetch.failRequest", {"requestId": request_id, "errorReason": reason})
        except CDPError as exc:  # the request went away meanwhile (tab closed, navigation replaced)
            log.debug("Fetch answer for %s failed: %s", url, exc)
        if refusal is not None:
            log.info("blocked a navigation to %s", url)
            self.blocked.append(url)
            self.on_blocked(url, refusal)
