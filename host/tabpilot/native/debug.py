"""A loopback socket onto the extension, for tests only: a `Browser` on the extension's tabs from another process.

When the host is started with `TABPILOT_HOST_DEBUG_PORT=<port>:<token>` in its environment (a test puts
it in the browser's environment; the host inherits it), it listens on ws://127.0.0.1:<port>. Only a
client that is not a web page (no Origin header: a page's WebSocket always sends one) and that brings
the token (`Authorization: Bearer <token>`) gets in; anything else is refused at the handshake. A client
sends host → extension requests (`cdp.*`, `tabs.*`: the `HostRequest` models) as JSON text; the host
forwards them to the extension and sends the replies back under the client's ids, and forwards every
`cdp.event` / `cdp.detached` / `tabs.event` push. `DebugLink` is that client, an `ExtensionLink`
`ExtensionTabs` can run on, so browser-layer code can be exercised over the real extension relay. Never
enabled otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import json
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import websockets
from websockets.asyncio.server import Server, ServerConnection
from websockets.http11 import Request, Response

from ..textsafety import clean_json
from .host import NativeHost
from .messages import (
    BadRequest,
    ExtensionPush,
    HostRequest,
    ReplyError,
    ReplyOk,
    parse_host_request,
    parse_incoming,
    wire_data,
)
from .peer import ExtensionError, Peer, Push, ReplyData
from .process import DEBUG_PORT_ENV
from .replies import reply_error, reply_ok

log = logging.getLogger(__name__)
PORT_ENV = DEBUG_PORT_ENV
MIN_TOKEN_LENGTH = 16
FEATURES_HEADER = "X-Tabpilot-Features"  # the handshake's answer: the extension's hello `features`


@dataclass(frozen=True)
class DebugAccess:
    """Where the debug socket listens and the secret a client must bring."""

    port: int
    token: str

    @classmethod
    def new(cls, port: int) -> DebugAccess:
        return cls(port, secrets.token_urlsafe(24))

    @classmethod
    def parse(cls, value: str) -> DebugAccess:
        port, _, token = value.partition(":")
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"{PORT_ENV} must be <port>:<token>, and {port!r} is not a port")
        if len(token) < MIN_TOKEN_LENGTH:
            raise ValueError(f"{PORT_ENV} must be <port>:<token> with a token of {MIN_TOKEN_LENGTH}+ characters")
        return cls(int(port), token)

    def env(self) -> dict[str, str]:
        """The environment a host (or the browser that spawns it) needs to open this socket."""
        return {PORT_ENV: f"{self.port}:{self.token}"}


def _refuse_without_token(token: str) -> Any:
    expected = f"Bearer {token}".encode()

    def check(connection: ServerConnection, request: Request) -> Response | None:
        given = request.headers.get("Authorization", "").encode()
        if hmac.compare_digest(given, expected):
            return None
        log.warning("debug socket: refused a client without the token")
        return connection.respond(HTTPStatus.UNAUTHORIZED, "the debug socket needs its token\n")

    return check


async def start_debug_server(host: NativeHost, access: DebugAccess) -> Server:
    async def serve_client(socket: ServerConnection) -> None:
        outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        def forward(push: ExtensionPush) -> None:
            outbox.put_nowait(push.to_frame())

        def answer(request_id: Any, future: asyncio.Future[Any]) -> None:
            if future.cancelled():
                return
            exc = future.exception()
            if exc is None:
                outbox.put_nowait(reply_ok(request_id, wire_data(future.result())))
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
                try:
                    message = clean_json(json.loads(text))
                except (ValueError, RecursionError) as exc:
                    outbox.put_nowait(reply_error(None, f"not a JSON request: {exc}", "bad_request"))
                    continue
                if not isinstance(message, dict):
                    outbox.put_nowait(reply_error(None, "a request must be a JSON object", "bad_request"))
                    continue
                try:
                    request = parse_host_request(message)
                except BadRequest as exc:
                    outbox.put_nowait(reply_error(exc.request_id, str(exc), "bad_request"))
                    continue
                future = host.peer.request_future(request)
                future.add_done_callback(functools.partial(answer, message.get("id")))
        except websockets.ConnectionClosed:
            pass
        finally:
            host.push_listeners.remove(forward)
            sender.cancel()

    def tell_features(connection: ServerConnection, request: Request, response: Response) -> None:
        response.headers[FEATURES_HEADER] = " ".join(sorted(host.peer.features))

    server = await websockets.serve(
        serve_client,
        "127.0.0.1",
        access.port,
        origins=[None],  # web pages always send an Origin; only a non-browser client gets in
        process_request=_refuse_without_token(access.token),
        process_response=tell_features,
        max_size=None,
        ping_interval=None,
        compression=None,  # loopback, as WebSocketTransport: deflate costs CPU (large DOM reads) and saves nothing
    )
    log.warning("debug socket open on ws://127.0.0.1:%d (%s is set)", access.port, PORT_ENV)
    return server


class DebugLink:
    """The test side: an ExtensionLink over the host's debug socket."""

    def __init__(self, socket: websockets.ClientConnection) -> None:
        self._socket = socket
        self._outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.peer = Peer(self._outbox.put_nowait, id_prefix="t")
        response = socket.response
        self.peer.learn_features(response.headers.get(FEATURES_HEADER, "").split() if response else [])
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._read()), loop.create_task(self._write())]

    @classmethod
    async def connect(cls, access: DebugAccess, *, timeout: float = 10.0) -> DebugLink:
        socket = await websockets.connect(
            f"ws://127.0.0.1:{access.port}",
            additional_headers={"Authorization": f"Bearer {access.token}"},
            proxy=None,
            max_size=None,
            ping_interval=None,
            open_timeout=timeout,
            compression=None,
        )
        return cls(socket)

    async def _read(self) -> None:
        try:
            async for text in self._socket:
                try:
                    message = parse_incoming(json.loads(text))
                except (BadRequest, ValueError) as exc:
                    log.error("debug socket: unusable frame from the host: %s", exc)
                    continue
                if isinstance(message, ReplyOk | ReplyError):
                    self.peer.resolve(message)
                elif isinstance(message, ExtensionPush):
                    self.peer.deliver(message)
        except websockets.ConnectionClosed:
            pass
        finally:
            self.peer.close("the debug socket closed")

    async def _write(self) -> None:
        while True:
            await self._socket.send(json.dumps(await self._outbox.get()))

    async def request(self, request: HostRequest[ReplyData], *, timeout: float | None = 60.0) -> ReplyData:
        return await self.peer.request(request, timeout=timeout)

    def request_future(self, request: HostRequest[ReplyData]) -> asyncio.Future[ReplyData]:
        return self.peer.request_future(request)

    def on(self, kind: type[Push], handler: Callable[[Push], None]) -> None:
        self.peer.on(kind, handler)

    def off(self, kind: type[Push], handler: Callable[[Push], None]) -> None:
        self.peer.off(kind, handler)

    @property
    def features(self) -> frozenset[str]:
        return self.peer.features

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        with contextlib.suppress(Exception):
            await self._socket.close()
        self.peer.close("closed by tabpilot")
