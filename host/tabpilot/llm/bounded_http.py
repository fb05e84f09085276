"""The HTTP client under the openai package, reading every reply only up to a size limit.

httpx reads a whole body into memory before openai looks at it, error pages included, and inflates a
gzip body as it goes: an endpoint streaming without end took `tabpilot run` to 17.6 GB in one attempt,
and a 269 MB gzip bomb inflates to far more. Here each response's stream is replaced, in a response
hook (so redirects, error pages and proxied requests are covered too), by one that inflates gzip /
deflate itself in bounded pieces and stops with ReplyTooLarge past `max_bytes` of content. Only gzip
and deflate are asked for; a reply in another encoding is refused rather than inflated unbounded.

Imported on the first request (it imports openai)."""

from __future__ import annotations

import functools
import ssl
import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import openai

ACCEPT_ENCODING = "gzip, deflate"
_PIECE = 256 * 1024  # most bytes one inflate step may produce


class ReplyTooLarge(Exception):
    """The reply's content went past the limit; `limit` is that limit in bytes."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the reply is larger than {limit} bytes")
        self.limit = limit


class UnreadableEncoding(Exception):
    """The reply's content encoding is one tabpilot did not ask for, or its bytes do not inflate."""

    def __init__(self, encoding: str, problem: str = "tabpilot asked for gzip or deflate only") -> None:
        super().__init__(f"the reply is compressed as {encoding!r}, and {problem}")
        self.encoding = encoding


class _Inflater:
    def __init__(self, encoding: str) -> None:
        self._encoding = encoding
        self._deflate_raw_fallback = encoding == "deflate"
        wbits = zlib.MAX_WBITS | 16 if encoding == "gzip" else zlib.MAX_WBITS
        self._zlib = zlib.decompressobj(wbits)

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The inflated bytes of `data`, lazily, in pieces of at most _PIECE bytes."""
        try:
            piece = self._zlib.decompress(data, _PIECE)
        except zlib.error as exc:
            if not self._deflate_raw_fallback:
                raise UnreadableEncoding(self._encoding, f"it is not valid {self._encoding} ({exc})") from None
            self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)  # "deflate" without its zlib header, as some send
            self._deflate_raw_fallback = False
            yield from self.feed(data)
            return
        self._deflate_raw_fallback = False
        while piece:
            yield piece
            piece = self._zlib.decompress(self._zlib.unconsumed_tail, _PIECE)


class _BoundedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, encodings: list[str], limit: int) -> None:
        self._inner = inner
        self._inflaters = [_Inflater(encoding) for encoding in reversed(encodings)]  # undo the last one first
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        total = 0
        async for chunk in self._inner:
            pieces: Iterator[bytes] = iter((chunk,))
            for inflater in self._inflaters:
                pieces = _through(inflater, pieces)
            for piece in pieces:
                total += len(piece)
                if total > self._limit:
                    raise ReplyTooLarge(self._limit)
                yield piece

    async def aclose(self) -> None:
        await self._inner.aclose()


def _through(inflater: _Inflater, pieces: Iterator[bytes]) -> Iterator[bytes]:
    for piece in pieces:
        yield from inflater.feed(piece)


def _bound_response(limit: int) -> Any:
    async def hook(response: httpx2.Response) -> None:
        values = response.headers.get_list("content-encoding", split_commas=True)
        encodings = [value.strip().lower() for value in values if value.strip().lower() not in ("", "identity")]
        unknown = [encoding for encoding in encodings if encoding not in ("gzip", "deflate")]
        if unknown:
            raise UnreadableEncoding(unknown[0])
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        response.stream = _BoundedStream(response.stream, encodings, limit)
        # httpx must not inflate again, nor trust a length that described the compressed bytes
        for name in ("content-encoding", "content-length"):
            if name in response.headers:
                del response.headers[name]

    return hook


@functools.cache
def _tls(trust_env: bool) -> ssl.SSLContext:
    """The TLS settings every model client of this process shares (with `trust_env`, SSL_CERT_FILE / SSL_CERT_DIR
    as httpx reads them): making them loads the CA bundle, 20 ms of the event loop at each task's first call."""
    return httpx2.create_ssl_context(trust_env=trust_env)


def prepare() -> None:
    """Make the shared TLS settings ahead of the first model call (the host's warm-up, in a thread of its own)."""
    _tls(True)
    _tls(False)


def bounded_client(max_bytes: int, *, trust_env: bool) -> openai.DefaultAsyncHttpxClient:
    """openai's default HTTP client, reading at most `max_bytes` of any reply's content."""
    return openai.DefaultAsyncHttpxClient(
        trust_env=trust_env,
        verify=_tls(trust_env),
        headers={"Accept-Encoding": ACCEPT_ENCODING},
        event_hooks={"response": [_bound_response(max_bytes)]},
    )
