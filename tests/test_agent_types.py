"""The agent's wire types serialise exactly as page-agent's, and parse back."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from tabpilot.agent.config import AgentConfig
from tabpilot.agent.types import (
    AgentReflection,
    ErrorEvent,
    ExecutedActivity,
    ExecutionResult,
    ObservationEvent,
    RetryEvent,
    RetryingActivity,
    StepAction,
    StepEvent,
    StepUsage,
    UserTakeoverEvent,
    parse_activity,
    parse_event,
)


def make_step() -> StepEvent:
    return StepEvent(
        step_index=2,
        reflection=AgentReflection(evaluation_previous_goal="ok", memory="typed name", next_goal="submit"),
        action=StepAction(name="click_element_by_index", input={"index": 4}, output="Clicked [4] Submit"),
        usage=StepUsage(prompt_tokens=1200, completion_tokens=80, total_tokens=1280, cached_tokens=1024),
        raw_response={"id": "chatcmpl-1"},
        raw_request={"model": "m"},
    )


def test_step_event_json_is_page_agents_agent_step_event_field_for_field() -> None:
    wire = make_step().to_wire()
    # page-agent packages/core/src/types.ts, AgentStepEvent
    assert wire == {
        "type": "step",
        "stepIndex": 2,
        "reflection": {"evaluation_previous_goal": "ok", "memory": "typed name", "next_goal": "submit"},
        "action": {"name": "click_element_by_index", "input": {"index": 4}, "output": "Clicked [4] Submit"},
        "usage": {"promptTokens": 1200, "completionTokens": 80, "totalTokens": 1280, "cachedTokens": 1024},
        "rawResponse": {"id": "chatcmpl-1"},
        "rawRequest": {"model": "m"},
    }
    assert parse_event(json.loads(json.dumps(wire))) == make_step()


def test_optional_fields_are_left_out_not_null() -> None:
    step = make_step().model_copy(update={"raw_response": None, "raw_request": None, "usage": StepUsage()})
    wire = step.to_wire()
    assert "rawResponse" not in wire and "rawRequest" not in wire
    assert wire["usage"] == {"promptTokens": 0, "completionTokens": 0, "totalTokens": 0}
    assert ErrorEvent(message="boom").to_wire() == {"type": "error", "message": "boom"}


def test_every_history_event_round_trips_through_its_wire_json() -> None:
    events = [
        make_step(),
        ObservationEvent(content="Page navigated to → http://x/"),
        UserTakeoverEvent(actions=[{"type": "click", "description": "clicked Save"}], started_at=1, ended_at=2),
        RetryEvent(message="HTTP 500", attempt=1, max_attempts=3),
        ErrorEvent(message="bad key", raw_response={"error": "401"}),
    ]
    for event in events:
        assert parse_event(event.to_wire()) == event
    assert RetryEvent(message="m", attempt=1, max_attempts=3).to_wire() == {
        "type": "retry", "message": "m", "attempt": 1, "maxAttempts": 3,
    }
    assert UserTakeoverEvent().to_wire() == {"type": "user_takeover", "actions": []}


def test_activities_have_page_agents_shapes() -> None:
    assert RetryingActivity(attempt=2, max_attempts=3).to_wire() == {"type": "retrying", "attempt": 2, "maxAttempts": 3}
    executed = ExecutedActivity(tool="wait", input={"seconds": 1}, output="ok", duration=12.5).to_wire()
    assert executed == {"type": "executed", "tool": "wait", "input": {"seconds": 1}, "output": "ok", "duration": 12.5}
    assert parse_activity({"type": "thinking"}).type == "thinking"
    with pytest.raises(ValidationError):
        parse_activity({"type": "dancing"})


def test_execution_result_carries_history_as_wire_events() -> None:
    result = ExecutionResult(success=True, data="done", history=[make_step(), ObservationEvent(content="x")])
    wire = result.to_wire()
    assert wire["success"] is True and wire["data"] == "done"
    assert [e["type"] for e in wire["history"]] == ["step", "observation"]
    assert ExecutionResult.model_validate(wire) == result


def test_agent_config_is_camel_case_on_the_wire_and_keeps_callables_out() -> None:
    config = AgentConfig(max_steps=12, step_delay=0, language="zh-CN", page_instructions=lambda url: "x")
    assert config.to_wire() == {
        "language": "zh-CN", "maxSteps": 12, "stepDelay": 0.0, "enableJavascriptTool": False, "useVision": "auto",
        "uploadPaths": [],
    }
    assert AgentConfig.model_validate({"maxSteps": 5}).max_steps == 5
    with pytest.raises(ValidationError):
        AgentConfig(max_steps=0)
    with pytest.raises(ValidationError):
        AgentConfig(language="fr-FR")  # type: ignore[arg-type]


def test_a_takeover_reads_as_a_plain_account_with_typed_values_but_never_hidden_ones() -> None:
    url = "https://shop.example/account"
    event = UserTakeoverEvent(
        reason="user", started_at=1_700_000_000_000, ended_at=1_700_000_042_400, url_before=url + "/login",
        url_after=url, note="Signed in; now add the blue mug",
        actions=[
            {"kind": "click", "target": 'link "Sign in"', "url": url, "at": 1},
            {"kind": "input", "target": 'textbox "Email"', "value": "ada@example.org", "url": url, "at": 2},
            {"kind": "input", "target": 'textbox "Password"', "value": "•••", "url": url, "at": 3},
            {"kind": "key", "target": 'textbox "Password"', "value": "Enter", "url": url, "at": 4},
            {"kind": "select", "target": 'combobox "Size"', "value": "Large", "url": url, "at": 5},
            {"kind": "check", "target": 'checkbox "Remember me"', "value": "unchecked", "url": url, "at": 6},
            {"kind": "submit", "target": 'form "Login"', "url": url, "at": 7},
            {"kind": "scroll", "target": "page", "value": "down 1200px", "url": url, "at": 8},
            {"kind": "navigate", "target": "page", "value": url, "url": url, "at": 9},
            {"kind": "tab", "target": 'tab "Docs"', "value": "opened", "url": url, "at": 10},
        ],
    )
    assert event.to_prompt() == (
        '<user_takeover>The user took over for 42 s: clicked link "Sign in"; typed in textbox "Email" → '
        '"ada@example.org"; typed in textbox "Password" (hidden); pressed Enter in textbox "Password"; chose '
        '"Large" in combobox "Size"; unchecked checkbox "Remember me"; submitted form "Login"; scrolled page '
        f'down 1200px; went to {url}; opened tab "Docs"; page is now {url}. Their note: Signed in; now add the '
        "blue mug</user_takeover>"
    )
    assert "•••" not in event.to_prompt()
    wire = event.to_wire()
    assert wire["type"] == "user_takeover" and wire["urlBefore"] == url + "/login"
    assert wire["endedAt"] == 1_700_000_042_400
    assert parse_event(wire) == event  # page-agent's type, extended: stored and read back whole
    asked = UserTakeoverEvent(reason="agent_request", started_at=0, ended_at=5000, actions=[])
    assert asked.to_prompt() == "<user_takeover>The user took over for 5 s (you asked them to): they did nothing " \
        "you can see</user_takeover>"


@pytest.mark.parametrize("language", ["en-US", "zh-CN"])
def test_a_takeover_that_ended_on_a_huge_url_names_it_cut_short(language: str) -> None:
    """The account of a takeover stays in the history every later prompt repeats; a page that sent the person to a
    URL of half a million characters had it said whole ("page is now …") in each of them."""
    huge = "https://shop.example/thanks?ref=" + "q" * 500_000
    actions = [{"kind": "navigate", "target": "loaded", "url": huge, "at": 1},
               {"kind": "click", "target": 'link "Next"', "url": huge, "at": 2}]
    event = UserTakeoverEvent(reason="user", started_at=0, ended_at=1000, url_before="https://shop.example/",
                              url_after=huge, actions=actions)
    told = event.to_prompt(language=language)
    assert "https://shop.example/thanks?ref=" + "q" * 100 in told and len(told) < 2_000, told[:300]
    assert event.url_after == huge  # the record keeps what happened; only what is said is cut
