"""Our own small CDP client: one session API over pluggable transports."""

from .connection import CDPConnection, CDPConnectionClosed, CDPError, CDPSession, CDPTimeout
from .transport import Transport, TransportClosed, WebSocketTransport

__all__ = [
    "CDPConnection",
    "CDPConnectionClosed",
    "CDPError",
    "CDPSession",
    "CDPTimeout",
    "Transport",
    "TransportClosed",
    "WebSocketTransport",
]
