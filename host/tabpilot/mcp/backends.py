"""Where an MCP client's tasks run.

- `HostBackend` (the default): in the user's own browser, through the native host the extension keeps
  running (`hostlink.py`). Each task gets a tab of its own; the person sees it in the popup, can take
  over and stop it, and is asked first (consent) unless the server runs with `--approve always`.
- `LaunchBackend` (`--launch`, `--cdp-url`): in a Chromium it launches (or one it attaches to), run
  directly with the task-run layer; no extension involved.
- `FallbackBackend` (`--fallback launch`): the user's browser when its host can be reached, else a
  Chromium of its own — the user's choice, so a closed browser does not fail the call.

Both report the task's id as soon as it has one, then each step, through `report(message)` and return
`{success, data, taskId, steps, note?}`. Failures are `TaskFailed` with a message that says what to do."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..i18n import text
from .hostlink import HostGone, HostLink, HostRefused, HostUnavailable
from .progress import (
    activity_message,
    amended_message,
    control_message,
    event_message,
    remedy,
    started_message,
    steps_of,
)

if TYPE_CHECKING:
    from ..browser.browser import Browser
    from ..guards.domains import DomainPolicy
    from ..store.tasks import TaskStore
    from ..taskrun.run import TaskRun

log = logging.getLogger(__name__)

Report = Callable[[str], Awaitable[None]]
ApprovePolicy = Literal["always", "ask"]
ANSWERED_AT_ONCE = 0.5  # s: a client not always allowed is said to wait for the person unless answered within this
STOP_TIMEOUT = 15.0
# A task that ends while the person's page has not given their last actions (Hand back or Stop on a busy page): the
# extension listens to the page 10 s more (worker/takeover.js LATE_PATIENCE_MS, from the press, before the end) and
# sends what it gave at once; run_task waits this long for it, so the client hears the takeover complete.
LATE_ANSWER_WAIT = 12.0
TAKEOVER_MAY_MISS = ("the page the person took over had not given their last actions in it when the task ended (it "
                     "was busy), nor within {:g} s after: what they did there last may be missing from the "
                     "history; get_task shows the record")
ENDED = ("completed", "error", "stopped", "interrupted")  # a task in any of these has nothing left to stop
# The record's `interrupted` (a host that died under its task: the next one marks it) has no result of its own;
# a client is told why, as the popup and `tabpilot history show` word it.
INTERRUPTED = {"success": False, "data": "Interrupted: tabpilot's host stopped before this task finished (it was "
                                         "closed, killed or crashed). Run the task again to finish it."}


class TaskFailed(Exception):
    """A tool call that cannot be done; the message is for the MCP client's user."""


def no_display(flag: str, language: str | None = None) -> str:
    """A browser window `flag` (--launch, --fallback launch) would open, where there is no display: what to do, in
    the flags of this server's entry in the MCP client's config."""
    return text("mcp.no_display", language, flag=flag)


# The browser's own pages and scripts: no task can work there (chrome.debugger may not attach to them; said as "the
# tab was closed"), and a script is no page. Refused before anything is asked or opened, in the client's words.
NOT_PAGES = ("javascript", "chrome", "chrome-extension", "chrome-untrusted", "devtools", "edge", "brave", "view-source")


def first_page(url: str, domains: DomainPolicy | None) -> str:
    """The page a task is to open first, as it will be opened; TaskFailed, before anything is asked or opened,
    for an address that is no page (javascript:, the browser's own pages, blank) or one the domain settings keep
    tasks from. Worded for an MCP client (the model's words for the same say to use its own tools)."""
    from urllib.parse import urlsplit

    from ..browser.actions import normalize_url
    from ..guards.domains import start_refusal

    scheme = urlsplit(url.strip()).scheme.lower()
    if scheme in NOT_PAGES or (scheme == "about" and url.strip().lower() != "about:blank"):
        what = "a script" if scheme == "javascript" else "one of the browser's own pages"
        raise TaskFailed(f"url {url.strip()[:200]!r} is {what}, not a web page a task can work in: give the address "
                         "of a web page (https://…, http://localhost:PORT)")
    try:
        page = normalize_url(url)
    except Exception as exc:
        raise TaskFailed(f"could not open {url}: {exc}") from exc
    refused = start_refusal(domains, page)
    if refused is not None:
        raise TaskFailed(str(refused))
    return page


class NoBrowser(TaskFailed):
    """No host could be reached at all (the browser is not open): nothing was started in it."""


class Backend(Protocol):
    async def run_task(self, task: str, url: str | None, new_tab: bool, requester: str, report: Report
                       ) -> dict[str, Any]: ...

    # requester: the MCP client asking, by its own name: one the person always allows sees all their tabs and
    # tasks; another only those of its own tasks
    async def get_task(self, task_id: str, *, requester: str = "") -> dict[str, Any]: ...

    async def stop_task(self, task_id: str) -> dict[str, Any]: ...

    # {tabs: [...]}, and `hidden`: how many of the person's tabs this client may not see (its own only, unless the
    # person always allows it), when any
    async def list_tabs(self, *, requester: str = "") -> dict[str, Any]: ...

    async def read_page(self, tab: int | str | None, *, requester: str = "") -> dict[str, Any]: ...

    async def close(self) -> None: ...


def task_result(task_id: str, result: dict[str, Any], *, takeover_may_miss: bool = False) -> dict[str, Any]:
    """run_task's answer; a failed task's also says what to do about it (`remedy`), where it can; `note`, that the
    person's last actions in a page may be missing (`takeover_may_miss`)."""
    answer = {"success": bool(result.get("success")), "data": result.get("data"), "taskId": task_id,
              "steps": steps_of(result.get("history") or [])}
    what_to_do = remedy(result)
    if what_to_do:
        answer["remedy"] = what_to_do
    if takeover_may_miss:
        answer["note"] = TAKEOVER_MAY_MISS.format(LATE_ANSWER_WAIT)
    return answer


def stop_answer(task_id: str, status: str | None, *, was_running: bool) -> dict[str, Any]:
    """stop_task's answer: `stopped` only when this call stopped the task; else the status it ended with."""
    if was_running and status == "stopped":
        return {"taskId": task_id, "stopped": True, "status": status}
    when = "before it could be stopped" if was_running else "already: there was nothing to stop"
    return {"taskId": task_id, "stopped": False, "status": status,
            "message": f"task {task_id} had ended ({status}) {when}"}


# --- the user's browser, through the host --------------------------------------------------------------
class HostBackend:
    def __init__(self, link: HostLink, *, approve: ApprovePolicy = "ask", approve_timeout: float | None = None
                 ) -> None:
        self.link = link
        self.approve = approve
        self.approve_timeout = approve_timeout

    async def _ask(self, type: str, fields: dict[str, Any] | None = None, *, timeout: float = 60.0,
                   waiting: Report | None = None) -> Any:
        if fields and fields.get("requester"):
            self._allow_if_always(str(fields["requester"]))
        try:
            return await self.link.request(type, fields, timeout=timeout, waiting=waiting)
        except HostGone as exc:
            raise TaskFailed(str(exc)) from exc
        except HostUnavailable as exc:
            raise NoBrowser(str(exc)) from exc
        except HostRefused as exc:
            raise TaskFailed(str(exc)) from exc
        except TimeoutError as exc:
            raise TaskFailed(f"the host did not answer {type} within {timeout:g} s") from exc

    def _allow_if_always(self, requester: str) -> None:
        """`--approve always` (the person's own choice, in their MCP client's config) makes the client one they
        always allow from its first call, whichever tool it is: a list_tabs sees their tabs too."""
        if self.approve != "always":
            return
        from ..native.endpoint import program_of
        from ..store.sites import SiteError, allow_client

        try:
            allow_client(requester, program_of(os.getpid()))  # the program that started this server, as the host sees
        except SiteError as exc:
            raise TaskFailed(f"--approve always could not record {requester} as always allowed: {exc}") from exc

    @staticmethod
    def _always_allowed(requester: str) -> bool:
        """Whether the person always allows this client (`--approve always`, or Always allow in the popup), as the
        host checks it: then approval.ask is answered without asking anyone."""
        from ..native.endpoint import program_of
        from ..store.sites import SiteError, client_allowed

        try:
            return client_allowed(requester, program_of(os.getpid()))
        except SiteError:
            return False

    async def consent(self, requester: str, task: str, report: Report, *, new_tab: bool = True,
                      url: str | None = None) -> int | None:
        """The one place an MCP task is allowed or refused before anything runs (no tab, no model call). The
        host starts only a task allowed this way; `--approve always` (the person's own choice, in their MCP
        client's config) makes this client one they always allow, listed and revocable in the popup's Settings.
        The person is shown where it will work (a new tab, or the tab they are looking at); returns the id of that
        tab when it is an existing one (the host starts the task only there)."""
        fields: dict[str, Any] = {"requester": requester, "task": task, "newTab": new_tab}
        if url:
            fields["url"] = url
        if self.approve_timeout is not None:
            fields["timeout"] = self.approve_timeout
        wait = (self.approve_timeout or 120.0) + 10.0
        # connected first: finding no host (or waiting for a new one, said) is not the person's delay
        await self._ask("ping", waiting=report)
        # a client the person always allows is answered without asking anyone, however long the host takes (under
        # load it took over ANSWERED_AT_ONCE, and the client was told the task waited for the person's yes, before
        # the task's id)
        nobody_asked = self.approve == "always" or self._always_allowed(requester)
        asking = asyncio.ensure_future(self._ask("approval.ask", fields, timeout=wait))
        try:
            # otherwise said early: the person may take a while, and some clients time a silent call out
            if not nobody_asked and not (await asyncio.wait({asking}, timeout=ANSWERED_AT_ONCE))[0]:
                await report("waiting for the person using the browser to allow this task (tabpilot popup or "
                             "side panel)")
            verdict = await asking
        finally:
            asking.cancel()
        if verdict.get("decision") == "deny":
            raise TaskFailed(f"Refused: {verdict.get('message')}")
        tab_id = verdict.get("tabId")
        return tab_id if isinstance(tab_id, int) else None

    async def run_task(self, task: str, url: str | None, new_tab: bool, requester: str, report: Report
                       ) -> dict[str, Any]:
        if url:  # no page, or a page the person's domain settings keep tasks from: refused before they are asked
            from ..guards.domains import DomainPolicy
            from ..store.settings import SettingsError, load_settings

            try:
                settings = load_settings()
            except SettingsError:
                first_page(url, None)  # the host says what is wrong with the settings
            else:
                first_page(url, DomainPolicy.of(settings.allowed_domains, settings.blocked_domains))
        allowed_tab = await self.consent(requester, task, report, new_tab=new_tab, url=url)
        if new_tab:
            tab_id = (await self._ask("tabs.create", {"url": "about:blank"}))["tab"]["tabId"]
        elif allowed_tab is not None:
            tab_id = allowed_tab
        else:
            raise TaskFailed("the host did not say which tab the person allowed this task in; update tabpilot "
                             "(`tabpilot doctor`)")
        fields: dict[str, Any] = {"task": task, "tabId": tab_id, "source": "mcp"}
        if url:
            fields["url"] = url
        try:
            started = await self._ask("task.start", fields)
        except TaskFailed:
            if new_tab:  # no task came to it: leave no blank tab behind
                with contextlib.suppress(Exception):
                    await self.link.request("tabs.close", {"tabId": tab_id}, timeout=10)
            raise
        task_id = str(started["taskId"])
        try:
            await report(started_message(task_id, tab_id))
            return await self._follow(task_id, report)
        except asyncio.CancelledError:
            with contextlib.suppress(BaseException):  # the call was cancelled: the task stops with it
                await asyncio.shield(self.link.request("task.stop", {"taskId": task_id}, timeout=STOP_TIMEOUT))
            raise
        finally:
            self.link.forget(task_id)

    async def _follow(self, task_id: str, report: Report) -> dict[str, Any]:
        updates = self.link.updates(task_id)
        asked: Any = None  # the action waiting for the person's yes, as last said
        while True:
            push = await updates.get()
            if isinstance(push, HostGone):
                raise TaskFailed(f"Task {task_id} did not finish. {push} Its steps so far are in the task "
                                 "history (`tabpilot history`).")
            kind = push.get("type")
            message = None
            if kind == "task.event":
                message = event_message(push.get("event") or {})
            elif kind == "task.amended":
                message = amended_message(push.get("event") or {})
            elif kind == "task.activity":
                message = activity_message(push.get("activity") or {})
            elif kind == "task.control":  # said once for each action waiting for the person's yes
                approval = push.get("approval")
                message = control_message(approval) if approval != asked else None
                asked = approval
            elif kind == "task.result":
                result = push.get("result") or {}
                missing = await self._late_answers(updates, result.get("history") or [], report)
                return task_result(task_id, result, takeover_may_miss=missing)
            if message:
                await report(message)

    @staticmethod
    async def _late_answers(updates: asyncio.Queue[dict[str, Any] | HostGone], history: list[dict[str, Any]],
                            report: Report) -> bool:
        """After the result: the takeovers of `history` that ended waiting for their page, completed by what it gives
        late (task.amended, said as progress) within LATE_ANSWER_WAIT. Whether what the person did last may still be
        missing from one: it did not come, or came saying a frame of the page never answered."""
        from ..taskrun.takeover import waits_for_page

        waiting = {event.get("startedAt") for event in history if waits_for_page(event)}
        still_silent = False
        deadline = asyncio.get_running_loop().time() + LATE_ANSWER_WAIT
        while waiting:
            try:
                push = await asyncio.wait_for(updates.get(), max(0.0, deadline - asyncio.get_running_loop().time()))
            except TimeoutError:
                break
            if isinstance(push, HostGone):
                break
            if push.get("type") == "task.amended":
                event = push.get("event") or {}
                waiting.discard(event.get("startedAt"))
                still_silent = still_silent or waits_for_page(event)
                message = amended_message(event)
                if message:
                    await report(message)
        return bool(waiting) or still_silent

    async def get_task(self, task_id: str, *, requester: str = "") -> dict[str, Any]:
        snapshot = (await self._ask("task.get", {"taskId": task_id, "requester": requester})).get("task")
        if snapshot is not None:
            out = {"taskId": snapshot["taskId"], "task": snapshot["task"], "status": snapshot["status"],
                   "tabId": snapshot["tabId"], "history": snapshot["history"]}
            if "result" in snapshot:
                out["result"] = {k: v for k, v in snapshot["result"].items() if k != "history"}
            return out
        # ended long ago, or before a restart
        record = await self._ask("history.get", {"taskId": task_id, "requester": requester})
        task = record.get("task") or {}
        result = record.get("result") or (INTERRUPTED if task.get("status") == "interrupted" else None)
        return {"taskId": task.get("taskId", task_id), "task": task.get("task"), "status": task.get("status"),
                "history": record.get("events", []), "result": result}

    async def _status(self, task_id: str) -> str | None:
        snapshot = (await self._ask("task.get", {"taskId": task_id})).get("task")
        if snapshot is not None:
            return str(snapshot["status"])
        status = (await self._ask("history.get", {"taskId": task_id})).get("task", {}).get("status")
        return None if status is None else str(status)

    async def stop_task(self, task_id: str) -> dict[str, Any]:
        if (status := await self._status(task_id)) in ENDED:
            return stop_answer(task_id, status, was_running=False)
        await self._ask("task.stop", {"taskId": task_id}, timeout=STOP_TIMEOUT + 5)
        return stop_answer(task_id, await self._status(task_id), was_running=True)

    async def list_tabs(self, *, requester: str = "") -> dict[str, Any]:
        reply = await self._ask("tabs.query", {"requester": requester})
        listed: dict[str, Any] = {"tabs": [{"tabId": t["tabId"], "url": t.get("url", ""), "title": t.get("title", ""),
                                            "active": bool(t.get("active"))} for t in reply.get("tabs", [])]}
        if reply.get("othersHidden"):
            listed["hidden"] = int(reply["othersHidden"])
        return listed

    async def read_page(self, tab: int | str | None, *, requester: str = "") -> dict[str, Any]:
        fields: dict[str, Any] = {"requester": requester}
        if tab is not None:
            try:
                fields["tabId"] = int(tab)
            except ValueError:
                raise TaskFailed(f"tab {tab!r} is not a tab id; list_tabs shows them") from None
        return dict(await self._ask("page.read", fields))

    async def close(self) -> None:
        await self.link.close()


# --- a browser of its own ---------------------------------------------------------------------------------
class LaunchBackend:
    """Tasks in a Chromium this server launches (headed unless `headless`), or attaches to (`cdp_url`).
    Each task works through its own CDP connection on its own new tab, so several run at once."""

    def __init__(self, *, headless: bool = False, cdp_url: str | None = None, executable: str | None = None,
                 flag: str = "--launch") -> None:
        self.headless = headless
        self.cdp_url = cdp_url
        self.executable = executable
        self.flag = flag  # the server's flag that launches it, as its advice names it (--launch, --fallback launch)
        self._browser: Browser | None = None  # the launched one (None when attached)
        self._launching = asyncio.Lock()
        self._store: TaskStore | None = None
        self._runs: dict[str, TaskRun] = {}

    async def _endpoint(self) -> str:
        if self.cdp_url:
            return self.cdp_url
        from ..browser.browser import Browser
        from ..browser.launcher import needs_display

        if needs_display(self.headless):  # checked at start-up too (`tabpilot mcp`), and said on stderr there
            raise TaskFailed(no_display(self.flag))
        async with self._launching:
            launched = self._browser.launched if self._browser is not None else None
            if launched is None or launched.process.poll() is not None:  # first call, or the window was closed
                if self._browser is not None:
                    with contextlib.suppress(Exception):
                        await self._browser.close()
                try:
                    self._browser = await Browser.launch(headless=self.headless, executable=self.executable)
                except Exception as exc:
                    self._browser = None
                    raise TaskFailed(f"could not start a browser: {exc}") from exc
                launched = self._browser.launched
            assert launched is not None
            return launched.ws_url

    async def _connect(self) -> Browser:
        from ..browser.browser import Browser
        from ..browser.launcher import WordedBrowserError, reason_of

        endpoint = await self._endpoint()
        try:
            return await Browser.connect(endpoint)
        except WordedBrowserError as exc:  # says what to do already: in this server's flags, not `tabpilot run`'s
            if exc.key == "browser.unreachable":
                raise TaskFailed(text("mcp.cdp_unreachable", None, **exc.values)) from exc
            raise TaskFailed(str(exc)) from exc
        except Exception as exc:
            if self.cdp_url:  # a ws:// address nothing (or no browser) answers at
                raise TaskFailed(text("mcp.cdp_unreachable", None, address=endpoint, detail=reason_of(exc))) from exc
            raise TaskFailed(f"could not reach the browser at {endpoint}: {exc}") from exc

    def _records(self) -> TaskStore:
        if self._store is None:
            from ..store.tasks import TaskStore

            self._store = TaskStore()
            self._store.mark_interrupted()
        return self._store

    async def run_task(self, task: str, url: str | None, new_tab: bool, requester: str, report: Report
                       ) -> dict[str, Any]:
        from ..guards.domains import StartRefused
        from ..taskrun.plan import PlanError, plan_task
        from ..taskrun.run import TaskRun

        try:
            plan = plan_task(task, source="mcp", requester=requester)
        except PlanError as exc:
            advice = str(exc).replace("In the popup: open Settings.", "Set it with `tabpilot config set`.")
            raise TaskFailed(advice) from exc
        opening = first_page(url, plan.domains) if url else None
        browser = await self._connect()
        browser.held_elsewhere = functools.partial(self._held_elsewhere, browser)
        try:
            tab = await (browser.new_tab() if new_tab else browser.current_tab())
            browser.active = tab
            if opening:
                await tab.navigate(opening)
            page_url = await tab.url()
        except Exception as exc:
            await browser.close()
            raise TaskFailed(f"could not open {url or 'a tab'}: {exc}") from exc
        # no extension and no terminal, so nobody sees a question: an action that needs a yes (ask-before) is
        # refused, saying how, and the model is not offered ask_user or request_takeover (nobody could answer or
        # hand the controls back: the task waited for good)
        run = TaskRun(plan, self._records(), browser, can_ask=False, can_hand_over=False, approvals="refuse",
                      nobody_to_approve="approval.remedy.mcp")
        queue: asyncio.Queue[str] = asyncio.Queue()
        run.observers.append(lambda update: _queue_message(update, queue))
        try:
            task_id = await run.begin(page_url)
        except StartRefused as exc:
            raise TaskFailed(str(exc)) from exc
        self._runs[task_id] = run
        runner = asyncio.get_running_loop().create_task(run.execute())
        try:
            await report(started_message(task_id, tab.target_id))
            while not runner.done():
                getter = asyncio.ensure_future(queue.get())
                await asyncio.wait([getter, runner], return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    await report(getter.result())
                else:
                    getter.cancel()
            while not queue.empty():
                await report(queue.get_nowait())
            finished = runner.result()
        except asyncio.CancelledError:
            await asyncio.shield(self._stop(run, runner))
            raise
        if new_tab and self.headless and self._browser is not None:  # nobody will look at it
            with contextlib.suppress(Exception):
                await self._browser.close_tab(tab.target_id)
        return task_result(task_id, finished.result)

    def _held_elsewhere(self, mine: Browser, target_id: str) -> str | None:
        """The id of another running task of this server that works in the tab: several run at once in one browser,
        each seeing all its tabs, and a tab of another's is neither listed for `mine` nor worked in."""
        return next((task_id for task_id, run in self._runs.items()
                     if run.browser is not mine and run.running and run.browser.works_in(target_id)), None)

    @staticmethod
    async def _stop(run: TaskRun, runner: asyncio.Task[Any]) -> None:
        await run.stop("Stopped: the MCP client cancelled the call")
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(runner, STOP_TIMEOUT)

    async def get_task(self, task_id: str, *, requester: str = "") -> dict[str, Any]:
        run = self._runs.get(task_id)
        if run is not None:
            out: dict[str, Any] = {"taskId": task_id, "task": run.plan.task, "status": run.status,
                                   "history": list(run.history)}
            if run.finished is not None:
                out["result"] = {k: v for k, v in run.finished.result.items() if k != "history"}
            return out
        from ..store.tasks import TaskNotFound

        try:
            full_id = str(self._records().resolve_id(task_id))
        except TaskNotFound as exc:
            raise TaskFailed(str(exc)) from exc
        record = self._records().get_task(full_id)
        if record is None:
            raise TaskFailed(f"no task with id {task_id!r}")
        wire = dict(record.to_wire())
        task = wire.get("task") or {}
        return {"taskId": full_id, "task": task.get("task"), "status": task.get("status"),
                "history": wire.get("events", []), "result": wire.get("result")}

    def runs(self, task_id: str) -> bool:
        """Whether this server ran (or runs) that task in its browser."""
        return task_id in self._runs

    async def stop_task(self, task_id: str) -> dict[str, Any]:
        run = self._runs.get(task_id)
        if run is None:
            raise TaskFailed(f"this server is not running a task {task_id!r}")
        if not run.running:
            return stop_answer(task_id, run.status, was_running=False)
        await run.stop("Stopped by the MCP client")
        return stop_answer(task_id, run.status, was_running=True)

    async def list_tabs(self, *, requester: str = "") -> dict[str, Any]:
        browser = await self._connect()
        try:
            pages = await browser.tabs()
            # active: the tab read_page reads when given none (the one in front), as the extension's list says
            active = (await browser.current_tab()).target_id if pages else None
            return {"tabs": [{"tabId": t.target_id, "url": t.url, "title": t.title, "active": t.target_id == active}
                             for t in pages]}
        finally:
            await browser.close()

    async def read_page(self, tab: int | str | None, *, requester: str = "") -> dict[str, Any]:
        from ..browser.state import get_state

        browser = await self._connect()
        try:
            target = await (browser.current_tab() if tab is None else browser.attach(str(tab)))
            state = await get_state(browser, target)
            return {"tabId": target.target_id, "url": state.url, "title": state.title, "text": state.text}
        except TaskFailed:
            raise
        except Exception as exc:
            raise TaskFailed(f"could not read tab {tab}: {exc}") from exc
        finally:
            await browser.close()

    async def close(self) -> None:
        for run in list(self._runs.values()):
            if run.running:
                with contextlib.suppress(Exception):
                    await run.stop("Stopped: the MCP server is exiting")
        if self._browser is not None:
            await self._browser.close()
        if self._store is not None:
            self._store.close()


# --- the user's browser, else one of its own ---------------------------------------------------------------------
FALLING_BACK = "your browser is not reachable (no tabpilot host): running this task in a Chromium of tabpilot's own"


class FallbackBackend:
    """`--fallback launch`: each call tries the user's browser first; when no host answers at all (never a
    host that went away mid-task: that task is not run twice) it runs in the launched one instead."""

    def __init__(self, host: HostBackend, launch: LaunchBackend) -> None:
        self.host = host
        self.launch = launch

    async def run_task(self, task: str, url: str | None, new_tab: bool, requester: str, report: Report
                       ) -> dict[str, Any]:
        try:
            return await self.host.run_task(task, url, new_tab, requester, report)
        except NoBrowser:
            log.info("no host: running %r in the launched browser", task)
        await report(FALLING_BACK)
        return await self.launch.run_task(task, url, new_tab, requester, report)

    async def get_task(self, task_id: str, *, requester: str = "") -> dict[str, Any]:
        if self.launch.runs(task_id):
            return await self.launch.get_task(task_id)
        try:
            return await self.host.get_task(task_id, requester=requester)
        except NoBrowser:
            return await self.launch.get_task(task_id)  # the task record on this machine has it

    async def stop_task(self, task_id: str) -> dict[str, Any]:
        if self.launch.runs(task_id):
            return await self.launch.stop_task(task_id)
        return await self.host.stop_task(task_id)

    async def list_tabs(self, *, requester: str = "") -> dict[str, Any]:
        try:
            return await self.host.list_tabs(requester=requester)
        except NoBrowser:
            return await self.launch.list_tabs()

    async def read_page(self, tab: int | str | None, *, requester: str = "") -> dict[str, Any]:
        try:
            return await self.host.read_page(tab, requester=requester)
        except NoBrowser:
            return await self.launch.read_page(tab)

    async def close(self) -> None:
        await self.host.close()
        await self.launch.close()


def _queue_message(update: Any, queue: asyncio.Queue[str]) -> None:
    from ..taskrun.events import RunActivity, RunEvent

    message = None
    if isinstance(update, RunEvent):
        message = event_message(update.event)
    elif isinstance(update, RunActivity):
        message = activity_message(update.activity)
    if message:
        queue.put_nowait(message)
