"""Our own small CDP client: one session API over pluggable transports."""

from .connection import CDPConnection, CDPSession
from .errors import CDPConnectionClosed, CDPError, CDPErrorKind, CDPTimeout
from .transport import Transport, TransportClosed, WebSocketTransport

__all__ = [
    "CDPConnection",
    "CDPConnectionClosed",
    "CDPError",
    "CDPErrorKind",
    "CDPSession",
    "CDPTimeout",
    "Transport",
    "TransportClosed",
    "WebSocketTransport",
]
