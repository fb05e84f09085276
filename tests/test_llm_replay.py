"""Record a run's model replies, then replay them through the scripted server and the real client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llm_support import API_KEY, MESSAGES, TOOL, config, parse, step

from tabpilot.llm import LLMClient
from tabpilot.llm.replay import FORMAT, VERSION, Recorder, RecordingError, load_recording
from tabpilot.llm.scripted import ScriptedLLMServer, Text, ToolCall

USAGE = {"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940,
         "prompt_tokens_details": {"cached_tokens": 512}}
CLICK = step({"click_element_by_index": {"index": 3}})
DONE = step({"done": {"text": "submitted", "success": True}}, goal="finish")


async def record_run(path: Path) -> Recorder:
    replies = [ToolCall("AgentOutput", CLICK, usage=USAGE),
               Text(f"```json\n{json.dumps(DONE)}\n```")]  # repaired before it is recorded
    recorder = Recorder(path, model="scripted", task="submit the form")
    with ScriptedLLMServer(replies) as server:
        async with LLMClient(config(server)) as client:
            recorder.record(await client.invoke(MESSAGES, TOOL, parse=parse))
            assert load_recording(path)[0].arguments == CLICK  # on disk after every reply
            recorder.record(await client.invoke(MESSAGES, TOOL, parse=parse))
    return recorder


async def test_recording_file_format(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "form.json"
    await record_run(path)
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["format"] == FORMAT and document["version"] == VERSION == 1
    assert document["model"] == "scripted" and document["task"] == "submit the form"
    first, second = document["replies"]
    assert first == {"tool": "AgentOutput", "arguments": CLICK, "usage": USAGE}
    assert second["arguments"] == DONE and second["usage"]["total_tokens"] > 0
    assert API_KEY not in path.read_text(encoding="utf-8")
    assert "You drive a browser" not in path.read_text(encoding="utf-8")  # prompts are not stored
    assert list(path.parent.iterdir()) == [path]  # no temporary files left behind


async def test_replay_goes_through_the_real_client_over_http(tmp_path: Path) -> None:
    path = tmp_path / "form.json"
    await record_run(path)
    with ScriptedLLMServer.from_recording(path) as server:
        async with LLMClient(config(server)) as client:
            first = await client.invoke(MESSAGES, TOOL, parse=parse)
            second = await client.invoke(MESSAGES, TOOL, parse=parse)
    assert first.arguments == CLICK and second.arguments == DONE
    assert second.value.action.done.text == "submitted"
    assert first.usage.to_wire() == {"promptTokens": 900, "completionTokens": 40, "totalTokens": 940,
                                     "cachedTokens": 512}
    assert len(server.requests) == 2 and server.remaining == 0


def write(path: Path, document: object) -> Path:
    path.write_text(json.dumps(document) if not isinstance(document, str) else document, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("document", "complaint"),
    [
        ("{not json", "not JSON"),
        ({"replies": []}, 'expected "format": "tabpilot-recording"'),
        ({"format": FORMAT, "version": 99, "replies": []}, "version 99 is not supported"),
        ({"format": FORMAT, "version": 1, "replies": {}}, '"replies" must be a list'),
        ({"format": FORMAT, "version": 1, "replies": [{"arguments": {}}]}, 'reply 1 needs "tool"'),
        ({"format": FORMAT, "version": 1, "replies": [{"tool": "AgentOutput", "arguments": 5}]},
         '"arguments" must be an object'),
    ],
    ids=["not-json", "no-format", "future-version", "replies-not-list", "reply-without-tool", "bad-arguments"],
)
def test_bad_recording_files_get_clear_errors(tmp_path: Path, document: object, complaint: str) -> None:
    path = write(tmp_path / "bad.json", document)
    with pytest.raises(RecordingError) as caught:
        load_recording(path)
    assert complaint in str(caught.value) and str(path) in str(caught.value)


def test_missing_recording_file(tmp_path: Path) -> None:
    with pytest.raises(RecordingError, match="no such recording file"):
        ScriptedLLMServer.from_recording(tmp_path / "nope.json")


async def test_recorder_as_the_clients_result_hook(tmp_path: Path) -> None:
    path = tmp_path / "hooked.json"
    recorder = Recorder(path)
    with ScriptedLLMServer([ToolCall("AgentOutput", CLICK), ToolCall("AgentOutput", DONE)]) as server:
        async with LLMClient(config(server), on_result=recorder.record) as client:
            await client.invoke(MESSAGES, TOOL, parse=parse)
            await client.invoke(MESSAGES, TOOL, parse=parse)
    assert [call.arguments for call in load_recording(path)] == [CLICK, DONE]
