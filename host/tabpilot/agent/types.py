"""The agent's wire types, shaped exactly like page-agent's (camelCase on the wire, snake_case here).

`AgentReflection` keeps its snake_case keys on the wire too: page-agent sends them that way.
Serialise with `to_wire(model)` (aliases, optional fields left out when unset)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.alias_generators import to_camel

AgentStatus = Literal["idle", "running", "completed", "error", "stopped"]


class WireModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


# --- activity: what the agent is doing right now (transient, for the UI) ---------------------------
class ThinkingActivity(WireModel):
    type: Literal["thinking"] = "thinking"


class ExecutingActivity(WireModel):
    type: Literal["executing"] = "executing"
    tool: str
    input: Any = None


class ExecutedActivity(WireModel):
    type: Literal["executed"] = "executed"
    tool: str
    input: Any = None
    output: str
    duration: float = Field(description="milliseconds")


class RetryingActivity(WireModel):
    type: Literal["retrying"] = "retrying"
    attempt: int
    max_attempts: int


class ErrorActivity(WireModel):
    type: Literal["error"] = "error"
    message: str


class WaitingActivity(WireModel):
    """tabpilot's own: the model has not answered for `seconds` ("the model has not answered for 30 s")."""

    type: Literal["waiting"] = "waiting"
    seconds: float
    message: str


class PausedActivity(WireModel):
    """tabpilot's own: the run is paused between steps (nothing is dispatched until it resumes)."""

    type: Literal["paused"] = "paused"
    reason: str | None = None


class ResumedActivity(WireModel):
    type: Literal["resumed"] = "resumed"


AgentActivity = Annotated[
    ThinkingActivity
    | ExecutingActivity
    | ExecutedActivity
    | RetryingActivity
    | ErrorActivity
    | PausedActivity
    | ResumedActivity
    | WaitingActivity,
    Field(discriminator="type"),
]


# --- history: the persistent record, and the agent's memory -----------------------------------------
class AgentReflection(BaseModel):
    """The model's reflection before each action. Snake_case on the wire, as page-agent sends it."""

    model_config = ConfigDict(extra="ignore")

    evaluation_previous_goal: str = ""
    memory: str = ""
    next_goal: str = ""

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class StepAction(WireModel):
    name: str
    input: Any = None
    output: str = ""


class StepUsage(WireModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None


class StepEvent(WireModel):
    type: Literal["step"] = "step"
    step_index: int
    reflection: AgentReflection
    action: StepAction
    usage: StepUsage = Field(default_factory=StepUsage)
    raw_response: Any = None
    raw_request: Any = None

    def to_prompt(self, full: bool = True) -> str:
        """This step as the model reads it in its history: whole, or condensed to one line."""
        number = self.step_index + 1
        action = f"{self.action.name} {_compact(self.action.input)}"
        if not full:
            return (
                f"<step_{number}>{_one_line(self.reflection.next_goal, 80)} → {_one_line(action, 80)} → "
                f"{_one_line(self.action.output, 80)}</step_{number}>"
            )
        return (
            f"<step_{number}>\n"
            f"Evaluation of Previous Step: {self.reflection.evaluation_previous_goal}\n"
            f"Memory: {self.reflection.memory}\n"
            f"Next Goal: {self.reflection.next_goal}\n"
            f"Action: {_clip(action, 600)}\n"
            f"Action Results: {_clip(self.action.output, 2000)}\n"
            f"</step_{number}>"
        )


class ObservationEvent(WireModel):
    type: Literal["observation"] = "observation"
    content: str

    def to_prompt(self, full: bool = True) -> str:
        return f"<sys>{_clip(self.content, 1000)}</sys>"


class UserTakeoverEvent(WireModel):
    """The user took the controls. page-agent's event has only `type`; tabpilot adds what the user
    did (`actions`: one dict per recorded input), when (epoch milliseconds) and an optional note."""

    type: Literal["user_takeover"] = "user_takeover"
    actions: list[dict[str, Any]] = Field(default_factory=list)
    started_at: float | None = None
    ended_at: float | None = None
    note: str | None = None

    def to_prompt(self, full: bool = True) -> str:
        text = "User took over control and made changes to the page"
        if full and self.actions:
            done = [_one_line(str(a.get("description") or _compact(a)), 100) for a in self.actions[-8:]]
            skipped = len(self.actions) - len(done)
            text += ": " + "; ".join(done) + (f" (and {skipped} earlier actions)" if skipped else "")
        if self.note:
            text += f". The user's note: {_clip(self.note, 500)}"
        return f"<sys>{text}</sys>"


class RetryEvent(WireModel):
    type: Literal["retry"] = "retry"
    message: str
    attempt: int
    max_attempts: int

    def to_prompt(self, full: bool = True) -> None:
        return None  # transient trouble with the model call: for the record, not for its memory


class ErrorEvent(WireModel):
    type: Literal["error"] = "error"
    message: str
    raw_response: Any = None

    def to_prompt(self, full: bool = True) -> None:
        return None


AnyEvent = StepEvent | ObservationEvent | UserTakeoverEvent | RetryEvent | ErrorEvent
HistoricalEvent = Annotated[AnyEvent, Field(discriminator="type")]


class ExecutionResult(WireModel):
    success: bool
    data: str
    history: list[HistoricalEvent] = Field(default_factory=list)


_event_adapter: TypeAdapter[Any] = TypeAdapter(HistoricalEvent)
_activity_adapter: TypeAdapter[Any] = TypeAdapter(AgentActivity)


def parse_event(data: dict[str, Any]) -> AnyEvent:
    """A HistoricalEvent from its wire JSON (e.g. a stored row)."""
    return _event_adapter.validate_python(data)


def parse_activity(data: dict[str, Any]) -> Any:
    return _activity_adapter.validate_python(data)


def to_wire(model: BaseModel) -> dict[str, Any]:
    """Any of the models above as page-agent-shaped JSON."""
    if hasattr(model, "to_wire"):
        return model.to_wire()  # type: ignore[no-any-return]
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _one_line(text: str, limit: int) -> str:
    return _clip(" ".join(text.split()), limit)
