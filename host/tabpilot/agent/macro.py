"""The MacroTool: every step the model makes one forced call to `AgentOutput`, whose arguments are its
reflection and exactly one action:

    {"evaluation_previous_goal": …, "memory": …, "next_goal": …, "action": {"<tool>": {<input>}}}

The action schema is a key-tagged union built from the tools' pydantic input models; validation looks
the key up first, so a mistake gives one short error the model can act on instead of one per tool."""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from .tools import Tool
from .types import AgentReflection

MACRO_TOOL_NAME = "AgentOutput"
MACRO_TOOL_DESCRIPTION = "You MUST call this tool every step: your reflection, then exactly one action."
REFLECTION_FIELDS = ("evaluation_previous_goal", "memory", "next_goal")


class InvalidAgentOutput(ValueError):
    """The model's arguments don't fit AgentOutput; the message is written for the model to fix them."""


@dataclass(frozen=True)
class AgentOutput:
    reflection: AgentReflection
    tool_name: str
    tool_input: BaseModel

    @property
    def input_wire(self) -> dict[str, Any]:
        return self.tool_input.model_dump(mode="json", exclude_none=True)


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON schema, self-contained (no $ref) and without pydantic's titles."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def clean(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                target = definitions[node["$ref"].rsplit("/", 1)[-1]]
                return clean(copy.deepcopy(target))
            return {key: clean(value) for key, value in node.items() if key != "title"}
        if isinstance(node, list):
            return [clean(item) for item in node]
        return node

    return clean(schema)  # type: ignore[no-any-return]


def macro_parameters(tools: dict[str, Tool]) -> dict[str, Any]:
    """The JSON schema of AgentOutput's arguments for this set of tools: one object per set, made once (5.5 ms of
    the event loop for the 18 built-in tools, at every step before), shared: read it, never change it."""
    return _parameters(tuple((name, tool.description, tool.input_model) for name, tool in tools.items()))


@functools.lru_cache(maxsize=64)
def _parameters(tools: tuple[tuple[str, str, type[BaseModel]], ...]) -> dict[str, Any]:
    variants = [
        {
            "type": "object",
            "description": description,
            "properties": {name: input_schema(input_model)},
            "required": [name],
            "additionalProperties": False,
        }
        for name, description, input_model in tools
    ]
    return {
        "type": "object",
        "properties": {
            "evaluation_previous_goal": {
                "type": "string",
                "description": "did the previous action achieve its goal? success, failure or uncertain, and why",
            },
            "memory": {
                "type": "string",
                "description": "what to remember: progress so far, facts found, what is left to do",
            },
            "next_goal": {"type": "string", "description": "the immediate goal of this step's action"},
            "action": {"description": "exactly one action", "anyOf": variants},
        },
        "required": ["evaluation_previous_goal", "memory", "next_goal", "action"],
        "additionalProperties": False,
    }


def parse_agent_output(arguments: Any, tools: dict[str, Tool]) -> AgentOutput:
    """Validate the model's AgentOutput arguments; raise InvalidAgentOutput with one clear message."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise InvalidAgentOutput(f"the arguments are not valid JSON: {exc}") from None
    if not isinstance(arguments, dict):
        raise InvalidAgentOutput("the arguments must be a JSON object with the keys " + _keys_hint())
    unknown = sorted(set(arguments) - {*REFLECTION_FIELDS, "action"})
    if unknown:
        raise InvalidAgentOutput(f"unexpected key(s) {', '.join(unknown)}; the keys are {_keys_hint()}")
    reflection = AgentReflection(**{k: _text(arguments.get(k)) for k in REFLECTION_FIELDS})
    action = arguments.get("action")
    if not isinstance(action, dict) or len(action) != 1:
        raise InvalidAgentOutput(
            'action must be an object with exactly one key, the action\'s name, e.g. {"done": {"text": "…"}}; '
            f"available actions: {', '.join(tools)}"
        )
    [(name, raw_input)] = action.items()
    tool = tools.get(name)
    if tool is None:
        raise InvalidAgentOutput(f"unknown action {name!r}; available actions: {', '.join(tools)}")
    if raw_input is None:
        raw_input = {}
    try:
        tool_input = tool.input_model.model_validate(raw_input)
    except ValidationError as exc:
        raise InvalidAgentOutput(f"invalid input for {name}: {_short_errors(exc)}") from None
    return AgentOutput(reflection, name, tool_input)


def _keys_hint() -> str:
    return ", ".join((*REFLECTION_FIELDS, "action"))


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _short_errors(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:3]:
        where = ".".join(str(p) for p in error["loc"]) or "input"
        parts.append(f"{where}: {error['msg']}")
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")
