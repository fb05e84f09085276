"""Lone UTF-16 surrogates out of text that enters the host.

A page's JS can cut an emoji in half (`'a\\ud800b'`); JSON carries such a half as a `\\udXXX` escape, and
Python decodes it into a str that cannot be encoded as UTF-8 — so the next request, log line, print or
database write fails. Every boundary where outside text comes in (CDP, native frames, model replies,
settings, the command line) passes it through here: each lone surrogate becomes U+FFFD, valid pairs
and everything else stay as they were."""

from __future__ import annotations

import json
import re
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
# A JSON text that can decode to a lone surrogate holds a \uD800-\uDFFF escape (or, as a str, one).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_SURROGATE_OR_ESCAPE = re.compile("\\\\u[dD][89abcdefABCDEF]|[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD (a surrogate pair becomes its character)."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def may_hold_surrogates(json_text: bytes | str) -> bool:
    """False when JSON text certainly decodes without lone surrogates (the cheap check before a walk)."""
    if isinstance(json_text, bytes):
        return _SURROGATE_ESCAPE.search(json_text) is not None
    return _SURROGATE_OR_ESCAPE.search(json_text) is not None


def clean_json(value: Any) -> Any:
    """A decoded JSON value with every string (keys too) cleaned. Lists and dicts are fixed in place;
    the walk is iterative, so any depth the decoder accepted is fine."""
    if isinstance(value, str):
        return clean_text(value)
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            dirty_keys = [key for key in item if isinstance(key, str) and clean_text(key) is not key]
            for key, child in item.items():
                if isinstance(child, str):
                    cleaned = clean_text(child)
                    if cleaned is not child:
                        item[key] = cleaned
                elif isinstance(child, dict | list):
                    stack.append(child)
            for key in dirty_keys:
                item[clean_text(key)] = item.pop(key)
        elif isinstance(item, list):
            for index, child in enumerate(item):
                if isinstance(child, str):
                    cleaned = clean_text(child)
                    if cleaned is not child:
                        item[index] = cleaned
                elif isinstance(child, dict | list):
                    stack.append(child)
    return value


# The one rule for text a person reads (a terminal, a log, a question's card), from a page, a model or a local
# program: every control (Cc), format (Cf), line- and paragraph-separator (Zl, Zp) character of Unicode 15.1 is
# shown as its code, except the tab and the line feed (a text's own layout) and the zero-width (non-)joiner U+200C
# and U+200D (they shape Persian and Indic words and join emoji; a terminal draws them, obeys nothing). That is
# C0 and C1 (an escape sequence, U+009B CSI), the bidi controls that reorder a line as it is shown, U+2028 and
# U+2029 (a terminal or editor starts a new line: a forged line), and the invisible ones (U+200B, U+2060, U+FEFF,
# the tag characters) that make a text read as another. tests/test_cli_output.py checks it against unicodedata;
# extension/lib/page_text.js shows the same characters in the popup, side panel and overlay (test_extension_page_text).
_FOR_PEOPLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f]")


def _json_escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # JSON has no escape beyond the BMP: the UTF-16 pair's
    return f"\\u{0xd800 + (code >> 10):04x}\\u{0xdc00 + (code & 0x3ff):04x}"


def json_for_people(value: Any, **options: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, **options)` with every character the rule above names written as its
    `\\uXXXX` escape: the same JSON value, nothing a terminal obeys. (JSON escapes C0 itself; C1's U+009B is CSI to
    a terminal that takes 8-bit controls, and a page's text is printed by `history export`, `--json` and
    `run --json`.)"""
    return _FOR_PEOPLE.sub(_json_escape, json.dumps(value, ensure_ascii=False, **options))


def show_controls(text: str) -> str:
    """Text from a page, a model or a local program as a person reads it (a terminal, a question's card, a log):
    each character the rule above names shown as its code (`\\x1b`, `\\u202e`, `\\u2028`), never obeyed. An
    escape sequence in a page's title could otherwise clear the screen, retitle the window or rewrite lines already
    printed; a bidi override or a line separator could make a line read differently from the text behind it."""
    return _FOR_PEOPLE.sub(lambda found: found.group().encode("unicode_escape").decode("ascii"), text)


def clipped(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, the cut marked with "…" (the one way a message shortens a value)."""
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


# A value whoever sent it chose (a secret's name, a domain, a pattern, a task id, an origin) as a message repeats it.
# The attack run sent a secret's name of 100,000 characters and a 10 KB domain: each came back whole in the error
# the popup shows, the reply and the log. Long enough for any real one to read whole (a domain's label is at most 63).
QUOTED_LIMIT = 100


def quoted(value: str, *, escaped: bool = False) -> str:
    """A value someone else chose as a message repeats it: at most QUOTED_LIMIT characters, each lone surrogate as
    U+FFFD and, unless the message `escaped` it already (repr), every character the rule above names as its code."""
    value = clipped(clean_text(value), QUOTED_LIMIT)
    return value if escaped else show_controls(value)


def short_url(url: str, limit: int) -> str:
    """A URL as the header shows it, every step: scheme, host and path stay readable, a long query or
    fragment is cut with an ellipsis, a data: URL shows only its media type."""
    url = url.strip()
    if url[:5].lower() == "data:":
        media_type = url[5:].split(",", 1)[0].split(";", 1)[0].strip() or "text/plain"
        return f"data:{media_type},…"
    if len(url) <= limit:
        return url
    cut = min((i for i in (url.find("?"), url.find("#")) if i >= 0), default=len(url))
    base, rest = url[:cut], url[cut:]
    if len(base) >= limit:  # a very long path: keep its start and its last segment
        head, _, last = base.rstrip("/").rpartition("/")
        last = clipped(" ".join(last.split()), limit // 3)
        return f"{head[: max(limit - len(last) - 2, 20)]}…/{last}" + ("?…" if rest else "")
    return base + rest[: max(limit - len(base) - 1, 2)] + "…"
