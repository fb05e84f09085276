"""The model client: one forced tool call per `invoke`, over any OpenAI-compatible endpoint.

`invoke` asks for a call of one named tool, repairs sloppy output (see repair.py), validates the
arguments with the caller's `parse`, and retries with exponential backoff and jitter on what a retry
can fix: 408/409/429 (honouring Retry-After), 5xx, timeouts, connection errors, a body that is not a
chat completion, a reply without the tool call, invalid arguments. For the last two, the model's reply
and a one-line error go back into the conversation so it can correct itself. 401/403, a prompt too
long for the context window and content filtering fail at once with a clear error.

Providers that reject a forced named tool choice get "required", then "auto", then none; the client
remembers what worked for the rest of its life. Likewise a 4xx naming images for a request that carried
some: the request goes again without its image messages, and none are sent from then on
(`images_refused`). The openai package is imported on first use: it costs
about half a second, and the browser starts the host on demand.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..textsafety import clean_json
from .backoff import MAX_RETRY_AFTER, backoff_delay, retry_after_seconds
from .config import LLMConfig, is_loopback_url
from .errors import (
    LLMAuthError,
    LLMContentFiltered,
    LLMContextTooLong,
    LLMError,
    LLMQuotaExceeded,
    LLMRetriesExhausted,
    describe,
)
from .repair import (
    ArgumentsTooDeep,
    NoToolCall,
    action_variants,
    check_action_name,
    check_depth,
    extract_call,
    repair_arguments,
    summarize_error,
)

if TYPE_CHECKING:
    import openai

    from ..agent.types import StepUsage

__all__ = ["InvokeResult", "LLMClient", "LLMConfig", "RetryInfo", "ToolSpec", "Usage", "WaitInfo"]

T = TypeVar("T")
log = logging.getLogger(__name__)

_TOOL_CHOICES = ("named", "required", "auto", "none given")
_CONTEXT_MARKERS = (
    "context_length_exceeded", "context length", "context window", "maximum context", "too many tokens",
    "prompt is too long", "input is too long", "reduce the length", "exceeds the maximum number of tokens",
)
_QUOTA_MARKERS = ("insufficient_quota", "exceeded your current quota", "billing_hard_limit_reached")
_IMAGE_MARKERS = ("image", "vision", "multimodal", "multi-modal")
_FILTER_MARKERS = (
    "content_filter", "content_policy_violation", "content management policy", "content filter",
    "safety system", "flagged by", "data_inspection_failed",
)


@dataclass
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments

    def to_openai(self) -> dict[str, Any]:
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None

    @classmethod
    def from_openai(cls, usage: Any) -> Usage:
        """From a chat completion's `usage` (OpenAI's details objects, or DeepSeek's cache-hit field)."""
        if not isinstance(usage, dict):
            return cls()
        prompt_details = usage.get("prompt_tokens_details") or {}
        completion_details = usage.get("completion_tokens_details") or {}
        cached = prompt_details.get("cached_tokens") if isinstance(prompt_details, dict) else None
        if cached is None:
            cached = usage.get("prompt_cache_hit_tokens")
        reasoning = completion_details.get("reasoning_tokens") if isinstance(completion_details, dict) else None
        prompt, completion = _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))
        total = _int(usage.get("total_tokens")) or prompt + completion
        return cls(prompt, completion, total, _int_or_none(cached), _int_or_none(reasoning))

    def to_openai(self) -> dict[str, Any]:
        usage: dict[str, Any] = {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                                 "total_tokens": self.total_tokens}
        if self.cached_tokens is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens}
        if self.reasoning_tokens is not None:
            usage["completion_tokens_details"] = {"reasoning_tokens": self.reasoning_tokens}
        return usage

    def to_step_usage(self) -> StepUsage:
        from ..agent.types import StepUsage

        return StepUsage(prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens,
                         total_tokens=self.total_tokens, cached_tokens=self.cached_tokens,
                         reasoning_tokens=self.reasoning_tokens)

    def to_wire(self) -> dict[str, Any]:
        """page-agent's shape, as `agent.types.StepUsage` (the one definition) writes it: promptTokens,
        completionTokens, totalTokens, cachedTokens?, reasoningTokens?"""
        return self.to_step_usage().to_wire()


@dataclass
class RetryInfo:
    """One retry about to happen, as page-agent counts them: `attempt` is the retry's number (1-based),
    `max_attempts` the number of retries allowed (config.max_retries); `message` the short cause in
    English, `code` and `params` the same cause for the catalog (i18n.failure_text)."""

    attempt: int
    max_attempts: int
    message: str
    code: str | None = None
    params: dict[str, Any] | None = None


@dataclass
class WaitInfo:
    """The model has not answered for `seconds` (retries included); `message` says so in words."""

    seconds: float
    message: str


@dataclass
class InvokeResult(Generic[T]):
    value: T  # what `parse` returned
    usage: Usage
    raw_request: dict[str, Any]  # the request body of the successful attempt
    raw_response: dict[str, Any]  # the provider's reply, as received
    arguments: Any = None  # the (repaired) tool arguments `parse` accepted
    tool_name: str = ""
    repairs: list[str] = field(default_factory=list)  # what repair.py had to fix, for the log


class _RetryableFailure(Exception):
    """A cause a retry may fix: its code and params (errors.CODES), worded in English as `message`."""

    def __init__(self, code: str, params: dict[str, Any] | None = None, *, retry_after: float | None = None,
                 feedback: list[dict[str, Any]] | None = None, raw_response: dict[str, Any] | None = None) -> None:
        self.code = code
        self.params = params or {}
        self.message = describe(code, self.params)
        super().__init__(self.message)
        self.retry_after = retry_after
        self.feedback = feedback or []
        self.raw_response = raw_response


class _RequestRejected(Exception):
    """A 400 naming a request option (tool_choice, parallel_tool_calls) the provider does not support."""

    def __init__(self, option: str, error: LLMError) -> None:
        super().__init__(option)
        self.option = option
        self.error = error


class _ImagesRefused(Exception):
    """A 4xx naming images (or vision) for a request that carried some: the model does not take them."""

    def __init__(self, error: LLMError) -> None:
        super().__init__(error.message)
        self.error = error


class LLMClient:
    def __init__(self, config: LLMConfig, *, on_result: Callable[[InvokeResult[Any]], None] | None = None) -> None:
        """`on_result` sees every successful InvokeResult (e.g. `Recorder.record` for `run --record`);
        it may also be set later as an attribute."""
        self.config = config
        self.on_result = on_result
        self.endpoint = config.resolve()  # raises LLMNotConfigured, saying how to configure
        self._openai: openai.AsyncOpenAI | None = None
        self.closed = False
        self._tool_choice = 0  # index into _TOOL_CHOICES: how far this provider made us fall back
        self._parallel_tool_calls_supported = True
        # The endpoint answered a request with images by refusing them: from then on the client sends
        # none (messages that carried images are left out) and callers can see it here.
        self.images_refused = False

    def __repr__(self) -> str:
        return f"LLMClient(base_url={self.endpoint.base_url!r}, model={self.endpoint.model!r})"

    async def invoke(
        self,
        messages: list[dict[str, Any]],
        tool: ToolSpec,
        *,
        parse: Callable[[Any], T],
        on_retry: Callable[[RetryInfo], Awaitable[None] | None] | None = None,
        on_wait: Callable[[WaitInfo], Awaitable[None] | None] | None = None,
    ) -> InvokeResult[T]:
        """Ask the model for one call of `tool`; return what `parse` made of its arguments.

        The whole call, retries and the waits between them included, ends within config.call_deadline.
        `on_wait` hears every config.wait_note_interval seconds that the model has not answered yet."""
        if self.closed:
            raise LLMError(code="client_closed")
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + self.config.call_deadline
        notes = loop.create_task(self._wait_notes(on_wait)) if on_wait is not None else None
        try:
            return await self._invoke(messages, tool, parse, on_retry, started, deadline)
        except LLMError as exc:
            if self.config.named_by_page:
                exc.chosen_by_page()
            raise
        finally:
            if notes is not None:
                notes.cancel()

    async def _invoke(self, messages: list[dict[str, Any]], tool: ToolSpec, parse: Callable[[Any], T],
                      on_retry: Callable[[RetryInfo], Awaitable[None] | None] | None, started: float,
                      deadline: float) -> InvokeResult[T]:
        loop = asyncio.get_running_loop()
        conversation = list(messages)
        retries = self.config.max_retries
        for attempt in range(retries + 1):
            try:
                result = await self._attempt(conversation, tool, parse, deadline - loop.time())
            except _RetryableFailure as failure:
                delay = failure.retry_after
                if delay is None:
                    delay = backoff_delay(attempt + 1, self.config.backoff_base)
                left = deadline - loop.time()
                cause = {"code": failure.code, "params": failure.params}
                gave_up: tuple[str, dict[str, Any]] | None = None
                if attempt == retries:
                    gave_up = "retries_exhausted", {"cause": cause}
                elif left <= 0 or delay >= left:
                    gave_up = "deadline", {"cause": cause, "elapsed": f"{loop.time() - started:.0f}",
                                           "deadline": f"{self.config.call_deadline:g}"}
                    if failure.retry_after is not None and failure.retry_after >= left:
                        gave_up[1].update(form="asked", retry_after=f"{failure.retry_after:g}")
                if gave_up is not None:
                    raise LLMRetriesExhausted(code=gave_up[0], params=gave_up[1], attempts=attempt + 1,
                                              raw_response=failure.raw_response) from None
                log.info("model call failed (%s); retry %d of %d", failure.message, attempt + 1, retries)
                if on_retry is not None:
                    pending = on_retry(RetryInfo(attempt + 1, retries, failure.message, failure.code, failure.params))
                    if inspect.isawaitable(pending):
                        await pending
                conversation.extend(failure.feedback)
                await asyncio.sleep(min(delay, MAX_RETRY_AFTER))
            else:
                if self.on_result is not None:
                    self.on_result(result)
                return result
        raise AssertionError("unreachable")

    async def _wait_notes(self, on_wait: Callable[[WaitInfo], Awaitable[None] | None]) -> None:
        interval = self.config.wait_note_interval
        waited = 0.0
        while True:
            await asyncio.sleep(interval)
            waited += interval
            try:
                pending = on_wait(WaitInfo(waited, f"the model has not answered for {waited:g} s"))
                if inspect.isawaitable(pending):
                    await pending
            except Exception:  # a note is a courtesy: it must never break the call
                log.exception("on_wait callback failed")

    async def aclose(self) -> None:
        self.closed = True
        if self._openai is not None:
            client, self._openai = self._openai, None
            await client.close()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- one attempt -------------------------------------------------------------------------------

    async def _attempt(self, conversation: list[dict[str, Any]], tool: ToolSpec, parse: Callable[[Any], T],
                       time_left: float) -> InvokeResult[T]:
        while True:
            body = self._request_body(conversation, tool)
            try:
                text = await self._send(body, time_left)
                break
            except _RequestRejected as rejected:
                if not self._fall_back(rejected.option):
                    raise rejected.error from None
            except _ImagesRefused as refused:
                if self.images_refused:
                    raise refused.error from None
                self.images_refused = True
                log.warning("the model refused images (%s); sending none from now on", refused.error.message)
        return self._read_reply(text, body, tool, parse)

    def _request_body(self, conversation: list[dict[str, Any]], tool: ToolSpec) -> dict[str, Any]:
        messages = [m for m in conversation if not _has_image(m)] if self.images_refused else list(conversation)
        body: dict[str, Any] = {"model": self.endpoint.model, "messages": messages,
                                "tools": [tool.to_openai()]}
        choice = _TOOL_CHOICES[self._tool_choice]
        if choice == "named":
            body["tool_choice"] = {"type": "function", "function": {"name": tool.name}}
        elif choice in ("required", "auto"):
            body["tool_choice"] = choice
        if self._parallel_tool_calls_supported:
            body["parallel_tool_calls"] = False
        if self.config.temperature is not None:
            body["temperature"] = self.config.temperature
        return body

    def _fall_back(self, option: str) -> bool:
        if option == "parallel_tool_calls" and self._parallel_tool_calls_supported:
            self._parallel_tool_calls_supported = False
        elif option == "tool_choice" and self._tool_choice < len(_TOOL_CHOICES) - 1:
            self._tool_choice += 1
        else:
            return False
        log.info("provider rejected %s; now using tool_choice=%s, parallel_tool_calls=%s", option,
                 _TOOL_CHOICES[self._tool_choice], "false" if self._parallel_tool_calls_supported else "not sent")
        return True

    async def _send(self, body: dict[str, Any], time_left: float) -> str:
        import openai

        from .bounded_http import ReplyTooLarge, UnreadableEncoding

        client = self._client()
        timeout = max(0.001, min(self.config.timeout, time_left))
        try:
            async with asyncio.timeout(timeout):
                raw = await client.chat.completions.with_raw_response.create(**body, timeout=timeout)
        except openai.APIStatusError as exc:
            raise self._status_failure(exc, images=any(_has_image(m) for m in body["messages"])) from None
        except (openai.APITimeoutError, TimeoutError):
            # what was left of the deadline, said as a person would ("10 s", not the "9.99999 s" a new user saw)
            raise _RetryableFailure("timeout", {"timeout": f"{max(0.1, round(timeout, 1)):g}"}) from None
        except openai.APIConnectionError as exc:
            raise self._connection_failure(exc.__cause__ or exc) from None
        except ReplyTooLarge as exc:
            raise _RetryableFailure("reply_too_large", {"base_url": self.endpoint.base_url,
                                                        "limit": _megabytes(exc.limit)}) from None
        except UnreadableEncoding as exc:
            raise _RetryableFailure("bad_reply", {"form": "unreadable", "base_url": self.endpoint.base_url,
                                                  "detail": str(exc)}) from None
        text: str = raw.http_response.text  # `raw` is Any: create(**body) matches none of openai's overloads
        return text

    def _connection_failure(self, cause: BaseException) -> _RetryableFailure:
        """What went wrong on the wire, in words even when the exception carries none."""
        import httpx2

        detail = self._redact(" ".join(str(cause).split()))
        where = {"base_url": self.endpoint.base_url}
        if isinstance(cause, httpx2.ConnectError | httpx2.ConnectTimeout):
            if not detail:
                return _RetryableFailure("unreachable", {**where, "form": "refused"})
            return _RetryableFailure("unreachable", {**where, "detail": detail})
        if isinstance(cause, httpx2.RemoteProtocolError | httpx2.ReadError | httpx2.WriteError):
            if detail:
                return _RetryableFailure("connection_cut", {**where, "detail": detail})
            return _RetryableFailure("connection_cut", {**where, "form": "reset"})
        return _RetryableFailure("unreachable", {**where, "detail": detail or type(cause).__name__})

    def _client(self) -> openai.AsyncOpenAI:
        if self._openai is None:
            import openai

            from .bounded_http import bounded_client

            # Loopback servers must not go through HTTP_PROXY; remote ones keep the user's proxy settings.
            http_client = bounded_client(self.config.max_reply_bytes,
                                         trust_env=not is_loopback_url(self.endpoint.base_url))
            self._openai = openai.AsyncOpenAI(
                api_key=self.endpoint.api_key, base_url=self.endpoint.base_url, max_retries=0,
                timeout=self.config.timeout, http_client=http_client,
            )
        return self._openai

    # -- classifying failures ------------------------------------------------------------------------

    def _status_failure(self, exc: Any, *, images: bool = False) -> Exception:
        status: int = exc.status_code
        detail = " ".join(self._redact(_provider_message(exc.body) or exc.response.text or exc.message).split())
        html = not isinstance(exc.body, dict) and _is_html(exc.response.headers, exc.response.text)
        if html:
            detail = f"the endpoint answered {status} {_reason(exc.response)} (an HTML error page)"
        if len(detail) > 300:
            detail = detail[:299] + "…"
        lowered = detail.lower() + " " + str(_error_code(exc.body)).lower()
        params: dict[str, Any] = {"status": status, "base_url": self.endpoint.base_url, "detail": detail,
                                  "model": self.endpoint.model}
        if status in (401, 403):
            return LLMAuthError(code="key_refused", params=params)
        if images and 400 <= status < 500 and any(marker in lowered for marker in _IMAGE_MARKERS):
            return _ImagesRefused(LLMError(code="rejected", params=params))
        if status == 413 or any(marker in lowered for marker in _CONTEXT_MARKERS):
            return LLMContextTooLong(code="context_too_long", params=params)
        if any(marker in lowered for marker in _FILTER_MARKERS):
            return LLMContentFiltered(code="content_filtered", params=params)
        if status in (400, 422):
            for option in ("tool_choice", "parallel_tool_calls"):
                if option in lowered:
                    return _RequestRejected(option, LLMError(code="rejected", params=params))
        if status == 429 and any(marker in lowered for marker in _QUOTA_MARKERS):
            return LLMQuotaExceeded(code="quota", params=params)
        if status in (405, 501):  # the server does not take this request at all (a web server, not a model API)
            return LLMError(code="not_found", params={**params, "form": "not_model_api"})
        if status in (408, 409, 429) or status >= 500:
            if html:
                params.update(form="html", reason=_reason(exc.response))
            return _RetryableFailure("rate_limited" if status == 429 else "server_error", params,
                                     retry_after=retry_after_seconds(exc.response.headers, cap=None))
        if status == 404:
            return LLMError(code="not_found", params=params)
        return LLMError(code="rejected", params=params)

    def _redact(self, text: str) -> str:
        key = self.endpoint.api_key
        return text.replace(key, "***") if key and len(key) >= 4 else text

    # -- reading the reply ---------------------------------------------------------------------------

    def _read_reply(self, text: str, body: dict[str, Any], tool: ToolSpec, parse: Callable[[Any], T]
                    ) -> InvokeResult[T]:
        try:
            data = clean_json(json.loads(text))  # a lone surrogate becomes U+FFFD here, before anything uses it
        except RecursionError:
            raise _RetryableFailure("bad_reply", {"form": "too_deep"}) from None
        except ValueError:
            if _is_html({}, text):
                raise _RetryableFailure("bad_reply", {"form": "html", "gist": repr(_html_gist(text)),
                                                      "base_url": self.endpoint.base_url}) from None
            snippet = " ".join(text.split())[:80]
            raise _RetryableFailure("bad_reply", {"form": "not_json", "snippet": repr(snippet)}) from None
        if not isinstance(data, dict):
            raise _RetryableFailure("bad_reply", {"form": "not_object"})
        choices = data.get("choices")
        if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
            detail = self._redact(_provider_message(data.get("error")) or "")
            if detail and any(marker in detail.lower() for marker in _CONTEXT_MARKERS):
                raise LLMContextTooLong(code="context_too_long", raw_response=data,
                                        params={"form": "reply", "model": self.endpoint.model, "detail": detail})
            cause = {"form": "provider_error", "detail": detail} if detail else {"form": "no_choices"}
            raise _RetryableFailure("bad_reply", cause, raw_response=data)
        choice = choices[0]
        reply_message = choice.get("message")
        message: dict[str, Any] = reply_message if isinstance(reply_message, dict) else {}
        finish_reason = choice.get("finish_reason")
        if finish_reason == "content_filter":
            raise LLMContentFiltered(code="content_filtered", params={"form": "reply"}, raw_response=data)
        cut_off = LLMContextTooLong(code="context_too_long", params={"form": "cut_off", "model": self.endpoint.model},
                                    raw_response=data)
        try:
            extracted = extract_call(message, tool.name, set(action_variants(tool.parameters)))
            arguments, repairs = repair_arguments(extracted, tool.name, tool.parameters)
            check_depth(arguments)
        except NoToolCall:
            if finish_reason == "length":
                raise cut_off from None
            failure = _RetryableFailure("bad_call", {"form": "no_call", "tool": tool.name}, raw_response=data)
            failure.feedback = _feedback(message, None, tool, failure.message)
            raise failure from None
        except ArgumentsTooDeep as exc:
            failure = _RetryableFailure("bad_call", {"form": "arguments", "tool": tool.name, "detail": str(exc)},
                                        raw_response=data)
            failure.feedback = _feedback(message, None, tool, failure.message, deep=True)
            raise failure from None
        arguments = clean_json(arguments)  # arguments decoded from a string may hold new lone surrogates
        try:
            complaint = check_action_name(arguments, tool.parameters)
            if complaint:
                raise ValueError(complaint)
            value = parse(arguments)
        except ValueError as exc:  # pydantic's ValidationError is one
            if finish_reason == "length":
                raise cut_off from None
            failure = _RetryableFailure("bad_call", {"form": "arguments", "tool": tool.name,
                                                     "detail": summarize_error(exc)}, raw_response=data)
            failure.feedback = _feedback(message, extracted.tool_call_id, tool, failure.message)
            raise failure from None
        if repairs:
            log.info("repaired the model's reply: %s", "; ".join(repairs))
        return InvokeResult(value=value, usage=Usage.from_openai(data.get("usage")), raw_request=body,
                            raw_response=data, arguments=arguments, tool_name=tool.name, repairs=repairs)


def _feedback(message: dict[str, Any], failed_call_id: str | None, tool: ToolSpec, problem: str, *,
              deep: bool = False) -> list[dict[str, Any]]:
    """The model's reply and the error, as conversation messages for the next attempt (`deep`: the reply's
    arguments are not repeated, only the error)."""
    if deep:
        return [{"role": "user", "content": f"Error: {problem}. Reply only by calling the tool {tool.name}."}]
    calls = []
    for index, call in enumerate(message.get("tool_calls") or []):
        if not isinstance(call, dict):
            continue
        function = call.get("function") or {}
        arguments = function.get("arguments")
        calls.append({
            "id": call.get("id") or f"call_{index}",
            "type": "function",
            "function": {"name": str(function.get("name") or ""),
                         "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)},
        })
    content = message.get("content") if isinstance(message.get("content"), str) else None
    if calls:
        target = failed_call_id if failed_call_id in {call["id"] for call in calls} else calls[0]["id"]
        replies = [
            {"role": "tool", "tool_call_id": call["id"],
             "content": f"Error: {problem}. Call {tool.name} again with corrected arguments."
             if call["id"] == target else "Not executed: call exactly one tool per reply."}
            for call in calls
        ]
        return [{"role": "assistant", "content": content, "tool_calls": calls}, *replies]
    nudge = {"role": "user", "content": f"Error: {problem}. Reply only by calling the tool {tool.name}."}
    return [{"role": "assistant", "content": content}, nudge] if content else [nudge]


def _has_image(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(part, dict) and part.get("type") in ("image_url", "input_image") for part in content)


def _is_html(headers: Any, text: str) -> bool:
    if "text/html" in str(headers.get("content-type", "")).lower():
        return True
    start = text.lstrip()[:100].lower()
    return start.startswith(("<!doctype html", "<html", "<head", "<body"))


def _html_gist(html: str) -> str:
    """An HTML page in a few words: its title, or else the start of its text."""
    title = re.search(r"<title[^>]*>(.*?)</title>", html[:20_000], re.IGNORECASE | re.DOTALL)
    text = title.group(1) if title else re.sub(r"<[^>]*>", " ", html[:20_000])
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:59] + "…"


def _reason(response: Any) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(response.status_code).phrase
    except ValueError:
        return str(getattr(response, "reason_phrase", "") or "")


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):g} MB"


def _provider_message(error: Any) -> str | None:
    if isinstance(error, dict):
        inner = error.get("error", error)
        text = inner.get("message") if isinstance(inner, dict) else None
        if isinstance(text, str):
            return text
        if isinstance(inner, str):
            return inner
    if isinstance(error, str) and error.strip():
        return error.strip()[:300]
    return None


def _error_code(error: Any) -> Any:
    if isinstance(error, dict):
        inner = error.get("error", error)
        if isinstance(inner, dict):
            return inner.get("code") or inner.get("type") or ""
    return ""


# No call uses a billion tokens; a provider's 10^30 would overflow SQLite's 64-bit integers in the record.
MAX_TOKEN_COUNT = 10**9


def _int(value: Any) -> int:
    counted = _int_or_none(value)
    return 0 if counted is None else counted


def _int_or_none(value: Any) -> int | None:
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    if not 0 <= value <= MAX_TOKEN_COUNT:
        log.warning("the provider reported a token count of %.40s; counted as %s", value,
                    0 if value < 0 else MAX_TOKEN_COUNT)
    return min(max(value, 0), MAX_TOKEN_COUNT)
