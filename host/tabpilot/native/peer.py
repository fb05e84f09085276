"""Requests to the extension and their replies; pushes from it to whoever listens.

`Peer` does not do I/O: it writes through a callable and is fed the frames that arrive. When the
link goes, listeners of the pseudo-push `link.closed` hear it (and every pending request fails). The host uses
one over stdio; tests use one over the host's loopback debug socket (`debug.py`). Anything that needs
the extension (the relay, `RelayBrowser`) talks to this `ExtensionLink` interface only.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import defaultdict
from collections.abc import Callable
from typing import Any, Protocol

log = logging.getLogger(__name__)

PushHandler = Callable[[dict[str, Any]], None]
REQUEST_TIMEOUT = 120.0
CANCELED_BY_USER = "canceled_by_user"  # cdp.detached reason: the user pressed Cancel on the infobar


class ExtensionError(RuntimeError):
    """The extension answered a request with ok:false."""

    def __init__(self, request_type: str, message: str, code: Any = None) -> None:
        self.request_type, self.error_message, self.code = request_type, message, code
        super().__init__(f"{request_type}: {message}")


class RequestFailed(Exception):
    """A request from the extension that was understood but cannot be done; message and code go back
    in the reply (`reply_error`)."""

    def __init__(self, message: str, code: str = "failed") -> None:
        super().__init__(message)
        self.code = code


class LinkClosed(ConnectionError):
    """The extension is gone (stdin closed, or the debug socket dropped)."""


class ExtensionLink(Protocol):
    async def request(self, type: str, fields: dict[str, Any] | None = None, *, timeout: float | None = ...) -> Any:
        ...

    def request_future(self, type: str, fields: dict[str, Any] | None = None) -> asyncio.Future[Any]: ...

    def on(self, type: str, handler: PushHandler) -> None: ...

    def off(self, type: str, handler: PushHandler) -> None: ...


class Peer:
    def __init__(self, write: Callable[[dict[str, Any]], None], *, id_prefix: str = "h") -> None:
        self._write = write
        self._ids = (f"{id_prefix}{n}" for n in itertools.count(1))
        self._pending: dict[str, tuple[str, asyncio.Future[Any]]] = {}
        self._handlers: dict[str, list[PushHandler]] = defaultdict(list)
        self.closed_reason: str | None = None

    async def request(
        self, type: str, fields: dict[str, Any] | None = None, *, timeout: float | None = REQUEST_TIMEOUT
    ) -> Any:
        return await self.request_future(type, fields, timeout=REQUEST_TIMEOUT if timeout is None else timeout)

    def request_future(
        self, type: str, fields: dict[str, Any] | None = None, *, timeout: float = REQUEST_TIMEOUT
    ) -> asyncio.Future[Any]:
        """Send now; the future resolves when the reply arrives (in arrival order with pushes), or
        fails with TimeoutError if none comes within `timeout` (so nothing waits for ever)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if self.closed_reason is not None:
            future.set_exception(LinkClosed(self.closed_reason))
            return future
        request_id = next(self._ids)
        self._pending[request_id] = (type, future)
        timer = loop.call_later(timeout, _expire, future, f"{type}: no reply from the extension within {timeout:g} s")
        future.add_done_callback(lambda _f: (self._pending.pop(request_id, None), timer.cancel()))
        try:
            self._write({**(fields or {}), "type": type, "id": request_id})
        except Exception as exc:
            self._pending.pop(request_id, None)
            future.set_exception(LinkClosed(f"could not write to the extension: {exc}"))
        return future

    def on(self, type: str, handler: PushHandler) -> None:
        self._handlers[type].append(handler)

    def off(self, type: str, handler: PushHandler) -> None:
        if handler in self._handlers.get(type, []):
            self._handlers[type].remove(handler)

    def resolve(self, reply: dict[str, Any]) -> bool:
        """Settle the request a reply answers; False when no request of ours has that id."""
        entry = self._pending.pop(str(reply.get("id")), None)
        if entry is None:
            return False
        request_type, future = entry
        if future.done():
            return True
        if reply.get("ok"):
            future.set_result(reply.get("data"))
        else:
            error = reply.get("error") or {}
            future.set_exception(ExtensionError(request_type, str(error.get("message", "failed")), error.get("code")))
        return True

    def deliver(self, push: dict[str, Any]) -> None:
        """Hand a push to its listeners, after any reply already resolved (keeps the wire's order)."""
        for handler in list(self._handlers.get(push.get("type", ""), ())):
            asyncio.get_running_loop().call_soon(self._run_handler, handler, push)

    @staticmethod
    def _run_handler(handler: PushHandler, push: dict[str, Any]) -> None:
        try:
            handler(push)
        except Exception:
            log.exception("handler for %s failed", push.get("type"))

    def close(self, reason: str) -> None:
        if self.closed_reason is None:
            self.closed_reason = reason
        for _type, future in list(self._pending.values()):
            if not future.done():
                future.set_exception(LinkClosed(reason))
        self._pending.clear()
        for handler in list(self._handlers.get("link.closed", ())):
            self._run_handler(handler, {"type": "link.closed", "reason": reason})


def _expire(future: asyncio.Future[Any], message: str) -> None:
    if not future.done():
        future.set_exception(TimeoutError(message))


def reply_ok(request_id: str | int | None, data: Any) -> dict[str, Any]:
    return {"type": "reply", "id": request_id, "ok": True, "data": data}


def reply_error(request_id: str | int | None, message: str, code: str | int | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"message": message}
    if code is not None:
        error["code"] = code
    return {"type": "reply", "id": request_id, "ok": False, "error": error}
