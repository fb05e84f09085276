"""Images and the model, browser-free: the client drops image messages once an endpoint refuses them
(the scripted server over real HTTP), which models take images by name, what remembers an endpoint's
answer, and OpenAI's image token formula."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_support import MESSAGES, TOOL, ClickAction, config, parse, step

from tabpilot.llm import LLMClient, LLMError
from tabpilot.llm.scripted import HTTPError, ScriptedLLMServer, ToolCall
from tabpilot.llm.vision import known_multimodal, openai_image_tokens, remember, remembered, wants_images

CLICK_5 = step({"click_element_by_index": {"index": 5}})
IMAGE = {"role": "user", "content": [{"type": "text", "text": "Screenshot:"},
                                     {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/"}}]}
REFUSAL = "Invalid content: image_url is only supported by certain models; this model does not support images."


async def test_a_refused_image_is_dropped_and_the_call_goes_on_without_it() -> None:
    replies = [HTTPError(400, REFUSAL, type="invalid_request_error"), ToolCall("AgentOutput", CLICK_5),
               ToolCall("AgentOutput", CLICK_5)]
    with ScriptedLLMServer(replies) as server:
        async with LLMClient(config(server)) as client:
            result = await client.invoke([*MESSAGES, IMAGE], TOOL, parse=parse)
            assert isinstance(result.value.action, ClickAction) and client.images_refused
            await client.invoke([*MESSAGES, IMAGE], TOOL, parse=parse)  # later calls: none sent at all
    first, again, later = server.requests
    assert first["messages"] == [*MESSAGES, IMAGE]
    assert again["messages"] == later["messages"] == MESSAGES
    assert result.raw_request["messages"] == MESSAGES  # the request that worked


async def test_a_400_about_images_without_images_sent_or_another_400_stays_an_error() -> None:
    with ScriptedLLMServer([HTTPError(400, REFUSAL)]) as server:
        async with LLMClient(config(server)) as client:
            with pytest.raises(LLMError, match="does not support images"):
                await client.invoke(MESSAGES, TOOL, parse=parse)
            assert not client.images_refused
    with ScriptedLLMServer([HTTPError(400, "temperature must be below 2")]) as server:
        async with LLMClient(config(server)) as client:
            with pytest.raises(LLMError, match="temperature"):
                await client.invoke([*MESSAGES, IMAGE], TOOL, parse=parse)
            assert not client.images_refused and len(server.requests) == 1


def test_models_known_to_take_images_by_name() -> None:
    for model in ("gpt-4o", "gpt-4o-mini", "gpt-4.1-mini", "gpt-5", "o3", "o4-mini", "claude-3-5-sonnet-latest",
                  "gemini-2.0-flash", "qwen2.5-vl-7b-instruct", "llava:13b", "llama3.2-vision", "pixtral-12b"):
        assert known_multimodal(model), model
    for model in ("gpt-3.5-turbo", "o3-mini", "o1-mini", "deepseek-chat", "llama3.1:8b", "qwen2.5:7b", "scripted",
                  "gpt-4o-audio-preview"):
        assert not known_multimodal(model), model


def test_an_endpoints_answer_is_remembered_and_decides_auto(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABPILOT_HOME", str(tmp_path))
    url = "http://127.0.0.1:11434/v1"
    assert remembered(url, "my-model") is None
    assert not wants_images("auto", url, "my-model") and wants_images("auto", url, "gpt-4o")
    assert wants_images("on", url, "my-model") and not wants_images("off", url, "gpt-4o")
    remember(url + "/", "my-model", accepted=True)  # the same endpoint, written another way
    remember(url, "gpt-4o", accepted=False)
    assert wants_images("auto", url, "my-model") and not wants_images("auto", url, "gpt-4o")
    assert remembered(url, "other") is None
    assert (tmp_path / "data" / "vision.json").stat().st_mode & 0o077 == 0  # owner-only, like the settings
    (tmp_path / "data" / "vision.json").write_text("not json")
    assert remembered(url, "my-model") is None  # a damaged file is forgotten, not fatal


def test_openai_image_tokens_follow_the_published_examples() -> None:
    assert openai_image_tokens(1024, 1024) == 765  # OpenAI's own examples
    assert openai_image_tokens(2048, 4096) == 1105
    assert openai_image_tokens(4096, 8192, "low") == 85
    assert openai_image_tokens(1024, 570) == 765  # tabpilot's screenshot of a 1280×712 viewport
    assert openai_image_tokens(1280, 712) == 1105
