"""Keeping the page's passwords out of what a script hands back to the model.

`withhold` replaces each password found in a text, also spaced out, in another case or reversed; a text
that carries one in an encoded form (base64, hex, URL escapes, a list of character codes) is withheld as
a whole, since there is no telling where the secret starts in it."""

from __future__ import annotations

import base64
import binascii
import re
from html.entities import codepoint2name
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


def spelled(value: str) -> re.Pattern[str]:
    """The value with its characters written any way a URL, a script, JSON or HTML writes one: itself, %XX of its
    UTF-8 bytes, \\uXXXX or \\u{X}, &#NN; or &#xHH;, &name;, its code in decimal or hex (a list of codes), in any
    case, possibly set apart as `echoes` allows. A few characters escaped is enough ("p%40ss%26word" in a
    connection string, "p\\u0026q" in Go's JSON, "p&amp;q" in a page's HTML source). ~10 alternatives a character
    (1.2 ms a secret on a 20 KB page): looked for only in a text that `escaped_somewhere` finds something in."""
    def one(char: str) -> str:
        code = ord(char)
        alternatives = [re.escape(char), "".join(f"%{byte:02x}" for byte in char.encode()),  # a URL
                        rf"\\u{code:04x}", rf"\\u\{{0{{0,4}}{code:x}\}}", rf"\\x{code:02x}",  # JSON, JavaScript
                        rf"&#0{{0,4}}{code};?", rf"&#x0{{0,4}}{code:x};?",  # HTML character references
                        _as_code(char)]  # a list of codes: 84,114 / 0x54
        if code in codepoint2name:
            alternatives.append(f"&{codepoint2name[code]};")
        return f"(?:{'|'.join(alternatives)})"

    # the fewest separators first: "&#120;" is a character written as HTML, not "&#" set apart from "120". Leading
    # zeros are bounded: "0*84" took 1.1 s on a page of 32,000 zeros (every start tried every zero after it).
    return re.compile(f"{_SEPARATORS}?".join(one(char) for char in value), re.IGNORECASE)


def escaped_somewhere(text: str, values: list[str]) -> bool:
    """Whether `text` has something written escaped that `spelled` could find one of `values` in: a URL, script or
    HTML escape, or a list of codes that reads as one of them. Cheap (~0.1 ms on a 20 KB page), so the patterns
    themselves run only there: a list of codes is only decoded (numbers in a row are on most pages)."""
    if _ESCAPE_MARK.search(text):
        return True
    wanted = [value.lower() for value in values]
    for run in _CODE_LIST.finditer(text):
        codes = _CODE_TOKEN.findall(run.group())
        for base in (10, 16):
            decoded = "".join(_character(code, base) for code in codes).lower()
            if any(value in decoded for value in wanted):
                return True
    return False


def _character(code: str, base: int) -> str:
    """The character a code stands for in `base`; NUL where it stands for none (a word of hex letters, "db")."""
    try:
        number = int(code[2:] if code[:2].lower() == "0x" else code, base)
    except ValueError:
        return "\0"
    return chr(number) if 0 < number < 0x110000 else "\0"


_ESCAPE_MARK = re.compile(r"%[0-9a-fA-F]{2}|\\[ux]|&#|&[a-zA-Z]{2,8};")
_CODE_LIST = re.compile(r"\b(?:0[xX])?[0-9a-fA-F]{2,7}(?:[^\w\n]{1,3}(?:0[xX])?[0-9a-fA-F]{2,7}\b){5,}")
_CODE_TOKEN = re.compile(r"(?:0[xX])?[0-9a-fA-F]+")


def _as_code(char: str) -> str:
    """The character's code, in decimal or hex, as a list of codes has it (not followed by another digit)."""
    return rf"(?:0x)?0{{0,4}}(?:{ord(char)}(?!\d)|{ord(char):x}(?![0-9a-f]))"


def encoded_cores(value: str) -> tuple[str, ...]:
    """What any base64 (standard or URL-safe) or hex text holding `value` always contains, wherever the value
    starts in what was encoded ("user:value" in an Authorization header): the characters that only the
    value's bytes make, for each of base64's three alignments, and its hex digits (lower case); for its UTF-8
    bytes and its UTF-16 ones (a script's btoa of a .NET or Windows string)."""
    cores: set[str] = set()
    for data in (value.encode(), value.encode("utf-16-le"), value.encode("utf-16-be")):
        cores.add(data.hex())
        for offset in range(3):
            encoded = base64.b64encode(b"\0" * offset + data).decode()
            core = encoded[-(-8 * offset // 6):8 * (offset + len(data)) // 6]  # no character shared with other bytes
            cores |= {core, core.translate(_URLSAFE)}
    return tuple(sorted(cores, key=len, reverse=True))


_URLSAFE = str.maketrans("+/", "-_")
_ENCODED_TEXT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-=")


def hide_encoded(text: str, cores: tuple[str, ...], replacement: str) -> str:
    """`text` with each run of base64 or hex characters that holds one of `cores` (`encoded_cores`) replaced
    whole (what borders the value there is encoded with it). Literal searches, and the text put together once
    per core: linear however many times the value is there (rebuilt per match, 20,000 of them took 29 s)."""
    for core in cores:
        found = re.compile(re.escape(core), re.IGNORECASE if _HEX_DIGITS.issuperset(core) else 0)
        pieces, kept_from, at = [], 0, 0
        while match := found.search(text, at):
            begin, end = match.span()
            while begin > kept_from and text[begin - 1] in _ENCODED_TEXT and text[begin - 1] != "=":
                begin -= 1
            while end < len(text) and text[end] in _ENCODED_TEXT:
                end += 1
            pieces += [text[kept_from:begin], replacement]
            kept_from = at = end
        if pieces:
            text = "".join([*pieces, text[kept_from:]])
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
