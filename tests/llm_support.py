"""Shared by the tests/test_llm*.py modules: a small AgentOutput-shaped tool built the way the agent
builds its own (pydantic models, a key-tagged action union), and a client config for a scripted server."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from tabpilot.llm import LLMConfig, ToolSpec
from tabpilot.llm.scripted import ScriptedLLMServer

API_KEY = "sk-test-0123456789abcdef-SECRET"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ClickInput(_Strict):
    index: int


class DoneInput(_Strict):
    text: str
    success: bool = True


class ClickAction(_Strict):
    click_element_by_index: ClickInput


class DoneAction(_Strict):
    done: DoneInput


class Output(_Strict):
    evaluation_previous_goal: str
    memory: str
    next_goal: str
    action: ClickAction | DoneAction


TOOL = ToolSpec("AgentOutput", "Your reflection, then exactly one action.", Output.model_json_schema())
MESSAGES = [{"role": "system", "content": "You drive a browser."}, {"role": "user", "content": "Click OK."}]


def parse(arguments: Any) -> Output:
    return Output.model_validate(arguments)


def step(action: dict[str, Any], goal: str = "click OK") -> dict[str, Any]:
    return {"evaluation_previous_goal": "start", "memory": "", "next_goal": goal, "action": action}


def config(server: ScriptedLLMServer, **overrides: Any) -> LLMConfig:
    values: dict[str, Any] = {"base_url": server.base_url, "model": "scripted", "api_key": API_KEY,
                              "backoff_base": 0.01, "timeout": 10.0}
    values.update(overrides)
    return LLMConfig(**values)
