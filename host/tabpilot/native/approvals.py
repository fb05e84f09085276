"""Questions the host puts to the user through the extension, and their answers.

A page that asks to run a task (kind "page") or an MCP client (kind "mcp") may need the user's yes
first. The host pushes `approval.request {approvalId, kind, requester, task, tabId?, newTab?, url?, timeoutMs}`
(where the task will work: the person decides knowing which tab); the
extension shows it where only trusted input can answer and sends `approval.answer {approvalId,
decision}` ("once" | "always" | "deny"). No answer within the timeout is a no. A page's question whose page
went away before the answer (reloaded, navigated, closed) is withdrawn by the extension (`approval.withdraw`):
a no that says so, as nobody is left to run the task for. Either way the host pushes `approval.closed
{approvalId, decision}` so every view of the question goes away."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..textsafety import show_controls
from .peer import RequestFailed

log = logging.getLogger(__name__)

Decision = Literal["once", "always", "deny"]
HOST_STOPPED = ("tabpilot's helper stopped (the browser closed, or restarted the extension) before the user answered; "
                "nothing was started")
APPROVAL_TIMEOUT = 60.0  # seconds the user has to answer; then the requester gets a clear no


@dataclass(frozen=True)
class Place:
    """Where a task asked about will work: an existing tab (`tab_id`), or a tab its requester opens for it
    (`new_tab`); `url`, the page it opens first there."""

    tab_id: int | None = None
    new_tab: bool = False
    url: str | None = None


class NoAnswer(RequestFailed):
    """Nobody answered in time: a no (code `denied`) that a requester may word differently from a refusal."""


class Withdrawn(RequestFailed):
    """The question went before the person answered (code `denied`): the page that asked went away, or the host
    did. Nobody said no: recorded as `withdrawn`, not `denied`. Nothing was started."""


class AlreadyAsking(RequestFailed):
    """The requester's previous question is still open: one at a time (code `busy`), so a page or a local
    program cannot bury the person under questions and notifications."""


class Approvals:
    def __init__(self, push: Callable[[dict[str, Any]], None], timeout: float = APPROVAL_TIMEOUT) -> None:
        self._push = push
        self.timeout = timeout
        self._pending: dict[str, asyncio.Future[Decision]] = {}
        self._kinds: dict[str, str] = {}  # approvalId → its kind, while pending
        self._asking: set[tuple[str, str]] = set()  # (kind, requester) with a question open
        self._count = itertools.count(1)
        # Told how each question closed once it is no longer pending ("deny" for no answer or a withdrawn one too).
        self.closed_listeners: list[Callable[[Decision], None]] = []

    def pending(self) -> list[str]:
        return list(self._pending)

    async def ask(self, kind: Literal["page", "mcp"], requester: str, task: str, *, tab_id: int | None = None,
                  new_tab: bool = False, url: str | None = None, timeout: float | None = None) -> Decision:
        """The user's "once" or "always"; raises RequestFailed (code `denied`) on a no or no answer, and
        AlreadyAsking (code `busy`) while this requester's previous question is still open."""
        from ..taskrun.plan import MAX_TASK_CHARS, task_too_long

        if len(task) > MAX_TASK_CHARS:  # never shown to the person: it would not run, and their view would choke on it
            raise RequestFailed(task_too_long(task), "bad_request")
        timeout = self.timeout if timeout is None else timeout
        asker = (kind, requester)
        for _ in range(3):  # a question of theirs just taken back (endpoint `cancel`) unwinds in the next turns
            if asker not in self._asking:
                break
            await asyncio.sleep(0)
        if asker in self._asking:
            raise AlreadyAsking(f"{requester} already has a question waiting for the user's answer; ask again once "
                                "it is answered (one at a time)", "busy")
        self._asking.add(asker)
        try:
            return await self._ask(kind, requester, task, Place(tab_id, new_tab, url), timeout)
        finally:
            self._asking.discard(asker)

    async def _ask(self, kind: Literal["page", "mcp"], requester: str, task: str, place: Place,
                   timeout: float) -> Decision:
        import secrets  # here: the host answers its first frame without it (hmac, hashlib, random)

        approval_id = f"a{next(self._count)}-{secrets.token_hex(6)}"  # not guessable by whoever hears of another
        future: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._pending[approval_id] = future
        self._kinds[approval_id] = kind
        from .messages import ApprovalClosedPush, ApprovalRequestPush

        # The person decides on the task as shown: a control or bidi override in it is shown as its code (it
        # could otherwise make the card read differently from the text the agent gets).
        request = ApprovalRequestPush(approval_id=approval_id, kind=kind, requester=requester,
                                      task=show_controls(task), tab_id=place.tab_id, new_tab=place.new_tab,
                                      url=place.url, timeout_ms=int(timeout * 1000))
        decision: Decision = "deny"
        try:
            self._push(request.to_frame())
            decision = await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            log.info("approval %s (%s, %s): no answer within %g s", approval_id, kind, requester, timeout)
            raise NoAnswer(
                f"the user did not answer within {timeout:g} s whether {requester} may run this task; "
                "nothing was started", "denied",
            ) from None
        finally:
            self._pending.pop(approval_id, None)
            self._kinds.pop(approval_id, None)
            self._push(ApprovalClosedPush(approval_id=approval_id, decision=decision).to_frame())
            for listener in self.closed_listeners:
                listener(decision)
        if decision == "deny":
            raise RequestFailed(f"the user declined to let {requester} run this task", "denied")
        return decision

    def answer(self, approval_id: str, decision: Decision) -> bool:
        """Settle a pending question; False if there is none by that id (answered, timed out, unknown)."""
        future = self._pending.get(approval_id)
        if future is None or future.done():
            return False
        future.set_result(decision)
        return True

    def withdraw(self, approval_id: str) -> bool:
        """A page's question whose page went away: settled as a no that says so (the asker's task.start fails
        `denied`, and is recorded as not run). False if there is no such open question of a page."""
        future = self._pending.get(approval_id)
        if future is None or future.done() or self._kinds.get(approval_id) != "page":
            return False
        future.set_exception(Withdrawn(
            "the page that asked went away (it was reloaded, left or closed) before the user answered; nothing "
            "was started", "denied"))
        return True

    def close(self) -> None:
        """The host is going away: its open questions go unanswered (withdrawn, not a no of the person's)."""
        for future in self._pending.values():
            if not future.done():
                future.set_exception(Withdrawn(HOST_STOPPED, "denied"))
