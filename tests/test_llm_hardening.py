"""The model client against hostile or broken endpoints (issue 14): replies with lone surrogates, replies
without end, gzip bombs, absurd numbers, arguments nested 100,000 deep, connections cut mid-body, HTML
error pages, hung providers and Retry-After: 100000. All over real HTTP to the scripted server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import pytest
from llm_support import MESSAGES, TOOL, ClickAction, config, parse, step

from tabpilot.llm import LLMClient, LLMRetriesExhausted, RetryInfo, WaitInfo
from tabpilot.llm.scripted import Cut, Delay, Endless, HTTPError, ScriptedLLMServer, Text, ToolCall

CLICK_5 = step({"click_element_by_index": {"index": 5}})


async def invoke(server: ScriptedLLMServer, retries: list[RetryInfo] | None = None, **overrides):
    async with LLMClient(config(server, **overrides)) as client:
        return await client.invoke(MESSAGES, TOOL, parse=parse,
                                   on_retry=retries.append if retries is not None else None)


async def test_a_lone_surrogate_in_the_arguments_and_content_becomes_u_fffd() -> None:
    # the escape as a provider sends it, in the arguments string and in the message content
    arguments = json.dumps(step({"click_element_by_index": {"index": 5}}, goal="click \ud800 OK"))
    with ScriptedLLMServer([ToolCall("AgentOutput", arguments)]) as server:
        result = await invoke(server)
    assert result.value.next_goal == "click \ufffd OK"
    assert result.arguments["next_goal"] == "click \ufffd OK"
    json.dumps(result.raw_response, ensure_ascii=False).encode("utf-8")  # storable, printable

    reply = json.dumps({"evaluation_previous_goal": "a\udc00", "memory": "", "next_goal": "x",
                        "action": {"click_element_by_index": {"index": 5}}})
    with ScriptedLLMServer([Text(f"Here: {reply} \ud83d")]) as server:
        result = await invoke(server)
    assert result.value.evaluation_previous_goal == "a\ufffd"
    content = result.raw_response["choices"][0]["message"]["content"]
    assert content.endswith(" \ufffd") and "\ufffd" in content


async def test_absurd_token_counts_are_clamped() -> None:
    usage = {"prompt_tokens": -5, "completion_tokens": 10**30, "total_tokens": 10**30 + 7}
    with ScriptedLLMServer([ToolCall("AgentOutput", CLICK_5, usage=usage)]) as server:
        result = await invoke(server)
    assert (result.usage.prompt_tokens, result.usage.completion_tokens, result.usage.total_tokens) == (
        0, 10**9, 10**9)


async def test_arguments_nested_100000_deep_are_refused_with_a_message_for_the_model() -> None:
    deep = ('{"evaluation_previous_goal": "", "memory": "", "next_goal": "", "action": '
            + "[" * 100_000 + "]" * 100_000 + "}")
    shallow_but_deep = json.dumps(step({"click_element_by_index": {"index": 5}}) | {"memory": _nest(70)})
    retries: list[RetryInfo] = []
    with ScriptedLLMServer([ToolCall("AgentOutput", deep), ToolCall("AgentOutput", shallow_but_deep),
                            ToolCall("AgentOutput", CLICK_5)]) as server:
        result = await invoke(server, retries)
    assert isinstance(result.value.action, ClickAction)
    assert [r.message for r in retries] == ["invalid arguments for AgentOutput: the arguments are nested more than "
                                            "64 levels deep; send the tool's fields as plain, shallow JSON"] * 2
    # the model is told, without its 100,000 brackets echoed back
    feedback = server.requests[1]["messages"][-1]
    assert feedback["role"] == "user" and "nested more than 64 levels" in feedback["content"]
    assert len(json.dumps(server.requests[1])) < 5_000


def _nest(depth: int) -> object:
    value: object = "bottom"
    for _ in range(depth):
        value = {"a": value}
    return value


async def test_an_endless_reply_fails_that_attempt_at_the_limit_and_the_next_one_is_used() -> None:
    retries: list[RetryInfo] = []
    with ScriptedLLMServer([Endless(), Endless(gzip=True), ToolCall("AgentOutput", CLICK_5)]) as server:
        result = await invoke(server, retries, max_reply_bytes=2 * 1024 * 1024)
    assert isinstance(result.value.action, ClickAction)
    assert len(retries) == 2
    for retry in retries:
        assert f"the reply from {server.base_url} was larger than 2 MB and was not read further" in retry.message
        assert "max-reply-mb" in retry.message


async def test_a_reply_under_the_limit_still_reads_even_compressed() -> None:
    with ScriptedLLMServer([ToolCall("AgentOutput", CLICK_5)]) as server:
        result = await invoke(server, max_reply_bytes=5_000)
    assert isinstance(result.value.action, ClickAction)
    assert server.headers[0]["accept-encoding"] == "gzip, deflate"


MEMORY_PROBE = textwrap.dedent("""
    import asyncio, sys
    sys.path.insert(0, {tests!r})
    from llm_support import MESSAGES, TOOL, config, parse
    from tabpilot.llm import LLMClient, LLMRetriesExhausted
    from tabpilot.llm.scripted import Endless, ScriptedLLMServer

    async def main():
        with ScriptedLLMServer([Endless(gzip={gzip})] * 2) as server:
            async with LLMClient(config(server, max_retries=1, timeout=60)) as client:
                try:
                    await client.invoke(MESSAGES, TOOL, parse=parse)
                except LLMRetriesExhausted as exc:
                    print("ERROR", exc.message)
    asyncio.run(main())
    status = open("/proc/self/status").read()
    print("VmHWM", [line.split()[1] for line in status.splitlines() if line.startswith("VmHWM")][0])
""")


@pytest.mark.parametrize("gzip", [False, True], ids=["endless body", "gzip bomb"])
def test_memory_stays_bounded_against_an_endless_body_and_a_gzip_bomb(gzip: bool) -> None:
    from pathlib import Path

    script = MEMORY_PROBE.format(tests=str(Path(__file__).parent), gzip=gzip)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert "was larger than 8 MB" in lines["ERROR"]  # the default limit
    peak_kb = int(lines["VmHWM"])
    assert peak_kb < 300 * 1024, f"peak RSS {peak_kb // 1024} MB"


async def test_a_connection_cut_or_reset_mid_body_says_so() -> None:
    retries: list[RetryInfo] = []
    with ScriptedLLMServer([Cut(), Cut(reset=True), ToolCall("AgentOutput", CLICK_5)]) as server:
        await invoke(server, retries)
    closed, reset = (retry.message for retry in retries)
    assert closed.startswith(f"{server.base_url} closed the connection before its reply was complete (")
    assert "reply was complete" in reset and not reset.endswith(": ") and "()" not in reset
    assert "could not reach" not in closed + reset  # it was reached


async def test_a_502_html_page_is_summarised() -> None:
    retries: list[RetryInfo] = []
    page = "<!DOCTYPE html><html><head><title>Bad gateway</title></head><body><h1>502</h1>" + "<p>x</p>" * 500
    with ScriptedLLMServer([HTTPError(502, body=page), ToolCall("AgentOutput", CLICK_5)]) as server:
        await invoke(server, retries)
    assert retries[0].message == "the endpoint answered 502 Bad Gateway (an HTML error page)"


async def test_a_hung_provider_ends_the_call_at_the_deadline_not_after_every_attempt() -> None:
    replies = [Delay(60, then=ToolCall("AgentOutput", CLICK_5))] * 4
    with ScriptedLLMServer(replies) as server, pytest.raises(LLMRetriesExhausted) as caught:
        await invoke(server, timeout=1.0, max_retries=3, backoff_base=0.0, call_deadline=1.5)
    assert len(server.requests) == 2  # 1 s, then the 0.5 s left: not 4 × the timeout
    assert "one model call may take 1.5 s, the model-deadline setting" in caught.value.message
    # what was left of the deadline, said as a person would: "0.5 s", not the "0.49873 s" (or "9.99999 s") it was
    assert re.search(r"no reply within \d+(\.\d)? s", caught.value.last_cause), caught.value.last_cause


async def test_a_retry_after_past_the_deadline_ends_the_call_at_once() -> None:
    replies = [HTTPError(429, "slow down", retry_after="100000"), ToolCall("AgentOutput", CLICK_5)]
    with ScriptedLLMServer(replies) as server, pytest.raises(LLMRetriesExhausted) as caught:
        await invoke(server, call_deadline=30)
    assert len(server.requests) == 1
    assert "the provider asked to wait 100000 s before trying again" in caught.value.message


async def test_waiting_for_a_slow_model_gives_progress_notes() -> None:
    notes: list[WaitInfo] = []
    with ScriptedLLMServer([Delay(1.3, then=ToolCall("AgentOutput", CLICK_5))]) as server:
        async with LLMClient(config(server, wait_note_interval=0.5)) as client:
            result = await client.invoke(MESSAGES, TOOL, parse=parse, on_wait=notes.append)
    assert isinstance(result.value.action, ClickAction)
    assert [note.message for note in notes] == ["the model has not answered for 0.5 s",
                                                "the model has not answered for 1 s"]
