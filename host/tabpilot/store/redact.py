"""Keep secrets out of what we write down. Events and results pass through here before they are stored,
so an API key that slipped into a tool input, a raw request's headers or a page's text never reaches
the database or an export."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[redacted]"
RAW_FIELDS = ("rawRequest", "rawResponse")

# Key names whose value is a secret whatever it looks like (compared lower-case, "-" and "_" removed).
_SECRET_KEYS = {
    "apikey",
    "authorization",
    "proxyauthorization",
    "xapikey",
    "openaiapikey",
    "accesstoken",
    "refreshtoken",
    "clientsecret",
    "secretkey",
    "password",
}
# "Bearer <token>": a token has a digit and 16+ characters, so prose ("bearer instruments") is left alone.
_BEARER = re.compile(r"(?i)\b(bearer)\s+(?=[A-Za-z._~+/=\-]*\d)[A-Za-z0-9._~+/=\-]{16,}")
# OpenAI-style keys ("sk-...", "sk-proj-...") wherever they appear in text.
_OPENAI_KEY = re.compile(r"\bsk-[A-Za-z0-9_\-]{20,}")
# Credentials in a URL: the password of its user info ("https://alice:hunter2@host/") and the value of a
# secret-named query or fragment parameter ("?access_token=…", "#id_token=…"). A tab's URL keeps them as typed or
# redirected to (CDP reports them so), and it goes into the page state, the task's row, events and exports.
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s/?#@:\"'<>\\]*):([^\s/?#@\"'<>\\]+)@")
_URL_SECRET_PARAM = re.compile(
    r"(?i)([?&#;](?:access_token|id_token|refresh_token|auth_token|session_token|token|password|passwd|pwd|"
    r"api_key|apikey|api-key|client_secret|secret|x-amz-security-token|x-amz-signature|sig|signature)=)"
    r"(?!\[redacted\])([^&#;\s\"'<>\\]+)")


def hide_url_credentials(text: str) -> str:
    """`text` with every URL's password and secret-named parameter value replaced by `[redacted]` (the user name,
    host, path and other parameters stay: the person and the model still see which page it is)."""
    if "@" in text and "://" in text:
        text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{REDACTED}@", text)
    if "=" in text:
        text = _URL_SECRET_PARAM.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    return text


def is_secret_key(name: str) -> bool:
    return name.lower().replace("-", "").replace("_", "") in _SECRET_KEYS


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    for secret in secrets:
        if secret and len(secret) >= 8 and secret in text:
            text = text.replace(secret, REDACTED)
    # The substring checks skip the regexes on the usual text (a whole page with debug capture on).
    if "bearer" in text.lower():
        text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    if "sk-" in text:
        text = _OPENAI_KEY.sub(REDACTED, text)
    return hide_url_credentials(text)


def scrub(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A copy of a JSON-like value with secret-named fields and secret-looking text replaced."""
    secrets = tuple(secrets)
    if isinstance(value, dict):
        return {
            key: (REDACTED if isinstance(key, str) and is_secret_key(key) and item else scrub(item, secrets))
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [scrub(item, secrets) for item in value]
    if isinstance(value, str):
        return scrub_text(value, secrets)
    return value


def without_raw(event: dict[str, Any]) -> dict[str, Any]:
    """The event minus the raw LLM request/response (they hold whole pages)."""
    return {key: item for key, item in event.items() if key not in RAW_FIELDS}
