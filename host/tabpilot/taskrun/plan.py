"""Settings + what one task overrides → everything its run needs, decided in one place.

Where the user is decides two things: which configuration wins (in a terminal the OPENAI_* environment
comes before the settings file, as shells expect; in the browser the settings file is the truth) and
what a "no model configured" error tells them to do (the CLI's flags and variables mean nothing in
the popup), in their language (the popup's, or the terminal's)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..i18n import listed_problems, not_configured_text
from ..i18n import text as say

if TYPE_CHECKING:
    from ..agent.config import AgentConfig
    from ..guards.domains import DomainPolicy
    from ..llm import LLMNotConfigured
    from ..llm.config import LLMConfig
    from ..store.settings import Settings

TERMINAL_SOURCES = ("cli", "demo")  # a person at a terminal: flags and environment variables apply
EXTENSION_SOURCES = ("popup", "panel")  # the person in the extension's popup or its side panel: Settings apply
POPUP_NOT_CONFIGURED = say("error.popup_not_configured")


PlanErrorCode = Literal["settings", "not_configured", "bad_request"]  # native protocol error codes


class PlanError(Exception):
    """A task that cannot run as asked; `code` is the native protocol's error code."""

    def __init__(self, message: str, code: PlanErrorCode) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class TaskOverrides:
    """What one task sets over the settings: the CLI's flags, or a web page's ExecutionConfig."""

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = field(default=None, repr=False)
    max_steps: int | None = None
    language: str | None = None
    system_instruction: str | None = None
    step_delay: float | None = None
    use_vision: str | None = None  # auto | on | off; the settings' when None
    include_all_tabs: bool = False
    use_my_model: bool = True  # False: a web page not allowed the user's model — only its own endpoint counts
    record: str | None = None  # save the model's replies here (`tabpilot run --record`)
    allow_domains: tuple[str, ...] = ()  # added to the settings' allowed ones (`run --allow-domain`, a page's origin)


@dataclass(frozen=True)
class TaskPlan:
    task: str
    source: str  # popup | page | mcp | cli | demo: who started it, as recorded
    llm: LLMConfig
    agent: AgentConfig
    capture_raw: bool  # keep raw model I/O in the record and the pushes (the settings' debug capture)
    secrets: tuple[str, ...] = field(repr=False)  # every key this run knows: kept out of all it writes
    include_all_tabs: bool = False
    record: str | None = None
    domains: DomainPolicy | None = None  # None: no domain restricted
    ask_before: str = "irreversible"  # never | irreversible | every (guards/irreversible.py)
    requester: str | None = None  # who asked besides the person: a page's origin, an MCP client's name


# A task is words saying what to do, not the material to work on: a task of 3 MB (a file piped to `run -`, an MCP
# client's run_task) was sent whole to the model in every step, and the person's popup, asked about it, stopped
# answering for over 30 s drawing it (900,000 characters; 90,000 drew in about 3 s). Every entry point refuses a
# longer one before anything is asked, opened or recorded (also Approvals.ask and `tabpilot mcp`'s run_task). Above
# what one command-line argument takes (128 KiB on Linux): `run -` is there for a task longer than that.
MAX_TASK_CHARS = 200_000


def task_too_long(task: str, language: str | None = None) -> str:
    return say("task.too_long", language, length=f"{len(task):,}", limit=f"{MAX_TASK_CHARS:,}")


def plan_task(
    task: str, overrides: TaskOverrides | None = None, *, source: str, settings: Settings | None = None,
    language: str | None = None, requester: str | None = None,
) -> TaskPlan:
    """The plan for `task`; raises PlanError (codes `settings`, `not_configured`, `bad_request`), whose
    not-configured advice is in `language` (the user's, not the agent's; English by default)."""
    from pydantic import ValidationError

    from ..agent.config import AgentConfig
    from ..llm import LLMError, LLMNotConfigured
    from ..llm.config import endpoint_config
    from ..store.settings import SettingsError, load_settings

    if not isinstance(task, str) or not task.strip():  # refused before any browser or record is touched
        raise PlanError(say("task.no_text", language), "bad_request")
    if len(task) > MAX_TASK_CHARS:
        raise PlanError(task_too_long(task, language), "bad_request")
    overrides = overrides or TaskOverrides()
    if settings is None:
        try:
            settings = load_settings()
        except SettingsError as exc:
            raise PlanError(exc.text(language), "settings") from exc
    terminal = source in TERMINAL_SOURCES
    environ: dict[str, str] | None
    environ, user_key = None, settings.api_key  # the user's key is kept out of what the run writes, used or not
    if not overrides.use_my_model:  # none of the user's endpoint, model or keys (file or environment)
        settings = settings.model_copy(update={"base_url": None, "model": None, "api_key": None})
        environ = {}
    # Each key goes only to the endpoint it was configured for: a task naming another base URL (e.g.
    # one a web page chose) must bring its own key.
    llm = endpoint_config(
        settings_base_url=settings.base_url, settings_model=settings.model, settings_api_key=settings.api_key,
        base_url=overrides.base_url, model=overrides.model, api_key=overrides.api_key, environment_first=terminal,
        call_deadline=settings.model_deadline, max_reply_bytes=settings.max_reply_bytes,
        environ=environ, named_by_page=source == "page" and bool(overrides.base_url or overrides.model),
    )
    try:
        llm.resolve()
    except LLMNotConfigured as exc:
        # A key the user has, kept for another address: say that, or `config set api-key` would store it there again.
        elsewhere = bool(overrides.base_url) and bool(user_key or os.environ.get("OPENAI_API_KEY"))
        if source == "page":
            raise PlanError(_page_not_configured(exc, language, own_endpoint=bool(overrides.base_url)),
                            "not_configured") from exc
        raise PlanError(_not_configured(exc, source, language, elsewhere=elsewhere), "not_configured") from exc
    except LLMError as exc:
        raise PlanError(exc.message, "not_configured") from exc
    agent_options: dict[str, Any] = {
        "max_steps": overrides.max_steps or settings.max_steps,
        "language": overrides.language or settings.language,
        "system_instructions": overrides.system_instruction,
        "privacy": _privacy_guard(settings, language),  # a fresh one per task: each numbers its placeholders from 1
        "use_vision": overrides.use_vision or settings.use_vision,
    }
    if overrides.step_delay is not None:
        agent_options["step_delay"] = overrides.step_delay
    try:
        agent = AgentConfig(**agent_options)
    except ValidationError as exc:
        raise PlanError(say("plan.bad_settings", language, problems=listed_problems(exc)), "bad_request") from exc
    keys = (llm.api_key, user_key, overrides.api_key, os.environ.get("OPENAI_API_KEY"))
    domains = _domains(settings, overrides, language)
    return TaskPlan(
        task=task,
        source=source,
        requester=requester,
        llm=llm,
        agent=agent,
        capture_raw=settings.debug_capture,
        secrets=tuple(dict.fromkeys(key for key in keys if key)),
        include_all_tabs=overrides.include_all_tabs,
        record=overrides.record,
        domains=domains if domains.restricts else None,
        ask_before=settings.ask_before,
    )


def _privacy_guard(settings: Settings, language: str | None) -> Any:
    from ..privacy.guard import guard_for
    from ..privacy.secrets import SecretError

    try:
        return guard_for(settings)
    except SecretError as exc:
        raise PlanError(exc.text(language), "settings") from exc


def _domains(settings: Settings, overrides: TaskOverrides, language: str | None) -> DomainPolicy:
    from ..guards.domains import DomainError, DomainPolicy, parse_domains

    try:
        added = parse_domains(list(overrides.allow_domains))
    except DomainError as exc:
        raise PlanError(say("plan.allowed_domain", language, problem=exc), "bad_request") from exc
    return DomainPolicy.of([*settings.allowed_domains, *added], settings.blocked_domains)


def _page_not_configured(exc: LLMNotConfigured, language: str | None, *, own_endpoint: bool) -> str:
    """Said to the web page whose execute() it was, as page-agent's own refusal of a config without a model is
    ("Config must have a model"): what to put in the config, or what to ask the user for. Neither the CLI's flags
    nor the popup's buttons are the page's to use."""
    if exc.missing != "api_key":
        return say("error.page_no_model", language)
    key = "error.page_no_key" if own_endpoint else "error.page_no_key_of_theirs"
    return say(key, language, base_url=exc.base_url)


def _not_configured(exc: LLMNotConfigured, source: str, language: str | None, *, elsewhere: bool = False) -> str:
    if source in EXTENSION_SOURCES:
        return say("error.popup_not_configured", language)
    if elsewhere and exc.missing == "api_key" and source in TERMINAL_SOURCES:
        return say("error.key_for_another_address", language, base_url=exc.base_url)
    message = not_configured_text(exc.missing, exc.base_url, language)
    if source in TERMINAL_SOURCES:
        return message
    return say("error.page_not_configured", language, message=message)
