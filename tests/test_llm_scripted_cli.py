"""`python -m tabpilot.llm.scripted`: the scripted model server started by hand, as a new user starts it, and asked
over real HTTP by the real client."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tabpilot.llm import LLMClient, LLMConfig, ToolSpec
from tabpilot.llm.replay import Recorder


def serve(*args: str) -> tuple[subprocess.Popen[str], str]:
    """The server running with `args`, and the base URL it printed."""
    server = subprocess.Popen([sys.executable, "-m", "tabpilot.llm.scripted", *args], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    assert server.stdout is not None
    said = server.stdout.readline()  # (blocks until it prints: the line comes once it listens)
    assert "base URL: " in said, (said, server.stderr.read() if server.poll() is not None else "")
    return server, said.split("base URL: ")[1].strip()


def stop(server: subprocess.Popen[str]) -> str:
    server.send_signal(signal.SIGTERM)
    _, errors = server.communicate(timeout=30)
    assert server.returncode == 0, errors
    return errors


def post(base_url: str, body: dict[str, object]) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(f"{base_url}/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", "Authorization": "Bearer any"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_help_says_how_to_start_it() -> None:
    result = subprocess.run([sys.executable, "-m", "tabpilot.llm.scripted", "--help"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    words = " ".join(result.stdout.split())
    assert words.startswith("usage: python -m tabpilot.llm.scripted"), words
    assert "--port PORT" in words and "a JSON list of replies" in words, words


async def test_a_script_file_is_served_in_order_over_http(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool": "reply", "arguments": {"answer": "Osaka"}},
        {"text": "Just words."},
        {"error": 429, "message": "slow down"},
    ]), encoding="utf-8")
    port = free_port()
    server, base_url = serve(str(script), "--port", str(port), "--model", "hand-made")
    try:
        assert base_url == f"http://127.0.0.1:{port}/v1"
        client = LLMClient(LLMConfig(base_url=base_url, model="hand-made", api_key="any", max_retries=0))
        tool = ToolSpec(name="reply", description="answer", parameters={
            "type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]})
        result = await client.invoke([{"role": "user", "content": "Where?"}], tool, parse=dict)
        assert result.arguments == {"answer": "Osaka"}
        status, reply = post(base_url, {"model": "hand-made", "messages": []})
        assert (status, reply["choices"][0]["message"]["content"]) == (200, "Just words."), reply
        status, reply = post(base_url, {"model": "hand-made", "messages": []})
        assert (status, reply["error"]["message"]) == (429, "slow down"), reply
        status, reply = post(base_url, {"model": "hand-made", "messages": []})
        assert (status, reply["error"]["code"]) == (400, "script_exhausted"), reply
    finally:
        told = stop(server)
    assert "Served 4 requests." in told


def test_a_recording_is_a_script_too(tmp_path: Path) -> None:
    recording = Recorder(tmp_path / "run.json", model="m")
    recording.replies.append({"tool": "AgentOutput", "arguments": {"next_goal": "look"}})
    recording.save()
    server, base_url = serve(str(recording.path))
    try:
        status, reply = post(base_url, {"model": "m", "messages": []})
        call = reply["choices"][0]["message"]["tool_calls"][0]["function"]  # type: ignore[index]
        assert (status, call["name"], json.loads(call["arguments"])) == (200, "AgentOutput", {"next_goal": "look"})
    finally:
        stop(server)


@pytest.mark.parametrize(("content", "complaint"), [
    (None, "no such recording file"),
    ("[{\"tool\": 1}", "not JSON"),
    ("\"hello\"", "a script is a JSON list of replies"),
    ("[{\"text\": \"fine\"}, {\"arguments\": {}}]", 'reply 2 needs "tool" (a string) and "arguments"'),
])
def test_a_bad_script_gets_a_clear_error(tmp_path: Path, content: str | None, complaint: str) -> None:
    script = tmp_path / "script.json"
    if content is not None:
        script.write_text(content, encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "tabpilot.llm.scripted", str(script)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2, result
    assert complaint in result.stderr and "Traceback" not in result.stderr, result.stderr
