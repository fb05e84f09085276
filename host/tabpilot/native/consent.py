"""Asking the person before another program acts in their browser: the one place the host decides
whether an MCP client may run a task.

Minimal until the shared approvals of the page bridge land (then `Approvals.ask` becomes a call into
them): the host pushes `approval.request {approvalId, kind, requester, task}` to the extension and waits
for the request `approval.answer {approvalId, decision: "once" | "always" | "deny"}`. "always" is
remembered for that requester while this host runs. Nobody answering within the timeout (no popup
open, no approval UI in this extension) is a deny that says so.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from .peer import RequestFailed

log = logging.getLogger(__name__)

Decision = Literal["once", "always", "deny"]
DECISIONS: tuple[Decision, ...] = ("once", "always", "deny")
ANSWER_TIMEOUT = 120.0  # a person has to notice the request, read it and decide


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    message: str

    @property
    def allowed(self) -> bool:
        return self.decision != "deny"


class Approvals:
    def __init__(self, push: Callable[[dict[str, Any]], None]) -> None:
        self._push = push
        self._ids = (f"a{n}" for n in itertools.count(1))
        self._pending: dict[str, asyncio.Future[Decision]] = {}
        self._always: set[tuple[str, str]] = set()  # (kind, requester) allowed for this host's life

    async def ask(self, kind: str, requester: str, task: str, *, timeout: float | None = None) -> Verdict:
        if (kind, requester) in self._always:
            return Verdict("always", f"{requester} is always allowed")
        approval_id = next(self._ids)
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._pending[approval_id] = future
        wait = ANSWER_TIMEOUT if timeout is None else timeout
        try:
            self._push({"type": "approval.request", "approvalId": approval_id, "kind": kind,
                        "requester": requester, "task": task})
            decision = await asyncio.wait_for(future, wait)
        except TimeoutError:
            log.info("approval %s for %s: nobody answered within %g s", approval_id, requester, wait)
            return Verdict("deny", f"Nobody allowed {requester} to run this task in the browser within {wait:g} s. "
                                   "Allow it in the tabpilot popup when asked, or start `tabpilot mcp --approve "
                                   "always` to run tasks without asking.")
        finally:
            self._pending.pop(approval_id, None)
        if decision == "always":
            self._always.add((kind, requester))
        if decision == "deny":
            return Verdict("deny", f"The person using the browser refused to let {requester} run this task.")
        return Verdict(decision, f"allowed ({decision})")

    def answer(self, approval_id: str, decision: str) -> None:
        future = self._pending.get(approval_id)
        if future is None:
            raise RequestFailed(f"no approval {approval_id!r} is waiting (answered already, or it timed out)",
                                "not_found")
        if decision not in DECISIONS:
            raise RequestFailed(f"decision must be one of {', '.join(DECISIONS)}", "bad_request")
        if not future.done():
            future.set_result(decision)  # checked against DECISIONS above
