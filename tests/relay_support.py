"""A stand-in for the extension's relay half, in Python, over a real Chromium's DevTools websocket.

It answers the host's `cdp.*` / `tabs.*` requests the way the service worker does with chrome.debugger
(each tab its own debuggee; flattened child sessions reported with their sessionId) and pushes
`cdp.event` / `cdp.detached` / `tabs.event`. With it the host's relay and task management run against
real pages without the extension's JavaScript in the loop (that whole path is tests/e2e/)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tabpilot.cdp.transport import TransportClosed, WebSocketTransport
from tabpilot.native.codec import ChunkReassembler, FrameDecoder
from tabpilot.native.messages import parse_incoming
from tabpilot.native.peer import Peer

HEADER = struct.Struct("=I")


class ExtensionStandIn:
    def __init__(self, transport: WebSocketTransport) -> None:
        self._transport = transport
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._tab_ids: dict[str, int] = {}  # targetId → tabId
        self._targets: dict[int, str] = {}
        self._tab_sessions: dict[str, int] = {}  # session of an attached tab → tabId
        self._attached: dict[int, str] = {}  # tabId → its session
        self._child_sessions: dict[str, int] = {}
        self.push: Callable[[dict[str, Any]], None] = lambda message: None
        self.requests: list[dict[str, Any]] = []
        self.held: dict[str, asyncio.Event] = {}  # a request type → answered once its event is set (a slow extension)
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def connect(cls, ws_url: str) -> ExtensionStandIn:
        stand_in = cls(await WebSocketTransport.connect(ws_url))
        await stand_in.cdp("Target.setDiscoverTargets", {"discover": True})
        return stand_in

    async def close(self) -> None:
        self._reader.cancel()
        await self._transport.close()

    def tab_id(self, target_id: str) -> int:
        if target_id not in self._tab_ids:
            self._tab_ids[target_id] = 1000 + len(self._tab_ids)
            self._targets[self._tab_ids[target_id]] = target_id
        return self._tab_ids[target_id]

    async def cdp(self, method: str, params: dict[str, Any] | None = None, session_id: str | None = None) -> Any:
        message_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[message_id] = future
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params or {}}
        if session_id:
            message["sessionId"] = session_id
        await self._transport.send_burst([message])
        reply = await future
        if "error" in reply:
            raise CDPFailure(reply["error"])
        return reply.get("result", {})

    async def _read(self) -> None:
        try:
            while True:
                self._dispatch(await self._transport.receive())
        except TransportClosed:
            pass

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "id" in message:
            future = self._pending.pop(message["id"], None)
            if future is not None and not future.done():
                future.set_result(message)
            return
        method, params, session = message.get("method", ""), message.get("params", {}), message.get("sessionId")
        if session is None:
            self._browser_event(method, params)
            return
        tab_id = self._tab_sessions.get(session)
        if tab_id is not None:
            if method == "Target.attachedToTarget":
                self._child_sessions[params["sessionId"]] = tab_id
            self.push({"type": "cdp.event", "tabId": tab_id, "method": method, "params": params})
        elif session in self._child_sessions:
            tab_id = self._child_sessions[session]
            event = {"type": "cdp.event", "tabId": tab_id, "sessionId": session, "method": method, "params": params}
            self.push(event)

    def _browser_event(self, method: str, params: dict[str, Any]) -> None:
        info = params.get("targetInfo", {})
        if method == "Target.targetCreated" and info.get("type") == "page":
            opener = info.get("openerId")
            tab = {"tabId": self.tab_id(info["targetId"]), "url": info.get("url", ""), "title": info.get("title", ""),
                   "openerTabId": self._tab_ids.get(opener) if opener else None}
            self.push({"type": "tabs.event", "event": "created", "tab": tab})
        elif method == "Target.targetDestroyed" and params.get("targetId") in self._tab_ids:
            tab_id = self._tab_ids[params["targetId"]]
            self.push({"type": "tabs.event", "event": "removed", "tab": {"tabId": tab_id}})
            session = self._attached.pop(tab_id, None)
            if session is not None:
                self._tab_sessions.pop(session, None)
                self.push({"type": "cdp.detached", "tabId": tab_id, "reason": "target_closed"})
        elif method == "Target.detachedFromTarget" and params.get("sessionId") in self._tab_sessions:
            tab_id = self._tab_sessions.pop(params["sessionId"])
            self._attached.pop(tab_id, None)

    async def detach_by_user(self, tab_id: int) -> None:
        """What pressing Cancel on the debugging infobar does."""
        session = self._attached.pop(tab_id)
        self._tab_sessions.pop(session, None)
        await self.cdp("Target.detachFromTarget", {"sessionId": session})
        self.push({"type": "cdp.detached", "tabId": tab_id, "reason": "canceled_by_user"})

    # --- the host's requests --------------------------------------------------------------------
    async def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(request)
        gate = self.held.get(request["type"])
        if gate is not None:
            await gate.wait()
        try:
            data = await self._handle(request)
        except CDPFailure as exc:
            return {"type": "reply", "id": request["id"], "ok": False, "error": exc.error}
        except Exception as exc:
            return {"type": "reply", "id": request["id"], "ok": False, "error": {"message": str(exc)}}
        return {"type": "reply", "id": request["id"], "ok": True, "data": data}

    async def _handle(self, request: dict[str, Any]) -> Any:
        kind = request["type"]
        if kind == "cdp.attach":
            tab_id = request["tabId"]
            if tab_id not in self._attached:
                reply = await self.cdp("Target.attachToTarget", {"targetId": self._targets[tab_id], "flatten": True})
                self._attached[tab_id] = reply["sessionId"]
                self._tab_sessions[reply["sessionId"]] = tab_id
            return {}
        if kind == "cdp.detach":
            session = self._attached.pop(request["tabId"], None)
            if session:
                self._tab_sessions.pop(session, None)
                await self.cdp("Target.detachFromTarget", {"sessionId": session})
            return {}
        if kind == "cdp.send":
            tab_id = request["tabId"]
            session = request.get("sessionId") or self._attached.get(tab_id)
            if session is None:
                raise CDPFailure({"message": f"Debugger is not attached to the tab with id: {tab_id}.", "code": -32000})
            return await self.cdp(request["method"], request.get("params"), session)
        if kind == "tabs.query":
            targets = (await self.cdp("Target.getTargets"))["targetInfos"]
            return {
                "tabs": [
                    {"tabId": self.tab_id(t["targetId"]), "url": t["url"], "title": t["title"], "active": False}
                    for t in targets
                    if t["type"] == "page"
                ]
            }
        if kind == "tabs.create":
            target = await self.cdp("Target.createTarget", {"url": request.get("url") or "about:blank"})
            return {"tab": {"tabId": self.tab_id(target["targetId"]), "url": request.get("url") or "about:blank"}}
        if kind == "tabs.activate":
            await self.cdp("Target.activateTarget", {"targetId": self._targets[request["tabId"]]})
            return {}
        if kind == "tabs.close":
            await self.cdp("Target.closeTarget", {"targetId": self._targets[request["tabId"]]})
            return {}
        if kind in ("guard.rules", "guard.clear"):  # no rules of its own: Fetch interception guards its tabs
            return {}
        raise ValueError(f"the stand-in does not know {kind}")


class CDPFailure(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message"))
        self.error = error


class LoopbackLink:
    """An ExtensionLink straight to the stand-in, in this process (no host in between)."""

    def __init__(self, stand_in: ExtensionStandIn) -> None:
        self.stand_in = stand_in
        self.peer = Peer(self._send)
        stand_in.push = lambda frame: self.peer.deliver(parse_incoming(frame))  # parsed as the host parses it
        self._tasks: set[asyncio.Task[None]] = set()

    def _send(self, request: dict[str, Any]) -> None:
        async def answer() -> None:
            self.peer.resolve(parse_incoming(await self.stand_in.handle(request)))

        task = asyncio.get_running_loop().create_task(answer())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def __getattr__(self, name: str) -> Any:  # request, request_future, on, off
        return getattr(self.peer, name)


class HostUnderTest:
    """The host as Chromium runs it (a subprocess speaking frames), with the stand-in as its extension."""

    def __init__(self, process: asyncio.subprocess.Process, stand_in: ExtensionStandIn) -> None:
        self.process = process
        self.stand_in = stand_in
        stand_in.push = self._write
        self.pushes: list[dict[str, Any]] = []
        self._arrived = asyncio.Event()
        self._replies: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._reader = asyncio.get_running_loop().create_task(self._read())
        self._tasks: set[asyncio.Task[None]] = set()

    @classmethod
    async def start(
        cls, home: Path, stand_in: ExtensionStandIn, extra_env: dict[str, str] | None = None
    ) -> HostUnderTest:
        env = {**os.environ, "TABPILOT_HOME": str(home), **(extra_env or {})}
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
            env.pop(name, None)
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tabpilot", "chrome-extension://standin/",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env, limit=1 << 24,
        )
        return cls(process, stand_in)

    def _write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        if self.process.stdin.is_closing():
            return
        payload = json.dumps(message).encode()
        self.process.stdin.write(HEADER.pack(len(payload)) + payload)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        decoder, joiner = FrameDecoder(), ChunkReassembler()
        while data := await self.process.stdout.read(1 << 16):
            for item in decoder.feed(data):
                assert isinstance(item, dict), item
                message = joiner.accept(item)
                if message is None:
                    continue
                assert isinstance(message, dict), message
                self._route(message)

    def _route(self, message: dict[str, Any]) -> None:
        kind = message.get("type", "")
        if kind == "reply":
            future = self._replies.pop(message["id"], None)
            if future is not None and not future.done():
                future.set_result(message)
        elif kind.startswith(("cdp.", "tabs.", "guard.")):
            async def answer() -> None:
                self._write(await self.stand_in.handle(message))

            task = asyncio.get_running_loop().create_task(answer())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        else:
            self.pushes.append(message)
            self._arrived.set()

    async def request(self, type: str, timeout: float = 30.0, **fields: Any) -> dict[str, Any]:
        request_id = f"x{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._replies[request_id] = future
        self._write({"type": type, "id": request_id, **fields})
        return await asyncio.wait_for(future, timeout)

    async def wait_push(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 60.0) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            while True:
                for push in self.pushes:
                    if predicate(push):
                        return push
                self._arrived.clear()
                await self._arrived.wait()

    async def close_stdin(self) -> float:
        """Seconds from closing stdin to the host's exit."""
        assert self.process.stdin is not None
        loop = asyncio.get_running_loop()
        began = loop.time()
        self.process.stdin.close()
        await asyncio.wait_for(self.process.wait(), 10)
        return loop.time() - began

    async def stop(self) -> None:
        if self.process.returncode is None:
            try:
                await self.close_stdin()
            except (TimeoutError, OSError):
                self.process.kill()
                await self.process.wait()
        self._reader.cancel()
