"""A connected browser: the tabs in it, and the one the agent works in.

`Browser` talks the Target domain over the root CDP session; a transport that cannot (the extension
relay) provides a subclass with the same methods."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..cdp import CDPConnection, WebSocketTransport
from .errors import TabClosed
from .launcher import LaunchedBrowser, launch_browser, resolve_ws_url
from .tab import Tab

if TYPE_CHECKING:
    from ..guards.navigation import NavigationGuard


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TabInfo:
    target_id: str
    url: str
    title: str


class Browser:
    def __init__(self, connection: CDPConnection, launched: LaunchedBrowser | None = None) -> None:
        self.connection = connection
        self.launched = launched
        self._tabs: dict[str, Tab] = {}
        self._target_created: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.active: Tab | None = None
        self._tab_numbers: dict[str, int] = {}
        self.guard: NavigationGuard | None = None  # the task's allowed domains, enforced on every tab
        self._popups: set[str] = set()  # targets opened by the task's tabs, guarded from their first request

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

    # --- starting and stopping ------------------------------------------------------------------
    @classmethod
    async def launch(cls, **launch_options: Any) -> Browser:
        launched = await asyncio.to_thread(launch_browser, **launch_options)
        try:
            connection = CDPConnection(await WebSocketTransport.connect(launched.ws_url))
        except BaseException:
            launched.close()
            raise
        browser = cls(connection, launched)
        try:
            await browser._start()
        except BaseException:
            await browser.close()  # never leave the Chromium we started running
            raise
        return browser

    @classmethod
    async def connect(cls, cdp_url: str) -> Browser:
        ws_url = await resolve_ws_url(cdp_url)
        browser = cls(CDPConnection(await WebSocketTransport.connect(ws_url)))
        await browser._start()
        return browser

    async def _start(self) -> None:
        root = self.connection.root
        root.on("Target.targetCreated", self._on_target_created)
        root.on("Target.targetDestroyed", self._on_target_destroyed)
        await root.send("Target.setDiscoverTargets", {"discover": True})

    async def close(self) -> None:
        """Disconnect; a browser we launched is shut down, an attached one is left running."""
        await self.connection.close()
        if self.launched is not None:
            await asyncio.to_thread(self.launched.close)

    async def __aenter__(self) -> Browser:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- allowed domains ------------------------------------------------------------------------
    async def guard_navigation(self, guard: NavigationGuard) -> None:
        """Enforce `guard` on every tab of this browser's task: those attached now, those attached later,
        and the pages they open (popups, target=_blank links), which Chromium holds before their first
        request until the guard is on them (auto-attach with waitForDebuggerOnStart)."""
        self.guard = guard
        for tab in list(self._tabs.values()):
            await guard.watch(tab.session)
        await self._guard_popups()

    async def _guard_popups(self) -> None:
        root = self.connection.root
        root.on("Target.attachedToTarget", self._on_auto_attached)
        await root.send("Target.setAutoAttach", {
            "autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True, "filter": [{"type": "page"}],
        })

    async def _on_auto_attached(self, params: dict[str, Any]) -> None:
        # Only new pages wait for us. The root session also hears of every explicit attach (ours, new_tab's):
        # those are left alone, as are the pages that existed before (attached once, kept until we disconnect).
        info, session_id = params.get("targetInfo", {}), params.get("sessionId")
        if not session_id or not params.get("waitingForDebugger"):
            return
        session = self.connection.session(session_id)
        opener = info.get("openerId")
        try:
            if self.guard is not None and (opener in self._tabs or opener in self._popups):
                self._popups.add(info["targetId"])
                await self.guard.watch(session, popup=True)  # this session stays: its interception with it
            await session.send("Runtime.runIfWaitingForDebugger")
        except Exception as exc:  # the page closed meanwhile
            log.debug("auto-attached target %s: %s", info.get("targetId"), exc)

    # --- tabs -----------------------------------------------------------------------------------
    def _on_target_created(self, params: dict[str, Any]) -> None:
        info = params["targetInfo"]
        if info.get("type") == "page":
            self._target_created.put_nowait(info)

    def _on_target_destroyed(self, params: dict[str, Any]) -> None:
        tab = self._tabs.pop(params["targetId"], None)
        if tab is not None:
            tab.closed = True
            if self.active is tab:
                self.active = None

    async def tabs(self) -> list[TabInfo]:
        targets = (await self.connection.root.send("Target.getTargets"))["targetInfos"]
        return [
            TabInfo(t["targetId"], t.get("url", ""), t.get("title", ""))
            for t in targets
            if t.get("type") == "page" and not t.get("url", "").startswith("chrome-extension://")
        ]

    async def attach(self, target_id: str) -> Tab:
        if target_id in self._tabs and not self._tabs[target_id].closed:
            return self._tabs[target_id]
        try:
            reply = await self.connection.root.send(
                "Target.attachToTarget", {"targetId": target_id, "flatten": True}
            )
        except Exception as exc:
            raise TabClosed(f"tab {target_id} is not open: {exc}") from exc
        tab = Tab(self.connection.session(reply["sessionId"]), target_id)
        await tab.enable()
        if self.guard is not None:
            await self.guard.watch(tab.session)
        self._tabs[target_id] = tab
        return tab

    async def new_tab(self, url: str = "about:blank") -> Tab:
        reply = await self.connection.root.send("Target.createTarget", {"url": "about:blank"})
        tab = await self.attach(reply["targetId"])
        if url != "about:blank":
            await tab.navigate(url)
        self.active = tab
        return tab

    async def activate(self, target_id: str) -> Tab:
        tab = await self.attach(target_id)
        await self.connection.root.send("Target.activateTarget", {"targetId": target_id})
        self.active = tab
        return tab

    async def close_tab(self, target_id: str) -> None:
        await self.connection.root.send("Target.closeTarget", {"targetId": target_id})
        tab = self._tabs.pop(target_id, None)
        if tab is not None:
            tab.closed = True
            if self.active is tab:
                self.active = None

    async def current_tab(self) -> Tab:
        """The active tab; with none chosen yet, the page the user is looking at, attached but not
        activated, so their view does not change (a fresh launch has one blank tab)."""
        if self.active is not None and not self.active.closed:
            return self.active
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
        seen = await asyncio.gather(*(self._visibility(page.target_id) for page in pages))
        visible = [(page, focused) for page, (shown, focused) in zip(pages, seen, strict=True) if shown]
        focused = [page for page, has_focus in visible if has_focus]
        if focused or visible:
            return (focused or [page for page, _ in visible])[0].target_id
        return pages[0].target_id

    async def _visibility(self, target_id: str) -> tuple[bool, bool]:
        """(visible, focused) for a page, read through a short-lived session; (False, False) when it
        cannot be read (a frozen tab, or a transport without the Target domain)."""
        root = self.connection.root
        try:
            reply = await root.send("Target.attachToTarget", {"targetId": target_id, "flatten": True}, timeout=2.0)
        except Exception:
            return False, False
        session = self.connection.session(reply["sessionId"])
        try:
            result = await session.send(
                "Runtime.evaluate",
                {"expression": "[document.visibilityState === 'visible', document.hasFocus()]", "returnByValue": True},
                timeout=2.0,
            )
            shown, focused = result["result"]["value"]
            return bool(shown), bool(focused)
        except Exception:
            return False, False
        finally:
            try:
                await root.send("Target.detachFromTarget", {"sessionId": reply["sessionId"]}, timeout=2.0)
            except Exception:
                pass

    async def wait_for_new_tab(self, timeout: float = 5.0) -> TabInfo | None:
        """The next page target opened (e.g. by a link with target=_blank), if one opens in time."""
        try:
            async with asyncio.timeout(timeout):
                info = await self._target_created.get()
        except TimeoutError:
            return None
        return TabInfo(info["targetId"], info.get("url", ""), info.get("title", ""))

    def drain_new_tab_events(self) -> None:
        while not self._target_created.empty():
            self._target_created.get_nowait()
