"""The agent's wire types, shaped exactly like page-agent's (camelCase on the wire, snake_case here).

`AgentReflection` keeps its snake_case keys on the wire too: page-agent sends them that way.
Serialise with `to_wire(model)` (aliases, optional fields left out when unset)."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.alias_generators import to_camel

from ..i18n import role_words
from ..i18n import text as say

# The prompt's own tags (never HTML element names, which the page text uses in its element notation).
_PROMPT_TAGS = re.compile(
    r"<(?=\s*/?\s*(?:untrusted_page_content|browser_state|agent_history|user_request|step_info|instructions|"
    r"system_instructions|page_instructions|earlier_steps|user_takeover|privacy|sys|step_\d+)\b)",
    re.IGNORECASE,
)


def inert(text: str) -> str:
    """`text` with every tag of the prompt's own structure (`</step_3>`, `<user_request>`, …) made plain text
    (its `<` written `&lt;`): what a page wrote, quoted anywhere in the prompt (the page itself, an alert's
    message or a title in an action's result, what the person did in it, the model's own words repeating it),
    can then neither close the block it is in nor pass itself off as the user's request."""
    return _PROMPT_TAGS.sub("&lt;", text)

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
    # tabpilot's own: what the action is on, as a person names it (the popup's 'clicking "Sign in"'): the element's name
    # as the model read it on the page, or the address a go_to_url opens; none for an action on no element, or on one
    # with no name
    target: str | None = None


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


class QuestionActivity(WireModel):
    """tabpilot's own: the agent asked the user (`ask_user`) and waits for the answer."""

    type: Literal["question"] = "question"
    question: str


AgentActivity = Annotated[
    ThinkingActivity
    | ExecutingActivity
    | ExecutedActivity
    | RetryingActivity
    | ErrorActivity
    | PausedActivity
    | ResumedActivity
    | WaitingActivity
    | QuestionActivity,
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
    output: str = ""  # the result as the model reads it
    # Set when the action was not done because the person took the controls: readers then tell the person so in
    # their words (i18n.step_result) instead of the model's instructions in `output`.
    abandoned: Literal["took_over"] | None = None
    # tabpilot's own, for the words a person reads ('clicked "Sign in"'): what the action was on, as the executing
    # activity's `target` said it (masked as the page state was), and whether it was not done for another reason
    # (refused by the user or a guard, or it failed)
    target: str | None = None
    not_done: bool | None = None


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

    def to_prompt(self, full: bool = True, language: str | None = None) -> str:
        """This step as the model reads it in its history (labels in `language`). Always whole: older steps
        are folded into blocks by memory.py, never shortened one by one (`full` is the events' shared
        signature)."""
        number = self.step_index + 1
        action = f"{self.action.name} {_compact(self.action.input)}"
        return (
            f"<step_{number}>\n"
            f"{say('step.evaluation', language)}: {inert(self.reflection.evaluation_previous_goal)}\n"
            f"{say('step.memory', language)}: {inert(self.reflection.memory)}\n"
            f"{say('step.next_goal', language)}: {inert(self.reflection.next_goal)}\n"
            f"{say('step.action', language)}: {inert(_clip(action, 600))}\n"
            f"{say('step.results', language)}: {inert(_clip(self.action.output, 2000))}\n"
            f"</step_{number}>"
        )


# a navigation the allowed domains stopped; an action the user refused; one nobody allowed in time; one nobody
# could be asked about (`tabpilot run` with no terminal); an action the user allowed (recorded as a no is)
GuardKind = Literal["blocked", "denied", "expired", "unasked", "allowed"]


class ObservationEvent(WireModel):
    type: Literal["observation"] = "observation"
    content: str
    guard: GuardKind | None = None  # tabpilot's: a guard stopped something (the popup shows its own card)
    # tabpilot's, with `guard`: what it stopped, for the person's card ({action, site} of an action asked about, {url}
    # of a page not opened); `content` is said to the model, with what it should do next
    params: dict[str, str] | None = None
    # tabpilot's: a note on the model's own way of working (waiting, looping, steps left), said to the model as an
    # instruction ("Do something different"): the terminal's account of the task leaves it out
    nudge: bool | None = None
    # tabpilot's: the catalog key of `content` (i18n "note.navigated"), its values in `params`: a reader says it in the
    # person's language (i18n.for_reader: "card." + note); `content` is the model's, in the agent's language
    note: str | None = None

    def to_prompt(self, full: bool = True, language: str | None = None) -> str:
        return f"<sys>{inert(_clip(self.content, 1000))}</sys>"


TakeoverReason = Literal["user", "implicit", "agent_request"]
HIDDEN_VALUE = "•••"  # what capture.js reports for a password / one-time-code / card field


class UserTakeoverEvent(WireModel):
    """The user had the controls. page-agent's event has only `type`; tabpilot adds why (`reason`),
    when (epoch milliseconds), where (the URL before and after), what the user did (`actions`: one
    semantic action each, `{kind, target, value?, url, at}` as capture.js reports them) and their note."""

    type: Literal["user_takeover"] = "user_takeover"
    reason: TakeoverReason | None = None
    started_at: float | None = None
    ended_at: float | None = None
    url_before: str | None = None
    url_after: str | None = None
    actions: list[dict[str, Any]] = Field(default_factory=list)
    note: str | None = None

    def to_prompt(self, full: bool = True, language: str | None = None) -> str:
        """A plain account for the model (in `language`), outside the page state: how long, what they did
        (values typed included, hidden ones not), where the page is now, and their note."""
        return f"<user_takeover>{inert(self._account(full, language, 'takeover.'))}</user_takeover>"

    def to_user(self, language: str | None = None) -> str:
        """The same account said to the person who took over (`tabpilot run`'s line): "You took the controls…"."""
        return self._account(True, language, "takeover.user.")

    def _account(self, full: bool, language: str | None, words: str) -> str:
        # `words` picks who is addressed where the wording differs: "takeover." the model, "takeover.user." the user
        text = say(f"{words}took_over", language)
        if self.started_at is not None and self.ended_at is not None:
            seconds = max(0, round((self.ended_at - self.started_at) / 1000))
            text += say("takeover.for_seconds", language, seconds=seconds)
        if self.reason == "agent_request":
            text += say(f"{words}asked", language)
        elif self.reason == "implicit":
            text += say(f"{words}implicit", language)
        steps = [describe_action(a, language) for a in self.actions]
        steps = [step for step in steps if step]
        shown = steps[-40:] if full else steps[-3:]
        if shown:
            skipped = len(steps) - len(shown)
            listed = say("takeover.list_separator", language).join(shown)
            text += say("takeover.list_start", language) + ("… " if skipped else "") + listed
        elif full:
            text += say(f"{words}did_nothing", language)
        if self.url_after:
            text += say("takeover.page_now", language, url=self.url_after)
        if self.note:
            text += say(f"{words}note", language, note=_clip(self.note, 1000 if full else 200))
        return text


def describe_action(action: Any, language: str | None = None) -> str:
    """One recorded action as the model reads it, e.g. `typed in textbox "Email" → "ada@example.org"`.
    The target (the element's role and name) is the page's own text and stays as it is."""
    if not isinstance(action, dict):
        return _one_line(str(action), 200)
    kind = action.get("kind")  # records made before capture.js have only a `description`
    target = _one_line(str(action.get("target") or ""), 120)
    # the element as said, its role in `language` ('按钮 "Delete"'); a navigation's target says who made it (never
    # shown), a tab's is its title
    named = target if kind in ("navigate", "tab") else role_words(target, language)
    value = action.get("value")
    shown = None if value is None else _one_line(str(value), 200)
    quoted = json.dumps(shown or "", ensure_ascii=False)
    holding = action.get("holding") if isinstance(action.get("holding"), list) else []
    if kind == "click" and action.get("blank") and target in LANDMARKS:  # capture.js: a page's part with no name
        where = say(f"did.landmark_{target}", language)
        text = say("did.clicked_blank_landmark_holding", language, where=where, holding=_listed(holding, language)) \
            if holding else say("did.clicked_blank_landmark", language, where=where)
    elif kind == "click" and action.get("blank") and target and holding:  # capture.js: an area with no name
        told = say("did.holding_separator", language).join(
            role_words(_one_line(str(thing), 120), language) for thing in holding[:3])
        text = say("did.clicked_blank_holding", language, target=named, holding=told)
    elif kind == "click" and action.get("blank"):  # capture.js: no control there, an empty area of `target`
        text = say("did.clicked_blank", language, target=named) if target and target != "page" else say(
            "did.clicked_blank_page", language)
    elif kind == "click":
        text = say("did.clicked", language, target=named)
    elif kind == "input":
        if shown == HIDDEN_VALUE:
            text = say("did.typed_hidden", language, target=named)
        else:
            text = say("did.typed", language, target=named, value=quoted)
    elif kind == "select":
        text = say("did.chose", language, target=named, value=quoted)
    elif kind == "check":
        text = say("did.unchecked" if shown == "unchecked" else "did.checked", language, target=named)
    elif kind == "submit":
        text = say("did.submitted", language, target=named)
    elif kind == "key":
        text = say("did.pressed_in", language, key=shown, target=named) if target else say(
            "did.pressed", language, key=shown)
    elif kind == "navigate" and target == "reload":  # capture.js: a reload of the page it was on
        text = say("did.reloaded", language, url=shown or action.get("url"))
    elif kind == "navigate" and target == "script":  # capture.js: the page's own script, not the person
        text = say("did.page_script_went", language, url=shown or action.get("url"))
    elif kind == "navigate" and target == "loaded":  # capture.js: a new document, by a way it could not see
        text = say("did.tab_loaded", language, url=shown or action.get("url"))
    elif kind == "navigate":  # "page": a navigation the person started
        text = say("did.went_to", language, url=shown or action.get("url"))
    elif kind == "scroll":
        text = say("did.scrolled", language, target=named or say("did.the_page", language),
                   how=_scroll_words(shown or "", language)).rstrip()
    elif kind == "tab":
        what = say(f"did.tab_{shown}", language) if shown in ("opened", "closed") else shown
        text = say("did.tab", language, what=what or say("did.switched_to", language), target=target).rstrip()
    else:  # an older record: {description} or anything else
        text = str(action.get("description") or _compact(action))
    return _one_line(text, 300)


# The roles of the page's parts capture.js tells a blank click in when they have no name (its LANDMARKS).
LANDMARKS = frozenset({"main", "banner", "contentinfo", "navigation", "complementary", "search"})


def _listed(holding: list[Any], language: str | None) -> str:
    """What a page's part holds, as a list: `links "Home", "Pricing"` when they are all links."""
    told = [_one_line(str(thing), 120) for thing in holding[:3]]
    separator = say("did.list_separator", language)
    names = [thing.removeprefix("link ") for thing in told if thing.startswith('link "')]
    if len(names) == len(told):
        return say("did.links", language, names=separator.join(names))
    return separator.join(role_words(thing, language) for thing in told)


# capture.js's words for a scroll: "down 600px, right 20px"
_SCROLL_PART = re.compile(r"^(down|up|left|right) (\d+)px$")


def _scroll_words(how: str, language: str | None) -> str:
    """A scroll's way and length in `language` ("向下 600px"); words capture.js did not write stay as they are."""
    parts = [_SCROLL_PART.match(part.strip()) for part in how.split(",")]
    if not how or not all(parts):
        return how
    return say("did.list_separator", language).join(
        say(f"did.scroll_{found.group(1)}", language, px=found.group(2)) for found in parts if found)


class RetryEvent(WireModel):
    """`code` and `params` (tabpilot's, optional): the cause for a reader wording it (as ErrorEvent's)."""

    type: Literal["retry"] = "retry"
    message: str
    attempt: int
    max_attempts: int
    code: str | None = None
    params: dict[str, Any] | None = None

    def to_prompt(self, full: bool = True, language: str | None = None) -> None:
        return None  # transient trouble with the model call: for the record, not for its memory


class ErrorEvent(WireModel):
    """`message` is English (page-agent's field; the model and older readers use it). `code` and `params`
    (tabpilot's, optional) name the failure for a reader that words it in the user's language
    (i18n.FAILURE_CODES, i18n.failure_text)."""

    type: Literal["error"] = "error"
    message: str
    code: str | None = None
    params: dict[str, Any] | None = None
    raw_response: Any = None

    def to_prompt(self, full: bool = True, language: str | None = None) -> None:
        return None


AnyEvent = StepEvent | ObservationEvent | UserTakeoverEvent | RetryEvent | ErrorEvent
HistoricalEvent = Annotated[AnyEvent, Field(discriminator="type")]


class ExecutionResult(WireModel):
    success: bool
    data: str
    history: list[HistoricalEvent] = Field(default_factory=list)


_event_adapter: TypeAdapter[AnyEvent] = TypeAdapter(HistoricalEvent)
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
