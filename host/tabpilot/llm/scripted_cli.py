"""`python -m tabpilot.llm.scripted SCRIPT [--port N] [--model NAME]`: the scripted OpenAI-compatible server,
started by hand, to point tabpilot (or any OpenAI client) at a model that answers what a file says.

SCRIPT is a JSON list of replies, served one per chat completion in order:

    {"tool": "AgentOutput", "arguments": {...}, "usage": {...}}   a tool call (usage optional)
    {"text": "..."}                                                a plain assistant message
    {"error": 429, "message": "...", "retry_after": 2}             an error status (message, retry_after optional)

or a recording `tabpilot run --record` saved. It prints the base URL to use, then serves on 127.0.0.1 until
interrupted; once the script runs out every request gets 400 "script exhausted"."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from .replay import RecordingError, read_json, recording_replies, tool_call
from .scripted import HTTPError, Reply, ScriptedLLMServer, Text


def load_script(path: Path) -> list[Reply]:
    document = read_json(path)
    if isinstance(document, dict):
        return list(recording_replies(path, document))
    if not isinstance(document, list):
        raise RecordingError("recording.script", path=path)
    return [_reply(path, number, item) for number, item in enumerate(document, 1)]


def _reply(path: Path, number: int, item: Any) -> Reply:
    if isinstance(item, dict) and isinstance(item.get("text"), str):
        return Text(item["text"])
    if isinstance(item, dict) and isinstance(item.get("error"), int) and not isinstance(item["error"], bool):
        return HTTPError(item["error"], str(item.get("message", "scripted error")), item.get("retry_after"))
    return tool_call(path, number, item)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tabpilot.llm.scripted",
        description="Serve a scripted OpenAI-compatible model on 127.0.0.1: each chat completion gets the next "
                    "reply of SCRIPT. No AI, no API key (any key is accepted).")
    parser.add_argument("script", type=Path, help='a JSON list of replies ({"tool", "arguments"} | {"text"} | '
                                                  '{"error": status, "message"}), or a tabpilot recording')
    parser.add_argument("--port", type=int, default=0, help="the port to listen on (default: a free one)")
    parser.add_argument("--model", default="scripted", help="the model name GET /v1/models lists (default: scripted)")
    options = parser.parse_args(argv)
    if not 0 <= options.port <= 65535:
        parser.error(f"--port {options.port}: a port is 0 to 65535")
    try:
        replies = load_script(options.script)
    except RecordingError as exc:
        parser.error(str(exc))
    server = ScriptedLLMServer(replies, model=options.model)
    try:
        server.start(port=options.port)
    except OSError as exc:
        parser.error(f"cannot listen on 127.0.0.1:{options.port}: {exc.strerror or exc}")
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    print(f"Scripted model {options.model!r} with {len(replies)} replies; base URL: {server.base_url}", flush=True)
    try:
        stopping.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    print(f"Served {len(server.requests)} requests.", file=sys.stderr)
    return 0
