"""Turn a model's sloppy reply into the tool arguments it meant, before giving up on it.

Pure functions over the reply message and the tool's JSON schema; no HTTP. The repairs, each one a
mistake real models make:

- no tool call, but JSON in the message text (bare, in a ```json fence, or wrapped as a call
  `{"name": "AgentOutput", "arguments": {...}}`);
- arguments encoded twice (a JSON string holding JSON);
- the action called directly as the function (`click_element_by_index({"index": 5})`) instead of the
  macro tool, or given alone in the text: wrapped as `{<reflection fields>: "", "action": {name: args}}`;
- a bare value for a one-field action input: `{"click_element_by_index": 5}` → `{"index": 5}` inside,
  the field name learned from the schema.

A macro tool is one whose parameters have an `action` property whose variants each name an action
(`anyOf`/`oneOf` of one-key objects, or one object with a property per action).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from ..i18n import text

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
MAX_ERROR_CHARS = 400


class NoToolCall(ValueError):
    """The reply holds neither a tool call nor JSON that could stand for one."""


# Tool inputs are a few levels deep; 100,000 levels ended a task with a raw RecursionError.
MAX_ARGUMENT_DEPTH = 64


class ArgumentsTooDeep(ValueError):
    def __init__(self) -> None:
        super().__init__(f"the arguments are nested more than {MAX_ARGUMENT_DEPTH} levels deep; "
                         "send the tool's fields as plain, shallow JSON")


def check_depth(value: Any, limit: int = MAX_ARGUMENT_DEPTH) -> None:
    """Raise ArgumentsTooDeep when lists/objects nest deeper than `limit` (checked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= limit:
                raise ArgumentsTooDeep()
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


def _loads(text: str) -> Any:
    """json.loads, with JSON too deep for it (RecursionError) refused as ArgumentsTooDeep."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ArgumentsTooDeep() from None


@dataclass
class Extracted:
    """The arguments found in a reply, and the repairs it took to find them."""

    arguments: Any
    called_name: str | None  # the function the model called; None when the JSON came from the text
    tool_call_id: str | None = None
    repairs: list[str] = field(default_factory=list)


def extract_call(message: dict[str, Any], tool_name: str, action_names: set[str] | frozenset[str] = frozenset()
                 ) -> Extracted:
    """Find the tool call in an assistant message: its first tool call, or else JSON in its text."""
    tool_calls = message.get("tool_calls") or []
    if tool_calls:
        call = _prefer(tool_calls, tool_name, action_names)
        function = call.get("function") or {}
        raw = function.get("arguments")
        repairs: list[str] = []
        arguments: Any = {} if raw in (None, "") else raw
        if isinstance(arguments, str):
            arguments, repairs = _decode_text(arguments)
        return Extracted(arguments, function.get("name"), call.get("id"), repairs)
    legacy = message.get("function_call")
    if isinstance(legacy, dict) and legacy.get("name"):
        arguments, repairs = _decode_text(legacy.get("arguments") or "{}")
        return Extracted(arguments, legacy["name"], None, repairs)
    content = _content_text(message.get("content"))
    found = find_json(content) if content else None
    if found is None:
        raise NoToolCall(text("failure.bad_call.no_call", None, tool=tool_name))
    name, arguments = unwrap_call_envelope(found)
    return Extracted(arguments, name, None, ["took the arguments from the message text"])


def _prefer(tool_calls: list[dict[str, Any]], tool_name: str, action_names: set[str] | frozenset[str]
            ) -> dict[str, Any]:
    names = [(call.get("function") or {}).get("name") for call in tool_calls]
    for wanted in (tool_name, *action_names):
        if wanted in names:
            return tool_calls[names.index(wanted)]
    return tool_calls[0]


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _decode_text(text: str) -> tuple[Any, list[str]]:
    try:
        return _loads(text), []
    except json.JSONDecodeError:
        found = find_json(text)
        if found is None:
            return text, []
        return found, ["cut the JSON out of text around it"]


def find_json(text: str) -> Any | None:
    """The JSON object a piece of text holds: the whole text, a ``` fence, or the first object in it."""
    text = text.strip()
    try:
        return _loads(text)
    except json.JSONDecodeError:
        pass
    for fenced in _FENCE.findall(text):
        try:
            return _loads(fenced.strip())
        except json.JSONDecodeError:
            continue
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            try:
                value, _end = decoder.raw_decode(text, start)
            except RecursionError:
                raise ArgumentsTooDeep() from None
            return value
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
    return None


def unwrap_call_envelope(value: Any) -> tuple[str | None, Any]:
    """`{"name": n, "arguments": a}` and `{"type": "function", "function": {...}}` → (n, a); of a list
    of calls, the first."""
    if isinstance(value, list) and value and isinstance(value[0], dict):
        value = value[0]
    if isinstance(value, dict):
        if value.get("type") == "function" and isinstance(value.get("function"), dict):
            value = value["function"]
        if isinstance(value.get("name"), str):
            for key in ("arguments", "parameters", "args", "input"):
                if key in value and "action" not in value:
                    return value["name"], decode_nested(value[key])
    return None, value


def decode_nested(value: Any, depth: int = 3) -> Any:
    """A JSON string holding JSON (possibly again) → the value it holds; anything else unchanged."""
    while depth > 0 and isinstance(value, str):
        stripped = value.strip()
        if not stripped or stripped[0] not in '{["':
            break
        try:
            value = _loads(stripped)
        except json.JSONDecodeError:
            break
        depth -= 1
    return value


def repair_arguments(extracted: Extracted, tool_name: str, parameters: dict[str, Any]) -> tuple[Any, list[str]]:
    """The arguments the model meant for `tool_name`, and a note for each repair made."""
    repairs = list(extracted.repairs)
    arguments = extracted.arguments
    if isinstance(arguments, str):
        decoded = decode_nested(arguments)
        if not isinstance(decoded, str):
            repairs.append("decoded arguments that were JSON encoded twice")
            arguments = decoded
    variants = action_variants(parameters)
    if not variants:
        return arguments, repairs
    called = extracted.called_name
    if called and called != tool_name and called in variants:
        arguments = _wrap_action(parameters, called, arguments)
        repairs.append(f"wrapped the directly called action {called} in {tool_name}")
    elif isinstance(arguments, dict) and "action" not in arguments:
        present = [key for key in arguments if key in variants]
        if len(present) == 1:
            name = present[0]
            rest = {key: value for key, value in arguments.items() if key != name}
            arguments = _wrap_action(parameters, name, arguments[name], rest)
            repairs.append(f"moved the action {name} under 'action'")
    if isinstance(arguments, dict) and "action" in arguments:
        action = decode_nested(arguments["action"])
        if isinstance(action, dict) and len(action) == 1:
            [(name, value)] = action.items()
            value = decode_nested(value)
            schema = variants.get(name)
            if schema is not None and value is not None and not isinstance(value, (dict, list)):
                field_name = single_field(schema, parameters)
                if field_name is not None:
                    value = {field_name: value}
                    repairs.append(f"put the bare value for {name} into its field {field_name}")
            action = {name: value}
        if action is not arguments["action"]:
            arguments = {**arguments, "action": action}
    return arguments, repairs


def _wrap_action(parameters: dict[str, Any], name: str, value: Any, rest: dict[str, Any] | None = None
                 ) -> dict[str, Any]:
    wrapped: dict[str, Any] = {}
    for key, schema in (parameters.get("properties") or {}).items():
        if key != "action" and _resolve(schema, parameters).get("type") == "string":
            wrapped[key] = ""
    wrapped.update(rest or {})
    wrapped["action"] = {name: decode_nested(value)}
    return wrapped


def action_variants(parameters: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Action name → its input schema, for a macro tool's parameters; {} for any other tool."""
    action = (parameters.get("properties") or {}).get("action")
    if not isinstance(action, dict):
        return {}
    action = _resolve(action, parameters)
    options = action.get("anyOf") or action.get("oneOf") or [action]
    variants: dict[str, dict[str, Any]] = {}
    for option in options:
        option = _resolve(option, parameters)
        for name, schema in (option.get("properties") or {}).items():
            variants[name] = _resolve(schema, parameters)
    return variants


def single_field(schema: dict[str, Any], root: dict[str, Any]) -> str | None:
    """The field a bare value belongs in: the only property, or else the only required one."""
    schema = _resolve(schema, root)
    properties: list[str] = list((schema.get("properties") or {}).keys())
    if len(properties) == 1:
        return properties[0]
    required = schema.get("required") or []
    return required[0] if len(required) == 1 else None


def _resolve(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    """Follow local `$ref`s (and a lone `allOf` wrapper) to the schema they point at."""
    for _ in range(20):
        if not isinstance(schema, dict):
            return {}
        if "$ref" in schema and isinstance(schema["$ref"], str) and schema["$ref"].startswith("#/"):
            target: Any = root
            for part in schema["$ref"][2:].split("/"):
                target = target.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(target, dict) else {}
            schema = target
        elif isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1 and len(schema) <= 3:
            schema = schema["allOf"][0]
        else:
            return schema
    return {}


def check_action_name(arguments: Any, parameters: dict[str, Any]) -> str | None:
    """A one-line complaint when the action names no known action; None when it does (or can't tell)."""
    variants = action_variants(parameters)
    if not variants or not isinstance(arguments, dict):
        return None
    action = arguments.get("action")
    if isinstance(action, dict) and len(action) == 1:
        [name] = action
        if name not in variants:
            return f"unknown action {name!r}; available actions: {', '.join(variants)}"
    return None


def summarize_error(exc: BaseException) -> str:
    """One short line saying what was wrong with the arguments, for the model to correct."""
    if isinstance(exc, ValidationError):
        errors = exc.errors(include_url=False)
        parts = []
        for error in errors[:3]:
            where = ".".join(str(part) for part in error["loc"]) or "arguments"
            parts.append(f"{where}: {error['msg']}")
        if len(errors) > 3:
            parts.append(f"and {len(errors) - 3} more")
        text = "; ".join(parts)
    else:
        text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"
