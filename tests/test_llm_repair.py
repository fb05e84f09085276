"""Output repair: pure functions first (no HTTP), then each repair end to end through the scripted
server, where it must save the retry (exactly one request)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_support import MESSAGES, TOOL, ClickAction, DoneAction, Output, config, parse, step
from pydantic import ValidationError

from tabpilot.llm import LLMClient
from tabpilot.llm.backoff import MAX_RETRY_AFTER, backoff_delay, retry_after_seconds
from tabpilot.llm.repair import (
    Extracted,
    NoToolCall,
    action_variants,
    check_action_name,
    extract_call,
    find_json,
    repair_arguments,
    single_field,
    summarize_error,
)
from tabpilot.llm.scripted import ScriptedLLMServer, Text, ToolCall

SCHEMA = TOOL.parameters
CLICK_5 = step({"click_element_by_index": {"index": 5}})
REFLECTION_BLANK = {"evaluation_previous_goal": "", "memory": "", "next_goal": ""}


def tool_call_message(name: str, arguments: Any) -> dict[str, Any]:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": raw}}]}


def repaired(message: dict[str, Any], schema: dict[str, Any] = SCHEMA) -> tuple[Any, list[str]]:
    variants = set(action_variants(schema))
    return repair_arguments(extract_call(message, "AgentOutput", variants), "AgentOutput", schema)


# -- pure ----------------------------------------------------------------------------------------------


def test_well_formed_call_is_left_alone() -> None:
    arguments, repairs = repaired(tool_call_message("AgentOutput", CLICK_5))
    assert arguments == CLICK_5 and repairs == []


def test_json_in_message_text() -> None:
    message = {"role": "assistant", "content": f"Sure! Here is my answer: {json.dumps(CLICK_5)} Hope it helps."}
    arguments, repairs = repaired(message)
    assert arguments == CLICK_5 and repairs == ["took the arguments from the message text"]


def test_json_in_a_code_fence() -> None:
    message = {"role": "assistant", "content": f"Next step:\n```json\n{json.dumps(CLICK_5, indent=2)}\n```\n"}
    assert repaired(message)[0] == CLICK_5


def test_call_envelope_in_message_text() -> None:
    envelope = {"name": "AgentOutput", "arguments": json.dumps(CLICK_5)}
    message = {"role": "assistant", "content": f"<tool_call>{json.dumps(envelope)}</tool_call>"}
    assert repaired(message)[0] == CLICK_5
    nested = {"type": "function", "function": {"name": "AgentOutput", "arguments": CLICK_5}}
    assert repaired({"role": "assistant", "content": json.dumps(nested)})[0] == CLICK_5
    assert repaired({"role": "assistant", "content": json.dumps([envelope])})[0] == CLICK_5


def test_action_alone_in_message_text_is_wrapped() -> None:
    message = {"role": "assistant", "content": '```\n{"done": {"text": "all set", "success": true}}\n```'}
    arguments, _ = repaired(message)
    assert arguments == {**REFLECTION_BLANK, "action": {"done": {"text": "all set", "success": True}}}


def test_arguments_encoded_twice() -> None:
    twice = json.dumps(json.dumps(CLICK_5))
    arguments, repairs = repaired(tool_call_message("AgentOutput", twice))
    assert arguments == CLICK_5 and "decoded arguments that were JSON encoded twice" in repairs


def test_action_encoded_as_a_string_inside_the_arguments() -> None:
    inner = {**CLICK_5, "action": json.dumps(CLICK_5["action"])}
    assert repaired(tool_call_message("AgentOutput", inner))[0] == CLICK_5


def test_action_called_directly_instead_of_the_macro_tool() -> None:
    arguments, repairs = repaired(tool_call_message("click_element_by_index", {"index": 5}))
    assert arguments == {**REFLECTION_BLANK, "action": {"click_element_by_index": {"index": 5}}}
    assert repairs == ["wrapped the directly called action click_element_by_index in AgentOutput"]


def test_action_called_directly_with_a_bare_value() -> None:
    arguments, _ = repaired(tool_call_message("click_element_by_index", "5"))
    assert arguments["action"] == {"click_element_by_index": {"index": 5}}


def test_bare_value_for_a_one_field_input() -> None:
    arguments, repairs = repaired(tool_call_message("AgentOutput", step({"click_element_by_index": 5})))
    assert arguments == CLICK_5
    assert repairs == ["put the bare value for click_element_by_index into its field index"]


def test_bare_value_goes_to_the_only_required_field_of_a_two_field_input() -> None:
    # done{text, success=True}: text is the only required field
    arguments, _ = repaired(tool_call_message("AgentOutput", step({"done": "finished"})))
    assert arguments["action"] == {"done": {"text": "finished"}}
    assert isinstance(Output.model_validate(arguments).action, DoneAction)


def test_action_beside_the_reflection_instead_of_under_action() -> None:
    flat = {"evaluation_previous_goal": "ok", "memory": "m", "next_goal": "g", "click_element_by_index": {"index": 5}}
    arguments, _ = repaired(tool_call_message("AgentOutput", flat))
    assert arguments == {"evaluation_previous_goal": "ok", "memory": "m", "next_goal": "g",
                         "action": {"click_element_by_index": {"index": 5}}}


def test_several_tool_calls_prefer_the_macro_tool() -> None:
    message = tool_call_message("click_element_by_index", {"index": 1})
    message["tool_calls"].append({"id": "call_2", "type": "function",
                                  "function": {"name": "AgentOutput", "arguments": json.dumps(CLICK_5)}})
    extracted = extract_call(message, "AgentOutput")
    assert extracted.called_name == "AgentOutput" and extracted.tool_call_id == "call_2"


def test_no_call_and_no_json_is_reported() -> None:
    with pytest.raises(NoToolCall, match="no call of the tool AgentOutput"):
        extract_call({"role": "assistant", "content": "I clicked it."}, "AgentOutput")
    with pytest.raises(NoToolCall):
        extract_call({"role": "assistant", "content": None}, "AgentOutput")


def test_unrepairable_arguments_stay_as_they_are_for_validation_to_reject() -> None:
    arguments, _ = repaired(tool_call_message("AgentOutput", "click the OK button"))
    assert arguments == "click the OK button"
    with pytest.raises(ValidationError):
        parse(arguments)


def test_tool_without_action_gets_only_the_generic_repairs() -> None:
    schema = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
    assert action_variants(schema) == {}
    message = tool_call_message("search", json.dumps(json.dumps({"query": "shoes"})))
    extracted = extract_call(message, "search")
    assert repair_arguments(extracted, "search", schema)[0] == {"query": "shoes"}
    bare = Extracted({"query": 5}, "search")
    assert repair_arguments(bare, "search", schema)[0] == {"query": 5}


def test_find_json_takes_the_first_decodable_object() -> None:
    assert find_json('thinking {not json} then {"a": {"b": 1}} and {"c": 2}') == {"a": {"b": 1}}
    assert find_json("no json here") is None


def test_schema_with_refs_is_resolved() -> None:
    # pydantic puts each action behind a $ref into $defs
    assert "$defs" in SCHEMA
    variants = action_variants(SCHEMA)
    assert set(variants) == {"click_element_by_index", "done"}
    assert single_field(variants["click_element_by_index"], SCHEMA) == "index"
    assert single_field(variants["done"], SCHEMA) == "text"


def test_agent_macro_schema_is_understood() -> None:
    from tabpilot.agent.macro import macro_parameters, parse_agent_output
    from tabpilot.agent.tools import BUILTIN_TOOLS

    tools = dict(BUILTIN_TOOLS)
    schema = macro_parameters(tools)
    variants = action_variants(schema)
    assert {"click_element_by_index", "input_text", "done", "scroll"} <= set(variants)
    message = tool_call_message("click_element_by_index", "7")
    arguments, _ = repair_arguments(extract_call(message, "AgentOutput", set(variants)), "AgentOutput", schema)
    output = parse_agent_output(arguments, tools)
    assert output.tool_name == "click_element_by_index" and output.input_wire == {"index": 7}


def test_unknown_action_is_named_with_the_choices() -> None:
    complaint = check_action_name(step({"press_enter": {}}), SCHEMA)
    assert complaint == "unknown action 'press_enter'; available actions: click_element_by_index, done"
    assert check_action_name(CLICK_5, SCHEMA) is None


def test_validation_error_summary_is_one_short_line() -> None:
    with pytest.raises(ValidationError) as caught:
        Output.model_validate({"memory": 3, "action": {"click_element_by_index": {"index": "x", "extra": 1}}})
    summary = summarize_error(caught.value)
    assert "\n" not in summary and len(summary) <= 400
    assert summary.startswith("evaluation_previous_goal: Field required; memory: Input should be a valid string")
    assert summary.endswith("more")
    assert summarize_error(ValueError("bad\n  value")) == "bad value"


def test_usage_reads_openai_details_and_deepseek_cache_hits() -> None:
    from tabpilot.llm import Usage

    openai_style = Usage.from_openai({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
                                      "prompt_tokens_details": {"cached_tokens": 8},
                                      "completion_tokens_details": {"reasoning_tokens": 3}})
    assert (openai_style.cached_tokens, openai_style.reasoning_tokens) == (8, 3)
    deepseek = Usage.from_openai({"prompt_tokens": 10, "completion_tokens": 5, "prompt_cache_hit_tokens": 6})
    assert (deepseek.total_tokens, deepseek.cached_tokens, deepseek.reasoning_tokens) == (15, 6, None)
    assert Usage.from_openai(None).to_wire() == {"promptTokens": 0, "completionTokens": 0, "totalTokens": 0}
    assert Usage.from_openai(openai_style.to_openai()) == openai_style


# -- backoff -------------------------------------------------------------------------------------------


def test_backoff_grows_with_jitter_and_is_capped() -> None:
    delays = [backoff_delay(n, 1.0) for n in (1, 2, 3)]
    assert 0.5 <= delays[0] < 1.0 and 1.0 <= delays[1] < 2.0 and 2.0 <= delays[2] < 4.0
    assert backoff_delay(30, 1.0) <= 30.0
    assert len({backoff_delay(3, 1.0) for _ in range(20)}) > 1  # jitter


def test_retry_after_forms() -> None:
    assert retry_after_seconds({"Retry-After": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after_seconds({"Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10.0
    assert retry_after_seconds({"Retry-After": "86400"}) == MAX_RETRY_AFTER
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({}) is None


# -- through HTTP: each repair saves the retry -----------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        Text(f"```json\n{json.dumps(CLICK_5)}\n```"),
        Text(f"I'll click it. {json.dumps(CLICK_5)}"),
        ToolCall("click_element_by_index", {"index": 5}),
        ToolCall("AgentOutput", json.dumps(json.dumps(CLICK_5))),
        ToolCall("AgentOutput", step({"click_element_by_index": 5})),
        ToolCall("AgentOutput", step({"click_element_by_index": "5"})),  # pydantic coerces "5" after wrapping
    ],
    ids=["fence", "text", "direct-action", "double-encoded", "bare-value", "bare-string"],
)
async def test_repair_over_http_needs_no_retry(reply: Any) -> None:
    with ScriptedLLMServer([reply]) as server:
        async with LLMClient(config(server, max_retries=0)) as client:
            result = await client.invoke(MESSAGES, TOOL, parse=parse)
    assert isinstance(result.value.action, ClickAction)
    assert result.value.action.click_element_by_index.index == 5
    assert result.repairs
    assert len(server.requests) == 1
