"""Keeping the page's passwords out of what a script hands back to the model.

`withhold` replaces each password found in a text, also spaced out, in another case or reversed; a text
that carries one in an encoded form (base64, hex, URL escapes, a list of character codes) is withheld as
a whole, since there is no telling where the secret starts in it."""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import unquote

HIDDEN = "[password hidden]"
WITHHELD = ("[withheld: the script's result carried a password from the page in an encoded form "
            "(base64, hex, character codes or similar); passwords are never shown]")
MIN_LENGTH = 3  # shorter values are too common in ordinary text to stand for a password
# A secret field's value looked for elsewhere on its page (an echo in a strength meter, another field): shorter ones
# (a card's 3-digit code, a 4-digit PIN) turn up in prices, dates and addresses, which would be hidden with them.
ECHOED_MIN_LENGTH = 6
_SEPARATORS = r"[\W_]{0,3}"  # "h u n t e r 2", "h-u-n-t-e-r-2", "h,u,n,t,e,r,2"
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{8,}={0,2}")
_HEX_RUN = re.compile(r"(?:[0-9a-fA-F]{2}){4,}")
_CODES_RUN = re.compile(r"(?:0x[0-9a-fA-F]{1,6}|\d{1,7})(?:[^\w]{1,4}(?:0x[0-9a-fA-F]{1,6}|\d{1,7}))+")
_CODE = re.compile(r"0x[0-9a-fA-F]{1,6}|\d{1,7}")


def withhold(text: str, passwords: set[str]) -> str:
    """`text` with every password in `passwords` hidden."""
    patterns = [echoes(p) for p in sorted(passwords, key=len, reverse=True) if len(p) >= MIN_LENGTH]
    if not patterns:
        return text
    for pattern in patterns:
        text = pattern.sub(HIDDEN, text)
    if any(pattern.search(view) for view in _decoded_views(text) for pattern in patterns):
        return WITHHELD
    return text


def echoes(password: str) -> re.Pattern[str]:
    """The password forwards or backwards, in any case, its characters possibly set apart."""
    def spaced(chars: str) -> str:
        return _SEPARATORS.join(re.escape(c) for c in chars)

    return re.compile(f"{spaced(password)}|{spaced(password[::-1])}", re.IGNORECASE)


def encoded_cores(value: str) -> tuple[str, ...]:
    """What any base64 (standard or URL-safe) or hex text holding `value` always contains, wherever the value
    starts in what was encoded ("user:value" in an Authorization header): the characters that only the
    value's bytes make, for each of base64's three alignments, and its hex digits (lower case)."""
    data = value.encode()
    cores = {data.hex()}
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data).decode()
        core = encoded[-(-8 * offset // 6):8 * (offset + len(data)) // 6]  # no character shared with other bytes
        cores |= {core, core.translate(_URLSAFE)}
    return tuple(sorted(cores, key=len, reverse=True))


_URLSAFE = str.maketrans("+/", "-_")
_ENCODED_TEXT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-=")


def hide_encoded(text: str, cores: tuple[str, ...], replacement: str) -> str:
    """`text` with each run of base64 or hex characters that holds one of `cores` (`encoded_cores`) replaced
    whole (what borders the value there is encoded with it). Literal searches: linear on long runs."""
    for core in cores:
        found = re.compile(re.escape(core), re.IGNORECASE if _HEX_DIGITS.issuperset(core) else 0)
        match = found.search(text)
        while match:
            begin, end = match.span()
            while begin > 0 and text[begin - 1] in _ENCODED_TEXT and text[begin - 1] != "=":
                begin -= 1
            while end < len(text) and text[end] in _ENCODED_TEXT:
                end += 1
            text = text[:begin] + replacement + text[end:]
            match = found.search(text, begin + len(replacement))
    return text


_HEX_DIGITS = frozenset("0123456789abcdef")


def _decoded_views(text: str) -> list[str]:
    """What the text says once its encoded parts are decoded."""
    views = [unquote(text)] if "%" in text else []
    for found in _BASE64_RUN.findall(text):
        for start in range(4):  # the run may have picked up a word glued to its front ("id-aHVudGVy…")
            run = found[start:].rstrip("=")
            for decode in (base64.b64decode, base64.urlsafe_b64decode):
                try:
                    views.append(decode(run + "=" * (-len(run) % 4)).decode("utf-8", "replace"))
                except (binascii.Error, ValueError):
                    pass
    for found in _HEX_RUN.findall(text):
        for start in range(2):
            run = found[start:][: (len(found) - start) // 2 * 2]
            views.append(bytes.fromhex(run).decode("utf-8", "replace"))
    for run in _CODES_RUN.findall(text):
        codes = [int(c, 16) if c.lower().startswith("0x") else int(c) for c in _CODE.findall(run)]
        views.append("".join(chr(c) for c in codes if 0 < c < 0x110000))
    return views
