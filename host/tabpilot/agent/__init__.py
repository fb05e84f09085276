"""The agent core: page-agent's reflection-before-action loop, its wire types, tools and prompts.

`Agent` (loop.py) is imported lazily so `from tabpilot.agent.types import …` stays light."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .config import AgentConfig
from .tools import Tool, ToolContext, ToolInput, tool
from .types import (
    AgentReflection,
    AgentStatus,
    ErrorEvent,
    ExecutionResult,
    ObservationEvent,
    RetryEvent,
    StepEvent,
    UserTakeoverEvent,
)

if TYPE_CHECKING:
    from .loop import Agent, AgentBusy

__all__ = [
    "Agent",
    "AgentBusy",
    "AgentConfig",
    "AgentReflection",
    "AgentStatus",
    "ErrorEvent",
    "ExecutionResult",
    "ObservationEvent",
    "RetryEvent",
    "StepEvent",
    "Tool",
    "ToolContext",
    "ToolInput",
    "UserTakeoverEvent",
    "tool",
]


def __getattr__(name: str) -> Any:
    if name in ("Agent", "AgentBusy"):
        from . import loop

        return getattr(loop, name)
    raise AttributeError(name)
