"""Reply frames as plain dicts: `reply_ok` / `reply_error` give exactly `ReplyOk` / `ReplyError`'s frame
(messages.py), without pydantic or asyncio, because hello and ping are answered before either loads (the first
hello before the host's loop exists: process.py)."""

from __future__ import annotations

from typing import Any

from .. import __version__

# A request's id as the wire has it (messages.RequestId is these, PROTOCOL.md says them): text of at most
# MAX_ID_CHARS characters or a whole number JavaScript holds exactly. Any other id is no id: a reply never echoes a
# megabyte back.
MAX_ID_CHARS = 128
MAX_ID_NUMBER = 2**53 - 1


def request_id_of(frame: dict[str, Any]) -> str | int | None:
    """The id a reply to `frame` carries: its own when it is one (text or a whole number within the limits above,
    never `true`, an object or a megabyte of text, which would be echoed back as sent)."""
    found = frame.get("id")
    if isinstance(found, str):
        return found if len(found) <= MAX_ID_CHARS else None
    if isinstance(found, int) and not isinstance(found, bool):
        return found if abs(found) <= MAX_ID_NUMBER else None
    return None


def plain_hello(frame: dict[str, Any]) -> bool:
    """A hello answered without its model: its id is usable as it came and its version is text (or absent)."""
    return (frame.get("type") == "hello" and request_id_of(frame) == frame.get("id")
            and isinstance(frame.get("extensionVersion"), str | None))


def hello_data(task: Any = None, tasks: list[Any] | None = None) -> dict[str, Any]:
    """What a reply to hello carries: the host's version, the task the popup shows and those running."""
    return {"hostVersion": __version__, "task": task, "tasks": tasks or []}


def reply_ok(request_id: str | int | None, data: Any) -> dict[str, Any]:
    """`ReplyOk(id=request_id, data=data).to_frame()`, without pydantic (`data`: JSON-ready values)."""
    return {"type": "reply", "id": request_id, "ok": True, "data": data}


def reply_error(request_id: str | int | None, message: str, code: str | int | None = None) -> dict[str, Any]:
    """`ReplyError(id=request_id, error=ErrorInfo(message=message, code=code)).to_frame()`, without pydantic.
    `code`: a `HostErrorCode` when the host decides, or whatever the extension said when relaying its answer."""
    error: dict[str, Any] = {"message": message}
    if code is not None:
        error["code"] = code
    return {"type": "reply", "id": request_id, "ok": False, "error": error}
