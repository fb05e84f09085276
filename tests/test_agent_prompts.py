"""The MacroTool schema and validation, the tools offered, and the prompt's history rendering."""

from __future__ import annotations

import hashlib
import re

import pytest
from pydantic import BaseModel

from tabpilot.agent.config import AgentConfig
from tabpilot.agent.macro import InvalidAgentOutput, macro_parameters, parse_agent_output
from tabpilot.agent.memory import render_history
from tabpilot.agent.prompts import system_prompt, user_prompt
from tabpilot.agent.tools import assemble_tools, tool
from tabpilot.agent.types import (
    AgentReflection,
    ErrorEvent,
    ObservationEvent,
    RetryEvent,
    StepAction,
    StepEvent,
    UserTakeoverEvent,
)

PAGE_AGENT_NAMES = {
    "done", "wait", "click_element_by_index", "input_text", "select_dropdown_option", "scroll", "scroll_horizontally",
}


def action_variants(tools: dict) -> dict[str, dict]:
    variants = macro_parameters(tools)["properties"]["action"]["anyOf"]
    return {next(iter(v["properties"])): v["properties"][next(iter(v["properties"]))] for v in variants}


def test_builtin_tools_have_page_agents_names_and_inputs() -> None:
    tools = assemble_tools(AgentConfig())
    assert set(tools) >= PAGE_AGENT_NAMES
    assert {"send_keys", "hover_element", "go_to_url", "go_back", "switch_tab", "close_tab"} <= set(tools)
    # opt-in or needs a callback/paths: absent by default
    assert not {"execute_javascript", "ask_user", "upload_file"} & set(tools)
    variants = action_variants(tools)
    assert set(variants["done"]["properties"]) == {"text", "success"}
    assert set(variants["input_text"]["required"]) == {"index", "text"}
    assert set(variants["scroll"]["properties"]) == {"down", "num_pages", "pixels", "index"}
    assert set(variants["scroll_horizontally"]["properties"]) == {"right", "pixels", "index"}
    for schema in variants.values():
        assert schema["additionalProperties"] is False
        assert "$ref" not in str(schema) and "title" not in schema


def test_opt_in_tools_appear_when_configured() -> None:
    tools = assemble_tools(
        AgentConfig(enable_javascript_tool=True, ask_user=lambda q: "yes", upload_paths=["/tmp/cv.pdf"])
    )
    assert {"execute_javascript", "ask_user", "upload_file"} <= set(tools)
    assert set(action_variants(tools)["execute_javascript"]["properties"]) == {"script"}


class Lookup(BaseModel):  # not extra="forbid": tool() makes it strict
    sku: str


def test_custom_tools_add_override_and_remove() -> None:
    @tool("Look a product up", Lookup)
    async def lookup(ctx, args: Lookup) -> str:
        return args.sku

    override = tool("Say you are finished", Lookup, lambda ctx, args: "done!")
    tools = assemble_tools(AgentConfig(custom_tools={"lookup": lookup, "go_back": None, "wait": override}))
    assert "lookup" in tools and "go_back" not in tools
    assert tools["wait"].description == "Say you are finished"
    variants = action_variants(tools)
    assert variants["lookup"]["properties"] == {"sku": {"type": "string"}}
    assert variants["wait"]["properties"] == {"sku": {"type": "string"}}  # not the built-in wait's (made once a set)
    assert "seconds" in action_variants(assemble_tools(AgentConfig()))["wait"]["properties"]
    assert variants["lookup"]["additionalProperties"] is False
    with pytest.raises(InvalidAgentOutput, match="colour: Extra inputs are not permitted"):
        parse_agent_output({"action": {"lookup": {"sku": "a", "colour": "red"}}}, tools)
    with pytest.raises(ValueError, match="done"):
        assemble_tools(AgentConfig(custom_tools={"done": None}))
    with pytest.raises(TypeError):
        assemble_tools(AgentConfig(custom_tools={"x": "not a tool"}))


def test_validation_gives_one_clear_message() -> None:
    tools = assemble_tools(AgentConfig())
    cases = {
        "unknown action 'click'": {"action": {"click": {"index": 1}}},
        "exactly one key": {"action": {"done": {"text": "a"}, "click_element_by_index": {"index": 1}}},
        "invalid input for input_text": {"action": {"input_text": {"index": 1}}},
        "unexpected key": {"thoughts": "x", "action": {"done": {"text": "a"}}},
        "not valid JSON": "{nope",
    }
    for expected, arguments in cases.items():
        with pytest.raises(InvalidAgentOutput) as info:
            parse_agent_output(arguments, tools)
        assert expected in str(info.value)
        assert str(info.value).count("\n") == 0
    output = parse_agent_output(
        {"evaluation_previous_goal": "e", "memory": "m", "next_goal": "n", "action": {"scroll": {"down": False}}}, tools
    )
    assert output.tool_name == "scroll" and output.input_wire == {"down": False, "num_pages": 0.1}
    assert output.reflection == AgentReflection(evaluation_previous_goal="e", memory="m", next_goal="n")


def step(i: int, memory: str = "") -> StepEvent:
    return StepEvent(
        step_index=i,
        reflection=AgentReflection(
            evaluation_previous_goal=f"evaluation {i}", memory=memory or f"memory {i}", next_goal=f"goal {i}"
        ),
        action=StepAction(name="click_element_by_index", input={"index": i}, output=f"clicked {i} " + "x" * 300),
    )


def test_history_leaves_out_retries_and_errors_and_keeps_observations_and_takeovers() -> None:
    history = [
        ObservationEvent(content="Page navigated to → http://a/"),
        RetryEvent(message="HTTP 500 from the model", attempt=1, max_attempts=3),
        step(0),
        ErrorEvent(message="something transient"),
        UserTakeoverEvent(actions=[{"description": "typed Ada into Name"}], note="fixed the name"),
        step(1),
    ]
    text = render_history(history)
    assert "HTTP 500" not in text and "transient" not in text
    assert "<sys>Page navigated to → http://a/</sys>" in text
    assert "The user took over" in text and "typed Ada into Name" in text and "fixed the name" in text
    assert text.index("<step_1>") < text.index("<user_takeover>The user took over") < text.index("<step_2>")
    assert "Memory: memory 0" in text and 'Action: click_element_by_index {"index":1}' in text


def test_history_is_bounded_older_steps_condensed() -> None:
    def length(n: int) -> int:
        return len(render_history([step(i) for i in range(n)]))

    assert length(500) < 2 * length(10)  # 500 steps: ten 50-step lines, up to nine 5-step lines, 2–6 whole steps
    assert length(30) <= 1.2 * length(6)  # at most 6 whole steps; the rest one line per 5
    text = render_history([step(i, memory=f"summary after {i}") for i in range(30)])
    assert "<earlier_steps>Steps 21–25 are condensed. Your memory after step 25: summary after 24" in text
    assert "<earlier_steps>Steps 1–5 are condensed. Your memory after step 5: summary after 4" in text
    assert "Memory: summary after 29" in text and "Memory: summary after 25" in text
    assert "Memory: summary after 24" not in text
    assert text.count("Evaluation of Previous Step") == 5
    assert render_history([step(i) for i in range(32)]).count("Evaluation of Previous Step") == 2
    text = render_history([step(i, memory=f"summary after {i}") for i in range(60)])
    assert text.startswith("<earlier_steps>Steps 1–50 are condensed. Your memory after step 50: summary after 49")
    assert "<earlier_steps>Steps 51–55 are condensed" in text and text.count("<earlier_steps>") == 2


def test_history_only_grows_at_its_end_between_fixed_folds() -> None:
    """Prompt caching (issue 16): the history of step N+1 starts with the history of step N byte for byte,
    except at a fold (every 5 steps), which keeps everything before the block it folds."""
    history: list = []
    before = render_history(history)
    folds = 0
    for i in range(130):
        history += [step(i), ObservationEvent(content=f"note after step {i + 1}")]
        after = render_history(history)
        if not after.startswith(before):
            folds += 1
            assert i % 5 == 1  # 7 steps shown whole: the oldest 5 of them fold, 2 stay
            if i > 6 and i % 50 != 1:  # all before the folded block stays (it starts at the note before its step)
                assert after.startswith(before[: before.index(f"<sys>note after step {i - 6}</sys>")])
        before = after
    assert folds == 25  # one per 5 steps


def test_user_prompt_holds_instructions_task_step_info_history_and_page() -> None:
    prompt = user_prompt(
        task="Fill the form",
        step_number=3,
        max_steps=40,
        history=[step(0), step(1)],
        page_text="[1]<input name=first/>",
        system_instructions="Be polite",
        page_instructions="This is the signup page",
    )
    order = ["<system_instructions>\nBe polite", "<user_request>\nFill the form", "<agent_history>", "<step_2>",
             "</agent_history>", "Step 3 of 40", "<page_instructions>\nThis is the signup page",
             "<browser_state>\n<untrusted_page_content>\n[1]<input name=first/>\n</untrusted_page_content>"]
    positions = [prompt.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert "<instructions>" not in user_prompt(task="t", step_number=1, max_steps=2, history=[], page_text="")


def test_system_prompt_language_and_override() -> None:
    assert "**English**" in system_prompt("en-US")
    assert "**简体中文**" in system_prompt("zh-CN")
    assert "reflect" in system_prompt().lower() and "index" in system_prompt()
    assert system_prompt("fr-FR") == system_prompt("en-US")  # a language it has no prompt for
    assert system_prompt("en-US", custom="You are a cat.") == "You are a cat."
    assert system_prompt("zh-CN", custom="You are a cat.") == "You are a cat."


# What the model must read or write as is, in any language: tool names, AgentOutput's fields, done's
# fields and value, and a key name.
VERBATIM = {"AgentOutput", "evaluation_previous_goal", "memory", "next_goal", "action", "send_keys", "Enter",
            "done", "text", "success", "true", "request_takeover", "reason", "ask_user",
            # the page text's attributes and the tools that read or move it
            "icon", "checked", "selected", "pressed", "expanded", "false", "haspopup", "disabled", "required",
            "invalid", "min", "max", "ArrowUp", "ArrowDown", "length", "read_text", "scrollable", "scroll"}
SECTION_TAG = re.compile(r"</?[a-z_]+(?:_N)?>")


def sections(prompt: str) -> list[str]:
    """The prompt's tags in order, without the `<tag attributes>text</tag>` notation of the page format."""
    return [tag for tag in SECTION_TAG.findall(prompt) if tag != "</tag>"]


def text_lines(prompt: str) -> list[str]:
    return [line for line in prompt.splitlines() if line.strip() and not SECTION_TAG.fullmatch(line.strip())]


def test_the_chinese_system_prompt_is_wholly_chinese_but_for_tags_tools_and_fields() -> None:
    chinese = system_prompt("zh-CN")
    leftover = SECTION_TAG.sub(" ", chinese)
    english_words = [w for w in re.findall(r"[A-Za-z][A-Za-z_]*", leftover) if w not in VERBATIM]
    assert english_words == []
    assert all(re.search(r"[\u4e00-\u9fff]", line) for line in text_lines(chinese))  # every line, not one


def test_the_chinese_system_prompt_has_the_english_ones_structure_and_names() -> None:
    english, chinese = system_prompt("en-US"), system_prompt("zh-CN")
    assert sections(chinese) == sections(english)
    assert len(text_lines(chinese)) == len(text_lines(english))
    names = set(re.findall(r"[A-Za-z_]+", english)) & VERBATIM
    assert names == VERBATIM and names <= set(re.findall(r"[A-Za-z_]+", chinese))
    for tag in ("input", "rules"):  # the same bullets, in the same places
        def bullets(prompt: str, tag: str = tag) -> int:
            return prompt.split(f"<{tag}>")[1].split(f"</{tag}>")[0].count("\n- ")

        assert bullets(chinese) == bullets(english)
    field_lines = re.compile(r"^  (\w+)[:：]", re.MULTILINE)
    assert field_lines.findall(chinese) == field_lines.findall(english) == [
        "evaluation_previous_goal", "memory", "next_goal", "action"]


def test_the_english_system_prompt_is_unchanged() -> None:
    """Pinned: a change to the English prompt must come with the same change to its translation (then
    update this digest)."""
    digest = hashlib.sha256(system_prompt("en-US").encode()).hexdigest()
    assert digest == "562c771b2535b9dff29500a152d0fc8f1a07fd2072470c9109f62c687d95baf1"
