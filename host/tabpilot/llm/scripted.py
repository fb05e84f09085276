"""A scripted OpenAI-compatible server on 127.0.0.1: the one stand-in in the test suite, and the
"model" `tabpilot demo` and `run --replay` play back.

It is a real HTTP server (stdlib, one thread per connection), so the real client talks to it over
HTTP exactly as to a provider. Each `POST /v1/chat/completions` (or `/chat/completions`) consumes the
next reply of the script:

    ToolCall(name, arguments)        a tool call; arguments a dict, or a raw string sent as is
    Text(content)                    a plain assistant message (no tool call)
    HTTPError(status, message, ...)  an error status with OpenAI's error JSON, optional Retry-After
    Delay(seconds, then=None)        wait (to provoke a timeout or a stop), then serve `then`;
                                     with `then=None` the connection is closed without a reply
    Garbage(body)                    a 200 whose body is not a chat completion
    Endless(gzip=False)              a 200 whose body never ends (or a gzip bomb)
    Cut(body, length, reset=False)   a reply closed (or reset) part way through its body
    a callable(request_body) -> one of the above, to compute the answer from the request

When the script runs out, the server answers 400 "script exhausted" so a test fails clearly.
`server.requests` holds every request body received (parsed JSON), `server.headers` their headers (names lower-cased),
`server.dropped` the indexes of requests whose client hung up during a Delay. `GET /v1/models` lists
one model, "scripted".

    with ScriptedLLMServer([ToolCall("AgentOutput", {...})]) as server:
        LLMConfig(base_url=server.base_url, model="scripted", api_key="test")

By hand: `python -m tabpilot.llm.scripted SCRIPT [--port N]` (scripted_cli.py; `--help` says more).
"""

from __future__ import annotations

import http.server
import json
import select
import socket
import struct
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] | str
    usage: dict[str, Any] | None = None  # OpenAI's usage object; estimated from the sizes when None
    finish_reason: str = "tool_calls"


@dataclass
class Text:
    content: str
    usage: dict[str, Any] | None = None
    finish_reason: str = "stop"


@dataclass
class HTTPError:
    status: int
    message: str = "scripted error"
    retry_after: str | float | None = None
    code: str | None = None
    type: str = "server_error"
    body: bytes | str | None = None  # replaces the OpenAI-style error JSON when given


@dataclass
class Delay:
    seconds: float
    then: Reply | None = None


@dataclass
class Endless:
    """A 200 whose body never ends (until the client hangs up): `gzip` sends it as a gzip bomb, each
    piece megabytes of zeros squeezed into about a kilobyte."""

    gzip: bool = False
    status: int = 200


@dataclass
class Cut:
    """A reply that stops part way: `body` (of a claimed `length`), then the connection is closed, or
    reset (`reset`: TCP RST, as a crashing proxy does)."""

    body: bytes = b'{"id": "chatcmpl-cut", "choices": ['
    length: int = 4096
    reset: bool = False


@dataclass
class Garbage:
    body: bytes | str = b"<html><body>502 Bad Gateway</body></html>"
    status: int = 200
    content_type: str = "application/json"


Reply = ToolCall | Text | HTTPError | Delay | Garbage | Endless | Cut | Callable[[dict[str, Any]], Any]


@dataclass
class _State:
    replies: list[Any]
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)


class ScriptedLLMServer:
    def __init__(self, replies: Iterable[Reply], model: str = "scripted") -> None:
        self._state = _State(list(replies))
        self.model = model
        self._server: http.server.ThreadingHTTPServer | None = None
        self._port: int | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def from_recording(cls, path: str | Path) -> ScriptedLLMServer:
        from .replay import load_recording

        return cls(load_recording(path))

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self._state.requests

    @property
    def headers(self) -> list[dict[str, str]]:
        return self._state.headers

    @property
    def dropped(self) -> list[int]:
        return self._state.dropped

    @property
    def remaining(self) -> int:
        return len(self._state.replies)

    def add(self, *replies: Reply) -> None:
        with self._state.lock:
            self._state.replies.extend(replies)

    def take_unasked(self) -> list[Reply]:
        """The replies no request has taken yet, removed: a server shared by several tests starts each clean."""
        with self._state.lock:
            unasked = list(self._state.replies)
            self._state.replies.clear()
        return unasked

    @property
    def port(self) -> int:
        """The port it listens on (or listened on, once closed)."""
        if self._port is None:
            raise RuntimeError("the scripted server was never started; use `with ScriptedLLMServer(...)` or start()")
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, port: int = 0) -> ScriptedLLMServer:
        self._state.stopping.clear()
        handler = type("Handler", (_Handler,), {"state": self._state, "model": self.model})
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._server.daemon_threads = True
        self._port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="scripted-llm",
                                        daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._state.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> ScriptedLLMServer:
        return self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()


class _Handler(http.server.BaseHTTPRequestHandler):
    state: _State
    model: str
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            model = {"id": self.model, "object": "model", "created": 0, "owned_by": "tabpilot-scripted"}
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_json(404, _error_body(f"no route GET {self.path}", "not_found", "invalid_request_error"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.split("?")[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send_json(404, _error_body(f"no route POST {self.path}", "not_found", "invalid_request_error"))
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._send_json(400, _error_body("request body is not JSON", None, "invalid_request_error"))
            return
        with self.state.lock:
            index = len(self.state.requests)
            self.state.requests.append(body)
            self.state.headers.append({name.lower(): value for name, value in self.headers.items()})
            reply = self.state.replies.pop(0) if self.state.replies else None
        if reply is None:
            message = f"scripted server: script exhausted after {index} replies"
            self._send_json(400, _error_body(message, "script_exhausted", "invalid_request_error"))
            return
        self._serve(reply, body, index)

    def _serve(self, reply: Any, body: dict[str, Any], index: int) -> None:
        if callable(reply) and not isinstance(reply, (ToolCall, Text, HTTPError, Delay, Garbage, Endless, Cut)):
            try:
                reply = reply(body)
            except Exception as exc:  # a broken test script: say so instead of hanging up
                message = f"scripted server: the reply function raised {type(exc).__name__}: {exc}"
                self._send_json(400, _error_body(message, "script_error", "invalid_request_error"))
                return
        if isinstance(reply, Delay):
            if not self._wait(reply.seconds):
                with self.state.lock:
                    self.state.dropped.append(index)
                self.close_connection = True
                return
            if reply.then is None:
                self.close_connection = True
                return
            self._serve(reply.then, body, index)
        elif isinstance(reply, ToolCall):
            arguments = reply.arguments if isinstance(reply.arguments, str) else json.dumps(reply.arguments)
            call = {"id": f"call_{index}", "type": "function", "function": {"name": reply.name, "arguments": arguments}}
            calling = {"role": "assistant", "content": None, "tool_calls": [call]}
            self._send_json(200, _completion(index, body, calling, reply.finish_reason, reply.usage, arguments))
        elif isinstance(reply, Text):
            saying = {"role": "assistant", "content": reply.content}
            self._send_json(200, _completion(index, body, saying, reply.finish_reason, reply.usage, reply.content))
        elif isinstance(reply, HTTPError):
            headers = {} if reply.retry_after is None else {"Retry-After": str(reply.retry_after)}
            if reply.body is not None:
                data = reply.body.encode() if isinstance(reply.body, str) else reply.body
                self._send_bytes(reply.status, data, "application/json", headers)
            else:
                self._send_json(reply.status, _error_body(reply.message, reply.code, reply.type), headers)
        elif isinstance(reply, Garbage):
            data = reply.body.encode() if isinstance(reply.body, str) else reply.body
            self._send_bytes(reply.status, data, reply.content_type)
        elif isinstance(reply, Endless):
            self._send_endless(reply)
        elif isinstance(reply, Cut):
            self._send_cut(reply)
        else:
            raise TypeError(f"scripted server: not a reply: {reply!r}")

    def _wait(self, seconds: float) -> bool:
        """Sleep `seconds`, watching the socket; False as soon as the client hangs up."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self.state.stopping.is_set():
                return False
            readable, _, _ = select.select([self.connection], [], [], min(left, 0.05))
            if readable:
                try:
                    if self.connection.recv(1, socket.MSG_PEEK) == b"":
                        return False
                except OSError:
                    return False
                time.sleep(min(left, 0.05))  # data from a client that did not wait: keep the delay
        return True

    def _send_endless(self, reply: Endless) -> None:
        self.close_connection = True
        if reply.gzip:
            squeezer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
            zeros = bytes(4 * 1024 * 1024)
            piece = squeezer.compress(zeros) + squeezer.flush(zlib.Z_SYNC_FLUSH)
            first = piece
            piece = squeezer.compress(zeros) + squeezer.flush(zlib.Z_SYNC_FLUSH)  # no gzip header again
        else:
            first = piece = b'{"choices": [{"message": {"content": "' + b"x" * 65536
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            if reply.gzip:
                self.send_header("Content-Encoding", "gzip")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(first)
            while not self.state.stopping.is_set():
                self.wfile.write(piece)
        except OSError:
            pass  # the client hung up: what it should do

    def _send_cut(self, reply: Cut) -> None:
        self.close_connection = True
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(reply.length))
            self.end_headers()
            self.wfile.write(reply.body)
            self.wfile.flush()
            time.sleep(0.05)
            if reply.reset:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
        except OSError:
            pass

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(payload).encode(), "application/json", headers)

    def _send_bytes(self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            self.close_connection = True  # the client went away; nothing to tell it


def _error_body(message: str, code: str | None, type_: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def _completion(index: int, request: dict[str, Any], message: dict[str, Any], finish_reason: str,
                usage: dict[str, Any] | None, output: str) -> dict[str, Any]:
    if usage is None:
        prompt_tokens = max(1, len(json.dumps(request.get("messages", []))) // 4)
        completion_tokens = max(1, len(output) // 4)
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                 "total_tokens": prompt_tokens + completion_tokens}
    return {
        "id": f"chatcmpl-scripted-{index}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model") or "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
        "usage": usage,
    }


def request_text(body: dict[str, Any]) -> str:
    """A recorded request as one text, in the order a provider reads it for its prompt cache: the tool
    schema, then each message (role and content; an image part as a placeholder). Two requests share a
    cacheable prefix as far as their texts agree."""
    parts = [json.dumps(body.get("tools", []), ensure_ascii=False, sort_keys=False)]
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") if part.get("type") == "text" else f"[{part.get('type')}]"
                              for part in content if isinstance(part, dict))
        parts.append(f"<|{message.get('role')}|>{content or ''}")
    return "\n".join(parts)


if __name__ == "__main__":
    # Run as a script this file is `__main__`, not tabpilot.llm.scripted: the command line takes the server from
    # there, so the replies it reads and the server that tests their kinds share one set of classes.
    from tabpilot.llm.scripted_cli import main

    sys.exit(main())
