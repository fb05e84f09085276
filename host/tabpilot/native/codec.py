"""Native messaging frames, sans I/O: 4-byte native-endian length + UTF-8 JSON object.

`FrameDecoder.feed(bytes)` turns whatever arrived into whole messages (or one `FrameError` per frame
it could not use: it never raises). `encode_frames(obj)` gives the bytes to write; anything whose JSON
is over 512 KiB goes out as `chunk` frames (`messages.Chunk`), because Chromium drops the port on a
host→browser frame over 1 MiB. Chunking is host → extension only (browser→host frames may be 64 MiB):
`ChunkReassembler` joins chunk frames back into one message as the extension does (tests read the
host's output with it).
"""

from __future__ import annotations

import itertools
import json
import math
import struct
from dataclasses import dataclass, field
from typing import Any

from ..textsafety import clean_json, may_hold_surrogates

HEADER = struct.Struct("=I")  # native byte order, as Chromium writes it
MAX_FRAME_TO_BROWSER = 1024 * 1024  # Chromium: one byte more and the port is gone
CHUNK_THRESHOLD = 512 * 1024
# Chromium never sends a host more than this (measured on Chromium 156; Chrome's documentation has said 4 GB, the
# header's own range, and says 64 MiB since): a header announcing more means the stream is not frames.
MAX_INCOMING_FRAME = 64 * 1024 * 1024
_CHUNK_OVERHEAD = 256  # room for {"type":"chunk","chunkId":..,"index":..,"count":..,"data":""}


@dataclass(frozen=True)
class FrameError:
    """A frame that could not be used; `id` is the request id when it could still be read."""

    message: str
    id: str | None = None


@dataclass(frozen=True)
class NotFrames(FrameError):
    """The stream is not native-messaging frames: a header announced more than the sender ever sends. No frame
    boundary can be found after it (reading on would mean reading, or skipping, up to 4 GiB of whatever it is), so
    the decoder gives nothing more and whoever reads the stream says so and ends the connection."""


Message = dict[str, Any]


class FrameDecoder:
    """Incremental decoder: feed it bytes in any slicing, get complete messages back; a header over `max_frame`
    ends the stream (`NotFrames`, then `broken`: nothing more is decoded, nothing more is kept)."""

    def __init__(self, max_frame: int = MAX_INCOMING_FRAME) -> None:
        self.max_frame = max_frame
        self._buffer = bytearray()
        self.broken: NotFrames | None = None

    def feed(self, data: bytes) -> list[Message | FrameError]:
        out: list[Message | FrameError] = []
        if self.broken is not None:
            return out
        self._buffer += data
        buffer, position = self._buffer, 0
        while len(buffer) - position >= HEADER.size:
            (length,) = HEADER.unpack_from(buffer, position)
            start = position + HEADER.size
            if length > self.max_frame:
                self.broken = NotFrames(f"a frame header announced {length} bytes, over the {self.max_frame} byte "
                                        "limit: the stream is not native-messaging frames")
                out.append(self.broken)
                buffer.clear()
                return out
            if len(buffer) - start < length:
                break
            out.append(decode_payload(bytes(buffer[start : start + length])))
            position = start + length
        del buffer[:position]  # once per feed: many small frames in one read stay linear
        return out

    @property
    def pending_bytes(self) -> int:
        """Bytes of an unfinished frame (non-zero at EOF means the last frame was cut off)."""
        return len(self._buffer)


def decode_payload(payload: bytes) -> Message | FrameError:
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        return FrameError(f"frame is not valid UTF-8 (byte {exc.start})")
    return _decode_json(text, may_hold_surrogates(payload))


def _finite(text: str) -> float:
    value = float(text)
    if value in (math.inf, -math.inf):  # 1e400: it could never be written back (allow_nan=False)
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def _no_constants(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _decode_json(text: str, clean: bool) -> Message | FrameError:
    try:
        value = json.loads(text, parse_float=_finite, parse_constant=_no_constants)
    except ValueError as exc:
        return FrameError(f"frame is not valid JSON: {exc}")
    except RecursionError:
        return FrameError("frame is not usable JSON: nested too deeply")
    if not isinstance(value, dict):
        return FrameError(f"frame must be a JSON object, got {type(value).__name__}")
    # A page's half emoji becomes U+FFFD here. Not in a chunk: its data is a slice of JSON text that may
    # end in the first half of a pair; the joined message is cleaned instead.
    if clean and value.get("type") != "chunk":
        clean_json(value)
    return value


def _json_bytes(obj: Any) -> bytes:
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (e.g. from a page's string): escape everything
        return json.dumps(obj, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")


def encode_frame(obj: Message) -> bytes:
    """One frame, no chunking (use encode_frames for anything sent to the browser)."""
    payload = _json_bytes(obj)
    return HEADER.pack(len(payload)) + payload


_chunk_ids = itertools.count(1)


def encode_frames(obj: Message, *, threshold: int = CHUNK_THRESHOLD) -> list[bytes]:
    """The frames to write for obj: one frame, or `chunk` frames each safely under 1 MiB."""
    payload = _json_bytes(obj)
    if len(payload) <= threshold:
        return [HEADER.pack(len(payload)) + payload]
    text = payload.decode("utf-8")
    pieces = _split_text(text, threshold)
    from .messages import Chunk  # pydantic: not before the first small reply (see host.py)

    chunk_id = f"c{next(_chunk_ids)}"
    frames = []
    for index, piece in enumerate(pieces):
        chunk = Chunk(chunk_id=chunk_id, index=index, count=len(pieces), data=piece)
        frame = encode_frame(chunk.to_frame())
        assert len(frame) - HEADER.size <= MAX_FRAME_TO_BROWSER
        frames.append(frame)
    return frames


def _split_text(text: str, threshold: int) -> list[str]:
    """Slices of text whose JSON string encoding stays within the frame budget (escaping can grow it)."""
    budget = MAX_FRAME_TO_BROWSER - _CHUNK_OVERHEAD
    pieces = []
    start = 0
    while start < len(text):
        size = threshold
        while True:
            piece = text[start : start + size]
            if len(_json_bytes(piece)) <= budget:
                break
            size //= 2
        pieces.append(piece)
        start += len(piece)
    return pieces


class ChunkReassembler:
    """Joins `chunk` frames; other messages pass straight through. Whatever the chunks say, it holds at most
    `max_pending` unfinished messages and `max_total` characters of them in all (their ids counted): room for a new
    one is made by forgetting the oldest unfinished, and one message over `max_total` is refused. Its errors show a
    chunk id cut short and escaped (messages.shown_name), never the sender's text as it came."""

    def __init__(self, max_total: int = MAX_INCOMING_FRAME, max_pending: int = 8) -> None:
        self.max_total = max_total
        self.max_pending = max_pending
        self._pending: dict[str, _Unfinished] = {}
        self.held = 0  # characters of every unfinished message's id and pieces

    def accept(self, message: Message) -> Message | FrameError | None:
        """The whole message when complete, None while waiting for more chunks, FrameError if broken."""
        if message.get("type") != "chunk":
            return message
        from pydantic import ValidationError

        from .messages import Chunk, describe_errors, shown_name

        try:
            chunk = Chunk.model_validate(message, strict=True)
        except ValidationError as exc:
            chunk_id = message.get("chunkId")
            if isinstance(chunk_id, str):
                self._forget(chunk_id)
            return FrameError(f"chunk {shown_name(chunk_id)}: {describe_errors(exc)}")
        chunk_id, index, count, data = chunk.chunk_id, chunk.index, chunk.count, chunk.data
        unfinished = self._forget(chunk_id) or _Unfinished(count, size=len(chunk_id))
        if index >= count:
            return FrameError(f"chunk {shown_name(chunk_id)}: bad index {index} of count {count}")
        if count != unfinished.count or index != len(unfinished.pieces):
            return FrameError(f"chunk {shown_name(chunk_id)}: got piece {index} of {count}, expected "
                              f"{len(unfinished.pieces)} of {unfinished.count}")
        unfinished.pieces.append(data)
        unfinished.size += len(data)
        if unfinished.size > self.max_total:
            return FrameError(f"chunk {shown_name(chunk_id)}: message is over the {self.max_total} character limit")
        if len(unfinished.pieces) == count:
            text = "".join(unfinished.pieces)
            return _decode_json(text, may_hold_surrogates(text))
        while self._pending and (len(self._pending) >= self.max_pending
                                 or self.held + unfinished.size > self.max_total):
            self._forget(next(iter(self._pending)))  # the oldest unfinished one
        self._pending[chunk_id] = unfinished
        self.held += unfinished.size
        return None

    @property
    def pending(self) -> int:
        """How many messages wait for more chunks."""
        return len(self._pending)

    def _forget(self, chunk_id: str) -> _Unfinished | None:
        unfinished = self._pending.pop(chunk_id, None)
        if unfinished is not None:
            self.held -= unfinished.size
        return unfinished


@dataclass
class _Unfinished:
    """A chunked message's pieces so far."""

    count: int
    size: int  # characters held: the id's and the pieces'
    pieces: list[str] = field(default_factory=list)
