"""Transports carry CDP messages (dicts with id/method/params/sessionId) to a browser and back.

The session API in `connection.py` does not care how: over the DevTools websocket, or (later) relayed
through the extension's chrome.debugger over native messaging.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

import websockets
from websockets.asyncio.client import ClientConnection


class TransportClosed(ConnectionError):
    """The transport is gone; no more messages can be sent or received."""


class Transport(Protocol):
    async def send(self, message: dict[str, Any]) -> None: ...

    async def receive(self) -> dict[str, Any]:
        """Return the next message; raise TransportClosed when the peer is gone."""
        ...

    async def close(self) -> None: ...


MAX_MESSAGE_BYTES = 512 * 1024 * 1024


class WebSocketTransport:
    """The DevTools websocket of a launched or remote Chromium."""

    def __init__(self, socket: ClientConnection) -> None:
        self._socket = socket

    @classmethod
    async def connect(cls, url: str, *, open_timeout: float = 20.0) -> WebSocketTransport:
        # proxy=None: websockets >= 15 honours HTTP_PROXY by default, even for 127.0.0.1.
        socket = await websockets.connect(
            url, max_size=MAX_MESSAGE_BYTES, proxy=None, open_timeout=open_timeout, ping_interval=None
        )
        return cls(socket)

    async def send(self, message: dict[str, Any]) -> None:
        try:
            await self._socket.send(json.dumps(message))
        except websockets.ConnectionClosed as exc:
            raise TransportClosed(f"DevTools websocket closed: {exc}") from exc

    async def receive(self) -> dict[str, Any]:
        try:
            data = await self._socket.recv()
        except websockets.ConnectionClosed as exc:
            raise TransportClosed(f"DevTools websocket closed: {exc}") from exc
        return json.loads(data)

    async def close(self) -> None:
        await self._socket.close()
