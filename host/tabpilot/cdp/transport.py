"""Transports carry CDP messages (dicts with id/method/params/sessionId) to a browser and back.

The session API in `connection.py` does not care how: over the DevTools websocket, or (later) relayed
through the extension's chrome.debugger over native messaging.
"""

from __future__ import annotations

import json
from typing import Any, Protocol
from urllib.parse import urlsplit

import websockets
from pydantic_core import from_json
from websockets.asyncio.client import ClientConnection

from ..textsafety import clean_json


class TransportClosed(ConnectionError):
    """The transport is gone; no more messages can be sent or received."""


class Transport(Protocol):
    @property
    def paces_input(self) -> bool:
        """Whether the far end keeps a run of input commands to `INPUT_WINDOW` in flight itself (the extension
        relay's worker does, next to chrome.debugger): a caller then sends the whole run at once."""
        ...

    async def send_burst(self, messages: list[dict[str, Any]]) -> None:
        """Send these messages, in this order, in as few writes as the transport allows."""
        ...

    async def receive(self) -> dict[str, Any]:
        """Return the next message; raise TransportClosed when the peer is gone."""
        ...

    async def close(self) -> None: ...


MAX_MESSAGE_BYTES = 512 * 1024 * 1024

# Input commands in flight at once (typing's key events), paced by the caller (browser/actions.py) or by a
# transport whose far end does it (`paces_input`: the extension relay's worker). Each is checked for a takeover
# (the user has the controls) as it is sent, so one stops the rest: at most this many follow it
# (tests/test_actions_forms.py and tests/e2e/test_relay_browser.py check). Sizes from 1 to 64 refilled at once
# made no difference measured over the websocket (bench_typing, load 14-22): the replies come back in bunches,
# and the commands sent in one turn leave together anyway (one websocket write). Paced by the worker, 100
# characters over the relay took 178 / 161 / 150 ms with 16 / 32 / 64 in flight (load 3.3), and 128 or 256
# were no faster than 64 (load 3.0).
INPUT_WINDOW = 64


_BURST_PARTS = ("send_context", "protocol", "transport")


class WebSocketTransport:
    """The DevTools websocket of a launched or remote Chromium."""

    paces_input = False  # Chromium answers each command; the caller keeps the input window (browser/actions.py)

    def __init__(self, socket: ClientConnection) -> None:
        self._socket = socket

    @classmethod
    async def connect(cls, url: str, *, open_timeout: float = 20.0) -> WebSocketTransport:
        # proxy=None: websockets >= 15 honours HTTP_PROXY by default, even for 127.0.0.1.
        # No permessage-deflate on loopback: Chromium deflating a 3 MB DOM snapshot and us inflating
        # it cost ~100 ms a step (measured) to save bytes that never leave the machine.
        socket = await websockets.connect(
            url,
            max_size=MAX_MESSAGE_BYTES,
            proxy=None,
            open_timeout=open_timeout,
            ping_interval=None,
            compression=None if _is_loopback(url) else "deflate",
        )
        return cls(socket)

    async def send_burst(self, messages: list[dict[str, Any]]) -> None:
        """All the messages' frames in one write: one syscall, one wake-up of the browser's IO thread.
        (websockets writes each `send` on its own; 200 key events sent one write each cost Chromium's
        browser process ~100 ms of CPU, in one write ~60 ms, measured at load 7.)"""
        texts = [json.dumps(message) for message in messages]
        socket = self._socket
        try:
            # One write needs websockets' own sans-I/O protocol object (websockets 15/16 asyncio connection);
            # a websockets without those parts gets one send per message, as before bursts.
            if len(texts) == 1 or not all(hasattr(socket, part) for part in _BURST_PARTS):
                for text in texts:
                    await socket.send(text)
                return
            async with socket.send_context():
                for text in texts:
                    socket.protocol.send_text(text.encode())
                socket.transport.write(b"".join(socket.protocol.data_to_send()))
        except websockets.ConnectionClosed as exc:
            raise TransportClosed(f"DevTools websocket closed: {exc}") from exc

    async def receive(self) -> dict[str, Any]:
        try:
            data = await self._socket.recv()
        except websockets.ConnectionClosed as exc:
            raise TransportClosed(f"DevTools websocket closed: {exc}") from exc
        message: dict[str, Any]
        try:
            message = from_json(data)  # ~25% faster than json.loads on multi-MB snapshots
        except ValueError:
            # Lone surrogates (any page can hold them) only json accepts; they leave as U+FFFD.
            message = clean_json(json.loads(data))
        return message

    async def close(self) -> None:
        await self._socket.close()


def _is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")
