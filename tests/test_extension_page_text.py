"""The extension's rule for the characters of a page's text it shows as codes (lib/page_text.js) is the host's rule for
text a person reads (textsafety._FOR_PEOPLE): one rule, so the popup and the terminal never disagree on which
characters a page may hide or reorder text with. Browser-free: it reads the file."""

from __future__ import annotations

import re
from pathlib import Path

from tabpilot import textsafety

PAGE_TEXT = Path(__file__).resolve().parents[1] / "extension" / "lib" / "page_text.js"


def extension_rule() -> re.Pattern[str]:
    found = re.search(r"const CONTROLS = /(\[.*?\])/gu;", PAGE_TEXT.read_text(encoding="utf-8"))
    assert found, "lib/page_text.js has no CONTROLS rule"
    # JavaScript's \u{1D173} is Python's \U0001D173; the rest reads the same in both
    return re.compile(re.sub(r"\\u\{([0-9a-fA-F]+)\}", lambda m: f"\\U{int(m.group(1), 16):08x}", found.group(1)))


def test_the_extension_shows_as_codes_exactly_the_characters_the_host_does() -> None:
    ours, hosts = extension_rule(), textsafety._FOR_PEOPLE
    differ = [f"U+{code:04X}" for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF
              if bool(ours.fullmatch(chr(code))) != bool(hosts.fullmatch(chr(code)))]
    assert not differ, differ
    assert ours.fullmatch("\u202e") and not ours.fullmatch("\u200d")  # the override shown; the joiner shapes emoji
