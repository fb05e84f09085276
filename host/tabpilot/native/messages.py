"""The messages of PROTOCOL.md as pydantic models (camelCase on the wire, snake_case in Python).

`parse_incoming(dict)` validates one frame from the extension and returns its model, or raises
`BadRequest` with a message that names the problem (the host sends it back as a `bad_request` reply).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from ..store.settings import MAX_STEPS_LIMIT


class WireModel(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="ignore")


class Request(WireModel):
    id: str | int | None = None


# --- extension → host requests -----------------------------------------------------------------
class Hello(Request):
    type: Literal["hello"]
    extension_version: str | None = Field(None, alias="extensionVersion")


class Ping(Request):
    type: Literal["ping"]


# --- task.*: requests from the extension and the pushes the host sends about each task -----------
class ExecutionConfig(WireModel):
    """page-agent's ExecutionConfig minus the callbacks (those stay in the page)."""

    base_url: str | None = Field(None, alias="baseURL")
    model: str | None = None
    api_key: str | None = Field(None, alias="apiKey", repr=False)
    system_instruction: str | None = Field(None, alias="systemInstruction")
    include_initial_tab: bool | None = Field(None, alias="includeInitialTab")
    experimental_include_all_tabs: bool | None = Field(None, alias="experimentalIncludeAllTabs")
    max_steps: int | None = Field(None, alias="maxSteps", ge=1, le=MAX_STEPS_LIMIT)
    language: Literal["en-US", "zh-CN"] | None = None


class TaskStart(Request):
    type: Literal["task.start"]
    task: str = Field(min_length=1, max_length=20_000)
    tab_id: int = Field(alias="tabId")
    config: ExecutionConfig | None = None
    source: Literal["popup", "page", "mcp"] = "popup"
    url: str | None = Field(None, max_length=20_000)  # open this page in the tab first (MCP's run_task)


class TaskStop(Request):
    """Without taskId: the one running task (refused when several run)."""

    type: Literal["task.stop"]
    task_id: str | None = Field(None, alias="taskId", min_length=1)


class TaskGet(Request):
    """By taskId; else the running (or last) task of tabId; else the latest task."""

    type: Literal["task.get"]
    task_id: str | None = Field(None, alias="taskId", min_length=1)
    tab_id: int | None = Field(None, alias="tabId")


class TaskList(Request):
    type: Literal["task.list"]


class TaskPause(Request):
    type: Literal["task.pause"]
    task_id: str = Field(alias="taskId", min_length=1)


class TaskResume(Request):
    type: Literal["task.resume"]
    task_id: str = Field(alias="taskId", min_length=1)


class TaskPush(WireModel):
    task_id: str = Field(alias="taskId")

    def to_frame(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class TaskStatusPush(TaskPush):
    type: Literal["task.status"] = "task.status"
    status: Literal["running", "completed", "error", "stopped"]


class TaskActivityPush(TaskPush):
    type: Literal["task.activity"] = "task.activity"
    activity: dict[str, Any]  # AgentActivity, `paused {reason}` / `resumed` included


class TaskEventPush(TaskPush):
    type: Literal["task.event"] = "task.event"
    event: dict[str, Any]  # one HistoricalEvent, as recorded


class TaskResultPush(TaskPush):
    type: Literal["task.result"] = "task.result"
    result: dict[str, Any]  # ExecutionResult {success, data, history}


# --- settings.* and history.* ----------------------------------------------------------------------
class SettingsGet(Request):
    type: Literal["settings.get"]


class SettingsSet(Request):
    type: Literal["settings.set"]
    base_url: str | None = Field(None, alias="baseURL")
    model: str | None = None
    api_key: str | None = Field(None, alias="apiKey", repr=False)
    max_steps: int | None = Field(None, alias="maxSteps", ge=1, le=MAX_STEPS_LIMIT)
    language: str | None = None


class SettingsTest(Request):
    """Test connection: the form's values as typed; what is left out comes from the saved settings."""

    type: Literal["settings.test"]
    base_url: str | None = Field(None, alias="baseURL")
    model: str | None = None
    api_key: str | None = Field(None, alias="apiKey", repr=False)


class HistoryList(Request):
    type: Literal["history.list"]
    limit: int = Field(50, ge=1, le=1000)


class HistoryGet(Request):
    type: Literal["history.get"]
    task_id: str = Field(alias="taskId", min_length=1)


class HistoryExport(Request):
    type: Literal["history.export"]
    task_id: str = Field(alias="taskId", min_length=1)


class HistoryDelete(Request):
    type: Literal["history.delete"]
    task_id: str = Field(alias="taskId", min_length=1)


# --- approvals (native/consent.py) -----------------------------------------------------------------
class ApprovalAnswer(Request):
    type: Literal["approval.answer"]
    approval_id: str = Field(alias="approvalId", min_length=1)
    decision: Literal["once", "always", "deny"]


# --- frames the extension sends that are not requests ------------------------------------------
class ErrorInfo(WireModel):
    message: str
    code: str | int | None = None


class Reply(WireModel):
    type: Literal["reply"]
    id: str | int | None
    ok: bool
    data: Any = None
    error: ErrorInfo | None = None


class CdpEvent(WireModel):
    type: Literal["cdp.event"]
    tab_id: int = Field(alias="tabId")
    session_id: str | None = Field(None, alias="sessionId")
    method: str
    params: dict[str, Any] = Field(default_factory=dict)


class CdpDetached(WireModel):
    type: Literal["cdp.detached"]
    tab_id: int = Field(alias="tabId")
    reason: str = "unknown"


class TabsEvent(WireModel):
    type: Literal["tabs.event"]
    event: str
    tab: dict[str, Any] = Field(default_factory=dict)


Incoming = Annotated[
    Hello
    | Ping
    | TaskStart
    | TaskStop
    | TaskGet
    | TaskList
    | TaskPause
    | TaskResume
    | SettingsGet
    | SettingsSet
    | SettingsTest
    | HistoryList
    | HistoryGet
    | HistoryExport
    | HistoryDelete
    | ApprovalAnswer
    | Reply
    | CdpEvent
    | CdpDetached
    | TabsEvent,
    Field(discriminator="type"),
]
_incoming = TypeAdapter(Incoming)
KNOWN_TYPES = sorted(
    m.model_fields["type"].annotation.__args__[0]  # type: ignore[union-attr]
    for m in Incoming.__origin__.__args__  # type: ignore[attr-defined]
)


class BadRequest(ValueError):
    def __init__(self, message: str, request_id: str | int | None = None) -> None:
        super().__init__(message)
        self.request_id = request_id


def parse_incoming(frame: dict[str, Any]) -> Any:
    request_id = frame.get("id") if isinstance(frame.get("id"), str | int) else None
    kind = frame.get("type")
    if kind is None:
        raise BadRequest("message has no 'type'", request_id)
    if kind not in KNOWN_TYPES:
        raise BadRequest(f"unknown message type {kind!r} (known: {', '.join(KNOWN_TYPES)})", request_id)
    try:
        return _incoming.validate_python(frame)
    except ValidationError as exc:
        raise BadRequest(f"invalid {kind}: {describe_errors(exc, skip=1)}", request_id) from None  # loc[0]: the tag


def describe_errors(exc: ValidationError, *, skip: int = 0) -> str:
    """The first few problems, each naming its field (`skip` drops leading location parts)."""
    parts = []
    for error in exc.errors(include_url=False)[:5]:
        location = ".".join(str(p) for p in error["loc"][skip:]) or "message"
        parts.append(f"field '{location}': {error['msg']}")
    return "; ".join(parts)
