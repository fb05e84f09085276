"""The languages the host speaks, by tag, and `say`: a message from the catalog (i18n.py), which is imported
with the first message rather than with the modules that word them. The host answers the extension's
first frame with those modules loaded and the catalog not: it is the costliest module on that path (~4 ms
of a cold start on a loaded 2-core machine, bench/bench_host.py)."""

from __future__ import annotations

from typing import Literal

Language = Literal["en-US", "zh-CN"]
DEFAULT_LANGUAGE: Language = "en-US"


def language_of(value: str | None) -> Language:
    """A language tag as the host knows it: any Chinese except the traditional scripts → zh-CN, anything
    else (None, "en", "fr-FR", "C.UTF-8") → en-US. Accepts Chrome's `zh_CN` and POSIX `zh_CN.UTF-8`."""
    tag = (value or "").split(".")[0].replace("_", "-").lower()
    if tag == "zh" or tag.startswith(("zh-cn", "zh-hans", "zh-sg")):
        return "zh-CN"
    return DEFAULT_LANGUAGE


def say(key: str, language: str | None = None, /, **values: object) -> str:
    """i18n.text(key, language, **values)."""
    from .i18n import text

    return text(key, language, **values)
