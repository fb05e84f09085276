"""Asking the person before an MCP client (`tabpilot mcp`, through the local endpoint) runs a task in
their browser: the one place the host decides that.

The question itself is the page bridge's (`approvals.py`: `approval.request` with kind "mcp" and the
client's name as requester, answered by `approval.answer`). What is MCP's own: "always" is remembered
per client for as long as this host runs, the person has longer to notice the question, and a no is a
verdict worded for the agent on the other end (with what to do), not an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .approvals import Decision, NoAnswer
from .peer import RequestFailed

if TYPE_CHECKING:
    from .approvals import Approvals

ANSWER_TIMEOUT = 120.0  # a person has to notice the request, read it and decide


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    message: str


class McpConsent:
    def __init__(self, approvals: Approvals) -> None:
        self._approvals = approvals
        self._always: set[str] = set()  # MCP clients the person allowed for this host's life

    async def ask(self, requester: str, task: str, *, timeout: float | None = None) -> Verdict:
        if requester in self._always:
            return Verdict("always", f"{requester} is always allowed")
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
            self._always.add(requester)
        return Verdict(decision, f"allowed ({decision})")
