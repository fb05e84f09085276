"""CDP over the extension: a `Transport` that relays through chrome.debugger, and the tabs a `Browser` has there.

With chrome.debugger each tab is its own debuggee, so one `RelayTransport` multiplexes them behind
CDP session ids: the tab itself is the pseudo session `tab-<tabId>`, and the flattened child sessions
chrome.debugger reports (out-of-process iframes, workers) keep their real sessionId. Everything above
(`Tab`, state, actions, the agent) runs over it unchanged.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..browser.browser import Browser, TabInfo
from ..browser.errors import TabUnworkable
from ..cdp import CDPConnection, CDPConnectionClosed, CDPError, CDPSession, CDPTimeout
from ..cdp.transport import INPUT_WINDOW, TransportClosed
from .messages import (
    CdpAttach,
    CdpBatch,
    CdpBatchData,
    CdpCommand,
    CdpDetach,
    CdpDetached,
    CdpEvent,
    CdpInput,
    CdpSend,
    ChromeTab,
    GuardClear,
    GuardRules,
    HostRequest,
    TabsActivate,
    TabsClose,
    TabsCreate,
    TabsEvent,
    TabsQuery,
)
from .peer import REQUEST_TIMEOUT, ExtensionError, ExtensionLink, LinkClosed, LinkClosedNotice, ReplyData

if TYPE_CHECKING:
    from ..guards.navigation import NavigationGuard

log = logging.getLogger(__name__)

TAB_SESSION_PREFIX = "tab-"
GUARD_RULES_TIMEOUT = 5.0  # the worker answers in milliseconds; an extension that does not, leaves Fetch alone


def _cdp_code(code: str | int | None) -> int:
    """CDP's numeric error code as the extension passed it on; its own (string) codes become CDP's generic one."""
    return code if isinstance(code, int) else -32000


def tab_session_id(tab_id: int) -> str:
    return f"{TAB_SESSION_PREFIX}{tab_id}"


class RelayTransport:
    """CDP messages ⇄ `cdp.send` / `cdp.batch` / `cdp.input` requests and `cdp.event` pushes, for the tabs in `tabs`.

    The extension pushes the events of every tab it relays, and several tasks (each with its own
    transport) may run at once: a transport takes only its own tabs' events and detaches."""

    def __init__(self, link: ExtensionLink) -> None:
        self._link = link
        self.tabs: set[int] = set()
        self._incoming: asyncio.Queue[dict[str, Any] | TransportClosed] = asyncio.Queue()
        self._child_sessions: dict[str, int] = {}  # flattened child sessionId → its tab
        self.detach_listeners: list[Callable[[int, str], None]] = []
        link.on(CdpEvent, self._on_event)
        link.on(CdpDetached, self._on_detached)
        link.on(LinkClosedNotice, self._on_link_closed)

    async def send_burst(self, messages: list[dict[str, Any]]) -> None:
        """Each message as a `cdp.send`, or a run of input commands in one frame when the extension takes those:
        one native-messaging frame each way and one wake of the service worker for the lot. `cdp.input` (the
        worker paces the run, so a whole text's key events come in one run: `paces_input`), else `cdp.batch`."""
        routed: list[tuple[int, dict[str, Any]]] = []
        for message in messages:
            try:
                tab_id, session_id = self._route(message.get("sessionId"))
            except ValueError as exc:
                self._incoming.put_nowait({"id": message["id"], "error": {"code": -32000, "message": str(exc)}})
                continue
            routed.append((message["id"], {"tab_id": tab_id, "session_id": session_id, "method": message["method"],
                                           "params": message.get("params") or {}}))
        features = self._link.features
        # Only input goes in batches (typing: hundreds of key events in a row). A batch is answered once all
        # of it is, so a slow command (a navigation, an awaited promise, another task's) would hold back the
        # answers of everything sent with it. Runs keep their order: input, then the rest, as sent.
        for is_input, run in itertools.groupby(routed, key=lambda item: str(item[1]["method"]).startswith("Input.")):
            commands = list(run)
            if is_input and len(commands) > 1 and features & {"cdp.input", "cdp.batch"}:
                listed = [CdpCommand(**command) for _, command in commands]
                request = CdpInput(commands=listed, window=INPUT_WINDOW) if "cdp.input" in features \
                    else CdpBatch(commands=listed)
                batch = self._link.request_future(request)
                batch.add_done_callback(functools.partial(self._on_batch_reply, [each for each, _ in commands]))
                continue
            for message_id, command in commands:
                future = self._link.request_future(CdpSend(**command))
                future.add_done_callback(functools.partial(self._on_reply, message_id))

    @property
    def paces_input(self) -> bool:
        """The worker keeps a `cdp.input` run to its window (CDPConnection.paces_input)."""
        return "cdp.input" in self._link.features

    def _route(self, session_id: str | None) -> tuple[int, str | None]:
        """The tab (and flattened child session, if any) a CDP session id stands for."""
        if session_id is None:
            raise ValueError("the extension relay has no browser-level session; send to a tab's session")
        if session_id.startswith(TAB_SESSION_PREFIX):
            return int(session_id[len(TAB_SESSION_PREFIX) :]), None
        tab_id = self._child_sessions.get(session_id)
        if tab_id is None:
            raise ValueError(f"Session with given id not found: {session_id}")
        return tab_id, session_id

    def _on_reply(self, message_id: int, future: asyncio.Future[dict[str, Any]]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is None:
            self._incoming.put_nowait({"id": message_id, "result": future.result() or {}})
        else:
            self._on_failure([message_id], exc)

    def _on_batch_reply(self, message_ids: list[int], future: asyncio.Future[CdpBatchData]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is None and len(outcomes := future.result().results) != len(message_ids):
            exc = ExtensionError("cdp.batch", f"{len(outcomes)} outcomes for {len(message_ids)} commands")
        if exc is not None:
            self._on_failure(message_ids, exc)
            return
        for message_id, outcome in zip(message_ids, future.result().results, strict=True):
            if outcome.error is None:
                self._incoming.put_nowait({"id": message_id, "result": outcome.result or {}})
            else:
                self._incoming.put_nowait({"id": message_id, "error": {
                    "code": _cdp_code(outcome.error.code), "message": outcome.error.message}})

    def _on_failure(self, message_ids: list[int], exc: BaseException) -> None:
        if isinstance(exc, LinkClosed):
            self._incoming.put_nowait(TransportClosed(f"extension link closed: {exc}"))
            return
        error = {"code": _cdp_code(exc.code), "message": exc.error_message} if isinstance(exc, ExtensionError) \
            else {"code": -32000, "message": str(exc)}
        for message_id in message_ids:
            self._incoming.put_nowait({"id": message_id, "error": error})

    def _on_event(self, push: CdpEvent) -> None:
        tab_id, session_id, method, params = push.tab_id, push.session_id, push.method, push.params
        if tab_id not in self.tabs:
            return
        if method == "Target.attachedToTarget" and params.get("sessionId"):
            self._child_sessions[params["sessionId"]] = tab_id
        elif method == "Target.detachedFromTarget" and params.get("sessionId"):
            self._child_sessions.pop(params["sessionId"], None)
        if session_id:
            self._child_sessions.setdefault(session_id, tab_id)
        session_id = session_id or tab_session_id(tab_id)
        self._incoming.put_nowait({"method": method, "params": params, "sessionId": session_id})

    def _on_detached(self, push: CdpDetached) -> None:
        tab_id, reason = push.tab_id, push.reason
        if tab_id not in self.tabs:
            return
        for session_id, owner in list(self._child_sessions.items()):
            if owner == tab_id:
                del self._child_sessions[session_id]
        for listener in list(self.detach_listeners):
            try:
                listener(tab_id, reason)
            except Exception:
                log.exception("detach listener failed")

    def _on_link_closed(self, notice: LinkClosedNotice) -> None:
        self._incoming.put_nowait(TransportClosed(f"extension link closed: {notice.reason}"))

    async def receive(self) -> dict[str, Any]:
        item = await self._incoming.get()
        if isinstance(item, TransportClosed):
            self._incoming.put_nowait(item)  # every later receive fails the same way
            raise item
        return item

    async def close(self) -> None:
        self._link.off(CdpEvent, self._on_event)
        self._link.off(CdpDetached, self._on_detached)
        self._link.off(LinkClosedNotice, self._on_link_closed)
        self._incoming.put_nowait(TransportClosed("relay closed by tabpilot"))


async def extension_browser(link: ExtensionLink, *, all_tabs: bool = True) -> Browser:
    """A `Browser` on the tabs of the user's browser, through the extension on `link`."""
    return await Browser.open(ExtensionTabs(link, all_tabs=all_tabs))


class ExtensionTabs:
    """The user's browser as the extension sees it, a `TabBackend` for `Browser`: tabs through `tabs.*`, CDP
    through chrome.debugger (`RelayTransport`), a tab's own id as its target id.

    With `all_tabs=False` the agent sees only its own tabs: the ones it attached to (the task's tab)
    and the ones opened while it works (links, popups, its own new tabs), never the user's others
    (page-agent's `experimentalIncludeAllTabs` off: their titles and URLs are not the model's business)."""

    def __init__(self, link: ExtensionLink, *, all_tabs: bool = True) -> None:
        self.link = link
        self.transport = RelayTransport(link)
        self.connection = CDPConnection(self.transport)
        self.all_tabs = all_tabs
        self._browser: Browser | None = None
        self._guard: NavigationGuard | None = None
        self._own_tabs: set[str] = set()
        self._attached: set[int] = set()
        self._guarding: set[asyncio.Future[None]] = set()
        self._opened: set[int] = set()  # tabs the task's tabs opened (popups, target=_blank links)
        self._refused_tabs: set[int] = set()  # ... closed for going to a refused domain
        self._rules_sent = asyncio.Lock()  # the extension's rules follow the guard's state, last one wins

    async def start(self, browser: Browser) -> None:  # no Target domain here: tabs.event pushes instead
        self._browser = browser
        self.transport.detach_listeners.append(self._on_tab_detached)
        self.link.on(TabsEvent, self._on_tabs_event)

    async def close(self) -> None:
        self.link.off(TabsEvent, self._on_tabs_event)
        if self._guard is not None and self._guard.task_id:
            try:
                await self.link.request(GuardClear(task_id=self._guard.task_id), timeout=GUARD_RULES_TIMEOUT)
            except (ExtensionError, LinkClosed, TimeoutError):
                pass  # a worker that restarted clears a dead task's rules on its next hello
        for tab_id in list(self._attached):
            try:
                await self.link.request(CdpDetach(tab_id=tab_id), timeout=2.0)
            except (ExtensionError, LinkClosed, TimeoutError):
                pass
        self._attached.clear()
        await self.connection.close()

    # --- allowed domains ------------------------------------------------------------------------
    async def guard_new_tabs(self, guard: NavigationGuard) -> None:
        """chrome.debugger cannot hold a new tab before its first request (its debuggee does not exist before
        the tab does): the extension's own rules (`guard.rules`: the task's tabs and domains) block a request
        of the task's tabs and of the tabs they open before it leaves; here a tab the task's tabs open is
        attached at once, so Fetch guards it from then on too, and one whose URL is already on a refused
        domain is closed and reported."""
        self._guard = guard
        guard.on_suspended.append(lambda _suspended: self._later(self._send_guard_rules()))
        await self._send_guard_rules()

    async def _send_guard_rules(self) -> None:
        """Tell the extension the task's rules as they are now: its tabs and domains, or none while the
        user has the controls. An extension without them (an older one) leaves Fetch interception alone."""
        guard = self._guard
        if guard is None or not guard.task_id:
            return
        async with self._rules_sent:
            request: HostRequest[Any] = GuardClear(task_id=guard.task_id) if guard.suspended else GuardRules(
                task_id=guard.task_id, tab_ids=sorted(self._attached),
                allowed_domains=list(guard.policy.allowed), blocked_domains=list(guard.policy.blocked))
            try:
                await self.link.request(request, timeout=GUARD_RULES_TIMEOUT)
            except (ExtensionError, LinkClosed, TimeoutError) as exc:
                log.warning("the extension did not take the task's domain rules: %s", exc)

    def _later(self, work: Any) -> None:
        job = asyncio.ensure_future(work)
        self._guarding.add(job)
        job.add_done_callback(self._guarding.discard)

    async def _guard_new_tab(self, tab: ChromeTab) -> None:
        guard, browser = self._guard, self._browser
        if guard is None or browser is None or guard.suspended or tab.tab_id in self._refused_tabs:
            return
        refusal = guard.policy.refusal(tab.url or "")
        try:
            if refusal is None:
                if not browser.works_in(str(tab.tab_id)):
                    await browser.attach(str(tab.tab_id))
                return
            self._refused_tabs.add(tab.tab_id)
            guard.blocked.append(tab.url)
            guard.on_blocked(tab.url, refusal)
            await browser.close_tab(str(tab.tab_id))
        except Exception as exc:
            log.debug("guarding new tab %s: %s", tab.tab_id, exc)

    # --- events from the extension --------------------------------------------------------------
    def _on_tabs_event(self, push: TabsEvent) -> None:
        tab, browser = push.tab, self._browser
        tab_id = tab.tab_id
        if browser is None:
            return
        if push.event == "created" and self._opened_by_mine(tab):
            self._own_tabs.add(str(tab_id))
            self._opened.add(tab_id)
            browser.tab_opened(TabInfo(str(tab_id), tab.url, tab.title))
        if push.event in ("created", "updated") and tab_id in self._opened and self._guard is not None:
            self._later(self._guard_new_tab(tab))
        elif push.event == "removed":
            browser.tab_gone(str(tab_id))

    def _opened_by_mine(self, tab: ChromeTab) -> bool:
        """A new tab is this browser's when one of its tabs opened it (a link, window.open): with
        several tasks at once, another task's new tab is not this one's to follow. An extension that
        does not say who opened a tab (no `openerTabId` at all) gets the old rule: every new tab."""
        if "opener_tab_id" not in tab.model_fields_set:
            return True
        return str(tab.opener_tab_id) in self._own_tabs

    def _on_tab_detached(self, tab_id: int, reason: str) -> None:
        if self._browser is not None:
            self._browser.tab_detached(str(tab_id), reason)

    async def _call(self, request: HostRequest[ReplyData]) -> ReplyData:
        """A tabs.* or cdp.attach request; failures are CDP errors, as the Target domain's would be."""
        try:
            return await self.link.request(request)
        except ExtensionError as exc:
            if exc.code == "tab_unworkable" and isinstance(request, CdpAttach):  # the message is the tab's kind
                raise TabUnworkable(str(request.tab_id), exc.error_message) from exc
            raise CDPError(request.type, _cdp_code(exc.code), exc.error_message) from exc
        except LinkClosed as exc:
            raise CDPConnectionClosed(request.type, str(exc)) from exc
        except TimeoutError as exc:
            raise CDPTimeout(request.type, REQUEST_TIMEOUT) from exc

    def forget(self, target_id: str) -> None:
        tab_id = int(target_id)
        self._attached.discard(tab_id)
        self.transport.tabs.discard(tab_id)

    # --- tabs -----------------------------------------------------------------------------------
    async def list_tabs(self) -> list[TabInfo]:
        data = await self._call(TabsQuery())
        return [
            TabInfo(str(t.tab_id), t.url, t.title)
            for t in data.tabs
            if not t.url.startswith(("chrome-extension://", "devtools://"))
            and (self.all_tabs or str(t.tab_id) in self._own_tabs)
        ]

    async def attach(self, target_id: str) -> CDPSession:
        tab_id = int(target_id)
        self.transport.tabs.add(tab_id)  # before attaching: its first events may beat the reply
        await self._call(CdpAttach(tab_id=tab_id))  # on failure the Browser forgets the tab (`forget`)
        self._attached.add(tab_id)
        self._own_tabs.add(target_id)
        await self._send_guard_rules()  # the extension's rules cover this tab too
        return self.connection.session(tab_session_id(tab_id))

    async def create_tab(self) -> str:
        data = await self._call(TabsCreate(url="about:blank"))
        self._own_tabs.add(str(data.tab.tab_id))
        return str(data.tab.tab_id)

    async def activate(self, target_id: str) -> None:
        await self._call(TabsActivate(tab_id=int(target_id)))

    async def close_tab(self, target_id: str) -> None:
        await self._call(TabsClose(tab_id=int(target_id)))

    async def visibility(self, target_id: str) -> tuple[bool, bool]:
        return False, False  # no page is read to choose a tab here: tabs.query lists the user's last active first
