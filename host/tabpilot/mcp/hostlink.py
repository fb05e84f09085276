"""The MCP server's connection to the host running in the user's browser (native/endpoint.py).

Connected on first use and again whenever it was lost: a host that went away (browser closed, the
extension reloaded, its service worker restarted) fails the calls in flight with `HostGone`, and the
next call finds the new host (Chromium spawns it when the extension reconnects) without restarting
the MCP server. The token is read again on every connect: each host writes its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import sys
import time
from typing import Any

from ..native.codec import FrameDecoder, FrameError, encode_frame
from ..native.endpoint import EndpointAddress

log = logging.getLogger(__name__)

CONNECT_WAIT = 10.0  # a host being respawned after an extension reload appears within ~1 s (backoff 0.5 s)
FIRST_CONNECT_WAIT = 1.0  # never seen a host: the browser is most likely not open
REQUEST_TIMEOUT = 60.0
NO_HOST = (
    "tabpilot cannot reach your browser: no tabpilot host is running. Open Chrome/Chromium (or Edge, Brave) "
    "with the tabpilot extension (`tabpilot doctor` checks the setup) and call again. Or add `--fallback launch` "
    "to this server's arguments in your MCP client's config (`tabpilot mcp config --client … --fallback launch` "
    "prints the entry): then it starts a Chromium of its own whenever your browser is not reachable "
    "(`tabpilot mcp --launch` always uses one)."
)


class HostUnavailable(Exception):
    """No host to talk to; the message says what to do."""


class HostGone(HostUnavailable):
    """The host went away during a call."""


class HostRefused(Exception):
    """The host understood the request and said no (its reply's message and code)."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.pending: dict[str, asyncio.Future[Any]] = {}
        self.updates: dict[str, asyncio.Queue[dict[str, Any] | HostGone]] = {}
        self.closed: HostGone | None = None
        self.ids = (f"m{n}" for n in itertools.count(1))
        self.pump: asyncio.Task[None] | None = None

    def queue(self, task_id: str) -> asyncio.Queue[dict[str, Any] | HostGone]:
        return self.updates.setdefault(task_id, asyncio.Queue())

    async def read(self) -> None:
        decoder = FrameDecoder()
        reason = "the host closed the connection"
        try:
            while data := await self.reader.read(1 << 16):
                for frame in decoder.feed(data):
                    if not isinstance(frame, FrameError):
                        self.receive(frame)
        except (ConnectionError, OSError) as exc:
            reason = f"the connection to the host broke ({exc})"
        self.close(reason)

    def receive(self, frame: dict[str, Any]) -> None:
        if frame.get("type") == "reply":
            future = self.pending.pop(str(frame.get("id")), None)
            if future is None or future.done():
                return
            if frame.get("ok"):
                future.set_result(frame.get("data"))
            else:
                error = frame.get("error") or {}
                future.set_exception(HostRefused(str(error.get("message", "refused")), error.get("code")))
        elif isinstance(frame.get("taskId"), str):
            self.queue(frame["taskId"]).put_nowait(frame)  # a push about one of our tasks

    def close(self, reason: str) -> None:
        if self.closed is not None:
            return
        self.closed = HostGone(
            f"The tabpilot host in your browser went away ({reason}): the browser closed, or the extension "
            "was reloaded or restarted. Call again once the browser is back; nothing needs restarting."
        )
        for future in self.pending.values():
            if not future.done():
                future.set_exception(self.closed)
        self.pending.clear()
        for queue in self.updates.values():
            queue.put_nowait(self.closed)
        self.writer.close()

    async def request(self, type: str, fields: dict[str, Any], timeout: float) -> Any:
        if self.closed is not None:
            raise self.closed
        request_id = next(self.ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        try:
            self.writer.write(encode_frame({**fields, "type": type, "id": request_id}))
            await self.writer.drain()
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:  # an OSError too, but the connection is fine: that request had no answer
            raise
        except (ConnectionError, OSError) as exc:
            self.close(f"could not write to it: {exc}")
            raise self.closed from exc  # type: ignore[misc]  # set by close()
        finally:
            self.pending.pop(request_id, None)


class HostLink:
    def __init__(self, client_name: str = "MCP client", *, address: EndpointAddress | None = None,
                 connect_wait: float = CONNECT_WAIT) -> None:
        self.client_name = client_name
        self._address = address
        self._connect_wait = connect_wait
        self._connection: _Connection | None = None
        self._connecting = asyncio.Lock()
        self._seen_host = False

    async def request(self, type: str, fields: dict[str, Any] | None = None, *,
                      timeout: float = REQUEST_TIMEOUT) -> Any:
        connection = await self.connection()
        return await connection.request(type, fields or {}, timeout)

    def updates(self, task_id: str) -> asyncio.Queue[dict[str, Any] | HostGone]:
        """The pushes about one task (task.status / activity / event / result), then HostGone if the
        host goes away. Pushes that came before this call are in it too."""
        if self._connection is None:
            queue: asyncio.Queue[dict[str, Any] | HostGone] = asyncio.Queue()
            queue.put_nowait(HostGone("not connected to the host"))
            return queue
        return self._connection.queue(task_id)

    def forget(self, task_id: str) -> None:
        if self._connection is not None:
            self._connection.updates.pop(task_id, None)

    async def connection(self) -> _Connection:
        async with self._connecting:
            if self._connection is not None and self._connection.closed is None:
                return self._connection
            self._connection = await self._connect()
            self._seen_host = True
            return self._connection

    async def _connect(self) -> _Connection:
        """Wait up to `connect_wait` for a host (one being respawned appears within a second or so);
        only briefly when there has never been one (no socket, no host seen: the browser is not open)."""
        address = self._address or EndpointAddress.for_this_user()
        deadline = time.monotonic() + self._wait_for(address)
        last: str = "no socket yet"
        while True:
            try:
                return await self._open(address)
            except (FileNotFoundError, ConnectionRefusedError, HostRefused, HostGone) as exc:
                last = str(exc)  # not there yet, a dead host's socket, or the new host's token not yet written
            except OSError as exc:
                raise HostUnavailable(f"{NO_HOST} ({exc})") from exc
            if time.monotonic() > deadline:
                log.info("no host: %s", last)
                raise HostUnavailable(NO_HOST)
            await asyncio.sleep(0.2)

    def _wait_for(self, address: EndpointAddress) -> float:
        # Never seen a host: the browser is most likely not open, also when a socket file is there (a host that
        # Chromium killed at exit leaves it behind, and connecting is refused) — a call is told so in a second,
        # not after the wait for a host being respawned (issue: 10 s a call with the browser closed).
        if not self._seen_host:
            return min(self._connect_wait, FIRST_CONNECT_WAIT)
        return self._connect_wait

    async def _open(self, address: EndpointAddress) -> _Connection:
        token = address.read_token()
        if sys.platform == "win32":  # pragma: no cover - Windows (untested, see native/endpoint.py)
            reader, writer = await _open_pipe(address.socket)
        else:
            reader, writer = await asyncio.open_unix_connection(address.socket, limit=1 << 20)
        connection = _Connection(reader, writer)
        connection.pump = asyncio.get_running_loop().create_task(connection.read())
        try:
            from .. import __version__

            await connection.request("hello", {"token": token, "client": {"name": self.client_name,
                                                                            "version": __version__}}, 10.0)
        except BaseException:
            connection.close("refused at hello")
            raise
        log.info("connected to the host at %s", address.socket)
        return connection

    async def close(self) -> None:
        if self._connection is not None:
            self._connection.close("the MCP server is exiting")
            if self._connection.pump is not None:
                self._connection.pump.cancel()
                with contextlib.suppress(BaseException):
                    await self._connection.pump


async def _open_pipe(name: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:  # pragma: no cover
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    protocol = asyncio.StreamReaderProtocol(reader)
    transport, _ = await loop.create_pipe_connection(lambda: protocol, name)  # type: ignore[attr-defined]
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)
