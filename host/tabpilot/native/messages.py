"""Every frame of PROTOCOL.md as a pydantic model (camelCase on the wire, snake_case in Python).

A frame's direction is its base class: `Request` (extension → host, answered by the host),
`ExtensionPush` (extension → host, no answer), `HostRequest` (host → extension, answered by the
extension; it names the model of its reply's data), `HostPush` (host → extension, no answer). `reply`
(`ReplyOk` / `ReplyError`) goes both ways. `frame_types(base)` lists the `type`s of one direction:
tests/test_protocol_contract.py holds PROTOCOL.md and the extension's JS to those lists.

`parse_incoming(dict)` validates one frame from the extension and returns its model, or raises
`BadRequest` with a message that names the problem (the host sends it back as a `bad_request` reply).
Frames are validated strictly: a field takes its JSON type only (`tabId: true` or `"12"` is refused, never
read as tab 1 or 12), so a wrong value cannot act on another tab, task or count.
Build outgoing frames with the models and send `model.to_frame()`.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, ClassVar, Generic, Literal, TypeVar, Union, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
    model_serializer,
    model_validator,
)

from ..i18n import WordedError, Words, dotted, listed_problems, value_problem
from ..llm.vision import VisionMode
from ..store.settings import INSTRUCTION_LENGTH, MAX_STEPS_LIMIT, ApiKey, EndpointURL, ModelName
from ..textsafety import clipped
from .replies import MAX_ID_CHARS, MAX_ID_NUMBER, request_id_of


# --- the bases: one per direction ------------------------------------------------------------------
class WireModel(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    # Fields left out of the frame when None (the wire has "absent", not null, for these), and fields
    # left out when the frame this model was read from had none (absent and null differ for these).
    omit_if_none: ClassVar[frozenset[str]] = frozenset()
    omit_if_unset: ClassVar[frozenset[str]] = frozenset()

    @model_serializer(mode="wrap")
    def _leave_out_absent(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        absent = {name for name in self.omit_if_unset if name not in self.model_fields_set}
        for name in self.omit_if_none | absent:
            for key in (name, type(self).model_fields[name].alias):
                if key is not None and key in data and (data[key] is None or name in absent):
                    del data[key]
        return data

    def to_frame(self) -> dict[str, Any]:
        """The JSON object to send (camelCase keys)."""
        frame: dict[str, Any] = self.model_dump(by_alias=True)
        return frame


class Empty(WireModel):
    """`{}`: the data of a reply that only says "done"."""




def _usable_id(value: str | int | None) -> str | int | None:
    if value is not None and request_id_of({"id": value}) is None:
        raise WordedError("wire.id", chars=MAX_ID_CHARS, number=MAX_ID_NUMBER)
    return value


# as sent: `true` is no id, never 1; a longer text or a larger number is refused (replies.request_id_of says which)
RequestId = Annotated[StrictStr | StrictInt | None, AfterValidator(_usable_id)]
# What a refusal repeats of a frame's own names (its type, a field's place): no more than this many characters.
MAX_NAME_SHOWN = 64


class Request(WireModel):
    """Extension → host: answered with one `reply` carrying the same id."""

    id: RequestId = None


class ExtensionPush(WireModel):
    """Extension → host, no reply."""


ReplyData = TypeVar("ReplyData")


class HostRequest(WireModel, Generic[ReplyData]):
    """Host → extension: the peer gives it an id; `parse_reply` types the data of the extension's reply
    as the model a request names in its base, e.g. `class TabsQuery(HostRequest[TabsQueryData])`."""

    type: str  # each request narrows it to its Literal

    @classmethod
    @functools.cache
    def _reply_adapter(cls) -> TypeAdapter[Any]:
        for ancestor in cls.__mro__:
            generic = getattr(ancestor, "__pydantic_generic_metadata__", None)
            if generic and generic["origin"] is HostRequest and generic["args"]:
                return TypeAdapter(generic["args"][0])
        raise TypeError(f"{cls.__name__} does not say what its reply's data is: HostRequest[<model>]")

    def parse_reply(self, data: Any) -> ReplyData:
        parsed: ReplyData = self._reply_adapter().validate_python({} if data is None else data, strict=True)
        return parsed


class HostPush(WireModel):
    """Host → extension, no reply."""


# --- replies (either direction) ----------------------------------------------------------------------
# The codes the host answers with (PROTOCOL.md explains each). The extension answers a failed CDP
# command with CDP's own numeric code, and a request it cannot use with "bad_request".
HostErrorCode = Literal[
    "bad_request", "busy", "not_configured", "not_found", "tab", "settings", "internal", "shutting_down",
    "not_allowed", "denied", "cancelled",
    "link", "failed",
]


class ErrorInfo(WireModel):
    omit_if_none = frozenset({"code"})
    message: str
    code: str | int | None = None


class ReplyOk(WireModel):
    type: Literal["reply"] = "reply"
    id: RequestId
    ok: Literal[True] = True
    data: Any = None


class ReplyError(WireModel):
    type: Literal["reply"] = "reply"
    id: RequestId
    ok: Literal[False] = False
    error: ErrorInfo = Field(default_factory=lambda: ErrorInfo(message="failed (no reason given)"))


Reply = Annotated[ReplyOk | ReplyError, Field(discriminator="ok")]


# --- hello, ping -------------------------------------------------------------------------------------
class Hello(Request):
    type: Literal["hello"]
    extension_version: str | None = Field(None, alias="extensionVersion")
    ui_language: str | None = Field(None, alias="uiLanguage")  # the popup's language: the host's messages follow it
    features: list[str] = Field(default_factory=list)  # optional host requests it takes (OPTIONAL_HOST_REQUESTS)


class Ping(Request):
    type: Literal["ping"]


class PingData(WireModel):
    pong: Literal[True] = True


# --- task.*: engineer A's block (requests from the extension, pushes about each task) ----------------
class ExecutionConfig(WireModel):
    """page-agent's ExecutionConfig minus the callbacks (those stay in the page)."""

    base_url: EndpointURL | None = Field(None, alias="baseURL")
    model: ModelName | None = None
    api_key: ApiKey | None = Field(None, alias="apiKey", repr=False)
    system_instruction: str | None = Field(None, alias="systemInstruction", max_length=INSTRUCTION_LENGTH)
    include_initial_tab: bool | None = Field(None, alias="includeInitialTab")
    experimental_include_all_tabs: bool | None = Field(None, alias="experimentalIncludeAllTabs")
    max_steps: int | None = Field(None, alias="maxSteps", ge=1, le=MAX_STEPS_LIMIT)
    language: Literal["en-US", "zh-CN"] | None = None


class TaskStart(Request):
    type: Literal["task.start"]
    # Its length is checked where every way a task starts checks it (taskrun/plan.py MAX_TASK_CHARS, worded: what
    # to do instead); a limit of its own here refused 20,001 to 200,000 characters in pydantic's words.
    task: str = Field(min_length=1)
    tab_id: int = Field(alias="tabId")
    config: ExecutionConfig | None = None
    source: Literal["popup", "panel", "page", "mcp"] = "popup"  # panel: the side panel
    url: str | None = Field(None, max_length=20_000)  # open this page in the tab first (MCP's run_task)
    origin: str | None = Field(None, max_length=2048)  # source "page": the calling frame's origin, as Chromium says
    # source "page", page-agent's scheme: the token the page held (a site not in the list counts as allowed)
    page_token: str | None = Field(None, alias="pageToken", max_length=512, repr=False)
    # source "mcp": the client's name as it said it in its hello, set by the host's local endpoint (recorded)
    client: str | None = Field(None, max_length=200)


class TaskStop(Request):
    """Without taskId: the one running task (refused when several run)."""

    type: Literal["task.stop"]
    task_id: str | None = Field(None, alias="taskId", min_length=1)
    page_silent: bool = Field(False, alias="pageSilent")  # as TaskHandback's
    # who stopped it, for the task's result to say (not the person): a local client's name, set by the host's local
    # endpoint; a page's origin, set by the extension's bridge (PAGE_AGENT_EXT.stop())
    client: str | None = Field(None, max_length=200)
    origin: str | None = Field(None, max_length=2048)


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


# --- user takeover (issue 10): the user takes the controls of a task and hands them back ----------
def _kept_to(limit: int) -> BeforeValidator:
    """Text a page controls in what the person did, kept up to `limit` characters (the field's max_length): cut, not
    refused. Refused, one action over a limit lost the whole batch, and nothing the person did was recorded (a page
    at a 30,000-character address, a list whose script selected all 120 long options)."""
    return BeforeValidator(lambda text: text[:limit] if isinstance(text, str) else text)


class TakeoverAction(WireModel):
    """One semantic action capture.js recorded: `target` names the element as a person would
    (`textbox "Email"`); `value` is "•••" for password / one-time-code / card fields."""

    kind: Literal["click", "input", "select", "check", "submit", "key", "navigate", "scroll", "tab"]
    target: Annotated[str, _kept_to(1000)] = Field("", max_length=1000)
    value: Annotated[str | None, _kept_to(20_000)] = Field(None, max_length=20_000)
    url: Annotated[str, _kept_to(10_000)] = Field("", max_length=10_000)
    at: float  # when the person did it (epoch ms; a field: its first key since its last report): the order kept
    again: bool | None = None  # an input into the field the previous action typed in (typing resumed after a pause)
    blank: bool | None = None  # a click that reached no control: on an empty area of `target` (an area, or "page")
    # of such a click, the area's no name: what it holds that a person would tell it by (`textbox "Email"`)
    holding: list[Annotated[str, _kept_to(300), Field(max_length=300)]] | None = Field(None, max_length=3)


class TaskTakeover(Request):
    type: Literal["task.takeover"]
    task_id: str = Field(alias="taskId", min_length=1)
    reason: Literal["user", "implicit"] = "user"
    # when the person took the controls (epoch ms; their press, their first input): the takeover's start, by which the
    # extension tells what the page's frames recorded for it (`takeover.late` names it so)
    started_at: int | None = Field(None, alias="startedAt", ge=0)


MAX_ACTIONS_A_BATCH = 1000
_ONE_ACTION: TypeAdapter[TakeoverAction] = TypeAdapter(TakeoverAction)


class ActionBatch(Request):
    """A batch of what the person did (`takeover.actions`, `takeover.late`). An action in it that is not one (an unknown
    kind, a time that is no number) is left out, `dropped` says where it was wrong, and the batch's other actions are
    kept: refused whole, the person's valid actions in it were lost with it."""

    type: str  # each kind of batch's own
    task_id: str = Field(alias="taskId", min_length=1)
    actions: list[TakeoverAction] = Field(max_length=MAX_ACTIONS_A_BATCH)
    _dropped: list[str] = PrivateAttr(default_factory=list)

    @model_validator(mode="wrap")
    @classmethod
    def _leave_out_bad_actions(cls, data: Any, handler: ModelWrapValidatorHandler[ActionBatch]) -> ActionBatch:
        given = data.get("actions") if isinstance(data, dict) else None
        if not isinstance(given, list) or len(given) > MAX_ACTIONS_A_BATCH:
            return handler(data)  # refused whole, as it says
        kept, dropped = [], []
        for number, action in enumerate(given):
            try:
                _ONE_ACTION.validate_python(action, strict=True)
                kept.append(action)
            except ValidationError as exc:
                dropped.append(f"action {number}: {_wrong_fields(exc)}")
        batch = handler({**data, "actions": kept} if dropped else data)
        batch._dropped = dropped
        return batch

    @property
    def dropped(self) -> list[str]:
        """Each action left out: its place in the batch and its fields that were wrong, never their values (an action
        holds what the person typed)."""
        return self._dropped


def _wrong_fields(exc: ValidationError) -> str:
    """`field 'at' (float_type), …`: where a value was wrong and how, by pydantic's error type (it holds no value)."""
    return ", ".join(f"{_field_named(tuple(error['loc']))} ({error['type']})" for error in exc.errors()[:5])


def _field_named(location: tuple[int | str, ...]) -> str:
    return f"field '{_field(location)}'" if location else "not an object"


class TakeoverActions(ActionBatch):
    type: Literal["takeover.actions"]


class TakeoverLate(ActionBatch):
    """What the frames that did not answer in time at Hand back or Stop (`pageSilent`) gave afterwards, for the
    takeover that ended then: the one begun at `startedAt`, as the Hand back's or Stop's reply said; without it (that
    reply never came: its host went first), the task's last that ended waiting for its page."""

    type: Literal["takeover.late"]
    page_silent: bool = Field(False, alias="pageSilent")  # a frame has still not answered
    started_at: float | None = Field(None, alias="startedAt")


class TaskHandback(Request):
    type: Literal["task.handback"]
    task_id: str = Field(alias="taskId", min_length=1)
    note: str | None = Field(None, max_length=5000)
    # a frame of the page did not give what it still held (its script hangs): the person's last actions may be missing
    page_silent: bool = Field(False, alias="pageSilent")


class TaskAnswer(Request):
    type: Literal["task.answer"]
    task_id: str = Field(alias="taskId", min_length=1)
    answer: str = Field(max_length=5000)


class TaskApprove(Request):
    """The user's answer to the action a task waits on (its `approval`): run it, refuse it, or take the controls."""

    type: Literal["task.approve"]
    task_id: str = Field(alias="taskId", min_length=1)
    decision: Literal["allow", "deny", "takeover"]


class TaskPush(HostPush):
    task_id: str = Field(alias="taskId")

    def to_frame(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class TaskStatusPush(TaskPush):
    type: Literal["task.status"] = "task.status"
    status: Literal["running", "completed", "error", "stopped"]
    gave_up: bool | None = Field(default=None, alias="gaveUp")  # the final one's: RunFinished.gave_up
    omit_if_none: ClassVar[frozenset[str]] = frozenset({"gave_up"})


class TaskActivityPush(TaskPush):
    type: Literal["task.activity"] = "task.activity"
    activity: dict[str, Any]  # AgentActivity, `paused {reason}` / `resumed` included


class TaskEventPush(TaskPush):
    type: Literal["task.event"] = "task.event"
    event: dict[str, Any]  # one HistoricalEvent, as recorded


class TaskAmendedPush(TaskPush):
    """An event pushed before, changed: a takeover the page's late answer completed (`takeover.late`)."""

    type: Literal["task.amended"] = "task.amended"
    event: dict[str, Any]  # it replaces the pushed event of its `type` that has its `startedAt`


class TaskControlPush(TaskPush):
    """Who has the controls (`control`: null while the agent works) and the agent's pending question."""

    type: Literal["task.control"] = "task.control"
    control: dict[str, Any] | None  # {by: "user", reason, startedAt, message?}
    question: str | None
    approval: dict[str, Any] | None = None  # an action waiting for the user's yes: {action, site, why, whyCode, …}


class TaskResultPush(TaskPush):
    type: Literal["task.result"] = "task.result"
    result: dict[str, Any]  # ExecutionResult {success, data, history}
    gave_up: bool = Field(default=False, alias="gaveUp")  # RunFinished.gave_up


# --- settings.* ----------------------------------------------------------------------------------------
class SettingsGet(Request):
    type: Literal["settings.get"]


class SettingsSet(Request):
    type: Literal["settings.set"]
    base_url: str | None = Field(None, alias="baseURL")
    model: str | None = None
    api_key: str | None = Field(None, alias="apiKey", repr=False)
    max_steps: int | None = Field(None, alias="maxSteps", ge=1, le=MAX_STEPS_LIMIT)
    language: str | None = None
    mask_emails: bool | None = Field(None, alias="maskEmails")
    mask_phones: bool | None = Field(None, alias="maskPhones")
    mask_cards: bool | None = Field(None, alias="maskCards")
    mask_ibans: bool | None = Field(None, alias="maskIbans")
    mask_patterns: list[str] | None = Field(None, alias="maskPatterns")
    allowed_domains: list[str] | None = Field(None, alias="allowedDomains")
    blocked_domains: list[str] | None = Field(None, alias="blockedDomains")
    ask_before: Literal["never", "irreversible", "every"] | None = Field(None, alias="askBefore")
    use_vision: VisionMode | None = Field(None, alias="useVision")


class SettingsTest(Request):
    """Test connection: the form's values as typed; what is left out comes from the saved settings."""

    type: Literal["settings.test"]
    base_url: EndpointURL | Literal[""] | None = Field(None, alias="baseURL")  # "": the saved one
    model: ModelName | None = None
    api_key: ApiKey | None = Field(None, alias="apiKey", repr=False)


class SettingsData(WireModel):
    """settings.get / settings.set reply: everything but the key itself."""

    base_url: str | None = Field(alias="baseURL")
    model: str | None
    api_key_set: bool = Field(alias="apiKeySet")
    api_key_hint: str | None = Field(alias="apiKeyHint")  # "sk-…abcd"
    max_steps: int = Field(alias="maxSteps")
    max_steps_limit: int = Field(alias="maxStepsLimit")  # the one limit settings, a page's config and the agent share
    language: str
    debug_capture: bool = Field(alias="debugCapture")
    model_deadline: float = Field(alias="modelDeadline")  # seconds one model call may take, retries included
    max_reply_mb: float = Field(alias="maxReplyMB")  # a longer model reply fails that attempt
    mask_emails: bool = Field(alias="maskEmails")  # masking what reaches the model
    mask_phones: bool = Field(alias="maskPhones")
    mask_cards: bool = Field(alias="maskCards")
    mask_ibans: bool = Field(alias="maskIbans")
    mask_patterns: list[str] = Field(alias="maskPatterns")
    allowed_domains: list[str] = Field(alias="allowedDomains")  # every task may go only there (empty: anywhere)
    blocked_domains: list[str] = Field(alias="blockedDomains")  # and never there
    ask_before: str = Field(alias="askBefore")  # never | irreversible | every
    use_vision: VisionMode = Field(alias="useVision")  # screenshots for the model: auto | on | off


# --- secrets.* -----------------------------------------------------------------------------------------
class SecretsList(Request):
    type: Literal["secrets.list"]


class SecretsSet(Request):
    """A secret's value goes from the popup's form straight here; the reply (and every push) never has it."""

    type: Literal["secrets.set"]
    name: str
    domain: str
    value: str = Field(repr=False)
    any_field: bool | None = Field(None, alias="anyField")  # None: as it was stored (a new secret: login fields only)


class SecretsDelete(Request):
    type: Literal["secrets.delete"]
    name: str


# --- history.* -----------------------------------------------------------------------------------------
class HistoryList(Request):
    type: Literal["history.list"]
    limit: int = Field(50, ge=1, le=1000)
    # words every task listed has in its text or its result, in any case (store/search.py TaskQuery)
    search: str | None = Field(None, max_length=1000)


class HistoryGet(Request):
    type: Literal["history.get"]
    task_id: str = Field(alias="taskId", min_length=1)


class HistoryExport(Request):
    type: Literal["history.export"]
    task_id: str = Field(alias="taskId", min_length=1)


class HistoryDelete(Request):
    type: Literal["history.delete"]
    task_id: str = Field(alias="taskId", min_length=1)


class HistoryTask(WireModel):
    """One recorded task as history.list and history.get give it; times in epoch milliseconds."""

    task_id: str = Field(alias="taskId")
    task: str
    status: str  # running | completed | error | stopped | interrupted
    source: str
    requester: str | None = None  # who asked besides the person: a page's origin, an MCP client's name
    started_by: str = Field(alias="startedBy")  # popup | terminal | page | mcp (store TaskSummary.started_by)
    started_at: int = Field(alias="startedAt")
    ended_at: int | None = Field(alias="endedAt")
    steps: int
    prompt_tokens: int = Field(alias="promptTokens")
    completion_tokens: int = Field(alias="completionTokens")
    total_tokens: int = Field(alias="totalTokens")
    url: str | None
    model: str | None
    result_text: str | None = Field(alias="resultText")
    success: bool | None
    gave_up: bool = Field(default=False, alias="gaveUp")  # ended "error" by the agent's verdict (store agent_gave_up)
    # how it ended in a line, in the extension's language: its result's first line, or the error it ended with
    outcome: str | None
    took_over: bool = Field(alias="tookOver")  # the person took the controls during it


class HistoryListData(WireModel):
    tasks: list[HistoryTask]


class HistoryGetData(WireModel):
    task: HistoryTask
    result: dict[str, Any] | None  # ExecutionResult without its history (the events are the history)
    events: list[dict[str, Any]]  # HistoricalEvents, as recorded


class TokenUsage(WireModel):
    prompt_tokens: int = Field(alias="promptTokens")
    completion_tokens: int = Field(alias="completionTokens")
    total_tokens: int = Field(alias="totalTokens")


class HistoryExportData(WireModel):
    """page-agent's ExecutionResult (`success`, `data`, `history`) next to what we know about the task."""

    success: bool
    data: str
    history: list[dict[str, Any]]
    task: str
    task_id: str = Field(alias="taskId")
    status: str
    gave_up: bool = Field(default=False, alias="gaveUp")
    url: str | None
    model: str | None
    source: str
    requester: str | None = None
    started_at: int = Field(alias="startedAt")
    ended_at: int | None = Field(alias="endedAt")
    steps: int
    usage: TokenUsage


# --- the CDP relay: host → extension requests, extension → host pushes ----------------------------------
class ChromeTab(WireModel):
    """A tab as chrome.tabs shows it (a `removed` tabs.event carries only the tabId)."""

    omit_if_unset = frozenset({"opener_tab_id"})

    tab_id: int = Field(alias="tabId")
    url: str = ""
    title: str = ""
    active: bool = False
    opener_tab_id: int | None = Field(None, alias="openerTabId")  # the tab that opened it (absent: not said)


class CdpAttach(HostRequest[Empty]):
    type: Literal["cdp.attach"] = "cdp.attach"
    tab_id: int = Field(alias="tabId")


class CdpDetach(HostRequest[Empty]):
    type: Literal["cdp.detach"] = "cdp.detach"
    tab_id: int = Field(alias="tabId")


class CdpCommand(WireModel):
    """One CDP command in a tab (or a flattened child session of it)."""

    omit_if_none = frozenset({"session_id"})
    tab_id: int = Field(alias="tabId")
    session_id: str | None = Field(None, alias="sessionId")
    method: str
    params: dict[str, Any] = Field(default_factory=dict)


class CdpSend(CdpCommand, HostRequest[dict[str, Any]]):
    """One CDP command; the reply's data is its result."""

    type: Literal["cdp.send"] = "cdp.send"


class CdpOutcome(WireModel):
    """What became of one command of a batch: its result, or CDP's error."""

    omit_if_none = frozenset({"result", "error"})
    result: dict[str, Any] | None = None
    error: ErrorInfo | None = None


class CdpBatchData(WireModel):
    results: list[CdpOutcome]


class CdpBatch(HostRequest[CdpBatchData]):
    """Several CDP commands in one frame, sent on in order without waiting for each other's replies (as
    commands written in a row to a DevTools websocket are); the reply holds their outcomes in the same
    order. Only to an extension whose hello listed `cdp.batch` in its `features`."""

    type: Literal["cdp.batch"] = "cdp.batch"
    commands: list[CdpCommand]


class CdpInput(HostRequest[CdpBatchData]):
    """A run of input commands (typing's key events) the extension paces itself: sent on in order with at
    most `window` unanswered at once, the rest refused unsent once the user has the controls of their tab.
    The reply is as `cdp.batch`'s. Only to an extension whose hello listed `cdp.input` in its `features`."""

    type: Literal["cdp.input"] = "cdp.input"
    commands: list[CdpCommand]
    window: int = Field(ge=1)


# Host → extension requests an extension may lack (an older one): sent only when its hello lists them.
OPTIONAL_HOST_REQUESTS = frozenset({"cdp.batch", "cdp.input"})


class TabsQueryData(WireModel):
    tabs: list[ChromeTab]


class TabsQuery(HostRequest[TabsQueryData]):
    type: Literal["tabs.query"] = "tabs.query"


class TabsCreateData(WireModel):
    tab: ChromeTab


class TabsCreate(HostRequest[TabsCreateData]):
    omit_if_none = frozenset({"url", "active"})
    type: Literal["tabs.create"] = "tabs.create"
    url: str | None = None
    active: bool | None = None  # false: it opens behind the tab in front (absent: in front)


class TabsActivate(HostRequest[Empty]):
    type: Literal["tabs.activate"] = "tabs.activate"
    tab_id: int = Field(alias="tabId")


class TabsClose(HostRequest[Empty]):
    type: Literal["tabs.close"] = "tabs.close"
    tab_id: int = Field(alias="tabId")


class GuardRules(HostRequest[Empty]):
    """The task's domains, enforced by the extension itself for its tabs (declarativeNetRequest session rules)
    before any request leaves, the tabs they open included (extension/worker/guards.js). `tab_ids` are added
    to the ones the task had; the domains replace its previous ones."""

    type: Literal["guard.rules"] = "guard.rules"
    task_id: str = Field(alias="taskId", min_length=1)
    tab_ids: list[int] = Field(alias="tabIds")
    allowed_domains: list[str] = Field(alias="allowedDomains")
    blocked_domains: list[str] = Field(alias="blockedDomains")


class GuardClear(HostRequest[Empty]):
    """The task's rules go away (it ended, or the user has the controls)."""

    type: Literal["guard.clear"] = "guard.clear"
    task_id: str = Field(alias="taskId", min_length=1)


class CdpEvent(ExtensionPush):
    type: Literal["cdp.event"]
    tab_id: int = Field(alias="tabId")
    session_id: str | None = Field(None, alias="sessionId")
    method: str
    params: dict[str, Any] = Field(default_factory=dict)


class CdpDetached(ExtensionPush):
    type: Literal["cdp.detached"]
    tab_id: int = Field(alias="tabId")
    reason: str = "unknown"  # canceled_by_user: the user pressed Cancel on the infobar


class TabsEvent(ExtensionPush):
    type: Literal["tabs.event"]
    event: Literal["created", "removed", "updated"]
    tab: ChromeTab


# --- sites.* and approval.*: the page bridge's permissions and the user's answers ------------------
class SitesList(Request):
    type: Literal["sites.list"]


class SitesAllow(Request):
    type: Literal["sites.allow"]
    origin: str = Field(min_length=1, max_length=2048)
    ask: bool = False
    use_my_model: bool = Field(False, alias="useMyModel")
    all_tabs: bool = Field(False, alias="allTabs")


class SitesRevoke(Request):
    type: Literal["sites.revoke"]
    origin: str = Field(min_length=1, max_length=2048)


class SitesRotate(Request):
    type: Literal["sites.rotate"]


class ClientsRevoke(Request):
    """Ask an MCP client again before its next task (it was always allowed)."""

    type: Literal["clients.revoke"]
    name: str = Field(min_length=1, max_length=100)


class ApprovalAnswer(Request):
    type: Literal["approval.answer"]
    approval_id: str = Field(alias="approvalId", min_length=1)
    decision: Literal["once", "always", "deny"]


class ApprovalWithdraw(Request):
    """The page that asked (kind "page") went away before the person answered: its question goes, unanswered."""

    type: Literal["approval.withdraw"]
    approval_id: str = Field(alias="approvalId", min_length=1)


class BridgePush(HostPush):
    """Host → extension pushes of the page bridge and the approvals (no reply)."""

    def to_frame(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class SitesChangedPush(BridgePush):
    type: Literal["sites.changed"] = "sites.changed"
    sites: list[dict[str, Any]]  # as in the sites.list reply
    mcp_clients: list[dict[str, Any]] = Field(default_factory=list, alias="mcpClients")
    token: str | None


class ApprovalRequestPush(BridgePush):
    type: Literal["approval.request"] = "approval.request"
    approval_id: str = Field(alias="approvalId")
    kind: Literal["page", "mcp"]
    requester: str  # a page's origin, an MCP client's name
    task: str
    tab_id: int | None = Field(None, alias="tabId")  # the tab the task will work in (kind "page": the page's)
    new_tab: bool = Field(False, alias="newTab")  # kind "mcp": it works in a tab the client opens for it
    url: str | None = None  # kind "mcp": the page the task opens first
    timeout_ms: int = Field(alias="timeoutMs")


class ApprovalClosedPush(BridgePush):
    type: Literal["approval.closed"] = "approval.closed"
    approval_id: str = Field(alias="approvalId")
    decision: Literal["once", "always", "deny"]


# --- chunking (host → extension only: Chromium drops a host→browser frame over 1 MiB) -------------------
class Chunk(HostPush):
    """A slice of one message's JSON text; the extension joins `count` of them in `index` order."""

    type: Literal["chunk"] = "chunk"
    chunk_id: str = Field(alias="chunkId")
    index: int = Field(ge=0)
    count: int = Field(ge=1)
    data: str


# --- parsing what the extension sends ---------------------------------------------------------------------
def frame_models(base: type[WireModel]) -> list[type[WireModel]]:
    """The frame models of one direction (every subclass of `base` that has a `type`)."""
    found: list[type[WireModel]] = []
    for sub in base.__subclasses__():
        if _is_frame(sub) and sub not in found:
            found.append(sub)
        found += [m for m in frame_models(sub) if m not in found]
    return found


def _is_frame(model: type[WireModel]) -> bool:
    field = model.model_fields.get("type")
    return field is not None and get_origin(field.annotation) is Literal


def frame_type(model: type[WireModel]) -> str:
    kind: str = model.model_fields["type"].annotation.__args__[0]  # type: ignore[union-attr]
    return kind


def frame_types(base: type[WireModel]) -> set[str]:
    return {frame_type(model) for model in frame_models(base)}


def _tagged_union(members: tuple[Any, ...]) -> TypeAdapter[Any]:
    """A validator for any of `members`, picked by their `type` (the list is built at import time)."""
    union: Any = Union[members]  # noqa: UP007
    return TypeAdapter(Annotated[union, Field(discriminator="type")])


_incoming = _tagged_union((*frame_models(Request), *frame_models(ExtensionPush), Reply))
_host_request = _tagged_union(tuple(frame_models(HostRequest)))
KNOWN_TYPES = sorted({*frame_types(Request), *frame_types(ExtensionPush), "reply"})


class BadRequest(ValueError):
    """A frame that is no valid message: `str()` is the English (logs), `text(language)` the reply's words."""

    def __init__(self, message: str, request_id: str | int | None = None, words: Words | None = None) -> None:
        super().__init__(message)
        self.request_id = request_id
        self.words = words

    def text(self, language: str | None) -> str:
        return str(self) if self.words is None else self.words.text(language)


def parse_incoming(frame: dict[str, Any]) -> Any:
    """The model of one frame from the extension: a `Request`, an `ExtensionPush`, or a reply."""
    request_id = request_id_of(frame)
    kind = frame.get("type")
    if kind is None:
        raise BadRequest("message has no 'type'", request_id)
    if kind not in KNOWN_TYPES:
        raise BadRequest(f"unknown message type {shown_name(kind)} (known: {', '.join(KNOWN_TYPES)})", request_id)
    try:
        return _incoming.validate_python(frame, strict=True)
    except ValidationError as exc:
        skip = 2 if kind == "reply" else 1  # loc starts with the tag(s)
        words = Words("wire.invalid", kind=kind, problems=_problems(exc, skip))
        raise BadRequest(str(words), request_id, words) from None


def shown_name(value: Any) -> str:
    """A name a frame gave (its type, a key) as a refusal repeats it: quoted, cut to MAX_NAME_SHOWN characters."""
    return _cut(repr(value) if isinstance(value, str) else f"a JSON {type(value).__name__}")


def _cut(text: str) -> str:
    return clipped(text, MAX_NAME_SHOWN)


def describe_errors(exc: ValidationError, *, skip: int = 0) -> str:
    """The first few problems, each naming its field (`skip` drops leading location parts), in English."""
    return "; ".join(str(problem) for problem in _problems(exc, skip))


def _problems(exc: ValidationError, skip: int) -> list[Words]:
    """The first few problems in the catalog's words ("field 'config.maxSteps': must be at most 500")."""
    return listed_problems(exc, "wire.field_problem", name=lambda location: _field(location[skip:]),
                           problem=_wire_problem, most=5)


def _field(location: tuple[int | str, ...]) -> str:
    """A field's place as a refusal names it; a key the frame made up is cut as `shown_name` cuts it."""
    return _cut(dotted(location) or "message")


def _wire_problem(item: Any) -> WordedError | Words:
    """As a setting's problem, but a JSON boolean is `true` or `false` (a setting's is "on" or "off")."""
    return Words("wire.true_false") if item["type"] == "bool_type" else value_problem(item)


def parse_host_request(frame: dict[str, Any]) -> HostRequest[Any]:
    """A host → extension request (the debug socket's clients send these), or BadRequest."""
    request_id = request_id_of(frame)
    kind = frame.get("type")
    if kind not in frame_types(HostRequest):
        known = ", ".join(sorted(frame_types(HostRequest)))
        raise BadRequest(f"only cdp.* and tabs.* requests here ({known}), not {shown_name(kind)}", request_id)
    try:
        request: HostRequest[Any] = _host_request.validate_python(frame, strict=True)
    except ValidationError as exc:
        raise BadRequest(f"invalid {kind}: {describe_errors(exc, skip=1)}", request_id) from None
    return request


def wire_data(data: Any) -> Any:
    """A reply's data as JSON-ready values (a model becomes its frame)."""
    return data.to_frame() if isinstance(data, WireModel) else data
