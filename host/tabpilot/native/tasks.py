"""One task at a time, run by an `Agent` on a `RelayBrowser` for the tab the user picked.

Every history event is written to the task record the moment it happens and pushed to the extension
(`task.event`), as are status changes, activity and the final result. `snapshot()` is what a popup
opened mid-task shows. The agent, the LLM client and openai load on the first task, never at start.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .host import RequestFailed
from .peer import CANCELED_BY_USER

if TYPE_CHECKING:
    from .host import NativeHost
    from .messages import TaskStart
    from .relay import RelayBrowser

log = logging.getLogger(__name__)
POPUP_NOT_CONFIGURED = "No model set: open Settings and enter the base URL, model and API key."

FINAL_STATUSES = ("completed", "error", "stopped")
DETACH_ENDS_TASK_EXCEPT = ("target_closed",)  # a tab closed is for the agent to notice and handle


@dataclass
class RunningTask:
    task_id: str
    task: str
    status: str = "running"
    history: list[dict[str, Any]] = field(default_factory=list)
    activity: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    agent: Any = None
    browser: RelayBrowser | None = None
    runner: asyncio.Task[None] | None = None
    stopped_because: str | None = None
    stop_requested: bool = False
    capture_raw: bool = False
    secrets: tuple[str, ...] = ()

    def outgoing(self, event: dict[str, Any]) -> dict[str, Any]:
        """An event as the extension gets it: raw LLM I/O only with debug capture on (it holds page
        text and the whole prompt), and no secret anywhere."""
        from ..store.redact import scrub, without_raw

        return scrub(event if self.capture_raw else without_raw(event), self.secrets)  # type: ignore[no-any-return]

    def outgoing_result(self, result: dict[str, Any]) -> dict[str, Any]:
        from ..store.redact import scrub

        history = [self.outgoing(event) for event in result.get("history", [])]
        return {**scrub({k: v for k, v in result.items() if k != "history"}, self.secrets), "history": history}

    @property
    def finished(self) -> bool:
        return self.runner is not None and self.runner.done()

    def snapshot(self) -> dict[str, Any]:
        snap: dict[str, Any] = {
            "taskId": self.task_id,
            "task": self.task,
            "status": self.status,
            "history": list(self.history),
            "activity": self.activity,
        }
        if self.result is not None:
            snap["result"] = self.result
        return snap


class TaskManager:
    def __init__(self, host: NativeHost) -> None:
        self.host = host
        self.current: RunningTask | None = None
        self._starting = False
        self._stop_while_starting = False

    @property
    def current_task_id(self) -> str | None:
        if self.current is None or self.current.finished:
            return None
        return self.current.task_id

    def snapshot(self) -> dict[str, Any] | None:
        """The running task, or the last one this host ran (so a reopened popup shows its end)."""
        return None if self.current is None else self.current.snapshot()

    async def start(self, request: TaskStart) -> str:
        if self._starting or self.current_task_id is not None:
            running = self.current_task_id or "one"
            raise RequestFailed(f"a task is already running ({running}); stop it before starting another", "busy")
        self._starting, self._stop_while_starting = True, False
        try:
            return await self._start(request)
        finally:
            self._starting = False

    @staticmethod
    def _configuration(request: TaskStart) -> tuple[Any, Any, Any]:
        """Settings, with what the request's config (a page's ExecutionConfig) overrides for this task."""
        from pydantic import ValidationError

        from ..agent.config import AgentConfig
        from ..llm import LLMError
        from ..llm.config import endpoint_config
        from ..store.settings import SettingsError, load_settings
        from .messages import describe_errors

        try:
            settings = load_settings()
        except SettingsError as exc:
            raise RequestFailed(str(exc), "settings") from exc
        page = request.config
        # The user's key goes only to the endpoint the user configured it for: a task naming
        # another base URL (e.g. one a web page chose) must bring its own key.
        llm_config = endpoint_config(
            settings_base_url=settings.base_url, settings_model=settings.model, settings_api_key=settings.api_key,
            base_url=page and page.base_url, model=page and page.model, api_key=page and page.api_key,
            call_deadline=settings.model_deadline, max_reply_bytes=settings.max_reply_bytes,
        )
        try:
            llm_config.resolve()
        except LLMError as exc:
            if request.source == "popup":  # the CLI's ways to configure one mean nothing there
                raise RequestFailed(POPUP_NOT_CONFIGURED, "not_configured") from exc
            raise RequestFailed(f"{exc.message} In the popup: open Settings.", "not_configured") from exc
        try:
            agent_config = AgentConfig(
                max_steps=(page and page.max_steps) or settings.max_steps,
                language=(page and page.language) or settings.language,  # type: ignore[arg-type]
                system_instructions=page.system_instruction if page else None,
            )
        except ValidationError as exc:
            raise RequestFailed(f"cannot run with these settings: {describe_errors(exc)}", "bad_request") from exc
        return settings, llm_config, agent_config

    async def _start(self, request: TaskStart) -> str:
        from ..agent.loop import Agent
        from ..browser.errors import BrowserError
        from ..llm import LLMClient
        from .relay import RelayBrowser

        settings, llm_config, agent_config = self._configuration(request)
        page = request.config
        store = self.host.store
        store.capture_raw = settings.debug_capture
        store.add_secret(llm_config.api_key)
        browser = RelayBrowser(self.host.peer, all_tabs=bool(page and page.experimental_include_all_tabs))
        try:
            tab = await browser.activate(str(request.tab_id), focus=False)
        except Exception as exc:
            await browser.close()
            message = str(exc) if isinstance(exc, BrowserError) else f"cannot work in tab {request.tab_id}: {exc}"
            raise RequestFailed(message, "tab") from exc
        try:
            url: str | None = await tab.url()
        except Exception:
            url = None
        try:
            task_id = store.start_task(request.task, url=url, model=llm_config.model, source=request.source)
        except Exception:
            await browser.close()
            raise
        agent = Agent(browser, LLMClient(llm_config), agent_config)
        running = RunningTask(
            task_id=task_id,
            task=request.task,
            agent=agent,
            browser=browser,
            capture_raw=settings.debug_capture,
            secrets=tuple(s for s in (llm_config.api_key, settings.api_key) if s),
        )
        running.stop_requested = self._stop_while_starting
        self.current = running
        agent.on("historychange", lambda event: self._on_event(running, event))
        agent.on("statuschange", lambda status: self._on_status(running, status))
        agent.on("activity", lambda activity: self._on_activity(running, activity))
        browser.on_detached.append(lambda tab_id, reason: self._on_detached(running, tab_id, reason))
        running.runner = asyncio.get_running_loop().create_task(self._drive(running, request.task))
        log.info("task %s started in tab %s (%s)", task_id, request.tab_id, request.source)
        return task_id

    async def _drive(self, running: RunningTask, task: str) -> None:
        agent, store = running.agent, self.host.store
        result_wire: dict[str, Any] | None = None
        try:
            if running.stop_requested:  # Stop was pressed before the agent even began
                result_wire = {"success": False, "data": "Task stopped", "history": []}
            else:
                result = await agent.execute(task)
                result_wire = running.outgoing_result(result.to_wire())
        except asyncio.CancelledError:
            running.stop_requested = True
            result_wire = {"success": False, "data": "Task stopped", "history": running.history}
            raise
        except Exception as exc:  # the agent turns failures into an error result; this is a safety net
            log.exception("task %s crashed", running.task_id)
            result_wire = {"success": False, "data": f"{type(exc).__name__}: {exc}", "history": running.history}
        finally:
            if agent.status in FINAL_STATUSES:
                status = agent.status
            else:
                status = "stopped" if running.stop_requested else "error"
            if result_wire is not None and running.stopped_because and status == "stopped":
                result_wire["data"] = running.stopped_because
            running.status, running.result = status, result_wire
            try:
                stored = {k: v for k, v in (result_wire or {}).items() if k != "history"}
                store.finish_task(running.task_id, status=status, result=stored)
            except Exception:
                log.exception("could not record the end of task %s", running.task_id)
            self._push({"type": "task.status", "taskId": running.task_id, "status": status})
            self._push({"type": "task.result", "taskId": running.task_id, "result": result_wire})
            await self._release(running)
            log.info("task %s ended %s", running.task_id, status)

    async def _release(self, running: RunningTask) -> None:
        try:
            await running.agent.llm.aclose()
        except Exception:
            log.debug("closing the LLM client failed", exc_info=True)
        if running.browser is not None:
            try:
                await asyncio.wait_for(running.browser.close(), 3.0)
            except Exception:
                log.debug("detaching from the tab failed", exc_info=True)

    # --- what the agent reports -----------------------------------------------------------------
    def _on_event(self, running: RunningTask, event: Any) -> None:
        wire = event.to_wire()
        try:
            self.host.store.append_event(running.task_id, wire)
        except Exception:
            log.exception("could not record an event of task %s", running.task_id)
        outgoing = running.outgoing(wire)
        running.history.append(outgoing)
        self._push({"type": "task.event", "taskId": running.task_id, "event": outgoing})

    def _on_status(self, running: RunningTask, status: str) -> None:
        running.status = status
        if status in FINAL_STATUSES:
            return  # pushed by _drive once the record says so too
        self._push({"type": "task.status", "taskId": running.task_id, "status": status})

    def _on_activity(self, running: RunningTask, activity: Any) -> None:
        wire = running.outgoing(activity.to_wire() if hasattr(activity, "to_wire") else dict(activity))
        running.activity = wire
        self._push({"type": "task.activity", "taskId": running.task_id, "activity": wire})

    def _on_detached(self, running: RunningTask, tab_id: int, reason: str) -> None:
        if running.finished or reason in DETACH_ENDS_TASK_EXCEPT:
            return
        if reason == CANCELED_BY_USER:
            running.stopped_because = "Stopped: you pressed Cancel on the browser's debugging bar"
        else:
            running.stopped_because = f"Stopped: the debugger was detached from the tab ({reason})"
        log.info("task %s: debugger detached from tab %s (%s)", running.task_id, tab_id, reason)
        asyncio.get_running_loop().create_task(running.agent.stop())

    def _push(self, message: dict[str, Any]) -> None:
        try:
            self.host.push(message)
        except Exception:
            log.exception("could not push %s", message.get("type"))

    # --- stopping -------------------------------------------------------------------------------
    async def stop(self) -> None:
        if self._starting:
            self._stop_while_starting = True  # the task ends as soon as it exists
        running = self.current
        if running is None or running.finished:
            return
        running.stop_requested = True  # in case the agent has not started running yet
        await running.agent.stop()
        if running.runner is not None:
            await asyncio.wait([running.runner])

    async def shutdown(self) -> None:
        await self.stop()
