"""Settings: the LLM endpoint and the agent's limits, in one JSON file only its owner can read.

The popup (through the host's `settings.get` / `settings.set`) and `tabpilot config` both go through
here. The API key is kept in this file and is never handed back whole: `public_view` shows a hint."""

from __future__ import annotations

import json
import os
import re
import tempfile
import unicodedata
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from .. import paths
from ..i18n import WordedError, Words, listed_problems, value_problem
from ..llm.config import DEFAULT_CALL_DEADLINE, DEFAULT_MAX_REPLY_BYTES
from ..llm.vision import VisionMode
from ..textsafety import clean_json

LANGUAGES = ("en-US", "zh-CN")
AskBefore = Literal["never", "irreversible", "every"]  # when the agent waits for a yes (guards/irreversible.py)
MAX_STEPS_LIMIT = 500  # the one limit: AgentConfig, a page's config and `run --max-steps` use it too
MEGABYTE = 1024 * 1024


# What one setting (or a page's config for one task) may hold. Unbounded, a 10 MB model name was saved and
# came back in every settings.get; a control character in a key or URL broke the model call only at the
# first task, far from where it was typed.
URL_LENGTH = 2048
MODEL_LENGTH = 256
KEY_LENGTH = 4096
INSTRUCTION_LENGTH = 50_000  # a page's systemInstruction: it goes into every prompt of its task
LIST_LENGTH = 1000  # allowed / blocked domains, mask patterns
PATTERN_LENGTH = 1000


def _one_line(value: str) -> str:
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in value):
        raise WordedError("setting.one_line")
    return value


def _http_url(value: str) -> str:
    """An http(s) URL with a host (and, if any, a port that exists): anything else failed only at the first
    model call ("Invalid IPv6 URL" as an internal error), far from where it was typed."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise WordedError("setting.url") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise WordedError("setting.url")
    return value


EndpointURL = Annotated[str, Field(max_length=URL_LENGTH), AfterValidator(_one_line), AfterValidator(_http_url)]
ModelName = Annotated[str, Field(max_length=MODEL_LENGTH), AfterValidator(_one_line)]
ApiKey = Annotated[str, Field(max_length=KEY_LENGTH), AfterValidator(_one_line)]


class SettingsError(WordedError):
    """Settings that cannot be read, saved or applied; the message says what to do."""


class Settings(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow", validate_assignment=True)

    base_url: EndpointURL | None = Field(default=None, alias="baseURL")
    model: ModelName | None = None
    api_key: ApiKey | None = Field(default=None, alias="apiKey", repr=False)
    max_steps: int = Field(default=40, alias="maxSteps", ge=1, le=MAX_STEPS_LIMIT)
    language: str = "en-US"
    debug_capture: bool = Field(default=False, alias="debugCapture")
    # Seconds one model call may take, its retries included; then the step fails and says so.
    model_deadline: float = Field(default=DEFAULT_CALL_DEADLINE, alias="modelDeadline", ge=5, le=3600)
    # A model reply larger than this (megabytes, inflated) fails that attempt instead of filling memory.
    max_reply_mb: float = Field(default=DEFAULT_MAX_REPLY_BYTES / MEGABYTE, alias="maxReplyMB", gt=0, le=1024)
    # Masking what reaches the model (privacy/masking.py): card numbers by default, the rest when asked.
    mask_emails: bool = Field(default=False, alias="maskEmails")
    mask_phones: bool = Field(default=False, alias="maskPhones")
    mask_cards: bool = Field(default=True, alias="maskCards")
    mask_ibans: bool = Field(default=False, alias="maskIbans")
    mask_patterns: list[Annotated[str, Field(max_length=PATTERN_LENGTH)]] = Field(  # "/regex/" or a literal
        default_factory=list, alias="maskPatterns", max_length=LIST_LENGTH)
    # Domains (a host and its subdomains) every task may go to (none: all but the blocked), and may never go to.
    allowed_domains: list[str] = Field(default_factory=list, alias="allowedDomains", max_length=LIST_LENGTH)
    blocked_domains: list[str] = Field(default_factory=list, alias="blockedDomains", max_length=LIST_LENGTH)
    ask_before: AskBefore = Field(default="irreversible", alias="askBefore")

    @field_validator("allowed_domains", "blocked_domains", mode="before")
    @classmethod
    def _domains(cls, value: Any) -> list[str]:
        from ..guards.domains import parse_domains

        return parse_domains(value)
    # Screenshots for the model: auto (when the model takes images), on, off (none taken).
    use_vision: VisionMode = Field(default="auto", alias="useVision")

    @field_validator("base_url", "model", "api_key", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip()
            return value or None
        return value

    @field_validator("base_url")
    @classmethod
    def _without_trailing_slash(cls, value: str | None) -> str | None:
        return None if value is None else value.rstrip("/")

    @field_validator("mask_patterns")
    @classmethod
    def _valid_patterns(cls, value: list[str]) -> list[str]:
        from ..privacy.masking import PatternError, compile_pattern, regex_problem

        patterns = [item.strip() for item in value if item.strip()]
        for pattern in patterns:
            try:
                compile_pattern(pattern)
            except PatternError as exc:
                cause = exc.__cause__
                reason = regex_problem(cause, typed_before=1) if isinstance(cause, re.error) else str(cause)  # after /
                raise WordedError("setting.not_pattern", pattern=pattern, reason=reason) from exc
        return patterns

    @field_validator("language")
    @classmethod
    def _known_language(cls, value: str) -> str:
        if value not in LANGUAGES:
            raise WordedError("setting.one_of", choices=", ".join(LANGUAGES))
        return value

    def to_file(self) -> dict[str, Any]:
        """What the settings file holds: the settings someone chose, not the defaults (a written language would
        be taken for a choice: the CLI stops following LANG)."""
        data = self.model_dump(by_alias=True, exclude_none=True, exclude_unset=True)
        for name in _WRITTEN_ONLY_WHEN_CHANGED:  # a later version's better default still reaches older files
            field = Settings.model_fields[name]
            if getattr(self, name) == field.get_default(call_default_factory=True):
                data.pop(field.alias or name, None)
        return data

    @property
    def max_reply_bytes(self) -> int:
        return int(self.max_reply_mb * MEGABYTE)


_WRITTEN_ONLY_WHEN_CHANGED = (
    "model_deadline", "max_reply_mb", "mask_emails", "mask_phones", "mask_cards", "mask_ibans", "mask_patterns",
    "allowed_domains", "blocked_domains", "ask_before", "use_vision",
)

# Every spelling a caller may use for a setting: wire (camelCase), Python (snake_case), CLI (kebab-case).
FIELD_NAMES: dict[str, str] = {}
for _name, _info in Settings.model_fields.items():
    for _spelling in (_name, _info.alias or _name, _name.replace("_", "-")):
        FIELD_NAMES[_spelling] = _name
FIELD_NAMES["baseUrl"] = "base_url"


def choices(key: str) -> tuple[str, ...]:
    """The values a setting takes when they are few, as `tabpilot config set` takes them ("on"/"off" for a
    switch); empty for free text and numbers."""
    name = FIELD_NAMES.get(key)
    field = Settings.model_fields.get(name or "")
    if field is None:
        return ()
    if name == "language":
        return tuple(LANGUAGES)
    if field.annotation is bool:
        return ("on", "off")
    if get_origin(field.annotation) is Literal:
        return tuple(str(choice) for choice in get_args(field.annotation))
    return ()


def _describe(error: ValidationError) -> list[Words]:
    """Each problem named as `tabpilot config` names settings and worded from the catalog, so it reads
    in the reader's language: "max-steps: must be at least 1"."""
    return listed_problems(error, name=_setting_name, problem=_problem)


def _setting_name(loc: tuple[int | str, ...]) -> str:
    name = str(loc[0]) if loc else "settings"
    return FIELD_NAMES.get(name, name).replace("_", "-")


def _problem(item: ErrorDetails) -> WordedError | Words:
    """The common kinds of pydantic error in the catalog's words (a literal's choices as the setting lists
    them); any other kind as pydantic says it."""
    choices: tuple[object, ...] = ()
    if item["type"] == "literal_error" and item["loc"]:
        field = Settings.model_fields.get(FIELD_NAMES.get(str(item["loc"][0]), ""))
        choices = get_args(field.annotation) if field else ()
    return value_problem(item, choices)


def load_settings(path: Path | None = None) -> Settings:
    """The saved settings; defaults when there is no file yet."""
    path = path or paths.config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Settings()
    except OSError as exc:
        raise SettingsError("settings.cannot_read", path=path, reason=exc.strerror or exc) from exc
    try:
        data = clean_json(json.loads(text)) if text.strip() else {}  # a lone surrogate becomes U+FFFD
    except json.JSONDecodeError as exc:
        raise SettingsError("settings.not_json", path=path, line=exc.lineno, reason=exc.msg) from exc
    if not isinstance(data, dict):
        raise SettingsError("settings.not_object", path=path)
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise SettingsError("settings.bad_value", path=path, detail=_describe(exc)) from exc


def update_settings(changes: dict[str, Any], path: Path | None = None) -> Settings:
    """Apply `changes` to the saved settings (as `apply_changes`) and save them, as one change: a change
    made at the same moment elsewhere (the popup, `tabpilot config`) is kept, not written over."""
    from .filelock import changing

    path = path or paths.config_path()
    with changing(path):
        settings = apply_changes(load_settings(path), changes)
        save_settings(settings, path)
    return settings


def save_settings(settings: Settings, path: Path | None = None) -> None:
    path = path or paths.config_path()
    write_private(path, json.dumps(settings.to_file(), indent=2, ensure_ascii=False) + "\n", prefix=".config-")


def write_private(path: Path, text: str, *, prefix: str) -> None:
    """Write atomically (temp file + rename) with owner-only permissions, so a crash mid-write leaves the
    old file whole and no other user can read a key or token even for a moment."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)  # created 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temp_name, 0o600)
        os.replace(temp_name, path)
    except BaseException:
        try:
            os.unlink(temp_name)
        except OSError:
            pass
        raise


def apply_changes(settings: Settings, changes: dict[str, Any]) -> Settings:
    """A copy of `settings` with `changes` applied. Keys in any spelling (`baseURL`, `base_url`,
    `base-url`); a None value resets that setting. Unknown keys and bad values raise SettingsError.
    A lone surrogate in a value (it could never be saved as UTF-8) becomes U+FFFD."""
    changes = clean_json(dict(changes))
    unknown = [key for key in changes if key not in FIELD_NAMES]
    if unknown:
        known = ", ".join(name.replace("_", "-") for name in Settings.model_fields)
        raise SettingsError("settings.unknown", names=", ".join(map(repr, unknown)), known=known)
    data = settings.model_dump(exclude_unset=True)  # what was chosen stays chosen; a default stays a default
    for key, value in changes.items():
        name = FIELD_NAMES[key]
        if value is None:
            data.pop(name, None)
        else:
            data[name] = value
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise SettingsError("settings.invalid", detail=_describe(exc)) from exc


def api_key_hint(key: str | None) -> str | None:
    """Enough to recognise which key is set, never enough to use it: "sk-…abcd"."""
    if not key:
        return None
    if len(key) >= 16:
        return f"{key[:3]}…{key[-4:]}"
    if len(key) >= 8:
        return f"…{key[-2:]}"
    return "…"


def public_view(settings: Settings) -> dict[str, Any]:
    """What a UI may show (the host's `settings.get` reply): everything but the key itself."""
    return {
        "baseURL": settings.base_url,
        "model": settings.model,
        "apiKeySet": bool(settings.api_key),
        "apiKeyHint": api_key_hint(settings.api_key),
        "maxSteps": settings.max_steps,
        "language": settings.language,
        "debugCapture": settings.debug_capture,
        "modelDeadline": settings.model_deadline,
        "maxReplyMB": settings.max_reply_mb,
        "useVision": settings.use_vision,
        "allowedDomains": list(settings.allowed_domains),
        "blockedDomains": list(settings.blocked_domains),
        "askBefore": settings.ask_before,
        **masking_view(settings),
    }


def masking_view(settings: Settings) -> dict[str, Any]:
    return {
        "maskEmails": settings.mask_emails,
        "maskPhones": settings.mask_phones,
        "maskCards": settings.mask_cards,
        "maskIbans": settings.mask_ibans,
        "maskPatterns": list(settings.mask_patterns),
    }
