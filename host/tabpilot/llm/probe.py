"""Test connection: can this endpoint, with this key, answer for this model?

Two requests, each bounded: `GET /models` (is something OpenAI-compatible there, does it take the key,
does it list the model) and one tiny chat completion (does the model answer). The outcome names the
one thing that is wrong, as a `problem` code the popup words in the user's language, plus an English
`message` for anyone else. The API key never appears in either.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal

from .config import LLMConfig, is_loopback_url
from .errors import LLMNotConfigured

Problem = Literal[
    "not_configured",  # no model, or no key for a remote endpoint
    "unreachable",  # nothing answers at the base URL (refused, DNS, TLS)
    "timeout",  # it did not answer in time
    "key_refused",  # 401/403
    "not_openai",  # something answers, but not an OpenAI-compatible API (404 on /models and the completion)
    "model_unknown",  # the endpoint answers, but not for this model
    "rejected",  # any other refusal of the completion (4xx/5xx); `detail` says what the provider said
]

PROBE_TIMEOUT = 10.0  # per request; the popup's request to the host gives up after 30 s
MODELS_LISTED = 20


@dataclass
class ProbeResult:
    ok: bool
    base_url: str
    model: str | None
    problem: Problem | None = None
    message: str = ""
    status: int | None = None  # the HTTP status that told us, when one did
    detail: str | None = None  # the provider's own words, redacted, shortened
    models: list[str] = field(default_factory=list)  # what GET /models listed (the first few)
    model_listed: bool | None = None  # None: the endpoint has no model list
    reply: str | None = None  # the tiny completion's text

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"ok": self.ok, "baseURL": self.base_url, "model": self.model,
                                "message": self.message, "models": self.models, "modelListed": self.model_listed}
        for key, value in (("problem", self.problem), ("status", self.status), ("detail", self.detail),
                           ("reply", self.reply)):
            if value is not None:
                wire[key] = value
        return wire


async def probe_endpoint(config: LLMConfig, *, timeout: float = PROBE_TIMEOUT) -> ProbeResult:
    """Ask the endpoint for its models and for one tiny completion; say what worked or what did not."""
    base_url = (config.base_url or "").rstrip("/")
    try:
        endpoint = config.resolve()
    except LLMNotConfigured as exc:
        return ProbeResult(False, base_url, config.model, "not_configured", _first_sentence(exc.message))
    import openai

    secret = endpoint.api_key

    def redact(text: str) -> str:
        text = " ".join(str(text).split())
        text = text.replace(secret, "***") if len(secret) >= 4 else text
        return text if len(text) <= 240 else text[:239] + "…"

    http_client = openai.DefaultAsyncHttpxClient(trust_env=False) if is_loopback_url(endpoint.base_url) else None
    client = openai.AsyncOpenAI(api_key=endpoint.api_key, base_url=endpoint.base_url, max_retries=0,
                                timeout=timeout, http_client=http_client)
    result = ProbeResult(False, endpoint.base_url, endpoint.model)
    try:
        models_missing = False
        try:
            async with asyncio.timeout(timeout):
                page = await client.models.list()
            result.models = [m.id for m in page.data][:MODELS_LISTED]
            result.model_listed = any(m.id == endpoint.model for m in page.data)
        except openai.APIStatusError as exc:
            if exc.status_code in (401, 403):
                return _failed(result, "key_refused", exc.status_code, redact(_said(exc)))
            models_missing = True  # some servers have no model list: the completion decides
        except (openai.APIConnectionError, TimeoutError) as exc:
            return _connection_failed(result, exc, timeout)
        try:
            async with asyncio.timeout(timeout):
                completion = await client.chat.completions.create(
                    model=endpoint.model, messages=[{"role": "user", "content": "Reply with the word OK."}],
                )
        except openai.APIStatusError as exc:
            status, said = exc.status_code, redact(_said(exc))
            if status in (401, 403):
                return _failed(result, "key_refused", status, said)
            if (status == 404 and models_missing) or status in (405, 501):  # 405/501: a web server, say
                return _failed(result, "not_openai", status, said)
            if status == 404 or _names_unknown_model(said):
                return _failed(result, "model_unknown", status, said)
            return _failed(result, "rejected", status, said)
        except (openai.APIConnectionError, TimeoutError) as exc:
            return _connection_failed(result, exc, timeout)
        choices = getattr(completion, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        result.reply = redact(getattr(message, "content", None) or "")
        result.ok = True
        result.message = f"OK: {endpoint.base_url} answered for the model {endpoint.model}."
        return result
    finally:
        await client.close()


def _failed(result: ProbeResult, problem: Problem, status: int | None, detail: str | None) -> ProbeResult:
    result.problem, result.status, result.detail = problem, status, detail or None
    url, model = result.base_url, result.model
    said = f" ({detail})" if detail else ""
    result.message = {
        "key_refused": f"{url} refused the API key (HTTP {status}){said}.",
        "not_openai": f"{url} answers, but not as an OpenAI-compatible API (HTTP {status}); "
                      "the base URL usually ends in /v1.",
        "model_unknown": f"{url} does not know the model {model!r} (HTTP {status}){said}.",
        "rejected": f"{url} refused the test request for {model!r} (HTTP {status}){said}.",
    }.get(problem, f"{url}: {problem}{said}")
    return result


def _connection_failed(result: ProbeResult, exc: BaseException, timeout: float) -> ProbeResult:
    import openai

    if isinstance(exc, openai.APITimeoutError | TimeoutError):
        result.problem, result.message = "timeout", f"{result.base_url} did not answer within {timeout:g} s."
    else:
        cause = exc.__cause__ or exc
        result.problem = "unreachable"
        result.detail = " ".join(str(cause).split())[:240] or type(cause).__name__
        result.message = f"Nothing answers at {result.base_url} ({result.detail})."
    return result


def _said(exc: Any) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    try:
        return str(exc.response.text)
    except Exception:
        return str(exc.message)


def _names_unknown_model(detail: str) -> bool:
    lowered = detail.lower()
    return "model" in lowered and any(word in lowered for word in ("not found", "does not exist", "unknown",
                                                                    "not exist", "invalid model"))


def _first_sentence(text: str) -> str:
    return text.split(". ")[0].rstrip(".") + "."


async def probe_settings(base_url: str | None, model: str | None, api_key: str | None) -> ProbeResult:
    """Test what the Settings form holds: what was typed, the saved settings for what was not (the
    saved key only for the saved endpoint, as a task would use it)."""
    from ..store.settings import load_settings
    from .config import endpoint_config

    settings = load_settings()  # SettingsError: the caller says the settings file is unreadable
    config = endpoint_config(settings_base_url=settings.base_url, settings_model=settings.model,
                             settings_api_key=settings.api_key, base_url=base_url or None, model=model or None,
                             api_key=api_key or None)
    return await probe_endpoint(config)
