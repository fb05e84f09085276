"""What can go wrong when calling the model. Every message names the cause and what to do about it,
and never contains the API key.

Every failure the client recognises carries a stable machine `code` (i18n.FAILURE_CODES) and the `params`
its message needs (base_url, status, the provider's own `detail`, …): `describe(code, params, language)`
words it from the message catalog in the user's language, so a caller shows it where the user is
without parsing English. `message` is always the en-US wording (for the
model, the record and older readers). A retried failure that ended the call is the `cause` param of
`retries_exhausted` / `deadline`: `{"code": …, "params": …}`."""

from __future__ import annotations

from typing import Any

from ..i18n import failure_text as describe


class LLMError(Exception):
    """A model call failed. `raw_response` is the provider's reply when there was one. `code` is None for a
    failure without a catalog wording (then `message` is all there is)."""

    def __init__(self, message: str | None = None, *, code: str | None = None, params: dict[str, Any] | None = None,
                 raw_response: dict[str, Any] | None = None) -> None:
        self.code = code
        self.params: dict[str, Any] = params or {}
        if message is None:
            if code is None:
                raise ValueError("an LLMError needs a message or a code")
            message = describe(code, self.params)
        super().__init__(message)
        self.message = message
        self.raw_response = raw_response

    def chosen_by_page(self) -> None:
        """The failing endpoint or model was a web page's choice: `params["chosen"]` says so to every reader (the
        popup's remedy is then the page's, not Settings), and the message names the page's config where the person's
        settings would be named."""
        if not self.code or self.params.get("chosen") == "page":
            return
        self.params["chosen"] = "page"
        self.message = describe(self.code, self.params)
        self.args = (self.message,)

    def describe(self, language: str | None = None) -> str:
        """The message in `language` (the catalog's wording when there is a code)."""
        return describe(self.code, self.params, language) if self.code else self.message


class LLMNotConfigured(LLMError):
    """No model (or no API key for a remote endpoint) is configured. `missing` says which (`model` or
    `api_key`, then `base_url` is the endpoint that needs one), so a caller can word it for where the user
    is and in their language."""

    def __init__(self, *, missing: str = "model", base_url: str | None = None) -> None:
        super().__init__(code="not_configured", params={"form": missing, "base_url": base_url})
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
    """Every attempt failed with a retryable cause (code `retries_exhausted`), or the call's deadline
    came first (code `deadline`); `last_cause` is the last cause in English, `params["cause"]` its code."""

    def __init__(self, *, code: str, params: dict[str, Any], attempts: int,
                 raw_response: dict[str, Any] | None = None) -> None:
        # `retries` counts as page-agent's retry events do (attempt n of maxAttempts retries): the words use it
        super().__init__(code=code, params={**params, "attempts": attempts, "retries": attempts - 1},
                         raw_response=raw_response)
        cause = params["cause"]
        self.last_cause = describe(cause["code"], cause.get("params"))
        self.attempts = attempts
