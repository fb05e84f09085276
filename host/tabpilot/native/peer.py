"""Requests to the extension and their replies; pushes from it to whoever listens.

`Peer` does not do I/O: it writes through a callable and is fed the frames that arrive, already
parsed into their models (messages.py). A request is a `HostRequest` model; its reply's data comes
back as the model that request names. Listeners subscribe by push model (`on(CdpEvent, handler)`);
when the link goes, listeners of `LinkClosedNotice` hear it (and every pending request fails). The
host uses one over stdio; tests use one over the host's loopback debug socket (`debug.py`). Anything
that needs the extension (the relay, `ExtensionTabs`) talks to this `ExtensionLink` interface only.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from .messages import ExtensionPush, HostErrorCode, HostRequest, ReplyError, ReplyOk

log = logging.getLogger(__name__)

Push = TypeVar("Push")
ReplyData = TypeVar("ReplyData")
PushHandler = Callable[[Any], None]
REQUEST_TIMEOUT = 120.0
CANCELED_BY_USER = "canceled_by_user"  # cdp.detached reason: the user pressed Cancel on the infobar


class ExtensionError(RuntimeError):
    """The extension answered a request with ok:false (or with data its model does not take)."""

    def __init__(self, request_type: str, message: str, code: str | int | None = None) -> None:
        self.request_type, self.error_message, self.code = request_type, message, code
        super().__init__(f"{request_type}: {message}")


class RequestFailed(Exception):
    """A request from the extension that was understood but cannot be done; message and code go back
    in the reply (`reply_error`)."""

    def __init__(self, message: str, code: HostErrorCode = "failed") -> None:
        super().__init__(message)
        self.code = code


class LinkClosed(ConnectionError):
    """The extension is gone (stdin closed, or the debug socket dropped)."""


@dataclass(frozen=True)
class LinkClosedNotice:
    """Not a frame: what `on(LinkClosedNotice, …)` listeners hear when the link goes."""

    reason: str


class ExtensionLink(Protocol):
    # The optional host requests the extension takes (its hello's `features`, messages.OPTIONAL_HOST_REQUESTS).
    @property
    def features(self) -> frozenset[str]: ...

    async def request(self, request: HostRequest[ReplyData], *, timeout: float | None = ...) -> ReplyData: ...

    def request_future(self, request: HostRequest[ReplyData]) -> asyncio.Future[ReplyData]: ...

    def on(self, kind: type[Push], handler: Callable[[Push], None]) -> None: ...

    def off(self, kind: type[Push], handler: Callable[[Push], None]) -> None: ...


class Peer:
    def __init__(self, write: Callable[[dict[str, Any]], None], *, id_prefix: str = "h") -> None:
        self._write = write
        self._ids = (f"{id_prefix}{n}" for n in itertools.count(1))
        self._pending: dict[str, tuple[HostRequest[Any], asyncio.Future[Any]]] = {}
        self._handlers: dict[type, list[PushHandler]] = defaultdict(list)
        self.closed_reason: str | None = None
        self.features: frozenset[str] = frozenset()  # set from the extension's hello

    def learn_features(self, features: object) -> None:
        """The `features` of the extension's hello: a list of request types; anything else counts as none."""
        listed = features if isinstance(features, list) else []
        self.features = frozenset(name for name in listed if isinstance(name, str))

    async def request(
        self, request: HostRequest[ReplyData], *, timeout: float | None = REQUEST_TIMEOUT
    ) -> ReplyData:
        return await self.request_future(request, timeout=REQUEST_TIMEOUT if timeout is None else timeout)

    def request_future(
        self, request: HostRequest[ReplyData], *, timeout: float = REQUEST_TIMEOUT
    ) -> asyncio.Future[ReplyData]:
        """Send now; the future resolves when the reply arrives (in arrival order with pushes), or
        fails with TimeoutError if none comes within `timeout` (so nothing waits for ever)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[ReplyData] = loop.create_future()
        if self.closed_reason is not None:
            future.set_exception(LinkClosed(self.closed_reason))
            return future
        request_id = next(self._ids)
        self._pending[request_id] = (request, future)
        late = f"{request.type}: no reply from the extension within {timeout:g} s"
        timer = loop.call_later(timeout, _expire, future, late)

        def settled(_future: asyncio.Future[ReplyData]) -> None:
            self._pending.pop(request_id, None)
            timer.cancel()

        future.add_done_callback(settled)
        try:
            self._write({**request.to_frame(), "id": request_id})
        except Exception as exc:
            self._pending.pop(request_id, None)
            future.set_exception(LinkClosed(f"could not write to the extension: {exc}"))
        return future

    def on(self, kind: type[Push], handler: Callable[[Push], None]) -> None:
        self._handlers[kind].append(handler)

    def off(self, kind: type[Push], handler: Callable[[Push], None]) -> None:
        if handler in self._handlers.get(kind, []):
            self._handlers[kind].remove(handler)

    def resolve(self, reply: ReplyOk | ReplyError) -> bool:
        """Settle the request a reply answers; False when no request of ours has that id."""
        entry = self._pending.pop(str(reply.id), None)
        if entry is None:
            return False
        request, future = entry
        if future.done():
            return True
        if reply.ok:
            from pydantic import ValidationError

            from .messages import describe_errors

            try:
                future.set_result(request.parse_reply(reply.data))
            except ValidationError as exc:
                future.set_exception(ExtensionError(request.type, f"unusable reply: {describe_errors(exc)}"))
        else:
            future.set_exception(ExtensionError(request.type, reply.error.message, reply.error.code))
        return True

    def deliver(self, push: ExtensionPush) -> None:
        """Hand a push to its listeners, after any reply already resolved (keeps the wire's order)."""
        for handler in list(self._handlers.get(type(push), ())):
            asyncio.get_running_loop().call_soon(self._run_handler, handler, push)

    @staticmethod
    def _run_handler(handler: PushHandler, push: Any) -> None:
        try:
            handler(push)
        except Exception:
            log.exception("handler for %s failed", type(push).__name__)

    def close(self, reason: str) -> None:
        if self.closed_reason is None:
            self.closed_reason = reason
        for _request, future in list(self._pending.values()):
            if not future.done():
                future.set_exception(LinkClosed(reason))
        self._pending.clear()
        for handler in list(self._handlers.get(LinkClosedNotice, ())):
            self._run_handler(handler, LinkClosedNotice(reason))


def _expire(future: asyncio.Future[Any], message: str) -> None:
    if not future.done():
        future.set_exception(TimeoutError(message))
