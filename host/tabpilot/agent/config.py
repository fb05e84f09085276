"""How an agent behaves: page-agent's AgentConfig, minus the LLM part (that is `llm.LLMConfig`).

Plain values serialise camelCase like page-agent's; the callables (hooks, callbacks, custom tools)
stay on the Python side and are left out of any JSON."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ..llm.vision import VisionMode
from ..store.settings import MAX_STEPS_LIMIT

Language = Literal["en-US", "zh-CN"]
MaybeAwaitable = Any  # a value, or an awaitable of it: hooks and callbacks may be sync or async

PageInstructions = Callable[[str], str | None]
PageContentTransform = Callable[[str], "str | Awaitable[str]"]
AskUser = Callable[[str], "str | Awaitable[str]"]
RequestTakeover = Callable[[str], "Awaitable[Any]"]  # the reason → the UserTakeoverEvent once handed back
# (tool name, its input, the ToolContext) → None to go ahead, else the words saying why the action did not run
ApproveAction = Callable[[str, Any, Any], "str | Awaitable[str | None] | None"]


class AgentConfig(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, arbitrary_types_allowed=True, extra="forbid"
    )

    language: Language = "en-US"
    max_steps: int = Field(default=40, ge=1, le=MAX_STEPS_LIMIT)
    step_delay: float = Field(default=0.4, ge=0, description="seconds between steps")
    system_instructions: str | None = None
    custom_system_prompt: str | None = None
    enable_javascript_tool: bool = False
    use_vision: VisionMode = "auto"
    """Screenshots of the viewport, indices drawn on, for a multimodal model: `auto` when the model is
    known to take images (llm/vision.py), `on`, or `off` (none taken)."""
    upload_paths: list[str] = Field(default_factory=list)
    """Files the model may put into file inputs; without any the `upload_file` tool is not offered."""

    page_instructions: PageInstructions | None = Field(default=None, exclude=True)
    """Called before each step with the current URL; returns instructions for that page, or None."""
    transform_page_content: PageContentTransform | None = Field(default=None, exclude=True)
    """Called on the page text before it goes to the model (masking, inspection)."""
    ask_user: AskUser | None = Field(default=None, exclude=True)
    """Answers the model's questions; without it the `ask_user` tool is not offered."""
    request_takeover: RequestTakeover | None = Field(default=None, exclude=True)
    """Hands the controls to the user (the model's reason shown) and returns the `UserTakeoverEvent` once
    they hand back; without it the `request_takeover` tool is not offered. A task run always sets it."""
    privacy: Any = Field(default=None, exclude=True)
    """A `privacy.guard.PrivacyGuard`: hides secrets and masks personal data in what the model reads, and
    puts the real values in where the model types their names (a task run always sets one)."""
    approve_action: ApproveAction | None = Field(default=None, exclude=True)
    """Called before each action runs (a task run asks the user here, `guards/irreversible.py`)."""
    domains: Any = Field(default=None, exclude=True)
    """The task's `guards.domains.DomainPolicy`: `go_to_url` refuses a URL it does not allow, up front."""
    custom_tools: dict[str, Any] = Field(default_factory=dict, exclude=True)
    """name → `tools.Tool`: adds one, overrides a built-in of that name; name → None removes one."""

    on_before_task: Callable[..., MaybeAwaitable] | None = Field(default=None, exclude=True)
    on_after_task: Callable[..., MaybeAwaitable] | None = Field(default=None, exclude=True)
    on_before_step: Callable[..., MaybeAwaitable] | None = Field(default=None, exclude=True)
    on_after_step: Callable[..., MaybeAwaitable] | None = Field(default=None, exclude=True)
    on_dispose: Callable[..., MaybeAwaitable] | None = Field(default=None, exclude=True)

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
