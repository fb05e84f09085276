"""A loopback socket onto the extension, for tests only: `RelayBrowser` from another process.

When the host is started with `TABPILOT_HOST_DEBUG_PORT=<port>` in its environment (a test puts it in
the browser's environment; the host inherits it), it listens on ws://127.0.0.1:<port>. A client sends
protocol requests (`cdp.*`, `tabs.*`) as JSON text; the host forwards them to the extension and sends
the replies back under the client's ids, and forwards every `cdp.event` / `cdp.detached` /
`tabs.event` push. `DebugLink` is that client, an `ExtensionLink` a `RelayBrowser` can run on, so
browser-layer code can be exercised over the real extension relay. Never enabled otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

import websockets
from websockets.asyncio.server import Server, ServerConnection

from .host import NativeHost
from .peer import ExtensionError, Peer, PushHandler, reply_error, reply_ok

log = logging.getLogger(__name__)
PORT_ENV = "TABPILOT_HOST_DEBUG_PORT"
FORWARDED_PREFIXES = ("cdp.", "tabs.")


async def start_debug_server(host: NativeHost, port: int) -> Server:
    async def serve_client(socket: ServerConnection) -> None:
        outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        def forward(push: dict[str, Any]) -> None:
            outbox.put_nowait(push)

        def answer(request_id: Any, future: asyncio.Future[Any]) -> None:
            if future.cancelled():
                return
            exc = future.exception()
            if exc is None:
                outbox.put_nowait(reply_ok(request_id, future.result()))
            elif isinstance(exc, ExtensionError):
                outbox.put_nowait(reply_error(request_id, exc.error_message, exc.code))
            else:
                outbox.put_nowait(reply_error(request_id, str(exc), "link"))

        async def pump() -> None:
            while True:
                await socket.send(json.dumps(await outbox.get()))

        host.push_listeners.append(forward)
        sender = asyncio.get_running_loop().create_task(pump())
        try:
            async for text in socket:
                message = json.loads(text)
                request_id, kind = message.pop("id", None), message.pop("type", "")
                if not str(kind).startswith(FORWARDED_PREFIXES):
                    outbox.put_nowait(reply_error(request_id, f"only cdp.* and tabs.* requests here, not {kind!r}"))
                    continue
                future = host.peer.request_future(kind, message)
                future.add_done_callback(lambda f, rid=request_id: answer(rid, f))
        except websockets.ConnectionClosed:
            pass
        finally:
            host.push_listeners.remove(forward)
            sender.cancel()

    server = await websockets.serve(serve_client, "127.0.0.1", port, max_size=None, ping_interval=None)
    log.warning("debug socket open on ws://127.0.0.1:%d (%s is set)", port, PORT_ENV)
    return server


class DebugLink:
    """The test side: an ExtensionLink over the host's debug socket."""

    def __init__(self, socket: websockets.ClientConnection) -> None:
        self._socket = socket
        self._outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.peer = Peer(self._outbox.put_nowait, id_prefix="t")
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._read()), loop.create_task(self._write())]

    @classmethod
    async def connect(cls, port: int, *, timeout: float = 10.0) -> DebugLink:
        socket = await websockets.connect(
            f"ws://127.0.0.1:{port}", proxy=None, max_size=None, ping_interval=None, open_timeout=timeout
        )
        return cls(socket)

    async def _read(self) -> None:
        try:
            async for text in self._socket:
                message = json.loads(text)
                if message.get("type") == "reply":
                    self.peer.resolve(message)
                else:
                    self.peer.deliver(message)
        except websockets.ConnectionClosed:
            pass
        finally:
            self.peer.close("the debug socket closed")

    async def _write(self) -> None:
        while True:
            await self._socket.send(json.dumps(await self._outbox.get()))

    async def request(self, type: str, fields: dict[str, Any] | None = None, *, timeout: float | None = 60.0) -> Any:
        return await self.peer.request(type, fields, timeout=timeout)

    def request_future(self, type: str, fields: dict[str, Any] | None = None) -> asyncio.Future[Any]:
        return self.peer.request_future(type, fields)

    def on(self, type: str, handler: PushHandler) -> None:
        self.peer.on(type, handler)

    def off(self, type: str, handler: PushHandler) -> None:
        self.peer.off(type, handler)

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        with contextlib.suppress(Exception):
            await self._socket.close()
        self.peer.close("closed by tabpilot")
