"""`TaskRun`: one task, start to end, on one browser tab.

It records the task, runs an `Agent` on it, writes each history event to the store the moment it is
appended, and tells its observers through the run events of `events.py`. What it records and what it
shows are the same dict, redacted once here: no secret anywhere, raw model I/O only with debug
capture on. The final status is decided once (`_final_status`), written to the record, the tab is
released, and only then is `RunFinished` told, so whoever hears it may start the next task on that tab.

An event the store refuses is not dropped silently: the run stops, ends `error`, and the record's
result and last event say that its history is incomplete."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .events import FINAL_STATUSES, FinalStatus, RunActivity, RunEvent, RunFinished, RunStarted, RunStatus, RunUpdate

if TYPE_CHECKING:
    from ..agent.loop import Agent
    from ..browser.browser import Browser
    from ..llm import LLMClient
    from ..store.tasks import TaskStore
    from .plan import TaskPlan

log = logging.getLogger(__name__)

STOPPED_MESSAGE = "Task stopped"

Observer = Callable[[RunUpdate], None]


class TaskRun:
    """Owns the browser it is given (closed when the run ends); shares the store."""

    def __init__(self, plan: TaskPlan, store: TaskStore, browser: Browser) -> None:
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
        self._llm: LLMClient | None = None
        self._stop_requested = False
        self._stopped_because: str | None = None
        self._record_failure: str | None = None
        self._stopping: set[asyncio.Task[None]] = set()  # held so the loop does not drop them

    # --- the run --------------------------------------------------------------------------------
    async def begin(self, url: str | None) -> str:
        """Record the task (`running`) and make its agent; returns the task id. On failure the browser
        is released and nothing is left running."""
        from ..agent.loop import Agent
        from ..llm import LLMClient

        try:
            self.store.capture_raw = self.plan.capture_raw
            for secret in self.plan.secrets:
                self.store.add_secret(secret)
            self._llm = LLMClient(self.plan.llm, on_result=self._recorder())
            self.task_id = self.store.start_task(
                self.plan.task, url=url, model=self.plan.llm.model, source=self.plan.source
            )
        except BaseException:
            await self._release()
            raise
        agent = self.agent = Agent(self.browser, self._llm, self.plan.agent)
        agent.on("historychange", self._on_history)
        agent.on("statuschange", self._on_status)
        agent.on("activity", self._on_activity)
        self.status = "running"
        self._tell(RunStarted(self.task_id, self.plan.task, url))
        return self.task_id

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
                result = await agent.execute(self.plan.task)
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
        status = self._final_status()
        if self._record_failure is not None:
            self._append(_error_event(self._record_failure))  # stored if the store takes it at all
            data, success = self._record_failure, False
        elif status == "stopped":
            data, success = self._stopped_because or data or STOPPED_MESSAGE, False
        elif data is None:
            data = "The task ended without a result."
        result = {"success": success, "data": self._shown(data)}
        try:
            self.store.finish_task(str(self.task_id), status=status, result=result)
        except Exception:
            log.exception("could not record the end of task %s", self.task_id)
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

    async def _release(self) -> None:
        if self._llm is not None:
            try:
                await self._llm.aclose()
            except Exception:
                log.debug("closing the LLM client failed", exc_info=True)
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

    # --- what the agent reports -----------------------------------------------------------------
    def _shown(self, value: Any) -> Any:
        """The one redaction: no secret anywhere, and no raw model I/O without debug capture."""
        from ..store.redact import scrub, without_raw

        if isinstance(value, dict) and not self.plan.capture_raw:
            value = without_raw(value)
        return scrub(value, self.plan.secrets)

    def _on_history(self, event: Any) -> None:
        self._append(event.to_wire())

    def _append(self, wire: dict[str, Any]) -> None:
        shown = self._shown(wire)
        recorded = True
        try:
            self.store.append_event(str(self.task_id), shown)
        except Exception as exc:
            recorded = False
            log.exception("could not record an event of task %s", self.task_id)
            if self._record_failure is None:
                self._record_failure = (
                    f"The task's history could not be saved ({type(exc).__name__}: {exc}), so the task was "
                    "stopped: what it did after that point is not in the record."
                )
                if self.agent is not None and self.agent.running:
                    stopping = asyncio.get_running_loop().create_task(self.agent.stop())
                    self._stopping.add(stopping)
                    stopping.add_done_callback(self._stopping.discard)
        self.history.append(shown)
        self._tell(RunEvent(shown, recorded))

    def _on_status(self, status: str) -> None:
        if status in FINAL_STATUSES:
            return  # told with RunFinished, once the record says so too
        self.status = status
        self._tell(RunStatus(status))

    def _on_activity(self, activity: Any) -> None:
        self.activity = self._shown(activity.to_wire())
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


def _error_event(message: str) -> dict[str, Any]:
    from ..agent.types import ErrorEvent

    return ErrorEvent(message=message).to_wire()
