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
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .approvals import Decision, NoAnswer
from .peer import RequestFailed

if TYPE_CHECKING:
    from .approvals import Approvals

log = logging.getLogger(__name__)

ANSWER_TIMEOUT = 120.0  # a person has to notice the request, read it and decide


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    message: str


class McpConsent:
    def __init__(self, approvals: Approvals, changed: Callable[[], None] = lambda: None) -> None:
        self._approvals = approvals
        self._changed = changed  # the allowed list changed: tell the extension (site_feed.py)

    async def ask(self, requester: str, task: str, *, timeout: float | None = None) -> Verdict:
        from ..store.sites import SiteError, allow_client, client_allowed

        try:
            if client_allowed(requester):
                return Verdict("always", f"{requester} is always allowed")
        except SiteError as exc:  # a damaged file allows nobody without asking; the person can still say yes
            log.error("allowed MCP clients unreadable: %s", exc)
        wait = ANSWER_TIMEOUT if timeout is None else timeout
        try:
            decision = await self._approvals.ask("mcp", requester, task, timeout=wait)
        except NoAnswer:
            return Verdict("deny", f"Nobody allowed {requester} to run this task in the browser within {wait:g} s. "
                                   "It was shown in the browser's tabpilot popup and side panel (the tabpilot "
                                   "button in the toolbar; a desktop notification points there): call again and "
                                   "press Allow there, or start `tabpilot mcp --approve always` to run tasks "
                                   "without asking.")
        except RequestFailed:
            return Verdict("deny", f"The person using the browser refused to let {requester} run this task.")
        if decision == "always":
            try:
                allow_client(requester)
            except SiteError as exc:  # this task is allowed all the same; the next one is asked again
                log.error("could not remember that %s is always allowed: %s", requester, exc)
            self._changed()
        return Verdict(decision, f"allowed ({decision})")
