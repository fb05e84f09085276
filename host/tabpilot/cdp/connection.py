"""One CDP session API over any transport: commands with timeouts, typed errors, flattened sessions,
several handlers per event. Async handlers run as tasks so they never delay command replies.

Commands sent in the same turn of the event loop leave together, in the order they were sent, as one
burst (`Transport.send_burst`): typing's key events, a state read's parallel calls. Each message the
browser has to read on its own costs it a wake-up (measured: ~1.3 ms a `socket.send` under load)."""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from .errors import CDPConnectionClosed, CDPError, CDPTimeout
from .transport import Transport, TransportClosed

log = logging.getLogger(__name__)

EventHandler = Callable[[dict[str, Any]], Awaitable[None] | None]
T = TypeVar("T")
DEFAULT_TIMEOUT = 30.0
DETACHED_KEPT = 4096  # detached session ids remembered (a few dozen bytes each)


def _detached(method: str) -> CDPError:
    # Chromium's own words for a command to a session that is gone: the kind is TARGET_GONE.
    return CDPError(method, -32001, "Session with given id not found (its target detached)")


class CDPConnection:
    """Owns a transport: matches replies to commands, dispatches events by (sessionId, method)."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[str, asyncio.Future[dict[str, Any]], str | None]] = {}
        # Sessions Chromium said were detached (their tab or frame closed), newest last: a command for one
        # fails at once instead of waiting out its timeout (a command in flight as its tab closes may get
        # no answer at all).
        self._detached: dict[str, None] = {}
        self._outbox: dict[int, dict[str, Any]] = {}  # sent this turn, not yet handed to the transport
        self._flushing: asyncio.Task[None] | None = None
        self._handlers: dict[tuple[str | None, str], list[EventHandler]] = defaultdict(list)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._draining = False  # closing: messages are read, not dispatched
        self._closed_reason: str | None = None
        self._closed = asyncio.Event()  # wakes event waiters: no event will come once the connection is gone
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())
        self.root = CDPSession(self, None)

    @property
    def closed(self) -> bool:
        return self._closed_reason is not None

    @property
    def paces_input(self) -> bool:
        """Whether the transport keeps a run of input commands in flight itself (`Transport.paces_input`)."""
        return self._transport.paces_input

    async def send(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        session_id: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> dict[str, Any]:
        message_id, future = self._enqueue(method, params, session_id)
        try:
            async with asyncio.timeout(timeout):
                return await future
        except TimeoutError:
            raise CDPTimeout(method, timeout or 0) from None
        finally:
            self._forget(message_id)

    async def send_run(
        self,
        commands: list[tuple[str, dict[str, Any]]],
        *,
        session_id: str | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> list[dict[str, Any]]:
        """Several commands sent in one burst, in order, and awaited together within `timeout`: their results in
        order, or the first failure in that order. For a transport that paces a run itself (`paces_input`):
        no task and no timer per command (typing 100 characters over the relay: ~200 of each, 3 ms before the frame
        left and 2 ms after its answer came, now 0.3 + 0.4 ms; load 3.7)."""
        sent = [self._enqueue(method, params, session_id) for method, params in commands]
        try:
            async with asyncio.timeout(timeout):
                return [await future for _, future in sent]
        except TimeoutError:
            raise CDPTimeout(commands[0][0], timeout or 0) from None
        finally:
            for message_id, future in sent:
                self._forget(message_id)
                if not future.done():
                    future.cancel()
                elif not future.cancelled():
                    future.exception()  # read: a failure after the first one raised is not "never retrieved"

    def _enqueue(
        self, method: str, params: dict[str, Any] | None, session_id: str | None
    ) -> tuple[int, asyncio.Future[dict[str, Any]]]:
        """Put a command in this turn's burst; its reply settles the future."""
        if self._closed_reason is not None:
            raise CDPConnectionClosed(method, self._closed_reason)
        if session_id is not None and session_id in self._detached:
            raise _detached(method)
        message_id = next(self._ids)
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params or {}}
        if session_id:
            message["sessionId"] = session_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[message_id] = (method, future, session_id)
        self._outbox[message_id] = message
        if self._flushing is None:
            self._flushing = asyncio.ensure_future(self._flush())
        return message_id, future

    def _forget(self, message_id: int) -> None:
        self._pending.pop(message_id, None)
        # Given up on (cancelled, e.g. typing stopped by a takeover) before it left: it never leaves.
        self._outbox.pop(message_id, None)

    async def _flush(self) -> None:
        """Hand what was sent to the transport, a burst at a time: first everything sent in the turn
        that started the flush, then whatever was sent while that burst was being written."""
        try:
            while self._outbox:
                burst = list(self._outbox.values())
                self._outbox.clear()
                try:
                    await self._transport.send_burst(burst)
                except TransportClosed as exc:
                    self._fail_all(str(exc))
                    return
                except Exception as exc:  # e.g. params that are not JSON: their senders hear it
                    for message in burst:
                        entry = self._pending.get(message["id"])
                        if entry is not None and not entry[1].done():
                            entry[1].set_exception(exc)
        finally:
            self._flushing = None

    async def unless_closed(self, awaitable: Awaitable[T], what: str) -> T:
        """Await `awaitable` (e.g. an event), unless the connection closes first: then raise
        CDPConnectionClosed naming `what` instead of sitting out a timeout."""
        work = asyncio.ensure_future(awaitable)
        closed = asyncio.ensure_future(self._closed.wait())
        try:
            done, _ = await asyncio.wait((work, closed), return_when=asyncio.FIRST_COMPLETED)
            if work in done:
                return work.result()
            raise CDPConnectionClosed(what, self._closed_reason or "closed")
        finally:
            closed.cancel()
            work.cancel()

    def on(self, method: str, handler: EventHandler, *, session_id: str | None = None) -> None:
        self._handlers[(session_id, method)].append(handler)

    def off(self, method: str, handler: EventHandler, *, session_id: str | None = None) -> None:
        handlers = self._handlers.get((session_id, method), [])
        if handler in handlers:
            handlers.remove(handler)

    def session(self, session_id: str | None) -> CDPSession:
        return CDPSession(self, session_id)

    async def close(self) -> None:
        if self._closed_reason is None:
            self._fail_all("closed by tabpilot")
        # The reader reads on (and drops what it reads) until the transport is closed: a websocket whose unread
        # messages fill its queue stops reading, so it never sees the browser's answer to its close and waits
        # out its close timeout (10 s a close, after a test had left the loop idle while a page sent events).
        self._draining = True
        if self._flushing is not None:
            self._flushing.cancel()
        try:
            await self._transport.close()
        except Exception:  # closing is best effort
            log.debug("transport close failed", exc_info=True)
        self._reader.cancel()
        for task in list(self._tasks):
            task.cancel()

    async def _read_loop(self) -> None:
        try:
            while True:
                message = await self._transport.receive()
                if not self._draining:
                    self._dispatch(message)
        except TransportClosed as exc:
            self._fail_all(str(exc))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("CDP reader crashed")
            self._fail_all(f"reader crashed: {exc!r}")

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "id" in message:
            entry = self._pending.get(message["id"])
            if entry is None:
                return
            method, future, _ = entry
            if future.done():
                return
            if "error" in message:
                error = message["error"]
                future.set_exception(
                    CDPError(method, error.get("code", 0), error.get("message", "?"), error.get("data"))
                )
            else:
                future.set_result(message.get("result", {}))
            return
        event: str | None = message.get("method")
        if not event:
            return
        params = message.get("params", {})
        if event == "Target.detachedFromTarget" and params.get("sessionId"):
            self._session_detached(params["sessionId"])
        for handler in list(self._handlers.get((message.get("sessionId"), event), ())):
            try:
                result = handler(params)
            except Exception:
                log.exception("handler for %s failed", event)
                continue
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._tasks.add(task)
                task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("async CDP event handler failed", exc_info=task.exception())

    def _session_detached(self, session_id: str) -> None:
        self._detached[session_id] = None
        if len(self._detached) > DETACHED_KEPT:
            del self._detached[next(iter(self._detached))]
        for method, future, sent_to in list(self._pending.values()):
            if sent_to == session_id and not future.done():
                future.set_exception(_detached(method))

    def _fail_all(self, reason: str) -> None:
        self._closed_reason = reason
        self._closed.set()
        for method, future, _ in list(self._pending.values()):
            if not future.done():
                future.set_exception(CDPConnectionClosed(method, reason))
        self._pending.clear()


class CDPSession:
    """Commands and events scoped to one target (sessionId None = the browser/root target)."""

    def __init__(self, connection: CDPConnection, session_id: str | None) -> None:
        self.connection = connection
        self.session_id = session_id
        # What other layers keep per session (e.g. the state walker's worlds), gone with the session.
        # Not a module-level WeakKeyDictionary: values there that refer to their session keep it (and
        # its whole task) alive forever (that leaked ~75 KB a task in the host).
        self.kept: dict[str, Any] = {}

    async def send(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = DEFAULT_TIMEOUT
    ) -> dict[str, Any]:
        return await self.connection.send(method, params, session_id=self.session_id, timeout=timeout)

    def on(self, method: str, handler: EventHandler) -> None:
        self.connection.on(method, handler, session_id=self.session_id)

    def off(self, method: str, handler: EventHandler) -> None:
        self.connection.off(method, handler, session_id=self.session_id)

    async def wait_for(
        self,
        method: str,
        predicate: Callable[[dict[str, Any]], bool] | None = None,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
    ) -> dict[str, Any]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

        def handler(params: dict[str, Any]) -> None:
            if not future.done() and (predicate is None or predicate(params)):
                future.set_result(params)

        self.on(method, handler)
        try:
            async with asyncio.timeout(timeout):
                return await self.connection.unless_closed(future, method)
        finally:
            self.off(method, handler)

    def __repr__(self) -> str:
        return f"CDPSession({self.session_id or 'browser'})"
