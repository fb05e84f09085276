"""A connected browser: the tabs in it, and the one the agent works in.

One `Browser` for every caller (the agent, actions, the state reader, a task run, MCP, the CLI), over a
`TabBackend` that says where its tabs come from: the DevTools Target domain of a Chromium tabpilot launched
or connected to (`browser.devtools_tabs.DevToolsTabs`), or the extension's `tabs.*` and chrome.debugger in
the user's own browser (`native.relay.ExtensionTabs`). Nothing above looks at which one it is: both attach a
tab as a CDP session the same `Tab` runs on, and both fail with the same typed errors (`TabClosed` for a tab
that cannot be worked in; `CDPError` with its `kind`, `CDPConnectionClosed` for a browser gone)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..cdp import CDPConnectionClosed, CDPError
from .errors import TabClosed, TabTaken, TabUnworkable
from .launcher import LaunchedBrowser, launch_browser, resolve_ws_url
from .tab import Tab

if TYPE_CHECKING:
    from ..cdp import CDPConnection, CDPSession
    from ..guards.navigation import NavigationGuard


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TabInfo:
    target_id: str
    url: str
    title: str


class TabBackend(Protocol):
    """How a `Browser` finds, opens, attaches to and closes tabs. Failures are `CDPError`s (their `kind` says
    what went wrong), a lost browser `CDPConnectionClosed`. It tells its `Browser` what happens to tabs on its
    own: `tab_opened` (a new tab, which a link or window.open of the task's may have opened), `tab_gone`,
    `tab_detached` (the debugger let go of a tab without tabpilot asking)."""

    connection: CDPConnection

    async def start(self, browser: Browser) -> None:
        """Start telling `browser` of its tabs' events."""

    async def list_tabs(self) -> list[TabInfo]:
        """The tabs the agent may see (never the extension's own pages)."""

    async def attach(self, target_id: str) -> CDPSession:
        """A session on this tab for its `Tab`; CDPError when it cannot be had."""

    async def create_tab(self) -> str:
        """Open a blank tab; its target id."""

    async def activate(self, target_id: str) -> None:
        """Bring the tab to the front."""

    async def close_tab(self, target_id: str) -> None: ...

    def forget(self, target_id: str) -> None:
        """The `Browser` no longer works in this tab (closed, detached, or never enabled)."""

    async def visibility(self, target_id: str) -> tuple[bool, bool]:
        """(visible, focused) for a tab, or (False, False) when it cannot be read."""

    async def guard_new_tabs(self, guard: NavigationGuard) -> None:
        """Hold `guard` over the tabs the task's tabs open from now on (its attached tabs the `Browser` guards)."""

    async def close(self) -> None:
        """Let go of the tabs and the connection; the browser itself is left running."""


class Browser:
    """Tabs, the one the agent works in (`active`), and the task's allowed domains over all of them.

    `launched` is the Chromium tabpilot started (shut down on `close`), None for a browser it only reached."""

    def __init__(self, backend: TabBackend, launched: LaunchedBrowser | None = None) -> None:
        self.backend = backend  # for whoever built this browser (and tests): the layers above never look
        self.launched = launched
        self._tabs: dict[str, Tab] = {}
        self._opened: asyncio.Queue[TabInfo] = asyncio.Queue()
        self._attaching: dict[str, asyncio.Future[Tab]] = {}
        self._active: Tab | None = None
        self._active_lost = False  # the tab worked in was closed under the work (not left for another one)
        self._worked_in: list[Tab] = []  # the tabs made active, the most recent last
        self._tab_numbers: dict[str, int] = {}
        self.guard: NavigationGuard | None = None  # the task's allowed domains, enforced on every tab
        self.detached_reason: str | None = None  # why the debugger last let go of a tab (`tab_detached`)
        self.on_detached: list[Callable[[str, str], None]] = []  # (target id, reason), e.g. "canceled_by_user"
        self.on_tab_gone: list[Callable[[str], None]] = []  # (target id) of a tab closed, by anyone
        # Whoever runs several tasks on one browser says which tabs another running task has (its task id, or
        # "" while it starts): those are neither listed for this one nor worked in (two agents in one page).
        self.held_elsewhere: Callable[[str], str | None] = lambda _target_id: None

    @property
    def active(self) -> Tab | None:
        """The tab worked in; None before one is chosen, or once it was closed (see `current_tab`)."""
        return self._active

    @active.setter
    def active(self, tab: Tab | None) -> None:
        self._active = tab
        if tab is not None:
            self._active_lost = False
            if tab in self._worked_in:
                self._worked_in.remove(tab)
            self._worked_in.append(tab)

    @property
    def connection(self) -> CDPConnection:
        return self.backend.connection

    def tab_number(self, target_id: str) -> int:
        """The short id the model sees for a tab: 1, 2, 3… in order first seen, stable for its life."""
        if target_id not in self._tab_numbers:
            self._tab_numbers[target_id] = len(self._tab_numbers) + 1
        return self._tab_numbers[target_id]

    def target_for_number(self, number: int) -> str | None:
        for target_id, n in self._tab_numbers.items():
            if n == number:
                return target_id
        return None

    def works_in(self, target_id: str | None) -> bool:
        """Whether this tab is one of the task's: attached, and not known to be gone."""
        return target_id in self._tabs

    # --- starting and stopping ------------------------------------------------------------------
    @classmethod
    async def open(cls, backend: TabBackend, launched: LaunchedBrowser | None = None) -> Browser:
        """A browser over `backend`, told of its tabs' events from now on."""
        browser = cls(backend, launched)
        try:
            await backend.start(browser)
        except BaseException:
            await browser.close()  # never leave the Chromium we started running
            raise
        return browser

    @classmethod
    async def launch(cls, **launch_options: Any) -> Browser:
        from .devtools_tabs import DevToolsTabs

        launched = await asyncio.to_thread(launch_browser, **launch_options)
        try:
            backend = await DevToolsTabs.connect(launched.ws_url)
        except BaseException:
            launched.close()
            raise
        return await cls.open(backend, launched)

    @classmethod
    async def connect(cls, cdp_url: str) -> Browser:
        from .devtools_tabs import DevToolsTabs

        return await cls.open(await DevToolsTabs.connect(await resolve_ws_url(cdp_url)))

    async def close(self) -> None:
        """Let go of the tabs; a browser we launched is shut down, any other one is left running."""
        try:
            await self.backend.close()
        finally:
            if self.launched is not None:
                await asyncio.to_thread(self.launched.close)

    async def __aenter__(self) -> Browser:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- allowed domains ------------------------------------------------------------------------
    async def guard_navigation(self, guard: NavigationGuard) -> None:
        """Enforce `guard` on every tab of this browser's task: those attached now, those attached later,
        and the pages they open (popups, target=_blank links): the backend guards those from their first
        request (`TabBackend.guard_new_tabs`)."""
        self.guard = guard
        for tab in list(self._tabs.values()):
            await guard.watch(tab.session)
        await self.backend.guard_new_tabs(guard)

    # --- what the backend tells ------------------------------------------------------------------
    def tab_opened(self, info: TabInfo) -> None:
        """A new tab, perhaps opened by the task's (a link, window.open): `wait_for_new_tab` gets it."""
        self._opened.put_nowait(info)

    def tab_gone(self, target_id: str) -> None:
        """The tab was closed (by anyone): its `Tab` says so, and it is no longer the active one."""
        tab = self._tabs.pop(target_id, None)
        self.backend.forget(target_id)
        if tab is not None:
            tab.closed = True
            if self._active is tab:
                self._active, self._active_lost = None, True
        for listener in list(self.on_tab_gone):
            listener(target_id)

    def tab_detached(self, target_id: str, reason: str) -> None:
        """The debugger let go of the tab (`reason`: "canceled_by_user" is the user's Cancel on the infobar)."""
        self.detached_reason = reason
        self.tab_gone(target_id)
        for listener in list(self.on_detached):
            listener(target_id, reason)

    # --- tabs -----------------------------------------------------------------------------------
    async def tabs(self) -> list[TabInfo]:
        """The tabs this task may work in: never one another running task has."""
        return [info for info in await self.backend.list_tabs() if self.held_elsewhere(info.target_id) is None]

    def refuse_held(self, target_id: str) -> None:
        """TabTaken when another running task has this tab (`held_elsewhere`); the model is told whose."""
        holder = self.held_elsewhere(target_id)
        if holder is not None:
            number, whose = self._tab_numbers.get(target_id) or target_id, f" ({holder})" if holder else ""
            raise TabTaken(f"Tab {number} is in use by another running task{whose}: it cannot be worked in until "
                           "that task ends. Use one of the open tabs, or open a new one.")

    async def attach(self, target_id: str) -> Tab:
        """The tab, attached (and guarded, with a guard on); TabClosed when it cannot be worked in, TabTaken when
        another running task has it."""
        existing = self._tabs.get(target_id)
        if existing is not None and not existing.closed:
            return existing
        self.refuse_held(target_id)
        # One attach a tab, however many ask at once (a new tab's "created" and "updated" events each asked:
        # four sessions on one popup, each enabling the page and Fetch again)
        pending = self._attaching.get(target_id)
        if pending is None:
            pending = asyncio.ensure_future(self._attach(target_id))
            self._attaching[target_id] = pending
            pending.add_done_callback(lambda done: self._attached_one(target_id, done))
        return await asyncio.shield(pending)

    def _attached_one(self, target_id: str, done: asyncio.Future[Tab]) -> None:
        if self._attaching.get(target_id) is done:
            del self._attaching[target_id]
        if not done.cancelled():
            done.exception()  # retrieved here too: the one who asked may have stopped waiting

    async def _attach(self, target_id: str) -> Tab:
        try:
            session = await self.backend.attach(target_id)
            tab = Tab(session, target_id)
            await tab.enable()
            if self.guard is not None:
                await self.guard.watch(tab.session)
        except (CDPConnectionClosed, TabUnworkable):
            self.tab_gone(target_id)
            raise
        except CDPError as exc:  # not open, not a page that can be debugged, or closed meanwhile (a refused popup)
            self.tab_gone(target_id)
            raise TabClosed(f"cannot work in tab {target_id}: {exc.cdp_message}", reason=exc.cdp_message) from exc
        self._tabs[target_id] = tab
        self.tab_number(target_id)
        return tab

    async def new_tab(self, url: str = "about:blank") -> Tab:
        tab = await self.attach(await self.backend.create_tab())
        if url != "about:blank":
            await tab.navigate(url)
        self.active = tab
        return tab

    async def activate(self, target_id: str, *, focus: bool = True) -> Tab:
        """Work in this tab from now on; `focus`: bring it to the front too (a task in the user's browser
        starts in their tab without moving their view)."""
        tab = await self.attach(target_id)
        if focus:
            await self.backend.activate(target_id)
        self.active = tab
        return tab

    async def close_tab(self, target_id: str) -> None:
        await self.backend.close_tab(target_id)
        self.tab_gone(target_id)

    async def current_tab(self) -> Tab:
        """The active tab; with none chosen yet, the page the user is looking at, attached but not
        activated, so their view does not change (a fresh launch has one blank tab). Once the active tab was
        closed under the work (by the person, or by its page, as a sign-in popup closes itself): the last other
        tab worked in (the one the popup came from), never one of the person's own; TabClosed when none is left."""
        if self.active is not None and not self.active.closed:
            return self.active
        if self.active is not None or self._active_lost:
            worked_in = [tab for tab in self._worked_in if not tab.closed]
            if not worked_in:
                raise TabClosed("the tab this work was done in was closed")
            self.active = worked_in[-1]
            return worked_in[-1]
        pages = await self.tabs()
        if not pages:
            return await self.new_tab()
        tab = await self.attach(await self._frontmost(pages))
        self.active = tab
        return tab

    async def _frontmost(self, pages: list[TabInfo]) -> str:
        """The visible page (the focused one when several windows show one); else the first listed:
        Chromium lists targets most recently active first."""
        if len(pages) == 1:
            return pages[0].target_id
        seen = await asyncio.gather(*(self.backend.visibility(page.target_id) for page in pages))
        visible = [(page, focused) for page, (shown, focused) in zip(pages, seen, strict=True) if shown]
        focused = [page for page, has_focus in visible if has_focus]
        if focused or visible:
            return (focused or [page for page, _ in visible])[0].target_id
        return pages[0].target_id

    async def wait_for_new_tab(self, timeout: float = 5.0) -> TabInfo | None:
        """The next tab opened (e.g. by a link with target=_blank), if one opens in time."""
        try:
            async with asyncio.timeout(timeout):
                return await self._opened.get()
        except TimeoutError:
            return None

    def drain_new_tab_events(self) -> None:
        while not self._opened.empty():
            self._opened.get_nowait()
