"""The host's tasks: several at once, at most one per tab, keyed by task id; their pushes made from
the run events of `taskrun`.

Each task is a `taskrun.TaskRun` on its own `RelayBrowser` (attached to its tab only). A tab is taken
from the moment `task.start` for it arrives until its run has released it; only then is the final
`task.status` pushed, so a `task.start` sent on that push finds the tab free. `get()` is what a popup
(re)opened mid-task shows. This module stays light: the run, the agent and openai load on the first
task, never at start.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..i18n import DEFAULT_LANGUAGE, Language
from ..i18n import text as say
from .peer import CANCELED_BY_USER, ExtensionLink, RequestFailed

if TYPE_CHECKING:
    from ..store.tasks import TaskStore
    from ..taskrun.events import RunUpdate
    from ..taskrun.plan import TaskOverrides
    from ..taskrun.run import Decision, TaskRun
    from ..taskrun.takeover import Reason
    from .messages import TaskStart

log = logging.getLogger(__name__)

DETACH_ENDS_TASK_EXCEPT = ("target_closed",)  # a tab closed is for the agent to notice and handle
KEEP_FINISHED = 20  # ended tasks kept for task.get (a popup reopened after the end shows it)


@dataclass
class HostTask:
    """One task of this host: starting (no id yet), running, or ended."""

    tab_id: int
    task: str
    task_id: str | None = None
    run: TaskRun | None = None
    runner: asyncio.Task[None] | None = None
    stop_requested: bool = False

    @property
    def running(self) -> bool:
        return self.run is None or self.run.running

    def snapshot(self, language: str | None = None) -> dict[str, Any] | None:
        """The task as a reader in `language` gets it (i18n.for_reader)."""
        from ..i18n import for_reader

        run = self.run
        if run is None or self.task_id is None:
            return None  # still starting: the task.start reply brings its id
        snap: dict[str, Any] = {
            "taskId": self.task_id,
            "task": self.task,
            "tabId": self.tab_id,
            "status": run.status,
            "history": [for_reader(event, language) for event in run.history],
            "activity": run.activity,
            "control": run.control,
            "question": run.question,
            "approval": run.approval,
        }
        if run.finished is not None:
            snap["result"] = run.finished.result
        return snap


class TaskManager:
    def __init__(
        self, link: ExtensionLink, store: Callable[[], TaskStore], push: Callable[[dict[str, Any]], None]
    ) -> None:
        self._link = link
        self._store = store
        self._push_frame = push
        self._tasks: dict[str, HostTask] = {}  # by id, oldest first: the running ones and the last ended
        self._tabs: dict[int, HostTask] = {}  # the tab → its starting or running task
        self._latest: HostTask | None = None
        self._stopping: set[asyncio.Task[None]] = set()  # held so the loop does not drop them
        self.ui_language: Language = DEFAULT_LANGUAGE  # the extension's (its hello): what errors are worded in

    # --- reading --------------------------------------------------------------------------------
    def get(self, task_id: str | None = None, tab_id: int | None = None) -> dict[str, Any] | None:
        """A task's snapshot: by id; else the running (or last) task of that tab; else the latest."""
        if task_id is not None:
            entry = self._tasks.get(task_id)
        elif tab_id is not None:
            entry = self._tabs.get(tab_id)
            if entry is None or entry.task_id is None:
                entry = next((e for e in reversed(self._tasks.values()) if e.tab_id == tab_id), None)
        else:
            entry = self._latest
        return None if entry is None else entry.snapshot(self.ui_language)

    def running(self) -> list[dict[str, Any]]:
        """Snapshots of the running tasks, oldest first."""
        return [snap for entry in self._tasks.values() if entry.running and (snap := entry.snapshot(self.ui_language))]

    def is_running(self, task_id: str) -> bool:
        entry = self._tasks.get(task_id)
        return entry is not None and entry.running

    # --- starting -------------------------------------------------------------------------------
    async def start(self, request: TaskStart, *, use_my_model: bool = True) -> str:
        """`use_my_model` False (a page not granted it): the user's model settings do not exist for this task."""
        busy = self._tabs.get(request.tab_id)
        if busy is not None:
            which = f" ({busy.task_id})" if busy.task_id else ""
            raise RequestFailed(
                f"a task is already running in this tab{which}; stop it or use another tab", "busy"
            )
        entry = HostTask(tab_id=request.tab_id, task=request.task)
        self._tabs[request.tab_id] = entry  # taken now: a second start for this tab is busy at once
        try:
            return await self._begin(entry, request, use_my_model)
        except BaseException:
            self._free(entry)
            raise

    async def _begin(self, entry: HostTask, request: TaskStart, use_my_model: bool) -> str:
        from ..i18n import text
        from ..taskrun.plan import PlanError, plan_task
        from ..taskrun.run import TaskRun
        from .relay import RelayBrowser

        try:
            plan = plan_task(request.task, _overrides(request, use_my_model), source=request.source,
                             language=self.ui_language)
        except PlanError as exc:
            raise RequestFailed(str(exc), exc.code) from exc
        browser = RelayBrowser(self._link, all_tabs=plan.include_all_tabs)
        try:
            tab = await browser.activate(str(request.tab_id), focus=False)
        except Exception as exc:
            await browser.close()
            cause = getattr(exc.__cause__, "cdp_message", None) or str(exc)  # Chromium's own reason, as it says it
            raise RequestFailed(text("error.cannot_work_in_tab", self.ui_language, tab=request.tab_id, error=cause),
                                "tab") from exc
        if request.url:  # a page to open first (an MCP client's run_task): the task starts there
            try:
                from ..browser.actions import normalize_url

                await tab.navigate(normalize_url(request.url))
            except Exception as exc:
                await browser.close()
                raise RequestFailed(f"could not open {request.url}: {exc}", "tab") from exc
        try:
            url: str | None = await tab.url()
        except Exception:
            url = None
        run = entry.run = TaskRun(plan, self._store(), browser)
        run.observers.append(lambda update: self._on_update(entry, update))
        if entry.stop_requested:  # Stop was pressed while it was starting: it ends before it begins
            await run.stop()
        task_id = await run.begin(url)
        self._tasks[task_id] = entry
        self._latest = entry
        browser.on_detached.append(lambda tab_id, reason: self._on_detached(entry, tab_id, reason))
        entry.runner = asyncio.get_running_loop().create_task(self._drive(entry, run))
        log.info("task %s started in tab %s (%s)", task_id, request.tab_id, request.source)
        return task_id

    async def _drive(self, entry: HostTask, run: TaskRun) -> None:
        try:
            await run.execute()
        except asyncio.CancelledError:
            raise
        except Exception:  # execute() records and reports its own failures; this is a safety net
            log.exception("task %s failed to run", entry.task_id)
        finally:
            self._free(entry)

    def _free(self, entry: HostTask) -> None:
        if self._tabs.get(entry.tab_id) is entry:
            del self._tabs[entry.tab_id]
        ended = [task_id for task_id, e in self._tasks.items() if not e.running]
        for task_id in ended[:-KEEP_FINISHED]:
            del self._tasks[task_id]

    # --- run events → pushes --------------------------------------------------------------------
    def _on_update(self, entry: HostTask, update: RunUpdate) -> None:
        from ..i18n import for_reader
        from ..taskrun.events import RunActivity, RunControl, RunEvent, RunFinished, RunStarted, RunStatus
        from .messages import TaskActivityPush, TaskControlPush, TaskEventPush, TaskResultPush, TaskStatusPush

        if isinstance(update, RunStarted):
            entry.task_id = update.task_id
            return
        task_id = str(entry.task_id)
        if isinstance(update, RunStatus):
            self._push(TaskStatusPush(task_id=task_id, status=update.status))  # type: ignore[arg-type]  # "running"
        elif isinstance(update, RunEvent):
            self._push(TaskEventPush(task_id=task_id, event=for_reader(update.event, self.ui_language)))
        elif isinstance(update, RunActivity):
            self._push(TaskActivityPush(task_id=task_id, activity=update.activity))
        elif isinstance(update, RunControl):
            self._push(TaskControlPush(task_id=task_id, control=update.control, question=update.question,
                                       approval=update.approval))
        elif isinstance(update, RunFinished):
            self._free(entry)  # the run has released the tab: a start sent on the pushes below is not busy
            self._push(TaskStatusPush(task_id=task_id, status=update.status))
            self._push(TaskResultPush(task_id=task_id, result=update.result))

    def _push(self, message: Any) -> None:
        try:
            self._push_frame(message.to_frame())
        except Exception:
            log.exception("could not push %s", message.type)

    def _on_detached(self, entry: HostTask, tab_id: int, reason: str) -> None:
        run = entry.run
        if run is None or not run.running or reason in DETACH_ENDS_TASK_EXCEPT:
            return
        if reason == CANCELED_BY_USER:
            because = "Stopped: you pressed Cancel on the browser's debugging bar"
        else:
            because = f"Stopped: the debugger was detached from the tab ({reason})"
        log.info("task %s: debugger detached from tab %s (%s)", entry.task_id, tab_id, reason)
        stopping = asyncio.get_running_loop().create_task(run.stop(because))
        self._stopping.add(stopping)
        stopping.add_done_callback(self._stopping.discard)

    # --- stop, pause, resume --------------------------------------------------------------------
    async def stop(self, task_id: str | None = None) -> None:
        """Stop one task and return once it has ended. Without an id: the only one running (a no-op
        when none runs; refused when several do)."""
        if task_id is None:
            running = list(self._tabs.values())
            if not running:
                return
            if len(running) > 1:
                ids = ", ".join(e.task_id or "starting" for e in running)
                raise RequestFailed(f"{len(running)} tasks are running ({ids}); say which one to stop (taskId)",
                                    "bad_request")
            entry = running[0]
        else:
            entry = self._find(task_id)
        await self._stop(entry)

    async def _stop(self, entry: HostTask) -> None:
        entry.stop_requested = True  # seen by a task still starting
        if entry.run is not None:
            await entry.run.stop()
        if entry.runner is not None:
            await asyncio.wait([entry.runner])

    def pause(self, task_id: str) -> None:
        self._running(task_id).pause("paused from the extension")

    def resume(self, task_id: str) -> None:
        self._running(task_id).resume()

    # --- the user at the controls ---------------------------------------------------------------
    async def take_over(self, task_id: str, reason: Reason) -> None:
        """The user takes the controls (a no-op if they have them already)."""
        await self._running(task_id).take_over(reason)

    def add_takeover_actions(self, task_id: str, actions: list[dict[str, Any]]) -> None:
        if not self._running(task_id).add_takeover_actions(actions):
            raise RequestFailed(f"the user does not have the controls of task {task_id} (no task.takeover, "
                                "or it was handed back): these actions were not recorded", "bad_request")

    async def hand_back(self, task_id: str, note: str | None) -> None:
        if await self._running(task_id).hand_back(note) is None:
            raise RequestFailed(f"the user does not have the controls of task {task_id}", "bad_request")

    def answer(self, task_id: str, answer: str) -> None:
        if not self._running(task_id).answer(answer):
            raise RequestFailed(say("popup.no_question", self.ui_language, task_id=task_id), "bad_request")

    def decide(self, task_id: str, decision: Decision) -> None:
        if not self._running(task_id).decide(decision):
            raise RequestFailed(say("popup.no_approval", self.ui_language, task_id=task_id), "bad_request")

    def _find(self, task_id: str) -> HostTask:
        entry = self._tasks.get(task_id)
        if entry is None:
            raise RequestFailed(say("popup.no_host_task", self.ui_language, task_id=task_id), "not_found")
        return entry

    def _running(self, task_id: str) -> TaskRun:
        entry = self._find(task_id)
        if entry.run is None or not entry.run.running:
            raise RequestFailed(say("popup.not_running", self.ui_language, task_id=task_id), "bad_request")
        return entry.run

    async def shutdown(self) -> None:
        await asyncio.gather(*(self._stop(entry) for entry in list(self._tabs.values())))


def _overrides(request: TaskStart, use_my_model: bool = True) -> TaskOverrides:
    """What a page's ExecutionConfig overrides for its task. A task a web page started may go only to that
    page's own domain (and the settings' allowed ones)."""
    from ..taskrun.plan import TaskOverrides

    config = request.config
    allow_domains = (request.origin,) if request.source == "page" and request.origin else ()
    if config is None:
        return TaskOverrides(use_my_model=use_my_model, allow_domains=allow_domains)
    return TaskOverrides(
        use_my_model=use_my_model,
        allow_domains=allow_domains,
        base_url=config.base_url,
        model=config.model,
        api_key=config.api_key,
        max_steps=config.max_steps,
        language=config.language,
        system_instruction=config.system_instruction,
        include_all_tabs=bool(config.experimental_include_all_tabs),
    )
