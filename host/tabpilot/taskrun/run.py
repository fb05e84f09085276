"""`TaskRun`: one task, start to end, on one browser tab.

It records the task, runs an `Agent` on it, writes each history event to the store the moment it is
appended, and tells its observers through the run events of `events.py`. What it records and what it
shows are the same dict, redacted once here: no secret anywhere, raw model I/O only with debug
capture on. The final status is decided once (`_final_status`), written to the record, the tab is
released, and only then is `RunFinished` told, so whoever hears it may start the next task on that tab.

An event the store refuses is not dropped silently: the run stops, ends `error`, and the record's
result and last event say that its history is incomplete.

A run given a `recipe` (what another process needs to plan it again: no secrets) can outlive its host.
Its run state in the record says so from the start; `suspend()`, when the host goes away mid-task (the
extension's service worker restarted), ends the run without recording an end and completes the run
state (a takeover under way with the actions recorded so far, an action cut short); the next host
`continue_from()` the record: the history is the agent's memory, a model call in flight is asked again."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from ..i18n import STOPPED_MESSAGE, failure_text
from ..i18n import text as say
from .events import (
    FINAL_STATUSES,
    FinalStatus,
    RunActivity,
    RunControl,
    RunEvent,
    RunFinished,
    RunStarted,
    RunStatus,
    RunUpdate,
)
from .takeover import Reason, Takeover, now_ms, replace_takeover, with_late_answer
from .writer import RecordWriter

ApprovalMode = Literal["ask", "allow", "refuse"]  # who answers an action that needs a yes: the user, nobody (yes / no)
Decision = Literal["allow", "deny", "takeover"]

if TYPE_CHECKING:
    from ..agent.loop import Agent
    from ..agent.types import GuardKind, UserTakeoverEvent
    from ..browser.browser import Browser
    from ..browser.tab import Tab
    from ..guards.irreversible import PendingAction
    from ..guards.navigation import NavigationGuard
    from ..llm import LLMClient
    from ..store.tasks import TaskStore
    from .plan import TaskPlan

log = logging.getLogger(__name__)

TAKEN_OVER = "The user took the controls; no input is sent to the page until they hand back."
SUSPENDED = "The host went away mid-task; the next host goes on with it."
# An action waiting for the user's yes is denied after this long without an answer: nothing irreversible
# happens while they are away, and the task goes on (or ends) instead of waiting for ever.
APPROVAL_TIMEOUT = 300.0
APPROVAL_TIMEOUT_ENV = "TABPILOT_APPROVAL_TIMEOUT"  # seconds, to wait longer or shorter than that
# Tools that never touch the page: one cut short by a host going away needs no warning when resumed.
NO_PAGE_TOOLS = ("done", "wait", "ask_user", "request_takeover")
URL_READ_TIMEOUT = 3.0  # reading the tab's URL for a takeover's record; a page that hangs must not hold it up

Observer = Callable[[RunUpdate], None]


class TaskRun:
    """Owns the browser it is given (closed when the run ends); shares the store.

    `can_ask` / `can_hand_over`: whether someone can answer the model's `ask_user` and take the controls
    it hands over with `request_takeover` (the popup always can; a terminal only when a person sees the
    browser or types answers). Without, those tools are not offered."""

    def __init__(
        self, plan: TaskPlan, store: TaskStore, browser: Browser, *, can_ask: bool = True, can_hand_over: bool = True,
        approvals: ApprovalMode = "ask",
        nobody_to_approve: str = "approval.remedy.settings",
        recipe: dict[str, Any] | None = None, keeps_masks: bool = False,
    ) -> None:
        self.plan = plan
        self.store = store
        self.browser = browser
        self.observers: list[Observer] = []
        self.task_id: str | None = None
        self.status = "idle"
        self.history: list[dict[str, Any]] = []  # as recorded and shown
        self.activity: dict[str, Any] | None = None
        self.finished: RunFinished | None = None
        self.agent: Agent | None = None
        self.can_ask = can_ask
        self.can_hand_over = can_hand_over
        self._llm: LLMClient | None = None
        self._keys_of: str | None = None  # the task whose run's keys the store holds (until the writer closes)
        self._stop_requested = False
        self._stopped_because: str | None = None
        self._record_failure: dict[str, Any] | None = None  # the error event saying the record failed
        self._stopping: set[asyncio.Task[None]] = set()  # held so the loop does not drop them
        self._tab_checks: set[asyncio.Task[None]] = set()  # a tab closed in a takeover: is one of the task's left?
        self._takeover: Takeover | None = None
        # The actions of the takeover under way as on the wire and as recorded (redacted), each once: `_shown_takeover`.
        self._shown_actions: tuple[Takeover, list[Any], list[Any]] | None = None
        self._takeover_unkept = False  # a write of the takeover under way failed: the next writes it whole
        # A takeover being ended (its event made, the URL after it read): the run's end waits for its event.
        self._takeover_ending: asyncio.Future[None] | None = None
        self._handed_back: list[asyncio.Future[UserTakeoverEvent]] = []  # request_takeover waiting
        self._ended_takeovers: list[UserTakeoverEvent] = []  # those that ended, as the agent has them
        self._question: str | None = None
        self._answer: asyncio.Future[str] | None = None
        self._refused_tab: Tab | None = None  # where input is refused while the user has the controls
        self.approvals = approvals
        self.nobody_to_approve = nobody_to_approve  # the catalog's key of what to do where the user is (terminal …)
        self._guard: NavigationGuard | None = None
        self._approval: PendingAction | None = None
        self._decision: asyncio.Future[Decision] | None = None
        self.recipe = recipe  # what another host needs to resume this run; None: it cannot be resumed
        # the guard's `masks_changed` when its placeholders were last kept for a later host (privacy/kept.py); None:
        # they are not kept (no other host goes on with a task of the terminal's or an MCP server's own browser)
        self._masks_kept: int | None = 0 if keeps_masks else None
        self._suspended = False
        self._acting_now: dict[str, Any] | None = None  # the action under way (its `executing` activity)
        self._resumed_history: list[Any] | None = None  # the record's events, for the agent to go on from
        self._writer = RecordWriter()  # the record's writes, in order, off the event loop (writer.py)

    # --- the run --------------------------------------------------------------------------------
    async def begin(self, url: str | None) -> str:
        """Record the task (`running`) and make its agent; returns the task id. On failure the browser
        is released and nothing is left running. Raises StartRefused, recording nothing, when `url` is a page the
        task's domains keep the agent from (whichever way it was started: the page the person is on, a page's own).

        With domains, the navigation guard holds the tab before its page is judged: `url` was read before, and a
        page that sent itself elsewhere meanwhile (at the moment it was attached, say) is judged where it is now;
        a load it had started before the guard held it is judged when it arrives (`NavigationGuard`)."""
        from ..guards.domains import start_refusal
        from ..store.ids import new_task_id

        try:
            refused = start_refusal(self.plan.domains, url)
            if refused is not None:
                raise refused
            task_id = new_task_id()
            if await self._guard_navigation(task_id):
                url = await self._current_url() or url
                refused = start_refusal(self.plan.domains, url)
                if refused is not None:
                    raise refused
            self._connect_llm(task_id)
            # The task as asked may carry a secret's value ("my password is ..."): recorded like the rest, hidden.
            task, shown_url = self._shown(self.plan.task), self._shown(url) if url else None
            self.task_id = await self._writer.call(lambda: self.store.start_task(
                task, url=shown_url, model=self.plan.llm.model, source=self.plan.source,
                requester=self.plan.requester, task_id=task_id,
            ))
            self._save_state()
        except BaseException:
            await self._release()
            self._close_writer()
            raise
        await self._make_agent()
        self.status = "running"
        self._tell(RunStarted(self.task_id, self.plan.task, url))
        return self.task_id

    async def continue_from(self, task_id: str, events: list[dict[str, Any]], state: dict[str, Any]) -> str:
        """Go on with a task another host began and `suspend()`ed: its recorded `events` are the history,
        `state` its run state. A takeover under way stays under way (its actions so far
        kept); an action that was cut short is noted for the model, which looks at the page before going
        on. On failure the browser is released."""
        from ..agent.types import ObservationEvent, UserTakeoverEvent, parse_event

        try:
            self._connect_llm(task_id)
            history = [parse_event(event) for event in events]
        except BaseException:
            await self._release()
            self._close_writer()
            raise
        self.task_id = task_id
        self.history = list(events)
        try:
            if await self._guard_navigation(task_id) and not isinstance(state.get("takeover"), dict):
                # judged where its tab is now, as `begin` does: the page may have gone elsewhere while no host ran
                # (a tab the person has the controls of is theirs)
                from ..guards.domains import start_refusal

                refused = start_refusal(self.plan.domains, await self._current_url())
                if refused is not None:
                    raise refused
        except BaseException:
            await self._release()
            self._close_writer()
            raise
        agent = await self._make_agent()
        self.status = "running"
        self._tell(RunStarted(task_id, self.plan.task, None))
        unfinished = state.get("unfinishedAction")
        if isinstance(unfinished, dict) and unfinished.get("tool") not in NO_PAGE_TOOLS:
            tool_input = json.dumps(unfinished.get("input"), ensure_ascii=False)
            cut_short = {"action": f"{unfinished.get('tool')} {tool_input}"}
            note = ObservationEvent(content=say("note.action_cut_short", self.plan.agent.language, **cut_short),
                                    note="note.action_cut_short", params=cut_short)
            history.append(note)
            self._append(note.to_wire())
        self._resumed_history = history
        # what the page gives late of a takeover that ended before the host went goes to it (`add_late_answer`)
        self._ended_takeovers = [event for event in history
                                 if isinstance(event, UserTakeoverEvent) and event.ended_at is not None]
        if isinstance(state.get("takeover"), dict):
            takeover = self._takeover = Takeover.from_state(state["takeover"])
            if self._guard is not None:  # the person has the controls: the task's domains hold the agent only
                self._guard.suspended = True
            agent.pause(takeover.reason, abandon=True)
            self._tell_control()
            tab = await self._tab()
            if tab is not None:
                self._refused_tab = tab
                tab.input_log.refused = TAKEN_OVER
        self._save_state()  # this host's now: no longer suspended
        self._keep_takeover()
        log.info("task %s resumed (%d events%s)", task_id, len(events), ", the user has the controls" if
                 self._takeover else "")
        return task_id

    async def suspend(self) -> bool:
        """The host is going away while the task is not over: end this run WITHOUT recording an end (the
        record keeps it `running`, with its run state), for the next host to `continue_from()`. False (nothing
        done) when it cannot be resumed or Stop was asked: then stop it."""
        if self.finished is not None or self.recipe is None or self._stop_requested or self.agent is None:
            return False
        self._save_state(suspended=True)  # the takeover and the action under way, as they are now
        self._suspended = True
        await self._writer.drained()  # in the record before the host goes
        await self.agent.stop()  # a question waiting for its answer goes with it: the model asks it again
        return True

    def _close_writer(self) -> None:
        """No more writes for this run: once those queued are done, the store lets go of the run's keys."""
        task_id, self._keys_of = self._keys_of, None
        if task_id is not None:
            store = self.store  # not self: the job may still be queued as the run ends, and kept it alive
            self._writer.submit(lambda: store.release_secrets(task_id), lambda exc: None)
        self._writer.close()

    def _connect_llm(self, task_id: str) -> None:
        from ..llm import LLMClient

        self.store.capture_raw = self.plan.capture_raw
        self._keys_of = task_id
        for secret in self.plan.secrets:
            self.store.add_secret(secret, task_id)
        self._llm = LLMClient(self.plan.llm, on_result=self._recorder())

    async def _make_agent(self) -> Agent:
        from ..agent.loop import Agent

        assert self._llm is not None
        helpers: dict[str, Any] = {}
        if self.can_hand_over:
            helpers["request_takeover"] = self._request_takeover
        if self.can_ask and self.plan.agent.ask_user is None:
            helpers["ask_user"] = self._ask_user
        if self.plan.ask_before != "never":
            helpers["approve_action"] = self._approve_action
        helpers["on_before_step"] = self._before_step
        if self.plan.domains is not None:
            helpers["domains"] = self.plan.domains
        agent = self.agent = Agent(self.browser, self._llm, self.plan.agent.model_copy(update=helpers))
        gone = getattr(self.browser, "on_tab_gone", None)
        if gone is not None:
            gone.append(self._on_tab_gone)
        agent.on("historychange", self._on_history)
        agent.on("statuschange", self._on_status)
        agent.on("activity", self._on_activity)
        return agent

    async def _guard_navigation(self, task_id: str) -> bool:
        """Hold the task's tabs to its domains from now on; False when it has none."""
        if self.plan.domains is None:
            return False
        from ..guards.navigation import NavigationGuard

        self._guard = NavigationGuard(self.plan.domains, self._on_blocked, task_id=task_id)
        await self.browser.guard_navigation(self._guard)
        return True

    def _run_state(self) -> dict[str, Any] | None:
        if self.recipe is None:
            return None
        state = dict(self.recipe)
        if self._takeover is not None:  # what the person typed, redacted as the takeover's kept rows are
            state["takeover"] = self._shown(self._takeover.state())
        if self._acting_now is not None:
            state["unfinishedAction"] = self._acting_now
        return state

    def _save_state(self, *, suspended: bool = False) -> None:
        if self.recipe is None or self.task_id is None or self.finished is not None or self._suspended:
            return
        task_id, state = self.task_id, self._run_state()

        def failed(exc: BaseException) -> None:
            log.error("could not save the run state of task %s: %s: %s", task_id, type(exc).__name__, exc)

        self._writer.submit(lambda: self.store.save_run_state(task_id, state, suspended=suspended), failed)

    async def _before_step(self, agent: Any, step: int) -> None:
        """Each step begins once the events before it are in the record: a write the store refuses stops the run
        there (`_record_failed`), with no step after it unrecorded; one waiting on a lock holds up this run only."""
        await self._writer.drained()
        if self._record_failure is not None:
            if not self._stopping:  # refused before the agent ran (a resumed task's first note): no stop yet
                self._stop_agent_soon()
            await asyncio.get_running_loop().create_future()  # the stop under way ends the agent here
        hook = self.plan.agent.on_before_step
        if hook is not None:
            result = hook(agent, step)
            if inspect.isawaitable(result):
                await result

    async def execute(self) -> RunFinished:
        """Run the task to its end (done, error, max steps, stop) and return how it ended. Cancelled
        (the host shutting down), it still records the end as `stopped` and releases the tab."""
        agent = self.agent
        if agent is None:
            raise RuntimeError("begin() the run before executing it")
        data: str | None = None
        success = False
        try:
            if not self._stop_requested:  # Stop pressed before the agent even began: ask no model
                result = await agent.execute(self.plan.task, self._resumed_history)
                data, success = result.data, result.success
        except asyncio.CancelledError:
            self._stop_requested = True
            raise
        except Exception as exc:  # the agent turns failures into an error result; this is a safety net
            log.exception("task %s crashed", self.task_id)
            data = f"{type(exc).__name__}: {exc}"
        finally:
            await self._finish(data, success)
        assert self.finished is not None
        return self.finished

    async def _finish(self, data: str | None, success: bool) -> None:
        try:
            await self._end(data, success)
        finally:
            self._close_writer()

    async def _end(self, data: str | None, success: bool) -> None:
        await self._writer.drained()  # a write refused on its way is known before the end is decided
        ending = self._takeover_ending
        if ending is not None and not ending.done():  # Hand back or Stop under way: their event comes first
            await ending
        if self._suspended:  # not over: the record keeps it running for the next host
            self.finished = RunFinished("stopped", {"success": False, "data": SUSPENDED, "history": list(self.history)})
            await self._release(keep_tab=True)
            log.info("task %s suspended", self.task_id)
            return
        if self._takeover is not None:  # the run ended while the user had the controls: keep what they did
            self._append((await self._end_takeover(None)).to_wire())
        self._close_question()
        status = self._final_status()
        if self._record_failure is not None:
            self._append(self._record_failure)  # stored if the store takes it at all
            data, success = self._record_failure["message"], False
        elif status == "stopped":
            data, success = self._stopped_because or data or STOPPED_MESSAGE, False
        elif data is None:
            data = "The task ended without a result."
        result = {"success": success, "data": self._shown(data)}
        try:
            await self._writer.call(lambda: self.store.finish_task(str(self.task_id), status=status, result=result))
        except Exception:
            log.exception("could not record the end of task %s", self.task_id)
        self._forget_masks()
        self.status = status
        self.finished = RunFinished(status, {**result, "history": list(self.history)})
        await self._release()
        log.info("task %s ended %s", self.task_id, status)
        self._tell(self.finished)

    def _final_status(self) -> FinalStatus:
        if self._record_failure is not None:
            return "error"
        status = self.agent.status if self.agent is not None else "idle"
        if status == "completed" or status == "error" or status == "stopped":
            return status
        return "stopped" if self._stop_requested else "error"

    async def _release(self, *, keep_tab: bool = False) -> None:
        """Close the model client and the browser; `keep_tab`: leave the tab attached (the host is going
        away with the task suspended: its extension keeps the debugger attached for the next host)."""
        if self._llm is not None:
            try:
                await self._llm.aclose()
            except Exception:
                log.debug("closing the LLM client failed", exc_info=True)
        if keep_tab:
            return
        try:
            await self.browser.close()
        except Exception:
            log.debug("releasing the browser failed", exc_info=True)

    # --- control --------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.finished is None

    async def stop(self, because: str | None = None) -> None:
        """Stop the run (before it began, it ends without asking the model); `because` becomes the
        result's text. Returns once the agent has settled."""
        if self.finished is not None:
            return
        self._stop_requested = True
        if because is not None and self._stopped_because is None:
            self._stopped_because = because
        if self._takeover is not None:  # Stop while the user has the controls: what they did is recorded first
            await self._hand_back_to_agent(None)
        if self.agent is not None:
            await self.agent.stop()

    def pause(self, reason: str | None = None) -> bool:
        """Hold the run before its next step (see `Agent.pause`); False if already paused, not begun or over."""
        return self.finished is None and self.agent is not None and self.agent.pause(reason)

    def resume(self) -> bool:
        return self.finished is None and self.agent is not None and self.agent.resume()

    @property
    def paused(self) -> bool:
        return self.agent is not None and self.agent.paused

    # --- the user at the controls ---------------------------------------------------------------
    @property
    def control(self) -> dict[str, Any] | None:
        return None if self._takeover is None else self._takeover.control()

    @property
    def question(self) -> str | None:
        return self._question

    @property
    def taken_over(self) -> bool:
        return self._takeover is not None

    async def take_over(self, reason: Reason, message: str | None = None, *, started_at: int | None = None) -> bool:
        """The user takes the controls: the run pauses at once (a model call in flight is cancelled; an
        action under way is abandoned, except the agent's own request_takeover). `started_at`: the page's
        time of the user's input that took them (implicit takeover), else now. False if the user already
        has them, or the run has not begun or is over."""
        agent = self.agent
        if self.finished is not None or agent is None or self._takeover is not None:
            return False
        started_at = min(started_at, now_ms()) if started_at is not None else now_ms()
        takeover = self._takeover = Takeover(reason=reason, started_at=started_at, message=message)
        if self._guard is not None:
            self._guard.suspended = True
        agent.pause(reason, abandon=reason != "agent_request")
        self._tell_control()
        tab = await self._tab()
        # the person sees the controls as theirs from _tell_control on: a quick Hand back may end this takeover
        # while the tab is found, and must not find the agent's input refused after it
        if tab is not None and self._takeover is takeover:  # an action still under way can send no more input
            self._refused_tab = tab
            tab.input_log.refused = TAKEN_OVER
        url_before = await self._current_url()
        if self._takeover is takeover:
            takeover.url_before = url_before
            self._keep_takeover()
        log.info("task %s: the user took over (%s)", self.task_id, reason)
        return True

    def add_takeover_actions(self, actions: list[dict[str, Any]]) -> bool:
        """Actions capture.js recorded, in order; False if the user does not have the controls."""
        if self._takeover is None:
            return False
        self._takeover.add(actions)
        self._keep_takeover()
        return True

    def _keep_takeover(self) -> None:
        """The takeover under way, in the record as the event it would be now (redacted as every event is): if this
        host dies before Hand back, the next start appends it to the interrupted task (store.mark_interrupted).
        Only what changed is written: the actions new since the last batch, and the last one before them (typing
        resumed in its field replaces it)."""
        takeover = self._takeover
        if takeover is None or self.task_id is None or self.finished is not None or self._suspended:
            return
        task_id = str(self.task_id)
        head, changed, shown = self._shown_takeover(takeover)
        start = 0 if self._takeover_unkept else changed  # after a write that failed, the next one writes them all
        self._takeover_unkept = False
        actions = shown[start:]  # a copy: the list goes on changing while the write waits

        def failed(exc: BaseException) -> None:
            self._takeover_unkept = True
            log.error("could not keep the takeover under way of task %s: %s: %s", task_id, type(exc).__name__, exc)

        # In order with the events (writer.py): the takeover's own event, written after it, settles it.
        self._writer.submit(lambda: self.store.keep_open_takeover(task_id, head, actions, start), failed)

    def _shown_takeover(self, takeover: Takeover) -> tuple[dict[str, Any], int, list[Any]]:
        """The takeover's event as it would be recorded now without the person's actions (its `actions`: the notes
        after theirs); the index of the first of theirs that changed since the last call; and theirs, redacted, each
        once: redacting them all again at every batch took ~340 ms of the event loop for a takeover of 2,000
        actions (bench_takeover). Only what changed is redone: from the first action that is not the one shown
        there (Takeover.add replaces one, or puts one before others that arrived first)."""
        wire = takeover.unfinished().to_wire()
        everything = wire.pop("actions")
        actions, tail = everything[:len(takeover.actions)], everything[len(takeover.actions):]
        cache = self._shown_actions
        if cache is None or cache[0] is not takeover:
            cache = self._shown_actions = (takeover, [], [])
        _, kept, shown = cache
        redo = next((i for i, (was, now) in enumerate(zip(kept, takeover.actions, strict=False)) if was is not now),
                    min(len(kept), len(takeover.actions)))
        kept[redo:] = takeover.actions[redo:]
        shown[redo:] = [self._shown(action) for action in actions[redo:]]
        head: dict[str, Any] = self._shown(wire)
        head["actions"] = [self._shown(note) for note in tail]
        return head, redo, shown

    def _shown_event(self, wire: dict[str, Any]) -> Any:
        """`_shown(wire)`; a takeover's own event (at Hand back) reuses its actions already redacted while it was
        kept (redacting a takeover of 2,000 actions whole held the event loop ~340 ms: bench_takeover_record)."""
        cache = self._shown_actions
        actions = wire.get("actions")
        if wire.get("type") != "user_takeover" or cache is None or not isinstance(actions, list):
            return self._shown(wire)
        _, kept, shown = cache
        self._shown_actions = None  # the takeover is over
        same = len(kept) if actions[:len(kept)] == kept else 0  # else not the actions kept: all redone
        event: dict[str, Any] = self._shown({**wire, "actions": []})
        event["actions"] = [*shown[:same], *(self._shown(action) for action in actions[same:])]
        return event

    def page_silent(self) -> int | None:
        """What the person did last in the page may be missing from the takeover under way: the extension asked the
        page's frames for what they still held, and one did not answer in time (its own script hangs). When it began:
        what the page gives late names it (`add_late_answer`)."""
        if self._takeover is None:
            return None
        self._takeover.page_silent = True
        self._keep_takeover()  # a host that dies before the event is recorded leaves the same note
        self._save_state()
        return self._takeover.started_at

    def add_late_answer(self, actions: list[dict[str, Any]], *, still_silent: bool,
                        started_at: float | None = None) -> dict[str, Any] | None:
        """What the page gave late (`page_silent`) to the takeover that ended begun at `started_at` (without it, the
        last that ended): in the agent's history (the model reads it at its next step) and in the record. The
        takeover's event as amended (shown); None when that one did not end waiting for the page."""
        event = next((ended for ended in reversed(self._ended_takeovers)
                      if started_at in (None, ended.started_at)), None)
        changed = None if event is None else with_late_answer(event.to_wire(), actions, still_silent=still_silent)
        if event is None or changed is None:
            return None
        event.actions = changed["actions"]
        shown: dict[str, Any] = self._shown(changed)
        replace_takeover(self.history, shown)
        task_id, begun = str(self.task_id), event.started_at
        self._writer.submit(lambda: self.store.amend_last_takeover(task_id, lambda _recorded: shown, running=True,
                                                                   started_at=begun), self._record_failed)
        log.info("task %s: %d action(s) the page gave late, added to the takeover that ended", self.task_id,
                 len(actions))
        return shown

    async def hand_back(self, note: str | None = None) -> dict[str, Any] | None:
        """The user hands the controls back: ONE user_takeover event is appended (recorded and told at
        once), then the run goes on and the agent reads the page again. None if they did not have them."""
        if self._takeover is None or self.finished is not None:
            return None
        event = await self._hand_back_to_agent(note)
        if self.agent is not None:
            self.agent.resume()
        for waiter in self._handed_back:
            if not waiter.done():
                waiter.set_result(event)
        self._handed_back.clear()
        log.info("task %s: the user handed back after %d action(s)", self.task_id, len(event.actions))
        return self.history[-1] if self.history else None

    def _on_tab_gone(self, target_id: str) -> None:
        """A tab closed while the user has the controls: with no tab of the task's left, the takeover ends (what
        they did is recorded) and the agent's next look finds the tab gone, so the task ends saying so. It stayed
        paused, "running" in a tab that was gone, until someone pressed Stop."""
        if self._takeover is None or self.finished is not None:
            return
        ending = asyncio.get_running_loop().create_task(self._hand_back_if_no_tab())
        self._tab_checks.add(ending)
        ending.add_done_callback(self._tab_checks.discard)

    async def _hand_back_if_no_tab(self) -> None:
        from ..browser.errors import TabClosed

        try:
            await self.browser.current_tab()  # another tab the task worked in: the user goes on there
        except TabClosed:
            await self.hand_back()
        except Exception:
            log.debug("task %s: after a tab closed in a takeover", self.task_id, exc_info=True)

    async def _hand_back_to_agent(self, note: str | None) -> UserTakeoverEvent:
        """End the takeover and record its event at once: told to the agent if it runs (which records it), else
        appended."""
        event = await self._end_takeover(note)
        self._ended_takeovers.append(event)
        if self.agent is not None and self.agent.running:
            self.agent.push_takeover(event)
        else:
            self._append(event.to_wire())
        return event

    async def _end_takeover(self, note: str | None) -> UserTakeoverEvent:
        """The takeover's event; the caller records it (pushed to the agent, or appended) before anything else
        runs: the run's end, which may come while the URL after it is read, waits for it (`_end`), or the open
        takeover kept in the record would be settled as cut short, and this event written after the end."""
        takeover, self._takeover = self._takeover, None  # actions sent from now on are refused
        if self._guard is not None:
            self._guard.suspended = False
        assert takeover is not None
        ended_at = now_ms()
        if self._refused_tab is not None:
            self._refused_tab.input_log.refused = None
            self._refused_tab = None
        self._tell_control()
        ending = self._takeover_ending = asyncio.get_running_loop().create_future()
        try:
            return takeover.event(url_after=await self._current_url(), note=note, ended_at=ended_at)
        finally:
            # set before returning: the waiter resumes only once the caller, which does not await before
            # recording the event, has done so
            ending.set_result(None)

    async def _tab(self) -> Tab | None:
        try:
            async with asyncio.timeout(URL_READ_TIMEOUT):
                return await self.browser.current_tab()
        except Exception:
            log.debug("no current tab", exc_info=True)
            return None

    async def _current_url(self) -> str | None:
        try:
            async with asyncio.timeout(URL_READ_TIMEOUT):
                tab = await self.browser.current_tab()
                return await tab.address()
        except Exception:
            log.debug("could not read the tab's URL", exc_info=True)
            return None

    async def _request_takeover(self, reason: str) -> UserTakeoverEvent:
        """The model's `request_takeover`: pause with the model's reason shown, wait for Hand back."""
        waiter: asyncio.Future[UserTakeoverEvent] = asyncio.get_running_loop().create_future()
        self._handed_back.append(waiter)
        if self._takeover is None:
            await self.take_over("agent_request", message=reason)
        return await waiter

    async def _ask_user(self, question: str) -> str:
        """The model's `ask_user`: the question waits for `answer()` (the popup, overlay or terminal)."""
        self._close_question()
        answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._answer = answer
        self._question = question
        self._tell_control()
        try:
            return await answer
        finally:
            if self._answer is answer:
                self._close_question()

    def answer(self, text: str) -> bool:
        """The answer to the pending question; False if none is pending."""
        if self._answer is None or self._answer.done():
            return False
        self._answer.set_result(text)
        return True

    # --- actions that wait for the user's yes (guards/irreversible.py) ---------------------------
    @property
    def approval(self) -> dict[str, Any] | None:
        return None if self._approval is None else self._approval.to_wire()

    async def _approve_action(self, tool: str, tool_input: Any, ctx: Any) -> str | None:
        """The agent's hook before each action: None to run it, else why it did not run (the model reads it)."""
        from ..guards.irreversible import pending_action

        pending = await pending_action(self.plan.ask_before, tool, tool_input, ctx)
        if pending is None or self.approvals == "allow":
            return None
        # the model is told what it wanted in its language; the guard's card keeps what a reader words it by
        language = self.plan.agent.language
        words = {"action": pending.action_words(language), "site": pending.site or say("approval.this_page", language)}
        guarded = pending.guarded()
        if self.approvals == "refuse":
            refusal = say("result.nobody_to_approve", language, **words, ask_before=self.plan.ask_before,
                          remedy=say(self.nobody_to_approve, language))
            self._push_guard(refusal, "unasked", guarded)  # nobody said no: there was no one to ask
            return refusal
        decision: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        self._approval, self._decision = pending, decision
        self._tell_control()
        log.info("task %s: waiting for the user's yes to %s", self.task_id, pending.sentence())
        timeout = approval_timeout()
        # The tab the action is for, closed while the question waits: there is nothing left to allow. The question
        # goes at once (it stayed up to 5 minutes, the task "running" in a tab that was gone) and the action is not
        # done; the next step finds the tab closed (the task ends saying so, or goes on in another tab worked in).
        tab_closed = False

        def closed(target_id: str) -> None:
            nonlocal tab_closed
            if target_id == getattr(getattr(ctx, "tab", None), "target_id", None) and not decision.done():
                tab_closed = True
                decision.set_result("deny")

        gone = getattr(getattr(ctx, "browser", None), "on_tab_gone", None)
        if gone is not None:
            gone.append(closed)
        try:
            answer: Decision | None = await asyncio.wait_for(decision, timeout)
        except TimeoutError:
            answer = None  # nobody answered: not done, and the card goes away
        finally:
            if gone is not None:
                gone.remove(closed)
            if self._decision is decision:
                self._approval, self._decision = None, None
                self._tell_control()
        if tab_closed:
            return say("result.tab_closed_asking", self.plan.agent.language, **words)
        if answer == "allow":  # recorded (and told) as a denial is: who let the agent pay is in the record too
            self._push_guard(say("result.allowed", self.plan.agent.language, **words), "allowed", guarded)
            return None
        if answer is None:
            from ..store.timeline import duration

            language = self.plan.agent.language
            expired = say("result.approval_expired", language, **words, wait=duration(timeout, language))
            self._push_guard(expired, "expired", guarded)
            return expired
        if answer == "takeover":
            taking = asyncio.ensure_future(self.take_over("user"))  # this action is abandoned: it never ran
            self._stopping.add(taking)  # type: ignore[arg-type]
            taking.add_done_callback(self._stopping.discard)
            return say("result.took_over", self.plan.agent.language)
        denial = say("result.denied", self.plan.agent.language, **words)
        self._push_guard(denial, "denied", guarded)
        return denial

    def decide(self, decision: Decision) -> bool:
        """The user's answer to the pending approval; False if none is pending."""
        if self._decision is None or self._decision.done():
            return False
        self._decision.set_result(decision)
        return True

    def _on_blocked(self, url: str, message: str) -> None:
        self._push_guard(message, "blocked", {"url": url})

    def _push_guard(self, message: str, guard: GuardKind, what: dict[str, str]) -> None:
        """Tell the model `message`; the record keeps `what` the guard stopped for the person's card."""
        if self.agent is not None:
            self.agent.push_observation(message, guard=guard, params=what)

    def _close_question(self) -> None:
        answer, self._answer = self._answer, None
        if answer is not None and not answer.done():
            answer.cancel()
        if self._question is not None:
            self._question = None
            self._tell_control()

    def _tell_control(self) -> None:
        self._tell(RunControl(self.control, self._question, self.approval))

    # --- what the agent reports -----------------------------------------------------------------
    def _shown(self, value: Any) -> Any:
        """The one redaction: no key or secret anywhere, and no raw model I/O without debug capture."""
        from ..store.redact import scrub, without_raw

        if isinstance(value, dict) and not self.plan.capture_raw:
            value = without_raw(value)
        guard = self.plan.agent.privacy
        if guard is not None:  # the user's secrets (and masked values) too, whatever slipped through
            self._keep_masks(guard)
            value = guard.hide(value)
        return scrub(value, self.plan.secrets)

    def _keep_masks(self, guard: Any) -> None:
        """The placeholders whatever is about to be recorded may name, kept first (in order on the writer)."""
        if self._masks_kept is None or self._masks_kept == guard.masks_changed or self.task_id is None:
            return
        from ..privacy.kept import keep

        self._masks_kept = guard.masks_changed
        task_id, masks = self.task_id, guard.masks()

        def failed(exc: BaseException) -> None:
            log.error("could not keep the placeholders of task %s: %s: %s", task_id, type(exc).__name__, exc)

        self._writer.submit(lambda: keep(task_id, masks), failed)

    def _forget_masks(self) -> None:
        """The run is over, and no later host goes on with it: what it kept of its placeholders goes."""
        if self._masks_kept is None or self.task_id is None:
            return
        from ..privacy.kept import forget

        self._masks_kept, task_id = None, self.task_id
        self._writer.submit(lambda: forget(task_id), lambda exc: log.error("could not remove the placeholders "
                                                                           "kept for task %s: %s", task_id, exc))

    def _on_history(self, event: Any) -> None:
        self._append(event.to_wire())

    def _append(self, wire: dict[str, Any]) -> None:
        """Record the event (on the writer's thread, in order) and tell it at once. `recorded` is False once the
        store has refused one of this run's events: the run is then stopping, saying so."""
        shown = self._shown_event(wire)
        task_id = str(self.task_id)
        self._writer.submit(lambda: self.store.append_event(task_id, shown), self._record_failed)
        self.history.append(shown)
        self._tell(RunEvent(shown, self._record_failure is None or wire is self._record_failure))

    def _record_failed(self, exc: BaseException) -> None:
        log.error("could not record an event of task %s: %s: %s", self.task_id, type(exc).__name__, exc)
        if self._record_failure is None:
            self._record_failure = error_event("not_saved", reason=f"{type(exc).__name__}: {exc}")
            if self.agent is not None and self.agent.running:
                self._stop_agent_soon()

    def _stop_agent_soon(self) -> None:
        assert self.agent is not None
        stopping = asyncio.get_running_loop().create_task(self.agent.stop())
        self._stopping.add(stopping)
        stopping.add_done_callback(self._stopping.discard)

    def _on_status(self, status: str) -> None:
        if status in FINAL_STATUSES:
            return  # told with RunFinished, once the record says so too
        self.status = status
        self._tell(RunStatus(status))

    def _on_activity(self, activity: Any) -> None:
        self.activity = self._shown(activity.to_wire())
        kind = self.activity.get("type") if isinstance(self.activity, dict) else None
        if kind == "executing":
            self._acting_now = {"tool": self.activity.get("tool"), "input": self.activity.get("input")}
        elif kind == "executed":
            self._acting_now = None
        self._tell(RunActivity(self.activity))

    def _tell(self, update: RunUpdate) -> None:
        for observer in list(self.observers):
            try:
                observer(update)
            except Exception:
                log.exception("a run observer failed on %s", type(update).__name__)

    def _recorder(self) -> Any:
        if not self.plan.record:
            return None
        from ..llm.replay import Recorder

        return Recorder(self.plan.record, model=self.plan.llm.model, task=self.plan.task).record


def approval_timeout() -> float:
    """How long an action waits for the user's yes (APPROVAL_TIMEOUT_ENV, else APPROVAL_TIMEOUT)."""
    try:
        seconds = float(os.environ.get(APPROVAL_TIMEOUT_ENV, ""))
    except ValueError:
        return APPROVAL_TIMEOUT
    return seconds if seconds > 0 and math.isfinite(seconds) else APPROVAL_TIMEOUT


def error_event(code: str, **params: Any) -> dict[str, Any]:
    """An error event for a failure of the run itself (i18n.FAILURE_CODES): the English `message` for
    page-agent's readers and exports, `code` and `params` for a reader in another language."""
    from ..agent.types import ErrorEvent

    return ErrorEvent(message=failure_text(code, params, "en-US"), code=code, params=params).to_wire()
