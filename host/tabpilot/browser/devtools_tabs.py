"""The tabs of a Chromium reached over its DevTools websocket (one tabpilot launched, or one it connected
to): the Target domain on the browser-level session. A `TabBackend` for `Browser`. Nobody here detaches the
debugger from a tab but tabpilot: a tab's session ends with its target (`Browser.tab_gone`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..cdp import CDPConnection, CDPSession, WebSocketTransport
from .browser import Browser, TabInfo

if TYPE_CHECKING:
    from ..guards.navigation import NavigationGuard

log = logging.getLogger(__name__)

VISIBILITY_TIMEOUT = 2.0  # a frozen tab does not answer: it is not the one the user looks at


class DevToolsTabs:
    def __init__(self, connection: CDPConnection) -> None:
        self.connection = connection
        self._browser: Browser | None = None
        self._guard: NavigationGuard | None = None
        self._popups: set[str] = set()  # targets opened by the task's tabs, guarded from their first request

    @classmethod
    async def connect(cls, ws_url: str) -> DevToolsTabs:
        return cls(CDPConnection(await WebSocketTransport.connect(ws_url)))

    async def start(self, browser: Browser) -> None:
        self._browser = browser
        root = self.connection.root
        root.on("Target.targetCreated", self._on_target_created)
        root.on("Target.targetDestroyed", self._on_target_destroyed)
        await root.send("Target.setDiscoverTargets", {"discover": True})

    async def close(self) -> None:
        await self.connection.close()

    # --- events ---------------------------------------------------------------------------------
    def _on_target_created(self, params: dict[str, Any]) -> None:
        info = params["targetInfo"]
        if info.get("type") == "page" and self._browser is not None:
            self._browser.tab_opened(TabInfo(info["targetId"], info.get("url", ""), info.get("title", "")))

    def _on_target_destroyed(self, params: dict[str, Any]) -> None:
        if self._browser is not None:
            self._browser.tab_gone(params["targetId"])

    # --- tabs -----------------------------------------------------------------------------------
    async def list_tabs(self) -> list[TabInfo]:
        targets = (await self.connection.root.send("Target.getTargets"))["targetInfos"]
        return [
            TabInfo(t["targetId"], t.get("url", ""), t.get("title", ""))
            for t in targets
            if t.get("type") == "page" and not t.get("url", "").startswith("chrome-extension://")
        ]

    async def attach(self, target_id: str) -> CDPSession:
        reply = await self.connection.root.send("Target.attachToTarget", {"targetId": target_id, "flatten": True})
        return self.connection.session(reply["sessionId"])

    async def create_tab(self) -> str:
        return str((await self.connection.root.send("Target.createTarget", {"url": "about:blank"}))["targetId"])

    async def activate(self, target_id: str) -> None:
        await self.connection.root.send("Target.activateTarget", {"targetId": target_id})

    async def close_tab(self, target_id: str) -> None:
        await self.connection.root.send("Target.closeTarget", {"targetId": target_id})

    def forget(self, target_id: str) -> None:
        return None  # the session goes with the target; nothing kept per tab here

    async def visibility(self, target_id: str) -> tuple[bool, bool]:
        """Read through a short-lived session; (False, False) when it cannot be read (a frozen tab)."""
        root = self.connection.root
        try:
            reply = await root.send("Target.attachToTarget", {"targetId": target_id, "flatten": True},
                                    timeout=VISIBILITY_TIMEOUT)
        except Exception:
            return False, False
        session = self.connection.session(reply["sessionId"])
        try:
            result = await session.send(
                "Runtime.evaluate",
                {"expression": "[document.visibilityState === 'visible', document.hasFocus()]", "returnByValue": True},
                timeout=VISIBILITY_TIMEOUT,
            )
            shown, focused = result["result"]["value"]
            return bool(shown), bool(focused)
        except Exception:
            return False, False
        finally:
            try:
                await root.send("Target.detachFromTarget", {"sessionId": reply["sessionId"]},
                                timeout=VISIBILITY_TIMEOUT)
            except Exception:
                pass

    # --- allowed domains ------------------------------------------------------------------------
    async def guard_new_tabs(self, guard: NavigationGuard) -> None:
        """Chromium holds every new page before its first request (auto-attach with waitForDebuggerOnStart)
        until the guard is on it, when one of the task's tabs opened it; other pages are let go at once."""
        self._guard = guard
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
        browser, guard = self._browser, self._guard
        try:
            if guard is not None and browser is not None and (browser.works_in(opener) or opener in self._popups):
                self._popups.add(info["targetId"])
                # this session stays: its interception with it (Page.close fails once the refusal's error page
                # has replaced the popup's renderer: "Not attached to an active page")
                await guard.watch(session, close_popup=lambda: browser.close_tab(info["targetId"]))
            await session.send("Runtime.runIfWaitingForDebugger")
        except Exception as exc:  # the page closed meanwhile
            log.debug("auto-attached target %s: %s", info.get("targetId"), exc)
