"""Errors the browser layer raises. Each message is written for the model (and the user) to read."""

from __future__ import annotations

from typing import ClassVar

from ..i18n import Words


class BrowserError(RuntimeError):
    """Base: something the agent tried in the browser did not work; the message says what and why."""


class TabClosed(BrowserError):
    """The tab is gone, or cannot be worked in; `reason`: the browser's own words for why, when it gave any."""

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason


class TabUnworkable(TabClosed):
    """A tab the extension keeps tabpilot out of, by the rule its popup offers Run by (extension/lib/tabs.js
    Tabs.unworkable): `kind` says which (browser, extension, store, source, file); `why` and `fix` word it in the
    reader's language (`.text(language)`), the message in English."""

    KINDS = frozenset({"browser", "extension", "store", "source", "file"})
    # what to do instead where "open a web page" is no advice
    FIXES: ClassVar[dict[str, str]] = {"file": "unworkable.fix_file", "store": "unworkable.fix_store"}

    def __init__(self, target_id: str, kind: str) -> None:
        self.kind = kind if kind in self.KINDS else "other"  # a newer extension's kind is still said, in general words
        self.why = Words(f"unworkable.{self.kind}")
        self.fix = Words(self.FIXES.get(self.kind, "unworkable.fix"))
        super().__init__(f"cannot work in tab {target_id}: {self.why}", reason=str(self.why))


class TabTaken(BrowserError):
    """Another running task works in the tab: one agent a page."""


class PageScriptError(BrowserError):
    pass


class ActionError(BrowserError):
    """An action could not be done (bad index, stale node, detached frame, nothing to scroll, ...)."""


class PageCrashed(BrowserError):
    """The tab's renderer process died (Chromium's "Aw, Snap!"): it answers nothing until reloaded."""


class NavigationFailed(RuntimeError):
    """The browser could not open the page a task or command starts on (`error`: Chromium's, net::ERR_...)."""

    def __init__(self, url: str, error: str) -> None:
        super().__init__(f"could not open {url}: {error}")
        self.url, self.error = url, error
