"""CDP failures: what went wrong, decided once where the error is made, whichever transport carried it.

The layers above read `CDPError.kind` and never the browser's wording, which differs by transport: the
DevTools websocket answers in Chromium's own CDP words; the extension relay passes those through from
chrome.debugger.sendCommand and adds chrome.debugger's and chrome.tabs' own (the wordings below name
where each comes from)."""

from __future__ import annotations

import enum
from typing import Any


class CDPErrorKind(enum.Enum):
    TARGET_GONE = "target_gone"  # the tab, or the frame/worker session, the command was for is gone
    CONTEXT_GONE = "context_gone"  # the document (its execution context, its frame) was replaced or removed
    NODE_GONE = "node_gone"  # the DOM node named is no longer in its document
    NO_SUCH_OBJECT = "no_such_object"  # the remote object id names nothing (released, or its context is gone)
    TIMEOUT = "timeout"  # no reply in time
    CONNECTION_CLOSED = "connection_closed"  # the whole connection to the browser is gone
    OTHER = "other"


_WORDINGS: tuple[tuple[CDPErrorKind, tuple[str, ...]], ...] = (
    (CDPErrorKind.TARGET_GONE, (
        "Session with given id not found",  # CDP: a flattened session that detached (also the relay's own)
        "No target with given id",  # CDP Target.*: "No target with given id found"
        "Target closed",
        "Debugger is not attached to the",  # chrome.debugger: "Debugger is not attached to the tab with id: 5."
        "No tab with given id",  # chrome.debugger: "No tab with given id 5."
        "Detached while handling command",  # chrome.debugger: the tab went while the command ran
        "No tab with id",  # chrome.tabs: "No tab with id: 5."
    )),
    (CDPErrorKind.CONTEXT_GONE, (
        "Cannot find context with specified id",
        "Execution context was destroyed",
        "Cannot find default execution context",
        "No frame for given id found",
        "Inspected target navigated or closed",  # Chromium's answer to a command cut off by a navigation
    )),
    (CDPErrorKind.NODE_GONE, (
        "No node with given id",
        "No node found for given backend id",  # DOM.describeNode of a node garbage-collected since
        "Node is detached",
        "Could not find node",
        "does not belong to the document",
        "Node is not an Element",  # tabpilot names elements only: the id now names something else
    )),
    (CDPErrorKind.NO_SUCH_OBJECT, ("Could not find object with given id",)),
)


def classify(message: str) -> CDPErrorKind:
    """The kind of a failure, from the browser's (or the extension's) message."""
    for kind, wordings in _WORDINGS:
        if any(wording in message for wording in wordings):
            return kind
    return CDPErrorKind.OTHER


# CDP failures in words a user (and the model) can act on; the browser's own message stays in brackets
# and in `cdp_message`, so callers that look for it still find it.
PAGE_BUSY = "the page is busy or showing a dialog"
PAGE_RELOADING = "the page keeps reloading or navigating away, so it could not be read"
_EXPLANATIONS = {CDPErrorKind.CONTEXT_GONE: PAGE_RELOADING, CDPErrorKind.TIMEOUT: PAGE_BUSY}


class CDPError(Exception):
    """The browser answered a command with an error; `kind` says what it means, `cdp_message` how it said it."""

    def __init__(self, method: str, code: int, message: str, data: Any = None, *,
                 kind: CDPErrorKind | None = None) -> None:
        self.method, self.code, self.cdp_message, self.data = method, code, message, data
        self.kind = kind or classify(message)
        self.explanation = _EXPLANATIONS.get(self.kind)
        detail = f" ({data})" if data else ""
        said = f"{self.explanation} ({message})" if self.explanation else message
        super().__init__(f"{method} failed: {said}{detail} [code {code}]")


class CDPTimeout(CDPError, TimeoutError):
    def __init__(self, method: str, timeout: float) -> None:
        # Seen with alert() in a loop and with a script that never yields: the page cannot answer.
        super().__init__(method, -1, f"no reply within {timeout:g} s", kind=CDPErrorKind.TIMEOUT)


class CDPConnectionClosed(CDPError, ConnectionError):
    def __init__(self, method: str, reason: str) -> None:
        super().__init__(method, -2, f"connection to the browser closed ({reason})",
                         kind=CDPErrorKind.CONNECTION_CLOSED)
