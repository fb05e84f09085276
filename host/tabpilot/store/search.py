"""Finding past tasks as a person looks for them (`tabpilot history list --search WORDS --requester WHO`): by words of
the task or of its result, in any language and either case, and by who started it."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

# Who started a task, by its recorded source (taskrun/plan.py TERMINAL_SOURCES are the terminal's). The side panel's
# tasks were recorded as the popup's before it had a source of its own.
STARTED_BY = {"popup": "popup", "panel": "panel", "cli": "terminal", "demo": "terminal", "page": "page", "mcp": "mcp"}
STARTERS = tuple(dict.fromkeys(STARTED_BY.values()))


def started_by(source: str) -> str:
    """Who started a task of `source`: one of STARTERS; a source this version does not know, as recorded."""
    return STARTED_BY.get(source, source)


def folded(text: str) -> str:
    """`text` as a search compares it: NFKC, then case-folded, so "STRASSE" finds "Straße", "ПРИВЕТ" finds "привет"
    and a full-width "ＳＡＶＥ" finds "save" (SQLite's LIKE folds the case of ASCII letters only)."""
    return unicodedata.normalize("NFKC", text).casefold()


@dataclass(frozen=True)
class TaskQuery:
    """Every one of `words` in the task's text or its result; and, given, `requester`: who started it (one of
    STARTERS: only that) or a part of the page's origin or the MCP client's name that asked for it."""

    words: tuple[str, ...] = ()
    requester: str | None = None

    @classmethod
    def of(cls, search: str | None = None, requester: str | None = None) -> TaskQuery:
        return cls(tuple(folded(word) for word in (search or "").split()),
                   folded(requester.strip()) if requester and requester.strip() else None)

    def matches(self, task: str, result: str | None, started_by: str, requester: str | None) -> bool:
        if self.requester in STARTERS:  # who started it, never a client or page that names itself so ("terminal")
            if self.requester != started_by:
                return False
        elif self.requester is not None and (requester is None or self.requester not in folded(requester)):
            return False
        text = folded(f"{task}\n{result or ''}")
        return all(word in text for word in self.words)
