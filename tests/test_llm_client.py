"""LLMClient against the scripted OpenAI-compatible server, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request

import pytest
from llm_support import API_KEY, MESSAGES, TOOL, ClickAction, DoneAction, config, parse, step, web_server

from tabpilot.llm import (
    LLMAuthError,
    LLMClient,
    LLMConfig,
    LLMContentFiltered,
    LLMContextTooLong,
    LLMError,
    LLMNotConfigured,
    LLMQuotaExceeded,
    LLMRetriesExhausted,
    RetryInfo,
)
from tabpilot.llm.scripted import Delay, Garbage, HTTPError, ScriptedLLMServer, Text, ToolCall

CLICK_5 = step({"click_element_by_index": {"index": 5}})
FORCED = {"type": "function", "function": {"name": "AgentOutput"}}


async def eventually(predicate, seconds: float = 2.0) -> bool:
    for _ in range(int(seconds / 0.02)):
        if predicate():
            return True
        await asyncio.sleep(0.02)
    return predicate()


async def fails_at_once(reply, error: type[Exception], match: str | None = None, **overrides):
    """Serve one reply that must fail the call with `error` after exactly one request."""
    server = ScriptedLLMServer([reply, ToolCall("AgentOutput", CLICK_5)])
    with server, pytest.raises(error, match=match) as caught:
        await invoke(server, **overrides)
    assert len(server.requests) == 1
    return server, caught


async def invoke(server: ScriptedLLMServer, retries: list[RetryInfo] | None = None, **overrides):
    async with LLMClient(config(server, **overrides)) as client:
        return await client.invoke(MESSAGES, TOOL, parse=parse,
                                   on_retry=retries.append if retries is not None else None)


async def test_success_returns_parsed_value_usage_and_raw_exchange() -> None:
    usage = {"prompt_tokens": 1200, "completion_tokens": 80, "total_tokens": 1280,
             "prompt_tokens_details": {"cached_tokens": 1024}, "completion_tokens_details": {"reasoning_tokens": 16}}
    with ScriptedLLMServer([ToolCall("AgentOutput", CLICK_5, usage=usage)]) as server:
        result = await invoke(server)
    assert isinstance(result.value.action, ClickAction)
    assert result.value.action.click_element_by_index.index == 5
    assert result.usage.to_wire() == {"promptTokens": 1200, "completionTokens": 80, "totalTokens": 1280,
                                      "cachedTokens": 1024, "reasoningTokens": 16}
    assert result.raw_request["messages"] == MESSAGES
    assert result.raw_response["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "AgentOutput"
    assert result.arguments == CLICK_5 and result.repairs == []


async def test_usage_without_details_omits_optional_wire_keys() -> None:
    with ScriptedLLMServer([ToolCall("AgentOutput", CLICK_5)]) as server:
        result = await invoke(server)
    wire = result.usage.to_wire()
    assert set(wire) == {"promptTokens", "completionTokens", "totalTokens"}
    assert wire["promptTokens"] > 0 and wire["totalTokens"] == wire["promptTokens"] + wire["completionTokens"]


async def test_request_forces_the_named_tool_and_sends_messages_model_and_key() -> None:
    with ScriptedLLMServer([ToolCall("AgentOutput", CLICK_5)]) as server:
        await invoke(server, temperature=0.2)
    [request] = server.requests
    assert request["tool_choice"] == FORCED
    assert request["model"] == "scripted" and request["temperature"] == 0.2
    assert request["messages"] == MESSAGES
    assert request["parallel_tool_calls"] is False
    [tool] = request["tools"]
    assert tool["function"]["name"] == "AgentOutput" and tool["function"]["parameters"] == TOOL.parameters
    assert server.headers[0]["authorization"] == f"Bearer {API_KEY}"


async def test_rejected_forced_choice_falls_back_to_required_then_auto_and_remembers() -> None:
    rejected = "tool_choice with a named function is not supported by this model"
    replies = [HTTPError(400, rejected, type="invalid_request_error"), HTTPError(400, "tool_choice 'required' invalid"),
               ToolCall("AgentOutput", CLICK_5), ToolCall("AgentOutput", CLICK_5)]
    with ScriptedLLMServer(replies) as server:
        retries: list[RetryInfo] = []
        async with LLMClient(config(server)) as client:
            await client.invoke(MESSAGES, TOOL, parse=parse, on_retry=retries.append)
            await client.invoke(MESSAGES, TOOL, parse=parse)
    assert [r.get("tool_choice") for r in server.requests] == [FORCED, "required", "auto", "auto"]
    assert retries == []  # negotiating the tool choice is not a failed attempt


async def test_bad_request_not_about_tool_choice_fails_without_retry() -> None:
    reply = HTTPError(400, "messages[1].content must be a string", type="invalid_request_error")
    await fails_at_once(reply, LLMError, r"HTTP 400.*messages\[1\].content must be a string")


async def test_429_waits_for_retry_after_then_succeeds() -> None:
    retries: list[RetryInfo] = []
    with ScriptedLLMServer([HTTPError(429, "Rate limit reached", retry_after=1, code="rate_limit_exceeded"),
                            ToolCall("AgentOutput", CLICK_5)]) as server:
        started = time.monotonic()
        result = await invoke(server, retries)
        elapsed = time.monotonic() - started
    assert result.value.action.click_element_by_index.index == 5
    assert elapsed >= 1.0
    assert len(server.requests) == 2
    assert [(r.attempt, r.max_attempts) for r in retries] == [(1, 3)]
    assert "429" in retries[0].message and "Rate limit reached" in retries[0].message


async def test_500_then_success() -> None:
    retries: list[RetryInfo] = []
    with ScriptedLLMServer([HTTPError(500, "The server had an error"), ToolCall("AgentOutput", CLICK_5)]) as server:
        result = await invoke(server, retries)
    assert result.value.action.click_element_by_index.index == 5
    assert len(server.requests) == 2 and "500" in retries[0].message


async def test_timeout_then_success_and_the_server_saw_the_hang_up() -> None:
    retries: list[RetryInfo] = []
    with ScriptedLLMServer([Delay(5, then=ToolCall("AgentOutput", CLICK_5)), ToolCall("AgentOutput", CLICK_5)]
                           ) as server:
        started = time.monotonic()
        result = await invoke(server, retries, timeout=0.5)
        elapsed = time.monotonic() - started
        await eventually(lambda: server.dropped)
    assert result.value.action.click_element_by_index.index == 5
    assert elapsed < 4  # did not wait out the 5 s delay
    assert "timeout" in retries[0].message
    assert server.dropped == [0]


async def test_garbage_body_is_retried() -> None:
    retries: list[RetryInfo] = []
    with ScriptedLLMServer([Garbage(), ToolCall("AgentOutput", CLICK_5)]) as server:
        result = await invoke(server, retries)
    assert result.value.action.click_element_by_index.index == 5
    assert "an HTML page ('502 Bad Gateway'), not a chat completion" in retries[0].message


async def test_hang_up_without_reply_is_retried() -> None:
    retries: list[RetryInfo] = []
    with ScriptedLLMServer([Delay(0), ToolCall("AgentOutput", CLICK_5)]) as server:
        result = await invoke(server, retries)
    assert result.value.action.click_element_by_index.index == 5
    assert "closed the connection before its reply was complete (Server disconnected" in retries[0].message


async def test_html_error_page_is_one_short_line_in_the_cause() -> None:
    retries: list[RetryInfo] = []
    page = "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>" + "x" * 2000 + "</body></html>"
    with ScriptedLLMServer([HTTPError(502, body=page), ToolCall("AgentOutput", CLICK_5)]) as server:
        await invoke(server, retries)
    assert retries[0].message == "the endpoint answered 502 Bad Gateway (an HTML error page)"
    assert "\n" not in retries[0].message and len(retries[0].message) < 320


async def test_error_object_in_a_200_reply_is_retried() -> None:
    retries: list[RetryInfo] = []
    body = json.dumps({"error": {"message": "upstream model overloaded", "code": 503}})
    with ScriptedLLMServer([Garbage(body), ToolCall("AgentOutput", CLICK_5)]) as server:
        await invoke(server, retries)
    assert "upstream model overloaded" in retries[0].message


async def test_reply_without_tool_call_is_retried_with_a_nudge() -> None:
    retries: list[RetryInfo] = []
    with ScriptedLLMServer([Text("I will click the OK button now."), ToolCall("AgentOutput", CLICK_5)]) as server:
        result = await invoke(server, retries)
    assert result.value.action.click_element_by_index.index == 5
    assert "no call of the tool AgentOutput" in retries[0].message
    follow_up = server.requests[1]["messages"]
    assert follow_up[: len(MESSAGES)] == MESSAGES
    assert follow_up[-2] == {"role": "assistant", "content": "I will click the OK button now."}
    assert follow_up[-1]["role"] == "user" and "AgentOutput" in follow_up[-1]["content"]


async def test_invalid_arguments_go_back_to_the_model_in_one_short_line() -> None:
    bad = step({"click_element_by_index": {"index": "the OK button"}})
    retries: list[RetryInfo] = []
    with ScriptedLLMServer([ToolCall("AgentOutput", bad), ToolCall("AgentOutput", CLICK_5)]) as server:
        result = await invoke(server, retries)
    assert result.value.action.click_element_by_index.index == 5
    assistant, tool_reply = server.requests[1]["messages"][-2:]
    assert assistant["role"] == "assistant"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == bad
    assert tool_reply["role"] == "tool" and tool_reply["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert "action.ClickAction.click_element_by_index.index: Input should be a valid integer" in tool_reply["content"]
    assert "\n" not in tool_reply["content"] and "https://errors.pydantic.dev" not in tool_reply["content"]
    assert retries[0].message in tool_reply["content"]


async def test_callers_messages_are_not_changed_by_retries() -> None:
    messages = [dict(message) for message in MESSAGES]
    bad = step({"click_element_by_index": {"index": "first"}})
    with ScriptedLLMServer([ToolCall("AgentOutput", bad), ToolCall("AgentOutput", CLICK_5)]) as server:
        async with LLMClient(config(server)) as client:
            result = await client.invoke(messages, TOOL, parse=parse)
    assert messages == MESSAGES
    assert len(result.raw_request["messages"]) == len(MESSAGES) + 2  # the request that worked, feedback included


async def test_unknown_action_names_the_available_ones() -> None:
    retries: list[RetryInfo] = []
    with ScriptedLLMServer([ToolCall("AgentOutput", step({"press_enter": {}})),
                            ToolCall("AgentOutput", CLICK_5)]) as server:
        await invoke(server, retries)
    assert "unknown action 'press_enter'; available actions: click_element_by_index, done" in retries[0].message
    assert retries[0].message in server.requests[1]["messages"][-1]["content"]


async def test_retries_exhausted_names_the_last_cause() -> None:
    retries: list[RetryInfo] = []
    replies = [HTTPError(503, "The engine is currently overloaded")] * 3
    with ScriptedLLMServer(replies) as server, pytest.raises(LLMRetriesExhausted) as caught:
        await invoke(server, retries, max_retries=2)
    assert len(server.requests) == 3
    assert "The engine is currently overloaded" in str(caught.value) and "503" in str(caught.value)
    assert caught.value.attempts == 3
    assert caught.value.last_cause == "HTTP 503: The engine is currently overloaded"
    assert [(r.attempt, r.max_attempts) for r in retries] == [(1, 2), (2, 2)]


async def test_invalid_arguments_every_time_ends_with_the_validation_error_and_the_reply() -> None:
    bad = step({"click_element_by_index": {}})
    recorded = []
    with ScriptedLLMServer([ToolCall("AgentOutput", bad)] * 2) as server:
        async with LLMClient(config(server, max_retries=1), on_result=recorded.append) as client:
            with pytest.raises(LLMRetriesExhausted) as caught:
                await client.invoke(MESSAGES, TOOL, parse=parse)
    assert "click_element_by_index.index: Field required" in str(caught.value)
    assert caught.value.raw_response["choices"][0]["message"]["tool_calls"]
    assert recorded == []  # only successful replies reach the result hook


async def test_on_retry_may_be_async_and_gets_increasing_attempts() -> None:
    seen: list[int] = []

    async def on_retry(info: RetryInfo) -> None:
        await asyncio.sleep(0)
        seen.append(info.attempt)

    replies = [HTTPError(502, "bad gateway"), Garbage("{"), ToolCall("AgentOutput", CLICK_5)]
    with ScriptedLLMServer(replies) as server:
        async with LLMClient(config(server)) as client:
            await client.invoke(MESSAGES, TOOL, parse=parse, on_retry=on_retry)
    assert seen == [1, 2]


async def test_401_is_an_auth_error_after_exactly_one_request() -> None:
    # Some providers echo the key they got; it must not reach our message.
    with ScriptedLLMServer([HTTPError(401, f"Incorrect API key provided: {API_KEY}", code="invalid_api_key")]
                           ) as server, pytest.raises(LLMAuthError) as caught:
        await invoke(server)
    assert len(server.requests) == 1
    message = str(caught.value)
    assert "401" in message and "api-key" in message and "OPENAI_API_KEY" in message
    assert API_KEY not in message and API_KEY not in repr(caught.value)


async def test_403_is_an_auth_error_too() -> None:
    await fails_at_once(HTTPError(403, "Project does not have access to model"), LLMAuthError, "does not have access")


async def test_429_for_a_used_up_quota_fails_at_once_with_a_billing_message() -> None:
    quota = HTTPError(429, "You exceeded your current quota, please check your plan and billing details.",
                      code="insufficient_quota", type="insufficient_quota", retry_after=30)
    _, caught = await fails_at_once(quota, LLMQuotaExceeded, "no quota left")
    assert "billing" in str(caught.value) and "429" in str(caught.value)


async def test_a_closed_client_refuses_to_call_the_model() -> None:
    with ScriptedLLMServer([ToolCall("AgentOutput", CLICK_5)]) as server:
        client = LLMClient(config(server))
        await client.aclose()
        assert client.closed
        with pytest.raises(LLMError, match="closed"):
            await client.invoke(MESSAGES, TOOL, parse=parse)
    assert server.requests == []


async def test_context_length_error_is_not_retried() -> None:
    message = "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."
    reply = HTTPError(400, message, code="context_length_exceeded")
    await fails_at_once(reply, LLMContextTooLong, "maximum context length is 8192")


async def test_content_filter_finish_reason_is_not_retried() -> None:
    await fails_at_once(Text("", finish_reason="content_filter"), LLMContentFiltered, "content filter")


async def test_reply_cut_off_by_the_context_window_is_not_retried() -> None:
    await fails_at_once(Text('{"evaluation_previous_goal": "the page', finish_reason="length"), LLMContextTooLong,
                        "cut off")


async def test_content_filter_status_error_is_not_retried() -> None:
    azure = "The response was filtered due to the prompt triggering Azure OpenAI's content management policy."
    await fails_at_once(HTTPError(400, azure, code="content_filter"), LLMContentFiltered)


async def test_not_found_names_base_url_and_model() -> None:
    reply = HTTPError(404, "The model `gpt-9` does not exist", code="model_not_found")
    server, caught = await fails_at_once(reply, LLMError, model="gpt-9")
    assert server.base_url in str(caught.value) and "gpt-9" in str(caught.value)


async def test_unreachable_endpoint_is_retried_then_names_the_cause() -> None:
    server = ScriptedLLMServer([]).start()
    base_url = server.base_url
    server.close()  # nothing listens on that port any more
    client = LLMClient(LLMConfig(base_url=base_url, model="m", api_key=API_KEY, backoff_base=0.01, max_retries=1))
    with pytest.raises(LLMRetriesExhausted, match=r"could not reach http://127\.0\.0\.1"):
        await client.invoke(MESSAGES, TOOL, parse=parse)
    await client.aclose()


async def test_loopback_ignores_http_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    # A proxy nobody listens on: using it would fail every attempt.
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with ScriptedLLMServer([ToolCall("AgentOutput", CLICK_5)]) as server:
        result = await invoke(server, max_retries=0)
    assert result.value.action.click_element_by_index.index == 5


async def test_cancel_during_a_slow_reply_returns_promptly_and_drops_the_connection() -> None:
    with ScriptedLLMServer([Delay(30, then=ToolCall("AgentOutput", CLICK_5))]) as server:
        async with LLMClient(config(server, timeout=60)) as client:
            task = asyncio.create_task(client.invoke(MESSAGES, TOOL, parse=parse))
            assert await eventually(lambda: server.requests)
            cancelled_at = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert time.monotonic() - cancelled_at < 1.0
        await eventually(lambda: server.dropped)
        assert server.dropped == [0]
        assert len(server.requests) == 1  # no retry after a cancel


async def test_script_exhausted_is_a_clear_error() -> None:
    with ScriptedLLMServer([]) as server, pytest.raises(LLMError, match="script exhausted after 0 replies"):
        await invoke(server)


async def test_reply_can_be_computed_from_the_request() -> None:
    def answer(body: dict) -> ToolCall:
        return ToolCall("AgentOutput", step({"done": {"text": f"{len(body['messages'])} messages"}}))

    with ScriptedLLMServer([answer]) as server:
        result = await invoke(server)
    assert isinstance(result.value.action, DoneAction) and result.value.action.done.text == "2 messages"


async def test_a_broken_reply_function_is_reported_not_hung_up() -> None:
    def broken(body: dict) -> ToolCall:
        raise KeyError("no such field")

    await fails_at_once(broken, LLMError, "reply function raised KeyError")


def test_models_endpoint_lists_the_scripted_model() -> None:
    with ScriptedLLMServer([], model="scripted-demo") as server:
        listing = json.loads(urllib.request.urlopen(f"{server.base_url}/models", timeout=5).read())
    assert [model["id"] for model in listing["data"]] == ["scripted-demo"]


def test_scripted_server_serves_plain_http_clients_too() -> None:
    body = json.dumps({"model": "x", "messages": [{"role": "user", "content": "hi"}]}).encode()
    with ScriptedLLMServer([Text("hello")]) as server:
        request = urllib.request.Request(f"{server.base_url.removesuffix('/v1')}/chat/completions", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=5) as response:
            reply = json.load(response)
    assert reply["choices"][0]["message"]["content"] == "hello"
    assert server.requests == [json.loads(body)]


# -- configuration and secrets ---------------------------------------------------------------------------


def test_missing_model_says_how_to_configure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(LLMNotConfigured) as caught:
        LLMClient(LLMConfig(api_key=API_KEY))
    message = str(caught.value)
    for hint in ("tabpilot config set model", "--model", "OPENAI_API_KEY", "OPENAI_BASE_URL",
                 "tabpilot config set base-url", "tabpilot config set api-key"):
        assert hint in message
    assert "never the model" in message  # the environment gives the key and the endpoint only


def test_missing_key_for_a_remote_endpoint_says_how_to_configure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(LLMNotConfigured, match=r"No API key .* https://api.openai.com/v1.*OPENAI_API_KEY"):
        LLMClient(LLMConfig(model="gpt-4.1-mini"))


def test_environment_fills_base_url_and_key_and_local_servers_need_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "https://llm.example.test/v1/")
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    endpoint = LLMConfig(model="m").resolve()
    assert (endpoint.base_url, endpoint.api_key) == ("https://llm.example.test/v1", API_KEY)
    monkeypatch.delenv("OPENAI_API_KEY")
    local = LLMConfig(model="llama3", base_url="http://localhost:11434/v1").resolve()
    assert local.api_key  # Ollama takes any key; the openai package needs one


def test_api_key_never_in_repr_or_str(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = LLMConfig(base_url="http://127.0.0.1:1/v1", model="m", api_key=API_KEY)
    client = LLMClient(cfg)
    for text in (repr(cfg), str(cfg), repr(cfg.resolve()), str(cfg.resolve()), repr(client)):
        assert API_KEY not in text
    assert cfg.api_key == API_KEY  # still there for whoever needs it
    with pytest.raises(ValueError) as caught:
        LLMConfig(model="m", api_key=API_KEY, timeout="soon")
    assert API_KEY not in str(caught.value)


def test_importing_the_client_does_not_import_openai() -> None:
    import subprocess
    import sys

    code = "import sys, tabpilot.llm, tabpilot.llm.scripted, tabpilot.llm.replay; print('openai' in sys.modules)"
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "False"


async def test_a_web_server_that_is_no_model_api_is_said_to_be_one_at_once() -> None:
    # A plain web server (here Python's own) at the base URL answers POST with 501 and an HTML page: no retries,
    # and the failure says the address is no model endpoint (it was three tries, then "the provider is busy").
    posts: list[str] = []
    with web_server(posts) as address:
        base_url = f"{address}/v1"
        client = LLMClient(LLMConfig(base_url=base_url, model="m", api_key=API_KEY, backoff_base=0.01, max_retries=3))
        with pytest.raises(LLMError) as caught:
            await client.invoke(MESSAGES, TOOL, parse=parse)
        await client.aclose()
    assert not isinstance(caught.value, LLMRetriesExhausted)
    assert f"{base_url} does not take model requests (HTTP 501" in str(caught.value), str(caught.value)
    assert "not an OpenAI-compatible endpoint" in str(caught.value) and posts == ["POST"]
