"""Asking the person before an MCP client (`tabpilot mcp`, through the local endpoint) runs a task in
their browser: the one place the host decides that.

The question itself is the page bridge's (`approvals.py`: `approval.request` with kind "mcp" and the
client's name as requester, answered by `approval.answer`). What is MCP's own: "always" is remembered
per client in the allowed-sites file (`store/sites.py`: it outlives this host, and the popup's Settings and
`tabpilot sites` list and revoke it; read afresh for every task, so a revoke counts at once), the person
has longer to notice the question, and a no is a verdict worded for the agent on the other end (with what
to do), not an error.
"""

from __future__ import annotations

import logging
import math
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .approvals import AlreadyAsking, Decision, NoAnswer, Place, Withdrawn
from .peer import RequestFailed

if TYPE_CHECKING:
    from .approvals import Approvals

log = logging.getLogger(__name__)

ANSWER_TIMEOUT = 120.0  # a person has to notice the request, read it and decide
LONGEST_WAIT = 3600.0  # a client's own timeout is kept to this (the extension's timers take at most ~24 days)
NAME_LENGTH = 100
_HIDDEN = ("Cc", "Cf", "Co", "Cs", "Zl", "Zp")  # controls, bidi overrides and zero-widths, private use, halves


def display_name(value: object, fallback: str) -> str:
    """A client's name as the person reads it in a question: one line of visible characters, so a name
    cannot hide in controls or reorder what the question says around it with bidi overrides."""
    if not isinstance(value, str):
        return fallback
    visible = "".join(" " if c.isspace() else c for c in value
                      if c.isspace() or unicodedata.category(c) not in _HIDDEN)
    name = " ".join(visible.split())[:NAME_LENGTH]
    return name or fallback


def answer_wait(timeout: object) -> float:
    """How long a question waits for the person: a client's own number when it is a sane one."""
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not math.isfinite(timeout):
        return ANSWER_TIMEOUT
    return min(max(float(timeout), 0.0), LONGEST_WAIT)


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    message: str


class McpConsent:
    def __init__(self, approvals: Approvals, changed: Callable[[], None] = lambda: None) -> None:
        self._approvals = approvals
        self._changed = changed  # the allowed list changed: tell the extension (site_feed.py)

    async def ask(self, requester: str, task: str, place: Place, *, timeout: object = None,
                  program: str | None = None) -> Verdict:
        """`program`: what started the asking client (endpoint.py `program_of`); "always" holds for it only."""
        from ..store.sites import SiteError, allow_client, client_allowed

        try:
            if client_allowed(requester, program):
                return Verdict("always", f"{requester} is always allowed")
        except SiteError as exc:  # a damaged file allows nobody without asking; the person can still say yes
            log.error("allowed MCP clients unreadable: %s", exc)
        wait = answer_wait(timeout)
        try:
            decision = await self._approvals.ask("mcp", requester, task, tab_id=place.tab_id, new_tab=place.new_tab,
                                                 url=place.url, timeout=wait)
        except NoAnswer:
            return Verdict("deny", f"Nobody allowed {requester} to run this task in the browser within {wait:g} s. "
                                   "It was shown in the browser's tabpilot popup and side panel (the tabpilot "
                                   "button in the toolbar; a desktop notification points there): call again and "
                                   "press Allow there, or start `tabpilot mcp --approve always` to run tasks "
                                   "without asking.")
        except (AlreadyAsking, Withdrawn):
            raise  # not the person's no: the client asked twice at once, or the host is going away
        except RequestFailed:
            return Verdict("deny", f"The person using the browser refused to let {requester} run this task.")
        if decision == "always":
            try:
                allow_client(requester, program)
            except SiteError as exc:  # this task is allowed all the same; the next one is asked again
                log.error("could not remember that %s is always allowed: %s", requester, exc)
            self._changed()
        return Verdict(decision, f"allowed ({decision})")
