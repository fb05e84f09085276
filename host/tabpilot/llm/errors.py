"""What can go wrong when calling the model. Every message names the cause and what to do about it,
and never contains the API key."""

from __future__ import annotations

from typing import Any


class LLMError(Exception):
    """A model call failed. `raw_response` is the provider's reply when there was one."""

    def __init__(self, message: str, *, raw_response: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.raw_response = raw_response


class LLMNotConfigured(LLMError):
    """No model (or no API key for a remote endpoint) is configured. `missing` says which (`model` or
    `api_key`, then `base_url` is the endpoint that needs one), so a caller can word it for where the user
    is and in their language."""

    def __init__(self, message: str, *, missing: str = "model", base_url: str | None = None) -> None:
        super().__init__(message)
        self.missing = missing
        self.base_url = base_url


class LLMAuthError(LLMError):
    """The provider refused the API key (HTTP 401/403). Retrying cannot help."""


class LLMQuotaExceeded(LLMError):
    """HTTP 429 saying the account's quota or credit is used up (OpenAI's `insufficient_quota`), not a
    rate limit: retrying cannot help until the user sorts out billing."""


class LLMContextTooLong(LLMError):
    """The prompt does not fit the model's context window. Retrying the same prompt cannot help."""


class LLMContentFiltered(LLMError):
    """The provider's safety system blocked the request or the reply."""


class LLMRetriesExhausted(LLMError):
    """Every attempt failed with a retryable cause; `last_cause` is the last one."""

    def __init__(self, message: str, *, last_cause: str, attempts: int,
                 raw_response: dict[str, Any] | None = None) -> None:
        super().__init__(message, raw_response=raw_response)
        self.last_cause = last_cause
        self.attempts = attempts
