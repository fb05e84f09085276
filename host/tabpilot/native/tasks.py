"""The host's tasks: several at once, at most one per tab, keyed by task id; their pushes made from
the run events of `taskrun`.

Each task is a `taskrun.TaskRun` on its own `Browser` over the extension's tabs (`relay.extension_browser`,
attached to its tab only). A tab is taken from the moment `task.start` for it arrives until its run has
released it; only then is the final `task.status` pushed, so a `task.start` sent on that push finds the
tab free. `get()` is what a popup (re)opened mid-task shows.

A task started from the popup or side panel outlives its host: when the extension's service worker
restarts, Chromium closes the host's stdin and the host must exit within ~2 s, so `suspend_all()` leaves
such tasks `running` in the record with their run state; the host the new worker spawns `resume_orphans()`
before it answers the worker's hello, so the worker learns them (a takeover under way included) at once.
A page's or an MCP client's task is stopped instead: whoever started it heard that its host went away.

This module stays light: the run, the agent and openai load on the first task, never at start.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..language import DEFAULT_LANGUAGE, Language, say
from ..store.owner import owner_alive
from .memory import after_task
from .peer import CANCELED_BY_USER, ExtensionLink, RequestFailed

if TYPE_CHECKING:
    from ..browser.browser import Browser
    from ..privacy.guard import PrivacyGuard
    from ..store.tasks import Orphan, TaskStore
    from ..taskrun.events import RunFinished, RunUpdate
    from ..taskrun.plan import TaskOverrides, TaskPlan
    from ..taskrun.run import Decision, TaskRun
    from ..taskrun.takeover import Reason
    from .messages import TaskStart

log = logging.getLogger(__name__)

DETACH_ENDS_TASK_EXCEPT = ("target_closed",)  # a tab closed is for the agent to notice and handle
KEEP_FINISHED = 20  # ended tasks kept for task.get (a popup reopened after the end shows it)
# Chromium gives a host ~2 s after closing its stdin; the previous host suspends its tasks in ~15 ms.
PREVIOUS_HOST_EXIT = 3.0
# taskrun/plan.py EXTENSION_SOURCES (not imported: the host starts without the planner, on demand, for every browser):
# the popup, the side panel and the overlay re-learn a task from the host
RESUMABLE_SOURCES = ("popup", "panel")
REPEATED_WITHIN = 60.0  # s: the same refused task asked for again in this time is recorded once
REFUSALS_RECORDED = 10  # refused tasks of one requester recorded in that time; a flood of new texts is not


class NotResumed(Exception):
    """Why a suspended task cannot go on, as a failure code the catalog words (`failure.<code>`)."""

    def __init__(self, code: str, **params: Any) -> None:
        from ..i18n import failure_text

        super().__init__(failure_text(code, params, "en-US"))
        self.code, self.params = code, params


@dataclass(frozen=True)
class EndedRun:
    """What `task.get` shows of a run that ended (a popup reopened after the end), without the run itself: its
    browser, CDP connection and page state, its agent and its model client go when it ends. Kept whole, the last
    KEEP_FINISHED runs held all of that (~85 KB of Python objects each for a one-step task on a small page; a
    large page's state is megabytes)."""

    status: str
    history: list[dict[str, Any]]
    activity: dict[str, Any] | None
    control: dict[str, Any] | None
    question: str | None
    approval: dict[str, Any] | None
    source: str
    requester: str | None
    finished: RunFinished
    privacy: PrivacyGuard | None  # for what the page gives late of its last takeover (`add_late_answer`)
    running = False

    @classmethod
    def of(cls, run: TaskRun, finished: RunFinished) -> EndedRun:
        return cls(status=run.status, history=run.history, activity=run.activity, control=run.control,
                   question=run.question, approval=run.approval, source=run.plan.source,
                   requester=run.plan.requester, finished=finished, privacy=run.plan.agent.privacy)


@dataclass
class HostTask:
    """One task of this host: starting (no id yet), running, or ended (then only what readers need is kept)."""

    tab_id: int
    task: str
    task_id: str | None = None
    run: TaskRun | EndedRun | None = None
    runner: asyncio.Task[None] | None = None
    stop_requested: bool = False

    @property
    def running(self) -> bool:
        """Until its end is told (RunFinished, which the run tells once it has let go of its tab): what task.get,
        task.list and hello say agrees with the pushes. Said ended while the extension still detached the tab, a
        task.get reader (a popup opened then, a test) learnt of the end before anyone else, and a task it started
        on that tab was refused as busy."""
        return not isinstance(self.run, EndedRun)

    @property
    def requester(self) -> str | None:
        run = self.run
        if run is None:
            return None
        return run.requester if isinstance(run, EndedRun) else run.plan.requester

    def snapshot(self, language: str | None = None) -> dict[str, Any] | None:
        """The task as a reader in `language` gets it (i18n.for_reader)."""
        from ..i18n import approval_for_reader, for_reader, result_for_reader

        run = self.run
        if run is None or self.task_id is None:
            return None  # still starting: the task.start reply brings its id
        ending = self.running and not run.running  # over, its end not told yet (see `running`)
        snap: dict[str, Any] = {
            "taskId": self.task_id,
            "task": self.task,
            "tabId": self.tab_id,
            "status": "running" if ending else run.status,
            "history": [for_reader(event, language) for event in run.history],
            "activity": run.activity,
            "control": run.control,
            "question": run.question,
            "approval": approval_for_reader(run.approval, language),
            "source": run.source if isinstance(run, EndedRun) else run.plan.source,
        }
        if self.requester:  # a page's origin, an MCP client's name: the person sees who asked for it
            snap["requester"] = self.requester
        if isinstance(run, EndedRun):
            snap["result"] = result_for_reader(run.finished.result, language)
            snap["gaveUp"] = run.finished.gave_up
        return snap


class TaskManager:
    def __init__(
        self, link: ExtensionLink, store: Callable[[], TaskStore], push: Callable[[dict[str, Any]], None],
        loaded: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._link = link
        self._loaded = loaded  # once the agent and openai are loaded (off the loop)
        self._store = store
        self._push_frame = push
        self._tasks: dict[str, HostTask] = {}  # by id, oldest first: the running ones and the last ended
        self._tabs: dict[int, HostTask] = {}  # the tab → its starting or running task
        self._latest: HostTask | None = None
        self._stopping: set[asyncio.Task[None]] = set()  # held so the loop does not drop them
        self.ui_language: Language = DEFAULT_LANGUAGE  # the extension's (its hello): what errors are worded in
        self._not_run: dict[tuple[str, str, str | None, str], float] = {}  # recorded not-run asks, when

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

    async def record_not_run(self, task: str, *, status: str, why: str, source: str, requester: str | None,
                             asked_at: float | None = None, url: str | None = None) -> None:
        """A task a page or a local program asked for that did not run (the person said no, or the host refused
        it), into the record for the person to see, off the event loop (a database another program holds locked
        holds up this request only). The same refusal again within a minute is not recorded twice (a program
        retrying in a loop does not fill the history), nor more than REFUSALS_RECORDED of one requester's (one
        that varies the text each time neither); each no of the person's is (they were asked). Never fails the
        request it is about."""
        import time

        now = time.monotonic()
        key = (status, source, requester, task)
        self._not_run = {k: at for k, at in self._not_run.items() if now - at < REPEATED_WITHIN}
        if key in self._not_run:
            return
        if status == "refused":
            if sum(k[1:3] == (source, requester) for k in self._not_run) >= REFUSALS_RECORDED:
                log.warning("not recorded: another task %s (%s) asked for and refused within a minute",
                            requester, source)
                return
            self._not_run[key] = now
        try:
            guard = _secrets_guard()
            shown_task, shown_url = guard.hide_secrets(task), guard.hide_secrets(url) if url else None
            await asyncio.to_thread(lambda: self._store().record_not_run(
                shown_task, status=status, why=why, source=source, requester=requester, asked_at=asked_at,
                url=shown_url))
        except Exception:
            log.exception("could not record the %s task asked for by %s", status, requester)

    def is_running(self, task_id: str) -> bool:
        entry = self._tasks.get(task_id)
        return entry is not None and entry.running

    def check_free(self, tab_id: int) -> None:
        """Refuses ("busy", naming the task) a tab a task holds: a second task there would drive it too."""
        busy = self._holding(tab_id)
        if busy is not None:
            task_id = busy.task_id or say("popup.starting", self.ui_language)
            raise RequestFailed(say("popup.tab_busy", self.ui_language, task_id=task_id), "busy")

    def _holding(self, tab_id: int) -> HostTask | None:
        """The task that has this tab: the one started in it, or a running one that works in it (a tab it opened, a
        sign-in popup, one it switched to), which a second task there would drive at the same time."""
        started = self._tabs.get(tab_id)
        if started is not None:
            return started
        return next((entry for entry in self._tabs.values() if entry.run is not None
                     and not isinstance(entry.run, EndedRun) and entry.run.running
                     and entry.run.browser.works_in(str(tab_id))), None)

    def _share(self, browser: Browser, mine: HostTask) -> None:
        """`browser` (mine's) neither lists nor works in a tab another running task has, for as long as that one
        runs: an all-tabs task switched into another task's tab, two agents in one page."""

        def held_elsewhere(target_id: str) -> str | None:
            holder = self._holding(int(target_id)) if target_id.isdigit() else None
            return None if holder is None or holder is mine else holder.task_id or ""

        browser.held_elsewhere = held_elsewhere

    # --- starting -------------------------------------------------------------------------------
    async def start(self, request: TaskStart, *, use_my_model: bool = True) -> str:
        """`use_my_model` False (a page not granted it): the user's model settings do not exist for this task."""
        self.check_free(request.tab_id)
        entry = HostTask(tab_id=request.tab_id, task=request.task)
        self._tabs[request.tab_id] = entry  # taken now: a second start for this tab is busy at once
        try:
            return await self._begin(entry, request, use_my_model)
        except BaseException:
            self._free(entry)
            raise

    async def _begin(self, entry: HostTask, request: TaskStart, use_my_model: bool) -> str:
        if self._loaded is not None:
            await self._loaded()
        from ..browser.actions import normalize_url
        from ..browser.errors import TabClosed, TabUnworkable
        from ..guards.domains import StartRefused, start_refusal
        from ..i18n import text
        from ..taskrun.plan import PlanError, plan_task
        from ..taskrun.run import TaskRun
        from .relay import extension_browser

        try:
            plan = plan_task(request.task, _overrides(request, use_my_model), source=request.source,
                             language=self.ui_language, requester=_requester(request))
        except PlanError as exc:
            raise RequestFailed(str(exc), exc.code) from exc
        # a page to open first (an MCP client's run_task) is checked before it opens: no guard watches the tab yet
        first_page = None
        if request.url:
            try:
                first_page = normalize_url(request.url)
            except Exception as exc:  # javascript:, a blank or broken address: the client's to fix, not a host bug
                raise RequestFailed(say("popup.cannot_open", self.ui_language, url=request.url, error=exc),
                                    "tab") from exc
        refused = start_refusal(plan.domains, first_page)
        if refused is not None:
            raise RequestFailed(refused.text(self.ui_language), "not_allowed")
        browser = await extension_browser(self._link, all_tabs=plan.include_all_tabs)
        self._share(browser, entry)
        try:
            tab = await browser.activate(str(request.tab_id), focus=False)
        except TabUnworkable as exc:
            await browser.close()
            said = text("error.tab_unworkable", self.ui_language, why=exc.why, fix=exc.fix)
            raise RequestFailed(said, "tab") from exc
        except Exception as exc:
            await browser.close()
            cause = exc.reason if isinstance(exc, TabClosed) and exc.reason else str(exc)  # Chromium's own words
            raise RequestFailed(text("error.cannot_work_in_tab", self.ui_language, tab=request.tab_id, error=cause),
                                "tab") from exc
        if first_page:  # a page to open first (an MCP client's run_task): the task starts there
            try:
                await tab.navigate(first_page)
            except Exception as exc:
                await browser.close()
                raise RequestFailed(say("popup.cannot_open", self.ui_language, url=request.url, error=exc),
                                    "tab") from exc
        try:
            url: str | None = await tab.url()
        except Exception:
            url = None
        run = entry.run = TaskRun(plan, self._store(), browser, recipe=self._recipe(request), keeps_masks=True)
        run.observers.append(lambda update: self._on_update(entry, update))
        if entry.stop_requested:  # Stop was pressed while it was starting: it ends before it begins
            await run.stop()
        try:
            task_id = await run.begin(url)
        except StartRefused as exc:  # the page the person (or the page itself) started it on
            raise RequestFailed(exc.text(self.ui_language), "not_allowed") from exc
        self._run_entry(entry, run, task_id, browser)
        log.info("task %s started in tab %s (%s)", task_id, request.tab_id, request.source)
        return task_id

    def _run_entry(self, entry: HostTask, run: TaskRun, task_id: str, browser: Browser) -> None:
        self._tasks[task_id] = entry
        self._latest = entry
        browser.on_detached.append(lambda tab_id, reason: self._on_detached(entry, tab_id, reason))
        entry.runner = asyncio.get_running_loop().create_task(self._drive(entry, run))
        entry.runner.add_done_callback(self._ended)

    def _recipe(self, request: TaskStart) -> dict[str, Any] | None:
        """What a later host needs to plan this task again (no secrets), or None: it cannot be resumed (a
        page's or an MCP client's task; one with its own API key, which is never stored)."""
        config = request.config
        if request.source not in RESUMABLE_SOURCES or (config is not None and config.api_key):
            return None
        overrides = _overrides(request)
        return {
            "tabId": request.tab_id, "source": request.source, "language": self.ui_language,
            "browser": os.getppid(),  # the browser that spawned this host: only a host of the same resumes it
            "overrides": {"base_url": overrides.base_url, "model": overrides.model, "max_steps": overrides.max_steps,
                          "language": overrides.language, "system_instruction": overrides.system_instruction,
                          "include_all_tabs": overrides.include_all_tabs, "use_vision": overrides.use_vision,
                          "allow_domains": list(overrides.allow_domains)},
        }

    # --- tasks a host that went away left running ---------------------------------------------------
    async def resume_orphans(self) -> None:
        """Resume the tasks a host of this browser suspended (when the service worker restarted), once it
        has exited; one whose tab is gone, or that cannot be planned any more, ends `error` saying why.
        A host that died without suspending its task leaves it `interrupted`."""
        store = await asyncio.to_thread(self._store)
        loop = asyncio.get_running_loop()
        give_up = loop.time() + PREVIOUS_HOST_EXIT
        while True:
            orphans = [o for o in await asyncio.to_thread(store.orphans) if self._of_this_browser(o)]
            if not any(o.alive for o in orphans) or loop.time() > give_up:
                break
            await asyncio.sleep(0.05)  # the host before this one is still suspending its tasks
        await asyncio.to_thread(store.mark_interrupted)  # a host that died rather than suspend its task
        for orphan in orphans:
            if orphan.alive or not orphan.suspended:
                continue  # never taken from a process that still runs it
            if not await asyncio.to_thread(store.claim, orphan):
                continue
            try:
                await self._resume(store, orphan)
            except NotResumed as exc:
                log.info("task %s could not be resumed: %s", orphan.task_id, exc)
                await asyncio.to_thread(_end_orphan, store, orphan.task_id, form="cause",
                                        cause={"code": exc.code, "params": exc.params})
            except Exception as exc:
                log.exception("task %s could not be resumed", orphan.task_id)
                reason = str(exc) if isinstance(exc, RequestFailed) else f"{type(exc).__name__}: {exc}"
                await asyncio.to_thread(_end_orphan, store, orphan.task_id, reason=reason)

    def orphans_waiting(self) -> bool:
        """Whether this browser's previous host suspended tasks (or may any moment: it still runs)."""
        return any(self._of_this_browser(orphan) for orphan in self._store().orphans())

    @staticmethod
    def _of_this_browser(orphan: Orphan) -> bool:
        """Left by a host of the browser that spawned this one, or of one no longer running (its tabs are
        gone; this host ends the task saying so). Another running browser's task is that browser's."""
        browser_pid = orphan.state.get("browser")
        return browser_pid == os.getppid() or not owner_alive(str(browser_pid))

    async def _resume(self, store: TaskStore, orphan: Orphan) -> None:
        if self._loaded is not None:
            await self._loaded()
        from ..guards.domains import StartRefused
        from ..privacy.kept import kept
        from ..taskrun.plan import PlanError, TaskOverrides, plan_task
        from ..taskrun.run import TaskRun
        from .relay import extension_browser

        record = await asyncio.to_thread(store.get_task, orphan.task_id)
        state = orphan.state
        if record is None or not isinstance(state.get("tabId"), int):
            raise NotResumed("record_incomplete")
        try:
            overrides = TaskOverrides(**state.get("overrides", {}))
            plan: TaskPlan = plan_task(record.summary.task, overrides, source=str(state.get("source")),
                                       language=state.get("language") or self.ui_language)
        except (PlanError, TypeError) as exc:
            raise RequestFailed(str(exc), "settings") from exc
        tab_id = int(state["tabId"])
        browser = await extension_browser(self._link, all_tabs=plan.include_all_tabs)
        try:
            await browser.activate(str(tab_id), focus=False)
        except Exception as exc:
            await browser.close()
            raise NotResumed("tab_gone", tab=tab_id, detail=str(exc)) from exc  # Chromium's reason, as it says it
        if self._holding(tab_id) is not None:
            await browser.close()
            raise NotResumed("tab_busy", tab=tab_id)
        entry = HostTask(tab_id=tab_id, task=record.summary.task)
        self._tabs[tab_id] = entry
        self._share(browser, entry)
        recipe = {key: value for key, value in state.items() if key not in ("takeover", "unfinishedAction")}
        if plan.agent.privacy is not None:  # the placeholders its history names keep naming the same values
            plan.agent.privacy.go_on_from(await asyncio.to_thread(kept, orphan.task_id))
        run = entry.run = TaskRun(plan, store, browser, recipe={**recipe, "browser": os.getppid()}, keeps_masks=True)
        run.observers.append(lambda update: self._on_update(entry, update))
        try:
            await run.continue_from(orphan.task_id, record.events, state)
        except StartRefused as exc:  # its tab went to a page its domains keep it from while no host ran
            self._free(entry)
            raise RequestFailed(exc.text(plan.agent.language), "not_allowed") from exc
        except BaseException:
            self._free(entry)
            raise
        self._run_entry(entry, run, orphan.task_id, browser)

    async def _drive(self, entry: HostTask, run: TaskRun) -> None:
        try:
            await run.execute()
        except asyncio.CancelledError:
            raise
        except Exception:  # execute() records and reports its own failures; this is a safety net
            log.exception("task %s failed to run", entry.task_id)
        finally:
            self._free(entry)

    def _ended(self, runner: asyncio.Task[None]) -> None:
        """A task's runner is done, so nothing of the task is on a stack any more: its garbage goes now, not at
        Python's next full collection (native/memory.py)."""
        after_task(idle=not self._tabs)

    def _free(self, entry: HostTask) -> None:
        if self._tabs.get(entry.tab_id) is entry:
            del self._tabs[entry.tab_id]
        ended = [task_id for task_id, e in self._tasks.items() if not e.running]
        for task_id in ended[:-KEEP_FINISHED]:
            del self._tasks[task_id]

    # --- run events → pushes --------------------------------------------------------------------
    def _on_update(self, entry: HostTask, update: RunUpdate) -> None:
        from ..i18n import approval_for_reader, for_reader, result_for_reader
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
                                       approval=approval_for_reader(update.approval, self.ui_language)))
        elif isinstance(update, RunFinished):
            if entry.run is not None and not isinstance(entry.run, EndedRun):
                entry.run = EndedRun.of(entry.run, update)  # the run itself (its browser, agent, ...) can go
            self._free(entry)  # the run has released the tab: a start sent on the pushes below is not busy
            self._push(TaskStatusPush(task_id=task_id, status=update.status, gave_up=update.gave_up))
            self._push(TaskResultPush(task_id=task_id, result=result_for_reader(update.result, self.ui_language),
                                      gave_up=update.gave_up))

    def _push(self, message: Any) -> None:
        try:
            self._push_frame(message.to_frame())
        except Exception:
            log.exception("could not push %s", message.type)

    def _on_detached(self, entry: HostTask, tab_id: str, reason: str) -> None:
        run = entry.run
        if run is None or isinstance(run, EndedRun) or not run.running or reason in DETACH_ENDS_TASK_EXCEPT:
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
    def stopped_by(self, task_id: str, key: str, asker: str) -> str:
        """The result's text of a task stopped by who asked for it, not the person (`key`: mcp.stopped_by_client,
        mcp.stopped_client_gone, page.stopped_by_page), naming it as the person was told (the MCP client, the page's
        origin), else as `asker` (the local connection's own name)."""
        from ..i18n import text

        entry = self._tasks.get(task_id)
        return text(key, self.ui_language, requester=(entry.requester if entry else None) or asker)

    async def stop(self, task_id: str | None = None, because: str | None = None) -> None:
        """Stop one task and return once it has ended. Without an id: the only one running (a no-op
        when none runs; refused when several do). `because` becomes its result's text."""
        if task_id is None:
            running = list(self._tabs.values())
            if not running:
                return
            if len(running) > 1:
                ids = ", ".join(e.task_id or say("popup.starting", self.ui_language) for e in running)
                raise RequestFailed(say("popup.which_to_stop", self.ui_language, count=len(running), ids=ids),
                                    "bad_request")
            entry = running[0]
        else:
            entry = self._find(task_id)
        await self._stop(entry, because)

    async def _stop(self, entry: HostTask, because: str | None = None) -> None:
        entry.stop_requested = True  # seen by a task still starting
        if entry.run is not None and not isinstance(entry.run, EndedRun):
            await entry.run.stop(because)
        if entry.runner is not None:
            await asyncio.wait([entry.runner])

    def pause(self, task_id: str) -> None:
        self._running(task_id).pause("paused from the extension")

    def resume(self, task_id: str) -> None:
        self._running(task_id).resume()

    # --- the user at the controls ---------------------------------------------------------------
    async def take_over(self, task_id: str, reason: Reason, started_at: int | None = None) -> None:
        """The user takes the controls (a no-op if they have them already), since `started_at` (else now)."""
        await self._running(task_id).take_over(reason, started_at=started_at)

    async def add_takeover_actions(self, task_id: str, actions: list[dict[str, Any]]) -> None:
        """What the person did in a takeover, to the task's run; to a task no host runs (its host died while they
        had the controls: the extension kept what that host never got), to its takeover in the record."""
        entry = self._tasks.get(task_id)
        run = entry.run if entry is not None else None
        if run is not None and not isinstance(run, EndedRun) and run.running:
            added = run.add_takeover_actions(actions)
        else:
            added = await asyncio.to_thread(self._add_late_actions, task_id, actions)
        if not added:
            raise RequestFailed(say("popup.actions_not_taken_over", self.ui_language, task_id=task_id), "bad_request")

    def _add_late_actions(self, task_id: str, actions: list[dict[str, Any]]) -> bool:
        """Into the takeover its host's death cut short (store.mark_interrupted settled it), redacted as a run redacts
        them (the store keeps the keys out too)."""
        from ..store.tasks import TaskNotFound
        from ..taskrun.takeover import with_late_actions

        guard = self._guard_of_ended(task_id, None)
        shown = [guard.hide(action) for action in actions]
        try:
            added = self._store().amend_last_takeover(task_id, lambda event: with_late_actions(event, shown))
        except TaskNotFound as exc:
            raise RequestFailed(say("popup.no_host_task", self.ui_language, task_id=task_id), "not_found") from exc
        if added:
            log.info("task %s: %d action(s) of the person's after its host went, added to its takeover", task_id,
                     len(actions))
        return added

    async def add_late_answer(self, task_id: str, actions: list[dict[str, Any]], *, still_silent: bool,
                              started_at: float | None = None) -> None:
        """What the page's frames that did not answer in time when a takeover ended gave afterwards, to that takeover
        (begun at `started_at`; without it, the task's last that ended): in the run going on (the model reads it at its
        next step), or in the record of a task no run goes on with (Stop; its host went meanwhile). Views are pushed
        the takeover's event as amended."""
        from ..i18n import for_reader
        from ..taskrun.takeover import replace_takeover
        from .messages import TaskAmendedPush

        entry = self._tasks.get(task_id)
        run = entry.run if entry is not None else None
        if run is not None and not isinstance(run, EndedRun) and run.running:
            amended = run.add_late_answer(actions, still_silent=still_silent, started_at=started_at)
            # none ended waiting for the page: the Hand back never reached a host (its host went first), and the
            # takeover this run took up is still under way (the one named, when one is: never another of the task's)
            under_way = (run.control or {}).get("startedAt")
            if amended is None and started_at in (None, under_way) and run.add_takeover_actions(actions):
                return
        else:
            ended = run if isinstance(run, EndedRun) else None
            guard = await asyncio.to_thread(self._guard_of_ended, task_id, ended)
            amended = await asyncio.to_thread(self._amend_ended_takeover, task_id,
                                              [guard.hide(action) for action in actions], still_silent, started_at)
            if amended is not None and run is not None:
                replace_takeover(run.history, amended)  # what task.get shows
        if amended is None:
            raise RequestFailed(say("popup.no_takeover_ended", self.ui_language, task_id=task_id), "bad_request")
        self._push(TaskAmendedPush(task_id=task_id, event=for_reader(amended, self.ui_language)))

    @staticmethod
    def _guard_of_ended(task_id: str, run: EndedRun | None) -> PrivacyGuard:
        """The guard a task's run had, for what is added to its record after it: its placeholders numbered on (an
        address it named `[email 1]` is named so here too), also when its host went (they are kept for the next)."""
        from ..privacy.kept import kept

        if run is not None and run.privacy is not None:
            return run.privacy
        guard = _record_guard()
        guard.go_on_from(kept(task_id))
        return guard

    def _amend_ended_takeover(self, task_id: str, shown: list[dict[str, Any]], still_silent: bool,
                              started_at: float | None) -> dict[str, Any] | None:
        """The recorded takeover, `with_late_answer`; or, when the Hand back or Stop never reached a host (its host went
        first), `with_late_actions` when its host's death cut it short. None when the record has neither."""
        from ..store.tasks import TaskNotFound
        from ..taskrun.takeover import with_late_actions, with_late_answer

        amended: list[dict[str, Any]] = []

        def change(event: dict[str, Any]) -> dict[str, Any] | None:
            changed = with_late_answer(event, shown, still_silent=still_silent) or with_late_actions(event, shown)
            amended[:] = [] if changed is None else [changed]
            return changed

        try:
            return amended[0] if self._store().amend_last_takeover(task_id, change, started_at=started_at) else None
        except TaskNotFound as exc:
            raise RequestFailed(say("popup.no_host_task", self.ui_language, task_id=task_id), "not_found") from exc

    def page_silent(self, task_id: str) -> int | None:
        """The extension could not get the person's last actions from the task's page (its script hangs). When the
        takeover under way began (None: none is): what the page gives late names it."""
        run = self._find(task_id).run
        return run.page_silent() if run is not None and not isinstance(run, EndedRun) else None

    async def hand_back(self, task_id: str, note: str | None) -> None:
        if await self._running(task_id).hand_back(note) is None:
            raise RequestFailed(say("popup.not_taken_over", self.ui_language, task_id=task_id), "bad_request")

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
        if entry.run is None or isinstance(entry.run, EndedRun) or not entry.run.running:
            raise RequestFailed(say("popup.not_running", self.ui_language, task_id=task_id), "bad_request")
        return entry.run

    async def suspend_all(self) -> None:
        """The host is going away (stdin closed): the tasks that can be resumed are cut short without
        an end in the record, for the next host to go on with (see `TaskRun.suspend`)."""
        await asyncio.gather(*(self._suspend(entry) for entry in list(self._tabs.values())))

    async def _suspend(self, entry: HostTask) -> None:
        run = entry.run
        suspended = run is not None and not isinstance(run, EndedRun) and not entry.stop_requested \
            and await run.suspend()
        if suspended and entry.runner is not None:
            await asyncio.wait([entry.runner])

    async def shutdown(self) -> None:
        """Stop every task still running (those `suspend_all` did not take); then what is kept of the placeholders
        of tasks no host runs any more goes (privacy/kept.py: those this host found interrupted, with their late
        actions taken)."""
        from ..privacy.kept import forget_all_but

        await asyncio.gather(*(self._stop(entry) for entry in list(self._tabs.values())))
        try:
            await asyncio.to_thread(forget_all_but, lambda: self._store().running_ids())
        except Exception:
            log.exception("could not remove the placeholders kept for tasks that ended")


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


def _end_orphan(store: TaskStore, task_id: str, **params: Any) -> None:
    """End a task a host that went away left running, with an error event and result saying why: `reason`
    (as said), or `form="cause"` and `cause` {code, params} for a reader to word in its language."""
    from ..taskrun.run import error_event

    event = error_event("not_resumed", **params)
    try:
        store.settle_open_takeover(task_id)  # what the person did meanwhile comes before the end
        store.append_event(task_id, event)
        store.finish_task(task_id, status="error", result={"success": False, "data": event["message"]})
    except Exception:
        log.exception("could not end task %s", task_id)


def _requester(request: TaskStart) -> str | None:
    """Who asked for the task besides the person, as recorded: a page by its origin (the worker has it from
    Chromium), an MCP client by the name the local endpoint knows it by; None for the popup."""
    return {"page": request.origin, "mcp": request.client}.get(request.source)



def _record_guard() -> PrivacyGuard:
    """A guard as a task's run has (the user's secrets and masking settings), for what is recorded for a task no run
    has any more; the secrets alone when the settings cannot be read."""
    from ..privacy.guard import guard_for
    from ..privacy.secrets import SecretError
    from ..store.settings import SettingsError, load_settings

    try:
        return guard_for(load_settings())
    except (SettingsError, SecretError):
        return _secrets_guard()


def _secrets_guard() -> PrivacyGuard:
    """A guard with the user's secrets, to record a task that never ran (it has no guard of its own) as a run
    records its task: each secret's value replaced by its name. Without them when they cannot be read."""
    from ..privacy.guard import PrivacyGuard
    from ..privacy.secrets import SecretError, load_secrets

    try:
        return PrivacyGuard(load_secrets())
    except SecretError:
        return PrivacyGuard()
