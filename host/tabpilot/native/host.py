"""The native messaging host's brain, without I/O: frames in → replies, pushes and requests out.

Every request the extension sends is answered exactly once; anything it cannot use gets a
`bad_request` reply naming the problem and the host keeps serving. Requests run as their own tasks,
so a long one (a task starting, a CDP call) never holds up the frames behind it.

Chromium spawns the host on demand and waits for it, so `hello` and `ping` are answered before
pydantic and the message models are loaded; those, the task record, the agent and openai load right
after in a background thread, while the user is still typing a task.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ..language import language_of, say
from .approvals import Approvals
from .codec import FrameError, encode_frames
from .peer import Peer, RequestFailed
from .replies import hello_data, plain_hello, reply_error, reply_ok, request_id_of
from .site_feed import SiteFeed
from .tasks import TaskManager

if TYPE_CHECKING:
    from .messages import (
        ActionBatch,
        ApprovalAnswer,
        ApprovalWithdraw,
        ClientsRevoke,
        Empty,
        ExtensionPush,
        HistoryDelete,
        HistoryExport,
        HistoryExportData,
        HistoryGet,
        HistoryGetData,
        HistoryList,
        HistoryListData,
        PingData,
        SecretsDelete,
        SecretsSet,
        SettingsData,
        SettingsSet,
        SettingsTest,
        SitesAllow,
        SitesRevoke,
        TakeoverActions,
        TakeoverLate,
        TaskAnswer,
        TaskApprove,
        TaskGet,
        TaskHandback,
        TaskPause,
        TaskResume,
        TaskStart,
        TaskStop,
        TaskTakeover,
    )

T = TypeVar("T")
log = logging.getLogger(__name__)

# Requests answered at once; more are refused `busy` at once. The extension has a few out at a time (popups, a
# takeover's batches, pages' execute()); without a bound, a flood of slow ones (settings.test, each an HTTP
# connection to the model) held a task and a socket each until the host ran out of file descriptors.
MAX_REQUESTS_IN_FLIGHT = 128

__all__ = ["NativeHost", "RequestFailed"]


class NativeHost:
    def __init__(
        self,
        write: Callable[[bytes], None],
        *,
        store: Any = None,
        after_written: Callable[[Callable[[], None]], None] | None = None,
    ) -> None:
        self._write_bytes = write
        self._after_written = after_written  # runs a callback once what was written so far is out
        self.peer = Peer(self.send)
        self._request_tasks: set[asyncio.Task[None]] = set()
        self._store = store
        self.push_listeners: list[Callable[[ExtensionPush], None]] = []  # e.g. the debug socket
        # cheap: the task run, the agent and openai load on the first task (or in warm_up)
        self.tasks = TaskManager(self.peer, lambda: self.store, self.push, self.loaded)
        self.approvals = Approvals(self.push)  # the page bridge's prompts; the MCP server's too (consent.py)
        self.sites = SiteFeed(self.push)
        # local clients (native/endpoint.py: `tabpilot mcp`) hear the task pushes of their own tasks
        self.outgoing_push_listeners: list[Callable[[dict[str, Any]], None]] = []
        self._routes: dict[str, Callable[[Any], Awaitable[Any]]] = {
            "hello": self._hello,
            "ping": self._ping,
            "task.start": self._task_start,
            "task.stop": self._task_stop,
            "task.get": self._task_get,
            "task.list": self._task_list,
            "task.pause": self._task_pause,
            "task.resume": self._task_resume,
            "task.takeover": self._task_takeover,
            "takeover.actions": self._takeover_actions,
            "takeover.late": self._takeover_late,
            "task.handback": self._task_handback,
            "task.answer": self._task_answer,
            "task.approve": self._task_approve,
            "settings.get": self._settings_get,
            "settings.set": self._settings_set,
            "settings.test": self._settings_test,
            "secrets.list": self._secrets_list,
            "secrets.set": self._secrets_set,
            "secrets.delete": self._secrets_delete,
            "history.list": self._history_list,
            "history.get": self._history_get,
            "history.export": self._history_export,
            "history.delete": self._history_delete,
            "sites.list": self._sites_list,
            "sites.allow": self._sites_allow,
            "sites.revoke": self._sites_revoke,
            "sites.rotate": self._sites_rotate,
            "clients.revoke": self._clients_revoke,
            "approval.answer": self._approval_answer,
            "approval.withdraw": self._approval_withdraw,
        }
        self._warm = False
        self._loaded: concurrent.futures.Future[None] = concurrent.futures.Future()  # the warm-up is done
        self._store_lock = threading.Lock()
        # one model test at a time: each builds an HTTP client (its TLS context: tens of ms on the loop), and 100 at
        # once held the loop so long that the host noticed stdin closing only after 10 s
        self._probing = asyncio.Lock()
        self._orphans_resumed = False  # tasks a previous host left running: resumed before the first hello's reply

    @property
    def store(self) -> Any:
        """The task record, opened on first use; a task left running by a host that died is then
        marked 'interrupted' (before anyone can read the history)."""
        with self._store_lock:
            if self._store is None:
                from ..store.tasks import TaskStore

                store = TaskStore()
                count = store.mark_interrupted()
                if count:
                    log.info("marked %d task(s) interrupted", count)
                self._store = store
        return self._store

    def warm_up(self) -> None:
        """Load what the first real request needs (message models, the task record) in the
        background, so the loop stays free to notice stdin closing meanwhile. It starts once the
        first reply is out: importing holds the GIL and would delay the writer."""
        if self._warm:
            return
        self._warm = True

        def start() -> None:
            threading.Thread(target=self._load, name="warm-up", daemon=True).start()

        if self._after_written is not None:
            self._after_written(start)
        else:
            start()

    def _load(self) -> None:
        try:
            from . import messages  # noqa: F401

            self.store  # noqa: B018
            # The agent and openai take seconds to import on a busy machine: load them while the
            # user is still typing the first task, not after they pressed Run.
            from ..agent import loop  # noqa: F401
            from ..llm import bounded_http  # (imports openai)

            bounded_http.prepare()
        except Exception:
            log.exception("warming up failed")
        finally:
            self._loaded.set_result(None)

    async def loaded(self) -> None:
        """Once what the warm-up loads is loaded. A request that needs the agent or openai waits here, free to
        notice stdin closing, instead of importing them on the loop: there it waited on the warm-up thread's import
        lock, and the host noticed stdin closing 3-4 s late (first model test, load 14)."""
        if not self._warm:
            self.warm_up()
        await asyncio.wrap_future(self._loaded)

    # --- out ------------------------------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        """Write one message (chunked when large). A message that cannot be encoded is never half-sent."""
        try:
            frames = encode_frames(message)
        except (TypeError, ValueError) as exc:
            log.error("cannot encode %s: %s", message.get("type"), exc)
            if message.get("type") == "reply":
                frames = encode_frames(reply_error(message.get("id"), f"the host could not encode its reply: {exc}"))
            else:
                return
        for frame in frames:
            self._write_bytes(frame)

    def push(self, message: dict[str, Any]) -> None:
        self.send(message)
        for listener in list(self.outgoing_push_listeners):
            try:
                listener(message)
            except Exception:
                log.exception("a listener of %s failed", message.get("type"))

    # --- in -------------------------------------------------------------------------------------
    def receive(self, item: dict[str, Any] | FrameError) -> None:
        """One frame from the extension (never chunked: browser→host frames may be up to 64 MiB)."""
        if isinstance(item, FrameError):
            self.send(reply_error(item.id, item.message, "bad_request"))
            return
        quick = self._quick_answer(item)
        if quick is not None:
            self.send(quick)
            if not self._warm:
                self.warm_up()
            return
        from .messages import BadRequest, ExtensionPush, ReplyError, ReplyOk, parse_incoming

        try:
            message = parse_incoming(item)
        except BadRequest as exc:
            self.send(reply_error(exc.request_id, exc.text(self.tasks.ui_language), "bad_request"))
            return
        if isinstance(message, ReplyOk | ReplyError):
            if not self.peer.resolve(message):
                log.debug("reply to unknown request %r", message.id)
            return
        if isinstance(message, ExtensionPush):
            self.peer.deliver(message)
            for listener in list(self.push_listeners):  # after replies already resolved: wire order
                asyncio.get_running_loop().call_soon(listener, message)
            return
        if len(self._request_tasks) >= MAX_REQUESTS_IN_FLIGHT:
            self.send(reply_error(message.id, f"{MAX_REQUESTS_IN_FLIGHT} requests are still being answered; "
                                  "send more as their replies come", "busy"))
            return
        task = asyncio.get_running_loop().create_task(self._answer(message))
        self._request_tasks.add(task)
        task.add_done_callback(self._request_tasks.discard)

    def _quick_answer(self, frame: dict[str, Any]) -> dict[str, Any] | None:
        request_id = request_id_of(frame)
        if request_id != frame.get("id"):
            return None  # an unusable id: the models say what is wrong with it
        if frame.get("type") == "ping":
            return reply_ok(request_id, {"pong": True})
        if frame.get("type") == "hello" and not self._orphans_resumed and self._has_orphans():
            return None  # the slow way: the tasks to resume are in its reply
        if plain_hello(frame):
            self._learn_from_hello(frame)
            return reply_ok(request_id, self._hello_data())
        return None

    def greeted(self, frame: dict[str, Any]) -> None:
        """The extension's first hello, answered before this host existed (process.py): learn from it all the
        same; no task can be waiting to be resumed (the answer said none)."""
        self._orphans_resumed = True
        self._learn_from_hello(frame)
        self.warm_up()

    def _learn_from_hello(self, frame: dict[str, Any]) -> None:
        log.info("hello from extension %s", frame.get("extensionVersion"))
        self.peer.learn_features(frame.get("features"))
        if isinstance(frame.get("uiLanguage"), str):
            self.tasks.ui_language = language_of(frame["uiLanguage"])

    async def _answer(self, request: Any) -> None:
        try:
            reply = await self.respond(request)
        except asyncio.CancelledError:
            self.send(reply_error(request.id, "the host is shutting down", "shutting_down"))
            raise
        self.send(reply)

    async def respond(self, request: Any) -> dict[str, Any]:
        """The reply to one parsed request, whoever sent it (the extension, or a local client)."""
        from .messages import wire_data

        try:
            data = await self._routes[request.type](request)
        except RequestFailed as exc:
            return reply_error(request.id, str(exc), exc.code)
        except Exception as exc:
            log.exception("%s failed", request.type)
            return reply_error(request.id, f"{request.type} failed: {exc}", "internal")
        return reply_ok(request.id, wire_data(data))

    async def shutdown(self, timeout: float = 0.6) -> None:
        """stdin closed: stop the running task (it stays recorded), answer nothing more.

        Tasks that can go on in the next host are suspended first (cut short, not failed). Then no reply
        can arrive any more, so the link closes: whatever waits on the extension (a CDP call, the final
        detach) fails at once instead of waiting out its timeout."""
        await _within(self.tasks.suspend_all(), timeout, "suspended")
        self.peer.close("the extension disconnected")
        self.approvals.close()
        self.sites.close()
        await _within(self.tasks.shutdown(), timeout, "stopped")
        # The requests the closing just answered finish what they do with that answer first: a page's question left
        # open is recorded as withdrawn. Cancelled at once, that record was lost whenever it had not reached the
        # database yet (test_page_permissions: 3 runs in 6 once stopping the tasks awaited a thread).
        answering = [task for task in self._request_tasks if not task.done()]
        if answering:
            await asyncio.wait(answering, timeout=timeout)
        for task in list(self._request_tasks):
            task.cancel()

    def _has_orphans(self) -> bool:
        if self._store is None:  # not opened yet: when the file beside it says none can be resumed, not at all
            from .. import paths
            from ..store.resumable import none_resumable

            if none_resumable(paths.database_path()):
                self._orphans_resumed = True
                return False
        try:
            found = self.tasks.orphans_waiting()
        except Exception:
            log.exception("could not look for tasks to resume")
            found = False
        self._orphans_resumed = not found
        return found

    def _said(self, exc: Exception) -> str:
        """An error as the popup reads it: in its language when the error is worded from the catalog
        (WordedError, StoreError), else as the error says it."""
        worded = getattr(exc, "text", None)
        return str(worded(self.tasks.ui_language)) if callable(worded) else str(exc)

    # --- handlers -------------------------------------------------------------------------------
    async def _hello(self, request: Any) -> dict[str, Any]:  # reached with odd fields or tasks to resume
        self.peer.learn_features(request.features)
        if request.ui_language:
            self.tasks.ui_language = language_of(request.ui_language)
        if not self._orphans_resumed:
            self._orphans_resumed = True
            await self.tasks.resume_orphans()
        return self._hello_data()

    def _hello_data(self) -> dict[str, Any]:
        return hello_data(self.tasks.get(), self.tasks.running())

    async def _ping(self, request: Any) -> PingData:  # only reached with odd fields: see _quick_answer
        from .messages import PingData

        return PingData()

    async def _task_start(self, request: TaskStart) -> dict[str, Any]:
        use_my_model = True
        if request.source == "page":
            import time

            from .approvals import Withdrawn
            from .pages import admit_page_task

            asked_at = time.time()
            try:
                use_my_model = await admit_page_task(request, self.approvals, self.tasks.check_free)
            except RequestFailed as exc:
                if exc.code in ("denied", "not_allowed"):  # the person's no, or the site's grants: recorded
                    # a question that went unanswered because the page (or this host) went away is nobody's no
                    status = "withdrawn" if isinstance(exc, Withdrawn) else "denied" if exc.code == "denied" else (
                        "refused")
                    await self.tasks.record_not_run(request.task, status=status, why=str(exc), source="page",
                                                    requester=request.origin, asked_at=asked_at, url=request.url)
                raise
        return {"taskId": await self.tasks.start(request, use_my_model=use_my_model)}

    async def _task_stop(self, request: TaskStop) -> dict[str, Any]:
        waiting = self.tasks.page_silent(request.task_id) if request.page_silent and request.task_id else None
        await self.tasks.stop(request.task_id, self._stopped_by(request))
        return _waiting_for_page(waiting)

    def _stopped_by(self, request: TaskStop) -> str | None:
        """Who stopped the task when not the person (their Stop says nothing more): an MCP client, or a page."""
        if request.task_id is None:
            return None
        if request.client is not None:
            return self.tasks.stopped_by(request.task_id, "mcp.stopped_by_client", request.client)
        if request.origin is not None:
            return self.tasks.stopped_by(request.task_id, "page.stopped_by_page", request.origin)
        return None

    async def _task_get(self, request: TaskGet) -> dict[str, Any]:
        return {"task": self.tasks.get(task_id=request.task_id, tab_id=request.tab_id)}

    async def _task_list(self, request: Any) -> dict[str, Any]:
        return {"tasks": self.tasks.running()}

    async def _task_pause(self, request: TaskPause) -> dict[str, Any]:
        self.tasks.pause(request.task_id)
        return {}

    async def _task_resume(self, request: TaskResume) -> dict[str, Any]:
        self.tasks.resume(request.task_id)
        return {}

    async def _task_takeover(self, request: TaskTakeover) -> dict[str, Any]:
        await self.tasks.take_over(request.task_id, request.reason, request.started_at)
        return {}

    async def _takeover_actions(self, request: TakeoverActions) -> dict[str, Any]:
        await self.tasks.add_takeover_actions(request.task_id, _actions_of(request))
        return _left_out(request)

    async def _takeover_late(self, request: TakeoverLate) -> dict[str, Any]:
        await self.tasks.add_late_answer(request.task_id, _actions_of(request), still_silent=request.page_silent,
                                         started_at=request.started_at)
        return _left_out(request)

    async def _task_handback(self, request: TaskHandback) -> dict[str, Any]:
        waiting = self.tasks.page_silent(request.task_id) if request.page_silent else None
        await self.tasks.hand_back(request.task_id, request.note)
        return _waiting_for_page(waiting)

    async def _task_answer(self, request: TaskAnswer) -> dict[str, Any]:
        self.tasks.answer(request.task_id, request.answer)
        return {}

    async def _task_approve(self, request: TaskApprove) -> dict[str, Any]:
        self.tasks.decide(request.task_id, request.decision)
        return {}

    async def _settings_get(self, request: Any) -> SettingsData:
        from ..store.settings import SettingsError, load_settings, public_view

        try:
            return _settings_reply(public_view(load_settings()))
        except SettingsError as exc:
            raise RequestFailed(self._said(exc), "settings") from exc

    async def _settings_set(self, request: SettingsSet) -> SettingsData:
        from ..store.settings import SettingsError, public_view, update_settings

        changes = request.model_dump(by_alias=True, exclude_unset=True, exclude={"type", "id"})
        # An empty string clears a setting (the popup's way to remove a key).
        changes = {k: (None if v == "" else v) for k, v in changes.items()}
        try:
            settings = update_settings(changes)
        except SettingsError as exc:
            raise RequestFailed(self._said(exc), "bad_request") from exc
        return _settings_reply(public_view(settings))

    async def _secrets_list(self, request: Any) -> dict[str, Any]:
        from ..privacy import secrets

        try:
            return _secrets_reply()
        except secrets.SecretError as exc:
            raise RequestFailed(self._said(exc), "settings") from exc

    async def _secrets_set(self, request: SecretsSet) -> dict[str, Any]:
        from ..privacy import secrets

        try:
            secrets.set_secret(request.name, request.domain, request.value, any_field=request.any_field)
            return _secrets_reply()
        except secrets.SecretError as exc:
            raise RequestFailed(self._said(exc), "bad_request") from exc

    async def _secrets_delete(self, request: SecretsDelete) -> dict[str, Any]:
        from ..privacy import secrets

        try:
            if not secrets.delete_secret(request.name):
                raise RequestFailed(say("popup.no_secret", self.tasks.ui_language, name=request.name), "not_found")
            return _secrets_reply()
        except secrets.SecretError as exc:
            raise RequestFailed(self._said(exc), "settings") from exc

    async def _settings_test(self, request: SettingsTest) -> dict[str, Any]:
        await self.loaded()
        from ..llm.probe import probe_settings
        from ..store.settings import SettingsError

        try:
            async with self._probing:
                return (await probe_settings(request.base_url, request.model, request.api_key)).to_wire()
        except SettingsError as exc:
            raise RequestFailed(self._said(exc), "settings") from exc

    async def _in_store(self, work: Callable[[], T]) -> T:
        """Store work for a request, off the event loop: another program holding the database's write lock (a
        long `tabpilot history delete`, a backup tool) then holds up this request only, not ping, the relay or a
        running task's replies (they all waited out SQLite's 10 s busy timeout). Still locked then: said so."""
        import sqlite3

        try:
            return await asyncio.to_thread(work)
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            from .. import paths  # not self.store: opening it (were it not open) would wait on the lock here

            said = say("history.busy", self.tasks.ui_language, path=paths.database_path())
            raise RequestFailed(said, "busy") from exc

    async def _history_list(self, request: HistoryList) -> HistoryListData:
        from ..store.search import TaskQuery
        from .messages import HistoryListData

        query = TaskQuery.of(request.search) if request.search else None
        tasks = await self._in_store(lambda: self.store.list_tasks(request.limit, query))
        language = self.tasks.ui_language
        return HistoryListData.model_validate({"tasks": [summary.to_wire(language) for summary in tasks]})

    def _resolve_task_id(self, task_id: str) -> str:
        from ..store.tasks import TaskNotFound

        try:
            return str(self.store.resolve_id(task_id))
        except TaskNotFound as exc:
            raise RequestFailed(self._said(exc), "not_found") from exc

    async def _history_get(self, request: HistoryGet) -> HistoryGetData:
        from .messages import HistoryGetData

        record = await self._in_store(lambda: self.store.get_task(self._resolve_task_id(request.task_id)))
        if record is None:
            raise RequestFailed(say("history.no_task", self.tasks.ui_language, task_id=request.task_id), "not_found")
        from ..i18n import for_reader

        wire = record.to_wire(self.tasks.ui_language)
        wire["events"] = [for_reader(event, self.tasks.ui_language) for event in wire["events"]]
        return HistoryGetData.model_validate(wire)

    async def _history_export(self, request: HistoryExport) -> HistoryExportData:
        from .messages import HistoryExportData

        exported = await self._in_store(lambda: self.store.export_task(self._resolve_task_id(request.task_id)))
        return HistoryExportData.model_validate(exported)

    async def _history_delete(self, request: HistoryDelete) -> Empty:
        from .messages import Empty

        task_id = await self._in_store(lambda: self._resolve_task_id(request.task_id))
        if self.tasks.is_running(task_id):
            raise RequestFailed(say("popup.delete_running", self.tasks.ui_language), "busy")
        await self._in_store(lambda: self.store.delete_task(task_id))
        return Empty()

    # --- the page bridge's allowed sites and the user's answers ---------------------------------
    async def _sites_list(self, request: Any) -> dict[str, Any]:
        from ..store.sites import SiteError

        try:
            return self.sites.view()
        except SiteError as exc:
            raise RequestFailed(self._said(exc), "settings") from exc

    async def _sites_allow(self, request: SitesAllow) -> dict[str, Any]:
        from ..store.sites import allow

        def change() -> None:
            allow(request.origin, ask=request.ask, use_my_model=request.use_my_model, all_tabs=request.all_tabs)

        return await self._change_sites(change, "bad_request")

    async def _sites_revoke(self, request: SitesRevoke) -> dict[str, Any]:
        from ..store.sites import revoke

        return await self._change_sites(lambda: revoke(request.origin), "bad_request")

    async def _sites_rotate(self, request: Any) -> dict[str, Any]:
        from ..store.sites import new_token

        return await self._change_sites(new_token, "settings")  # pages holding the old token lose the bridge

    async def _clients_revoke(self, request: ClientsRevoke) -> dict[str, Any]:
        from ..store.sites import revoke_client

        return await self._change_sites(lambda: revoke_client(request.name), "settings")

    async def _change_sites(self, change: Callable[[], object], code: Literal["bad_request", "settings"]
                            ) -> dict[str, Any]:
        """One change to the allowed-sites file; the extension hears of it at once (it re-registers the
        bridge), and the reply is the new list."""
        from ..store.sites import SiteError

        try:
            change()
        except SiteError as exc:
            raise RequestFailed(self._said(exc), code) from exc
        self.sites.check()
        return await self._sites_list(None)

    async def _approval_answer(self, request: ApprovalAnswer) -> dict[str, Any]:
        if not self.approvals.answer(request.approval_id, request.decision):
            raise RequestFailed(say("popup.question_closed", self.tasks.ui_language), "not_found")
        return {}


    async def _approval_withdraw(self, request: ApprovalWithdraw) -> dict[str, Any]:
        if not self.approvals.withdraw(request.approval_id):
            raise RequestFailed(say("popup.question_closed", self.tasks.ui_language), "not_found")
        return {}


def _actions_of(batch: ActionBatch) -> list[dict[str, Any]]:
    return [action.model_dump(mode="json", exclude_none=True) for action in batch.actions]


def _left_out(batch: ActionBatch) -> dict[str, Any]:
    """The reply to a batch of what the person did, kept but for the actions in it that were none (ActionBatch): each
    said in the log by where it was wrong, never by its values (what the person typed), and their count in the reply,
    so the extension knows the batch was taken and does not send it again."""
    for problem in batch.dropped:
        log.warning("task %s: %s: left out %s", batch.task_id, batch.type, problem)
    return {"dropped": len(batch.dropped)} if batch.dropped else {}


def _waiting_for_page(started_at: int | None) -> dict[str, Any]:
    """The reply to a Hand back or Stop that ended a takeover waiting for its page (`pageSilent`): which takeover, for
    what the page gives late (`takeover.late`) to name."""
    return {} if started_at is None else {"startedAt": started_at}


def _secrets_reply() -> dict[str, Any]:
    from ..privacy import secrets

    return {"secrets": [entry.as_json() for entry in secrets.list_secrets()], "backend": secrets.backend_name()}


async def _within(work: Awaitable[None], timeout: float, done: str) -> None:
    """Wait for the tasks to be `done` (suspended, stopped) while the host goes away, at most `timeout`."""
    try:
        await asyncio.wait_for(work, timeout)
    except TimeoutError:
        log.error("the running tasks were not %s within %.1f s of stdin closing", done, timeout)
    except Exception:
        log.exception("the running tasks were not %s cleanly", done)


def _settings_reply(view: dict[str, Any]) -> SettingsData:
    """The settings as the popup gets them, with the one max-steps limit its form must use."""
    from ..store.settings import MAX_STEPS_LIMIT
    from .messages import SettingsData

    return SettingsData.model_validate({**view, "maxStepsLimit": MAX_STEPS_LIMIT})
