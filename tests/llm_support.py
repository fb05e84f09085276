"""Shared by the tests/test_llm*.py modules: a small AgentOutput-shaped tool built the way the agent
builds its own (pydantic models, a key-tagged action union), and a client config for a scripted server."""

from __future__ import annotations

import contextlib
import http.server
import threading
import time
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict

from tabpilot.llm import LLMConfig, ToolSpec
from tabpilot.llm.scripted import ScriptedLLMServer

API_KEY = "sk-test-0123456789abcdef-SECRET"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ClickInput(_Strict):
    index: int


class DoneInput(_Strict):
    text: str
    success: bool = True


class ClickAction(_Strict):
    click_element_by_index: ClickInput


class DoneAction(_Strict):
    done: DoneInput


class Output(_Strict):
    evaluation_previous_goal: str
    memory: str
    next_goal: str
    action: ClickAction | DoneAction


TOOL = ToolSpec("AgentOutput", "Your reflection, then exactly one action.", Output.model_json_schema())
MESSAGES = [{"role": "system", "content": "You drive a browser."}, {"role": "user", "content": "Click OK."}]


def parse(arguments: Any) -> Output:
    return Output.model_validate(arguments)


def step(action: dict[str, Any], goal: str = "click OK") -> dict[str, Any]:
    return {"evaluation_previous_goal": "start", "memory": "", "next_goal": goal, "action": action}


def config(server: ScriptedLLMServer, **overrides: Any) -> LLMConfig:
    values: dict[str, Any] = {"base_url": server.base_url, "model": "scripted", "api_key": API_KEY,
                              "backoff_base": 0.01, "timeout": 10.0}
    values.update(overrides)
    return LLMConfig(**values)


@contextlib.contextmanager
def web_server(requests: list[str] | None = None) -> Iterator[str]:
    """Python's own http.server on 127.0.0.1 (a web server where a model API should be), quiet: its address.
    `requests` collects the method of each request it refused (POST: 501)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            if requests is not None:
                requests.append(self.command)
            super().send_error(code, message, explain)

        def log_message(self, *args: object) -> None:
            pass

    with _serving(Quiet) as address:
        yield address


@contextlib.contextmanager
def slow_file(seconds: float, body: bytes, content_type: str, name: str) -> Iterator[str]:
    """`body` served at /`name` `seconds` after each request, by a server of its own on 127.0.0.1: its URL."""

    class Slow(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            time.sleep(seconds)
            _answer(self, body, content_type)

        def log_message(self, format: str, *args: object) -> None:
            pass

    with _serving(Slow) as address:
        yield f"{address}/{name}"


@contextlib.contextmanager
def held_pages() -> Iterator[tuple[str, threading.Event, threading.Event]]:
    """A site of its own on 127.0.0.1 whose pages come only once the test opens the gate (set; cleared, it holds the
    next ones again): (its address, `asked`: set at its first request, the gate). A page's title is the last part of
    its path, capitalised, without its extension ("/shop/checkout?step=2" → "Checkout")."""
    asked, gate = threading.Event(), threading.Event()

    class Held(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.set()
            gate.wait(60)
            name = self.path.split("?")[0].split("#")[0].rstrip("/").rsplit("/", 1)[-1].split(".")[0].capitalize()
            page = f"<!doctype html><title>{name}</title><p>{name} page</p>"
            _answer(self, page.encode(), "text/html; charset=utf-8")

        def log_message(self, format: str, *args: object) -> None:
            pass

    with _serving(Held) as address:
        try:
            yield address, asked, gate
        finally:
            gate.set()  # a request still held ends, so the server can shut down


def _answer(handler: http.server.BaseHTTPRequestHandler, body: bytes, content_type: str) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@contextlib.contextmanager
def _serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """`handler` serving on 127.0.0.1 from a thread of its own, until the block ends: its address."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
