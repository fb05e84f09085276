"""The MCP server's connection to the host running in the user's browser (native/endpoint.py).

Connected on first use and again whenever it was lost: a host that went away (browser closed, the
extension reloaded, its service worker restarted) fails the calls in flight with `HostGone`, and the
next call finds the new host (Chromium spawns it when the extension reconnects) without restarting
the MCP server. The token is read again on every connect: each host writes its own.

While a host it reached before is away, the link waits for the next one only as long as one can come: the
browser that spawned the host still runs (the host's parent, learned from the socket at connect). A call
waiting for it is told so at once (`waiting`, a run_task's progress); once that browser has closed, a call
is told so in a second instead of after the wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import socket
import struct
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..native.codec import FrameDecoder, FrameError, encode_frame
from ..native.endpoint import EndpointAddress
from ..store.owner import owner_alive, process_owner

log = logging.getLogger(__name__)

CONNECT_WAIT = 10.0  # a host being respawned after an extension reload appears within ~1 s (backoff 0.5 s)
FIRST_CONNECT_WAIT = 1.0  # never seen a host: the browser is most likely not open
REQUEST_TIMEOUT = 60.0
OPEN_BROWSER = (
    "Open Chrome/Chromium (or Edge, Brave) with the tabpilot extension (`tabpilot doctor` checks the setup) and "
    "call again. Or add `--fallback launch` to this server's arguments in your MCP client's config (`tabpilot mcp "
    "config --client … --fallback launch` prints the entry): then it starts a Chromium of its own whenever your "
    "browser is not reachable (`tabpilot mcp --launch` always uses one)."
)
NO_HOST = f"tabpilot cannot reach your browser: no tabpilot host is running. {OPEN_BROWSER}"
BROWSER_CLOSED = f"tabpilot cannot reach your browser: it was closed (its tabpilot host went with it). {OPEN_BROWSER}"
HOST_NOT_BACK = (
    "tabpilot cannot reach your browser: its tabpilot host stopped and the browser{open} did not start a new one "
    "within {wait:g} s (the extension may be off, or waiting to retry). Open the tabpilot popup in the browser (it "
    "reconnects the extension and says what is wrong; `tabpilot doctor` checks the setup) and call again."
)
WAITING = ("tabpilot's host in your browser stopped (killed, crashed or restarted): waiting up to {wait:g} s for the "
           "browser to start a new one")

Waiting = Callable[[str], Awaitable[None]]


class HostUnavailable(Exception):
    """No host to talk to; the message says what to do."""


class HostGone(HostUnavailable):
    """The host went away during a call."""


class _NotDelivered(HostGone):
    """The connection was found closed as the request was written: the host it led to had gone before it got it."""


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
            while decoder.broken is None and (data := await self.reader.read(1 << 16)):
                for frame in decoder.feed(data):
                    if not isinstance(frame, FrameError):
                        self.receive(frame)
            if decoder.broken is not None:
                reason = f"the host's connection broke: {decoder.broken.message}"
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
            f"The tabpilot host in your browser went away ({reason}): the browser closed, the host crashed or was "
            "killed, or the extension was reloaded or restarted. Call again once the browser is back (after a crash "
            "it starts a new host within seconds); nothing needs restarting."
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
        except (TimeoutError, asyncio.CancelledError):  # nobody waits for the answer now: the host is told (a
            self._take_back(request_id)  # question to the person goes from their screen); the connection is fine
            raise
        except (ConnectionError, OSError) as exc:
            self.close(f"could not write to it: {exc}")
            raise _NotDelivered(str(self.closed)) from exc
        finally:
            self.pending.pop(request_id, None)


    def _take_back(self, request_id: str) -> None:
        """Tell the host nobody waits for the answer to `request_id` any more (`cancel`: it withdraws a question
        still waiting for the person; other requests it leaves as they are). Best effort, not waited for."""
        if self.closed is not None or self.writer.is_closing():
            return
        try:
            self.writer.write(encode_frame({"type": "cancel", "id": next(self.ids), "requestId": request_id}))
        except (ConnectionError, OSError, RuntimeError):
            pass


class HostLink:
    def __init__(self, client_name: str = "MCP client", *, address: EndpointAddress | None = None,
                 connect_wait: float = CONNECT_WAIT) -> None:
        self.client_name = client_name
        self._address = address
        self._connect_wait = connect_wait
        self._connection: _Connection | None = None
        self._connecting = asyncio.Lock()
        self._seen_host = False
        self._browser: str | None = None  # the process that spawned the last host reached (process_owner)

    async def request(self, type: str, fields: dict[str, Any] | None = None, *,
                      timeout: float = REQUEST_TIMEOUT, waiting: Waiting | None = None) -> Any:
        """`waiting`: told in words when the call has to wait for a host being respawned."""
        connection = await self.connection(waiting)
        try:
            return await connection.request(type, fields or {}, timeout)
        except _NotDelivered:
            # The host had gone before it got the request (the browser closed a moment ago): asked again through a
            # new connection, the request reaches the host that took its place, or is told why there is none.
            connection = await self.connection(waiting)
            return await connection.request(type, fields or {}, timeout)
        except HostGone as exc:
            # Gone with the browser it ran in: no host will come, and the caller is told what to do about that
            # (asked right after the browser closed, before this end had read the end of the connection, a call
            # was told to call again once the browser is back: a fresh-clone CI run at cef835b)
            if self._browser is not None and not owner_alive(self._browser):
                raise HostUnavailable(BROWSER_CLOSED) from exc
            raise

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

    async def connection(self, waiting: Waiting | None = None) -> _Connection:
        async with self._connecting:
            if self._connection is not None and self._connection.closed is None:
                return self._connection
            self._connection = await self._connect(waiting)
            self._seen_host = True
            self._browser = _browser_of(self._connection.writer) or self._browser
            return self._connection

    async def _connect(self, waiting: Waiting | None) -> _Connection:
        """Wait up to `connect_wait` for a host being respawned (it appears within a second or so), telling
        `waiting` at the first miss; only briefly when none can come: there has never been one (the browser is
        not open), or the browser the last one ran in has closed."""
        address = self._address or EndpointAddress.for_this_user()
        started = time.monotonic()
        told = False
        last: str = "no socket yet"
        while True:
            try:
                return await self._open(address)
            except (FileNotFoundError, ConnectionRefusedError, HostRefused, HostGone) as exc:
                last = str(exc)  # not there yet, a dead host's socket, or the new host's token not yet written
            except OSError as exc:
                raise HostUnavailable(f"{NO_HOST} ({exc})") from exc
            coming = self._host_can_come()
            if time.monotonic() - started > (self._connect_wait if coming else FIRST_CONNECT_WAIT):
                log.info("no host: %s", last)
                raise HostUnavailable(self._why_no_host(coming))
            if coming and waiting is not None and not told:
                told = True
                await waiting(WAITING.format(wait=self._connect_wait))
            await asyncio.sleep(0.2)

    def _host_can_come(self) -> bool:
        """Whether a host may be on its way: one was reached before and the browser it ran in still runs
        (unknown where the system does not say who spawned it). Never seen a host: the browser is most likely
        not open, also when a socket file is there (a host that Chromium killed at exit leaves it behind)."""
        return self._seen_host and (self._browser is None or owner_alive(self._browser))

    def _why_no_host(self, coming: bool) -> str:
        if coming:
            # "still open" only where the system said which browser that is (Linux), and it runs
            return HOST_NOT_BACK.format(wait=self._connect_wait, open="" if self._browser is None else ", still open,")
        return BROWSER_CLOSED if self._browser is not None else NO_HOST

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


def _browser_of(writer: asyncio.StreamWriter) -> str | None:
    """The process that spawned the host at the other end of the socket (the browser: Chromium starts the host
    itself), as `owner_alive` checks it; None where the system does not say (only Linux is asked)."""
    sock = writer.get_extra_info("socket")
    if sock is None or not sys.platform.startswith("linux"):
        return None
    try:
        credentials = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        host_pid = struct.unpack("3i", credentials)[0]
        stat = Path(f"/proc/{host_pid}/stat").read_text()
        parent = int(stat.rpartition(")")[2].split()[1])  # after the command name: state, ppid, …
    except (OSError, ValueError, IndexError):
        return None
    return process_owner(parent) if parent > 1 else None


async def _open_pipe(name: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:  # pragma: no cover
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    protocol = asyncio.StreamReaderProtocol(reader)
    transport, _ = await loop.create_pipe_connection(lambda: protocol, name)  # type: ignore[attr-defined]
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)
