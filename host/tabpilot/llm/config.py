"""How to reach the model: base URL, model name, API key, and the retry policy."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from .errors import LLMNotConfigured

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Local servers (Ollama, LM Studio, llama.cpp) accept any key; the openai package insists on one.
LOCAL_PLACEHOLDER_KEY = "not-needed"
DEFAULT_CALL_DEADLINE = 150.0
DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024


class LLMConfig(BaseModel):
    # hide_input_in_errors: a validation error must not echo the API key back.
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    temperature: float | None = None
    timeout: float = Field(default=60.0, gt=0)  # one attempt
    max_retries: int = Field(default=3, ge=0)
    backoff_base: float = Field(default=1.0, ge=0)
    # One model call, attempts and waits between them included (the `model-deadline` setting): without
    # it a hung provider took 4 × 60 s + backoff = 253 s to end a task.
    call_deadline: float = Field(default=DEFAULT_CALL_DEADLINE, gt=0)
    # A reply (its content, inflated) larger than this fails that attempt (the `max-reply-mb` setting).
    max_reply_bytes: int = Field(default=DEFAULT_MAX_REPLY_BYTES, gt=0)
    wait_note_interval: float = Field(default=30.0, gt=0)  # "the model has not answered for 30 s"
    # False for an endpoint the user did not configure (e.g. one a web page named): the user's
    # OPENAI_API_KEY must never be sent there.
    key_from_environment: bool = True
    # The endpoint or model was named by a web page (its execute() config) and none of the person's keys went with it:
    # their settings were not used, so a failure's remedy is the page's (LLMError.chosen_by_page).
    named_by_page: bool = False

    def resolve(self) -> ResolvedEndpoint:
        """Fill the gaps from OPENAI_BASE_URL / OPENAI_API_KEY; raise LLMNotConfigured if still incomplete."""
        base_url = (self.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        if not self.model:
            raise LLMNotConfigured(missing="model")
        api_key = self.api_key or (os.environ.get("OPENAI_API_KEY") if self.key_from_environment else None)
        if not api_key:
            if not is_loopback_url(base_url):
                raise LLMNotConfigured(missing="api_key", base_url=base_url)
            api_key = LOCAL_PLACEHOLDER_KEY
        return ResolvedEndpoint(base_url=base_url, model=self.model, api_key=api_key)


def endpoint_config(
    *,
    settings_base_url: str | None,
    settings_model: str | None,
    settings_api_key: str | None,
    base_url: str | None = None,
    model: str | None = None,
    api_key: str | None = None,
    environment_first: bool = False,
    environ: Mapping[str, str] | None = None,
    call_deadline: float = DEFAULT_CALL_DEADLINE,
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    named_by_page: bool = False,
) -> LLMConfig:
    """The endpoint a task uses: `base_url` / `model` / `api_key` (flags, a page's config) over the
    settings file and the OPENAI_BASE_URL / OPENAI_API_KEY environment (`environment_first`: the
    environment over the file, as on the command line).

    Each key goes only where it was meant to go: the file's key to the file's endpoint, OPENAI_API_KEY
    to OPENAI_BASE_URL (or the default), a key given with the override to that override. An endpoint
    named without its own key gets none of the user's keys (a local server needs none). `call_deadline` and
    `max_reply_bytes` are the settings' model-deadline and max-reply-mb; `named_by_page`: `base_url` or `model` is a web
    page's choice, whose failures are the page's to fix unless the person's own key goes with it (their endpoint: a
    refused key or an empty quota is theirs, from their Settings)."""
    environ = os.environ if environ is None else environ
    env_base_url, env_api_key = environ.get("OPENAI_BASE_URL") or None, environ.get("OPENAI_API_KEY") or None
    configured = [env_base_url, settings_base_url] if environment_first else [settings_base_url, env_base_url]
    chosen = _normalized(base_url or next((url for url in configured if url), None))
    file_key = settings_api_key if chosen == _normalized(settings_base_url or env_base_url) else None
    env_key = env_api_key if chosen == _normalized(env_base_url) else None
    users_key = None if api_key else ((env_key or file_key) if environment_first else (file_key or env_key))
    return LLMConfig(base_url=chosen, model=model or settings_model, api_key=api_key or users_key,
                     key_from_environment=False, call_deadline=call_deadline, max_reply_bytes=max_reply_bytes,
                     named_by_page=named_by_page and not users_key)


def _normalized(base_url: str | None) -> str:
    return (base_url or DEFAULT_BASE_URL).strip().rstrip("/")


@dataclass(frozen=True)
class ResolvedEndpoint:
    base_url: str
    model: str
    api_key: str

    def __repr__(self) -> str:
        return f"ResolvedEndpoint(base_url={self.base_url!r}, model={self.model!r})"


def is_loopback_url(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
