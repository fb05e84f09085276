"""What an action does or did, in the words the person reads ('clicking "Sign in"', 'clicked "Sign in"', 'opened
example.com'), for the terminal: the extension's own messages (its _locales/<language>/messages.json, which the wheel
carries), read as the popup reads them (lib/timeline.js actionWords), so the popup, the side panel, `tabpilot run` and
`tabpilot history show` say a step the same way and the words are written once. A terminal printed
'action: click_element_by_index {"index": 3}' (a new user's trial)."""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Mapping
from typing import Any, Literal

from .language import Language, language_of

log = logging.getLogger(__name__)

Tense = Literal["acting", "did"]
LOCALE_FOLDERS: dict[Language, str] = {"en-US": "en", "zh-CN": "zh_CN"}
_MESSAGE_NAME = re.compile(r"\w+", re.ASCII)  # what chrome.i18n takes as a message's name
_PLACE = re.compile(r"\$(\$|[1-9])")


def action_words(tense: Tense, tool: str, target: object = None, seconds: object = None,
                 language: str | None = None) -> str:
    """`tool`'s action in words: on `target` (the element's name, or the address it opens) where it has such words, a
    custom tool by its name; the bare call when the extension's words cannot be read (a damaged install)."""
    messages = _messages(language_of(language))
    if not messages:
        return tool
    words = ""
    if _MESSAGE_NAME.fullmatch(tool):  # a custom tool's name may be any string
        if target:
            words = _message(messages, f"{tense}On_{tool}", str(target))
        words = words or _message(messages, f"{tense}_{tool}", _number(seconds))
    return words or _message(messages, f"{tense}Other", tool) or tool


def step_words(action: Mapping[str, Any], language: str | None = None) -> str:
    """A recorded step's action (a step event's `action`) as its card says it: what it did, or, when it was not done
    (the person took the controls, it was refused or it failed: its result says which), what it was doing."""
    tense: Tense = "acting" if action.get("abandoned") or action.get("notDone") else "did"
    tool_input = action.get("input")
    seconds = tool_input.get("seconds") if isinstance(tool_input, dict) else None
    return action_words(tense, str(action.get("name") or "?"), action.get("target"), seconds, language)


def _number(value: object) -> str:
    """As lib/i18n.js fills a number in (a wait's seconds): 1 when there is none, as the tool's default."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:g}"
    return "1"


def _message(messages: Mapping[str, str], name: str, *substitutions: str) -> str:
    """chrome.i18n.getMessage: names are case-insensitive, $1…$9 filled in, $$ a dollar sign; "" when there is none."""
    template = messages.get(name.lower())
    if template is None:
        return ""

    def fill(place: re.Match[str]) -> str:
        if place[1] == "$":
            return "$"
        number = int(place[1])
        return substitutions[number - 1] if number <= len(substitutions) else ""

    return _PLACE.sub(fill, template)


@functools.cache
def _messages(language: Language) -> dict[str, str]:
    from .installer import extension_dir

    path = extension_dir() / "_locales" / LOCALE_FOLDERS[language] / "messages.json"
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("the extension's words cannot be read (%s): actions are named by their tools", exc)
        return {}
    if not isinstance(entries, dict):
        return {}
    return {
        name.lower(): entry["message"] for name, entry in entries.items()
        if isinstance(entry, dict) and isinstance(entry.get("message"), str)
    }
