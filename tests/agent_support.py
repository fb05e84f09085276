"""Helpers for the agent tests: scripted AgentOutput replies that find element indices in the prompt
the server actually received, the way a model reads them off the page."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tabpilot.llm.scripted import ToolCall


def last_user_message(body: dict[str, Any]) -> str:
    users = [m for m in body["messages"] if m.get("role") == "user" and isinstance(m.get("content"), str)]
    return users[0]["content"] if users else ""


def browser_state(body: dict[str, Any]) -> str:
    text = last_user_message(body)
    return text[text.index("<browser_state>") :] if "<browser_state>" in text else text


def history_section(body: dict[str, Any]) -> str:
    text = last_user_message(body)
    return text[text.index("<agent_history>") : text.index("</agent_history>")]


def index_of(body: dict[str, Any], *needles: str) -> int:
    """The [index] of the first element line in the browser state that contains every needle."""
    for line in browser_state(body).splitlines():
        match = re.search(r"\[(\d+)\]", line)
        if match and all(needle in line for needle in needles):
            return int(match.group(1))
    raise AssertionError(f"no element with {needles} in the page state:\n{browser_state(body)}")


def output(action: str, action_input: dict[str, Any] | None = None, *, goal: str = "", memory: str = "",
           evaluation: str = "") -> dict[str, Any]:
    return {
        "evaluation_previous_goal": evaluation or "Started" ,
        "memory": memory or f"about to {action}",
        "next_goal": goal or f"do {action}",
        "action": {action: action_input if action_input is not None else {}},
    }


def step(action: str, action_input: dict[str, Any] | None = None, **kw: Any) -> ToolCall:
    return ToolCall("AgentOutput", output(action, action_input, **kw))


def on_page(make: Callable[[dict[str, Any]], dict[str, Any]], **kw: Any) -> Callable[[dict[str, Any]], ToolCall]:
    """A reply computed from the request, e.g. `on_page(lambda b: {"click_element_by_index":
    {"index": index_of(b, "Sign up")}})`."""

    def reply(body: dict[str, Any]) -> ToolCall:
        [(action, action_input)] = make(body).items()
        return step(action, action_input, **kw)

    return reply


def done(text: str = "finished", success: bool = True, **kw: Any) -> ToolCall:
    return step("done", {"text": text, "success": success}, **kw)
