"""How to reach the model: base URL, model name, API key, and the retry policy."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from .errors import LLMNotConfigured

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Local servers (Ollama, LM Studio, llama.cpp) accept any key; the openai package insists on one.
LOCAL_PLACEHOLDER_KEY = "not-needed"

HOW_TO_CONFIGURE = (
    "Configure one with `tabpilot config set model <name>` (and `tabpilot config set api-key <key>`, "
    "`tabpilot config set base-url <url>` for a provider other than OpenAI), or set the environment "
    "variables OPENAI_API_KEY / OPENAI_BASE_URL, or pass --model / --base-url / --api-key."
)


class LLMConfig(BaseModel):
    # hide_input_in_errors: a validation error must not echo the API key back.
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    temperature: float | None = None
    timeout: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=3, ge=0)
    backoff_base: float = Field(default=1.0, ge=0)
    # False for an endpoint the user did not configure (e.g. one a web page named): the user's
    # OPENAI_API_KEY must never be sent there.
    key_from_environment: bool = True

    def resolve(self) -> ResolvedEndpoint:
        """Fill the gaps from OPENAI_BASE_URL / OPENAI_API_KEY; raise LLMNotConfigured if still incomplete."""
        base_url = (self.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        if not self.model:
            raise LLMNotConfigured("No model is configured. " + HOW_TO_CONFIGURE)
        api_key = self.api_key or (os.environ.get("OPENAI_API_KEY") if self.key_from_environment else None)
        if not api_key:
            if not is_loopback_url(base_url):
                raise LLMNotConfigured(f"No API key is configured for {base_url}. " + HOW_TO_CONFIGURE)
            api_key = LOCAL_PLACEHOLDER_KEY
        return ResolvedEndpoint(base_url=base_url, model=self.model, api_key=api_key)


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
