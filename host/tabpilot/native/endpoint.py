"""The host's local endpoint: how the user's own programs (`tabpilot mcp`) reach the host that Chromium
spawned for the extension, to run tasks in the user's browser.

Where: a Unix socket `host.sock` (0600) in this installation's owner-only runtime folder (`paths.runtime_dir()`,
0700: one per config and data folder, not one per uid, so two HOMEs of one user never share a host), and beside
it `host.token` (0600), a random secret written fresh by each host. A client's first frame must be
`{type: "hello", token, client: {name, version}}`; anything else, or a wrong token, is refused and the connection
closed. On Windows a named pipe stands in for the socket (see
`_serve_pipe`: written, not yet run on Windows).

What: the frames of the native port (4-byte native-endian length + UTF-8 JSON, no chunking: a local
socket has no 1 MiB limit) and the popup's requests (`LOCAL_TYPES`), plus `tabs.query` /
`tabs.create` relayed to the extension, `page.read` and `approval.ask`. A client gets the `task.*`
pushes of the tasks it started (each task keeps its own tab; no client sees or stops another's by
accident). Tasks a client started are stopped when it goes away: nobody is left to hear their end.

What a client may do in the browser, the host decides (a client is any program of this user that can read
the token file, not only `tabpilot mcp`): a `task.start` runs only a task the person allowed on this
connection (`approval.ask` with that task's text answered "once" or "always", or the client always allowed
in the popup's Settings), once per yes, in the tab the person was shown; it never gets all the user's tabs;
`task.stop` and `tabs.close` reach only the tasks and tabs this connection started or opened, and `tabs.query`,
`task.get`, `task.list` and `history.get` show only those, unless the person always allows the client.

The latest host to start owns the socket (an extension reload starts the new host before the old one
has exited); a host removes the socket and token on exit only while they are still its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import logging
import os
import secrets
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import paths
from .approvals import HOST_STOPPED, Decision, Place, Withdrawn
from .codec import MAX_INCOMING_FRAME, FrameDecoder, FrameError, NotFrames, encode_frame
from .consent import McpConsent, display_name
from .peer import RequestFailed
from .replies import reply_error, reply_ok, request_id_of

if TYPE_CHECKING:
    from .host import NativeHost
    from .messages import HostRequest, ReplyData, TaskStart

log = logging.getLogger(__name__)

SOCKET_NAME = "host.sock"
TOKEN_NAME = "host.token"
UNIX_PATH_LIMIT = 104  # sun_path: 108 bytes on Linux, 104 on macOS
HOST_ROUTED = ("ping", "task.start", "task.stop", "task.get", "task.list", "settings.get", "history.get")
RELAYED = ("tabs.query", "tabs.create", "tabs.close")  # answered by the extension
LOCAL_TYPES = ("hello", *HOST_ROUTED, *RELAYED, "page.read", "approval.ask", "cancel")
# What a client may take back while it waits (`cancel`), and what a client that goes away takes with it: a question
# to the person nobody waits for any more must not stay on their screen (nor hold up the same client's next one)
CANCELLABLE = ("approval.ask",)
CLOSE_RECORD_WAIT = 0.5  # s a closing endpoint gives its clients' withdrawn questions to be recorded
WITHDRAWN = ("the program that asked stopped waiting for your answer (its call was cancelled or timed out, or it "
             "closed) before you answered; nothing was started")
# task.control: an action waiting for the person's yes (the client says so while it waits: mcp/progress.py);
# task.amended: a takeover the page's late answer completed
TASK_PUSHES = ("task.status", "task.activity", "task.event", "task.amended", "task.control", "task.result")
LOCAL_SOURCE = "mcp"
PAGE_READ_TIMEOUT = 30.0
MAX_HELLO_FRAME = 16 * 1024  # a hello is ~100 bytes; before it nothing larger is read
MAX_IN_FLIGHT = 32  # requests of one connection answered at once (tabpilot mcp has a few); more are busy
HELLO_WITHIN = 10.0  # seconds a new connection has to say hello (tabpilot mcp says it at once)


@dataclass(frozen=True)
class EndpointAddress:
    """Where a host listens and the file with its token."""

    socket: str  # a Unix socket path, or a Windows pipe name
    token_file: Path

    @classmethod
    def for_this_user(cls) -> EndpointAddress:
        folder = paths.runtime_dir()
        if sys.platform == "win32":
            import hashlib

            user = os.environ.get("USERNAME", "user")
            place = hashlib.sha256(str(folder).encode()).hexdigest()[:12]  # the same in the host and the client
            return cls(rf"\\.\pipe\tabpilot-{user}-{place}", folder / TOKEN_NAME)
        if _too_long(folder):  # a deep TABPILOT_HOME: this installation's folder in the user's runtime folder
            folder = paths.runtime_dir(short=True)
        if _too_long(folder):
            raise OSError(f"the socket path {folder / SOCKET_NAME} is too long for a Unix socket; "
                          "set XDG_RUNTIME_DIR (or TABPILOT_HOME) to a shorter folder")
        return cls(str(folder / SOCKET_NAME), folder / TOKEN_NAME)

    def read_token(self) -> str:
        return self.token_file.read_text(encoding="ascii").strip()


def _too_long(folder: Path) -> bool:
    return len(os.fsencode(folder / SOCKET_NAME)) >= UNIX_PATH_LIMIT


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read, replacing any earlier one in one step."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(text)
    os.replace(temporary, path)


NOT_CONSENTED = ("a local program may start only a task the person using the browser allowed: send approval.ask "
                 "{requester, task, newTab or tabId, url} with this task's text first (tabpilot mcp does); they "
                 "answer in the tabpilot popup or side panel, where they can also always allow the client")
NOT_IN_THAT_TAB = ("the person allowed this task in another tab or page than this task.start names: start it where "
                   "approval.ask said (the tabId in its answer, or with newTab a tab you opened, and the same url), "
                   "or ask again for this tab")
KEEP_CONSENTS = 20  # tasks allowed but not yet started, per connection: a client asks just before it starts one


@dataclass(frozen=True)
class Consent:
    """One yes of the person: this task text, asked for by `requester`, working where they were shown."""

    task: str
    requester: str
    place: Place

    def fits(self, request: TaskStart, opened_tabs: set[int]) -> bool:
        """The task.start is the one allowed: its text, and the tab and page the person was shown."""
        if request.task != self.task or request.url != self.place.url:
            return False
        if self.place.new_tab:
            return request.tab_id in opened_tabs
        return request.tab_id == self.place.tab_id


@dataclass(eq=False)
class LocalClient:
    name: str = "a local program"
    writer: asyncio.StreamWriter | None = None
    tasks: set[str] = field(default_factory=set)  # the ids of its running tasks (their pushes go to it)
    started: set[str] = field(default_factory=set)  # every task it started: the ones it may stop
    opened_tabs: set[int] = field(default_factory=set)  # the tabs it opened: the ones it may close
    worked_tabs: set[int] = field(default_factory=set)  # the tabs its tasks worked in: with those, the ones it reads
    always_for: set[str] = field(default_factory=set)  # requesters the person always allows, as answered here
    program: str | None = None  # what started the process on the other end (program_of): "always" is for it only
    consented: list[Consent] = field(default_factory=list)  # each yes: one task.start each
    in_flight: int = 0  # its requests being answered
    waiting: dict[str, asyncio.Task[None]] = field(default_factory=dict)  # request id → its CANCELLABLE handler
    withdrawn: set[str] = field(default_factory=set)  # the request ids it cancelled (or left behind by going away)

    @property
    def own_tabs(self) -> set[int]:
        return self.opened_tabs | self.worked_tabs

    def send(self, message: dict[str, Any]) -> None:
        if self.writer is not None and not self.writer.is_closing():
            self.writer.write(encode_frame(message))


class LocalEndpoint:
    def __init__(self, host: NativeHost, address: EndpointAddress | None = None) -> None:
        self.host = host
        self.address = address or EndpointAddress.for_this_user()
        self.clients: set[LocalClient] = set()
        self._token = secrets.token_urlsafe(32)
        self._server: asyncio.AbstractServer | None = None
        self._socket_identity: tuple[int, int] | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._closing = False
        # Tabs a client opened behind while a question waited for the person, newest last (see `_relay`).
        self._behind: list[int] = []
        self._last_answer: Decision = "deny"  # how the last question closed
        host.outgoing_push_listeners.append(self._on_host_push)
        host.approvals.closed_listeners.append(self._question_closed)
        self.consent = McpConsent(host.approvals, host.sites.check)
        self.hello_within = HELLO_WITHIN

    # --- lifetime -------------------------------------------------------------------------------
    async def start(self) -> None:
        if sys.platform == "win32":
            self._server = await _serve_pipe(self.address.socket, self._serve)
        else:
            path = self.address.socket
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)  # a dead host's socket, or the one of a host about to exit: the latest owns it
            self._server = await asyncio.start_unix_server(self._serve, path=path, limit=1 << 20)
            os.chmod(path, 0o600)  # the folder (0700) already keeps others out; this says so again
            status = os.stat(path)
            self._socket_identity = (status.st_dev, status.st_ino)
        write_private(self.address.token_file, self._token)
        log.info("local endpoint listening on %s", self.address.socket)

    def _still_mine(self) -> bool:
        try:
            status = os.stat(self.address.socket)
        except OSError:
            return False
        return (status.st_dev, status.st_ino) == self._socket_identity

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        if sys.platform != "win32" and self._still_mine():
            with contextlib.suppress(OSError):
                os.unlink(self.address.socket)
            with contextlib.suppress(OSError):
                if hmac.compare_digest(self.address.read_token(), self._token):
                    os.unlink(self.address.token_file)
        # The questions its clients wait on go unanswered: each is recorded as withdrawn (the host stopped), and
        # given a moment to be, before their connections go.
        self._closing = True
        asking = [handler for client in self.clients for key, handler in list(client.waiting.items())
                  if self._withdraw(client, key)]
        if asking:
            await asyncio.wait(asking, timeout=CLOSE_RECORD_WAIT)
        for client in list(self.clients):
            if client.writer is not None:
                client.writer.close()
        for handler in list(self._handlers):
            handler.cancel()

    # --- one client -----------------------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        client = LocalClient(writer=writer, program=program_of(_peer_pid(writer)))
        if not _same_user(writer):
            log.warning("local endpoint: refused a process of another user")
            writer.close()
            return
        decoder = FrameDecoder(max_frame=MAX_HELLO_FRAME)  # a stranger's frames are never buffered large
        authenticated = False
        try:
            while decoder.broken is None and (data := await self._next_bytes(reader, authenticated)):
                for frame in decoder.feed(data):
                    if not authenticated:
                        authenticated = self._hello(client, frame)
                        if not authenticated:
                            await writer.drain()
                            return
                        decoder.max_frame = MAX_INCOMING_FRAME
                        continue
                    if isinstance(frame, FrameError):  # NotFrames too: said to the client, then the connection ends
                        client.send(reply_error(frame.id, frame.message, "bad_request"))
                        if isinstance(frame, NotFrames):
                            log.warning("local endpoint: %s; closed %s's connection", frame.message, client.name)
                        continue
                    if client.in_flight >= MAX_IN_FLIGHT:
                        client.send(reply_error(request_id_of(frame), f"{MAX_IN_FLIGHT} requests of this connection "
                                                "are still being answered; send more as their replies come", "busy"))
                        continue
                    client.in_flight += 1
                    handler = asyncio.get_running_loop().create_task(self._answer(client, frame))
                    self._handlers.add(handler)
                    handler.add_done_callback(self._handlers.discard)
                    if frame.get("type") in CANCELLABLE and request_id_of(frame) is not None:
                        key = str(request_id_of(frame))
                        client.waiting[key] = handler
                        handler.add_done_callback(functools.partial(_forget_waiting, client, key))
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self.clients.discard(client)
            writer.close()
            for request_id in list(client.waiting):  # nobody is left to hear the answer
                self._withdraw(client, request_id)
            await self._orphaned(client)

    @staticmethod
    def _withdraw(client: LocalClient, request_id: object) -> bool:
        """Take back a question of the client's still waiting for the person (it is closed in every view of it)."""
        handler = client.waiting.get(str(request_id))
        # Once only: taken back twice (its `cancel`, then its connection closing), the second cancel cut short the
        # recording of the first, and Past tasks never listed the question.
        if handler is None or handler.done() or str(request_id) in client.withdrawn:
            return False
        client.withdrawn.add(str(request_id))
        handler.cancel()
        return True

    async def _next_bytes(self, reader: asyncio.StreamReader, authenticated: bool) -> bytes:
        """What the client sent next; a connection that has not said hello in time is closed (b"")."""
        if authenticated:
            return await reader.read(1 << 16)
        try:
            return await asyncio.wait_for(reader.read(1 << 16), self.hello_within)
        except TimeoutError:
            log.warning("local endpoint: closed a connection that sent no hello within %g s", self.hello_within)
            return b""

    def _hello(self, client: LocalClient, frame: dict[str, Any] | FrameError) -> bool:
        token = None if isinstance(frame, FrameError) else frame.get("token")
        if isinstance(frame, FrameError) or frame.get("type") != "hello" or not isinstance(token, str) or not (
            hmac.compare_digest(token.encode(), self._token.encode())
        ):
            log.warning("local endpoint: refused a client without the current token")
            client.send(reply_error(frame.id if isinstance(frame, FrameError) else request_id_of(frame),
                                    "refused: the first message must be hello with the token "
                                    f"from {self.address.token_file}", "unauthorized"))
            return False
        info = frame.get("client")
        if isinstance(info, dict) and info.get("name"):
            client.name = display_name(info["name"], client.name)
        self.clients.add(client)
        log.info("local client connected: %s", client.name)
        from .. import __version__

        client.send(reply_ok(request_id_of(frame), {"hostVersion": __version__, "tasks": []}))  # none of its own yet
        return True

    async def _orphaned(self, client: LocalClient) -> None:
        """The client went away: its running tasks have nobody to report to, so they stop."""
        for task_id in list(client.tasks):
            if self.host.tasks.is_running(task_id):
                log.info("stopping task %s: %s went away", task_id, client.name)
                with contextlib.suppress(Exception):
                    await self.host.tasks.stop(task_id, self.host.tasks.stopped_by(
                        task_id, "mcp.stopped_client_gone", client.name))

    async def _answer(self, client: LocalClient, frame: dict[str, Any]) -> None:
        request_id, kind = request_id_of(frame), frame.get("type")
        try:
            if kind not in LOCAL_TYPES:
                from .messages import shown_name

                raise RequestFailed(f"{shown_name(kind)} is not for local clients (they may send: "
                                    f"{', '.join(LOCAL_TYPES)})",
                                    "bad_request")
            if kind in ASKED_AS:
                frame = _asking_as(client, frame)
            if kind in HOST_ROUTED:
                reply = await self._host_reply(client, frame)
            else:
                reply = reply_ok(request_id, await self._local(client, frame))
        except RequestFailed as exc:
            reply = reply_error(request_id, str(exc), exc.code)
        except asyncio.CancelledError:
            if str(request_id) in client.withdrawn:  # the client took it back: said to it, if it still listens
                client.withdrawn.discard(str(request_id))
                if not self._closing:  # else the host goes: the connection closing says so (the client: "went away")
                    client.send(reply_error(request_id, f"{kind} was cancelled by its sender", "cancelled"))
                return
            client.send(reply_error(request_id, "the host is shutting down", "shutting_down"))
            raise
        except Exception as exc:
            log.exception("local %s failed", kind)
            reply = reply_error(request_id, f"{kind} failed: {exc}", "internal")
        finally:
            client.in_flight -= 1
        client.send(reply)

    async def _host_reply(self, client: LocalClient, frame: dict[str, Any]) -> dict[str, Any]:
        from .messages import BadRequest, parse_incoming

        if frame.get("type") == "task.start":  # whatever the frame says: see _admit
            frame = {**frame, "source": LOCAL_SOURCE, "client": None, "origin": None}
        try:
            request = parse_incoming(frame)
        except BadRequest as exc:
            return reply_error(exc.request_id, exc.text(self.host.tasks.ui_language), "bad_request")
        if request.type == "task.start":
            try:
                request = request.model_copy(update={"client": _admit(client, request)})
            except Refused as exc:
                await self.host.tasks.record_not_run(request.task, status="refused", why=exc.for_the_person,
                                                     source=LOCAL_SOURCE, requester=client.name, url=request.url)
                raise
        elif request.type == "task.stop" and request.task_id not in client.started:
            raise RequestFailed(f"{'that task' if request.task_id is None else f'task {request.task_id}'} was not "
                                "started on this connection; a local program may stop only its own tasks, by their "
                                "taskId (the person stops any in the tabpilot popup)", "not_allowed")
        elif request.type in ("task.get", "history.get") and not _always_allowed(client):
            request = _own_task_only(client, request)
        if request.type == "task.stop":
            request = request.model_copy(update={"client": client.name})
        reply = await self.host.respond(request)
        if request.type in ("task.get", "task.list") and reply.get("ok") and not _always_allowed(client):
            reply = {**reply, "data": _own_snapshots(client, reply["data"])}
        if request.type == "task.start" and reply.get("ok"):
            task_id = str(reply["data"]["taskId"])
            client.tasks.add(task_id)  # before the reply is out: its pushes follow it
            client.started.add(task_id)
            client.worked_tabs.add(request.tab_id)
        return reply

    async def _local(self, client: LocalClient, frame: dict[str, Any]) -> Any:
        kind = frame["type"]
        fields = {k: v for k, v in frame.items() if k not in ("type", "id")}
        if kind in RELAYED:
            return await self._relay(client, kind, fields)
        if kind == "page.read":
            return await self._read_page(client, frame.get("tabId"))
        if kind == "cancel":
            return {"cancelled": self._withdraw(client, frame.get("requestId"))}
        if kind == "approval.ask":
            requester = display_name(frame.get("requester"), client.name)
            task = frame.get("task")
            if not isinstance(task, str) or not task:
                raise RequestFailed("approval.ask needs the task's text", "bad_request")
            place = await self._place(client, frame)
            asked_at = time.time()
            try:
                verdict = await self.consent.ask(requester, task, place, timeout=frame.get("timeout"),
                                                 program=client.program)
            except asyncio.CancelledError:  # taken back (or its client went away): not run, as the person is told
                if str(request_id_of(frame)) in client.withdrawn:
                    why = HOST_STOPPED if self._closing else WITHDRAWN
                    await asyncio.shield(self.host.tasks.record_not_run(  # recorded even if cancelled again
                        task, status="withdrawn", why=why, source=LOCAL_SOURCE, requester=requester,
                        asked_at=asked_at, url=place.url))
                raise
            except Withdrawn as exc:  # the host is going away under the question: nobody said no
                await self.host.tasks.record_not_run(task, status="withdrawn", why=str(exc), source=LOCAL_SOURCE,
                                                     requester=requester, asked_at=asked_at, url=place.url)
                raise
            if verdict.decision == "deny":
                await self.host.tasks.record_not_run(task, status="denied", why=verdict.message, source=LOCAL_SOURCE,
                                                     requester=requester, asked_at=asked_at, url=place.url)
            if verdict.decision != "deny":
                client.consented = [*client.consented, Consent(task, requester, place)][-KEEP_CONSENTS:]
            if verdict.decision == "always":
                client.always_for.add(requester)
            answer: dict[str, Any] = {"decision": verdict.decision, "message": verdict.message}
            if verdict.decision != "deny" and place.tab_id is not None:
                answer["tabId"] = place.tab_id  # the tab it may start this task in (the active one, if unnamed)
            return answer
        raise RequestFailed(f"unknown request {kind!r}", "bad_request")  # not reached: LOCAL_TYPES

    async def _place(self, client: LocalClient, frame: dict[str, Any]) -> Place:
        """Where the task asked about will work, as the person is shown it: `newTab` true, a tab the client opens
        for it; else the tab `tabId` names, or the one the person is looking at (its id is in the answer)."""
        url, tab_id = frame.get("url"), frame.get("tabId")
        if url is not None and (not isinstance(url, str) or not url.strip()):
            raise RequestFailed("approval.ask: url must be the address the task opens first", "bad_request")
        if frame.get("newTab") is not None and not isinstance(frame["newTab"], bool):  # "true", 1: no yes or no
            raise RequestFailed("approval.ask: newTab must be true or false (true: a tab you open for the task)",
                                "bad_request")
        if frame.get("newTab") is True:
            return Place(new_tab=True, url=url)
        if tab_id is not None and (not isinstance(tab_id, int) or isinstance(tab_id, bool)):
            raise RequestFailed("approval.ask: tabId must be a whole number; leave it out for the tab the person "
                                "is looking at, or send newTab true to work in a tab you open", "bad_request")
        if tab_id is None:
            tab_id = await self._active_tab()
        return Place(tab_id=tab_id, url=url)

    async def _active_tab(self) -> int:
        from .messages import TabsQuery

        tabs = (await self._ask_extension(TabsQuery())).tabs
        active = [t.tab_id for t in tabs if t.active and not t.url.startswith(("chrome-extension://", "devtools://"))]
        if not active:
            raise RequestFailed("no tab is active to work in; ask with newTab true and open a tab for the task "
                                "(tabs.create)", "tab")
        return active[0]

    async def _relay(self, client: LocalClient, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
        """A tabs.* request of a local client, answered by the extension."""
        from pydantic import ValidationError

        from .messages import (
            TabsClose,
            TabsCreate,
            TabsCreateData,
            TabsQuery,
            TabsQueryData,
            WireModel,
            describe_errors,
        )

        models: dict[str, type[HostRequest[Any]]] = {
            "tabs.query": TabsQuery, "tabs.create": TabsCreate, "tabs.close": TabsClose,
        }
        try:
            request = models[kind].model_validate(fields, strict=True)  # a tab id of another type is no tab id
        except ValidationError as exc:
            raise RequestFailed(f"invalid {kind}: {describe_errors(exc)}", "bad_request") from exc
        if isinstance(request, TabsCreate) and request.url and not _web_page(request.url):
            raise RequestFailed(f"tabs.create opens web pages only (http:// or https://, or about:blank), not "
                                f"{request.url[:80]!r}", "not_allowed")
        if isinstance(request, TabsClose) and request.tab_id not in client.opened_tabs:
            raise RequestFailed(f"tab {request.tab_id} was not opened on this connection; a local program may close "
                                "only the tabs it opened", "not_allowed")
        behind = isinstance(request, TabsCreate) and bool(self.host.approvals.pending())
        if isinstance(request, TabsCreate):
            # A question still waiting for the person keeps their eyes on it: a tab that came forward would close the
            # toolbar popup showing it (a new user's trial: Allow once on one MCP client's request opened its task's
            # tab in front, and the second client's request went out of sight until it was denied two minutes
            # later). The tab opens behind; the last one allowed, with nothing left to answer, comes forward, and if
            # the last answer was a no, the newest tab opened behind does (`_question_closed`). The host's to decide,
            # never the client's: one that asked for its tab behind had it out of the person's sight.
            request.active = False if behind else None
        reply: WireModel = await self._ask_extension(request)
        if isinstance(reply, TabsCreateData):
            client.opened_tabs.add(reply.tab.tab_id)
            if behind:
                self._behind.append(reply.tab.tab_id)
                if not self.host.approvals.pending():  # the last question closed while this tab was opening
                    self._question_closed(self._last_answer)
        if isinstance(reply, TabsQueryData) and not _always_allowed(client):
            own = [tab for tab in reply.tabs if tab.tab_id in client.own_tabs]
            hidden = sum(1 for tab in reply.tabs if tab.tab_id not in client.own_tabs and _web_page(tab.url))
            return {**reply.model_copy(update={"tabs": own}).to_frame(), "othersHidden": hidden}
        return reply.to_frame()

    def _question_closed(self, decision: Decision) -> None:
        """With no question left waiting, the tabs opened behind for one's sake are let go. After a yes, its task's
        tab comes forward (or it works in the tab in front); after a no (or no answer) nothing would, and a task
        allowed earlier would run out of sight: the newest tab opened behind comes forward."""
        self._last_answer = decision
        if self.host.approvals.pending() or not self._behind:
            return
        behind, self._behind = self._behind[-1], []
        if decision != "deny" or self._closing:
            return

        async def bring_forward() -> None:
            from .messages import TabsActivate

            try:
                await self._ask_extension(TabsActivate(tab_id=behind))
            except Exception as exc:  # closed meanwhile, or the extension went away: nothing to show
                log.debug("could not bring tab %s forward: %s", behind, exc)

        forward = asyncio.get_running_loop().create_task(bring_forward())
        self._handlers.add(forward)
        forward.add_done_callback(self._handlers.discard)

    async def _ask_extension(self, request: HostRequest[ReplyData]) -> ReplyData:
        from .peer import ExtensionError, LinkClosed

        try:
            return await self.host.peer.request(request, timeout=PAGE_READ_TIMEOUT)
        except ExtensionError as exc:
            raise RequestFailed(exc.error_message, "tab") from exc
        except (LinkClosed, TimeoutError) as exc:
            raise RequestFailed(f"the extension did not answer {request.type}: {exc}", "link") from exc

    async def _read_page(self, client: LocalClient, tab_id: Any) -> dict[str, Any]:
        """The tab as the model sees it. A tab a task works in is not read here: detaching afterwards
        would pull the debugger from under that task (its own steps show what it sees). Any other tab of the
        person's (their mail, their bank) is read only for a client they always allow: a tab the client opened
        or its tasks worked in is its own."""
        from ..browser.errors import BrowserError
        from ..browser.state import get_state
        from .relay import extension_browser

        if tab_id is not None and (not isinstance(tab_id, int) or isinstance(tab_id, bool)):
            raise RequestFailed("page.read: tabId must be a whole number (list_tabs shows them)", "bad_request")
        if tab_id is None:  # the tab the user is looking at (the relay cannot tell focus; tabs.query can)
            tab_id = await self._active_tab()
        if tab_id not in client.own_tabs and not _always_allowed(client):
            raise RequestFailed(f"tab {tab_id} is the person's own: a local program reads only the tabs it opened "
                                "or ran a task in, unless the person always allows it (Always allow for this "
                                "client, in the tabpilot popup when it asks about a task)", "not_allowed")
        browser = await extension_browser(self.host.peer)
        try:
            tab = await browser.activate(str(tab_id), focus=False)
            working = {snap["tabId"]: snap["taskId"] for snap in self.host.tasks.running()}
            if int(tab.target_id) in working:
                raise RequestFailed(f"task {working[int(tab.target_id)]} is working in tab {tab.target_id}; "
                                    "get_task shows what it sees", "busy")
            state = await asyncio.wait_for(get_state(browser, tab), PAGE_READ_TIMEOUT)
            return {"tabId": int(tab.target_id), "url": state.url, "title": state.title, "text": state.text}
        except BrowserError as exc:
            raise RequestFailed(str(exc), "tab") from exc
        finally:
            await browser.close()

    # --- pushes ---------------------------------------------------------------------------------
    def _on_host_push(self, message: dict[str, Any]) -> None:
        if message.get("type") not in TASK_PUSHES:
            return
        task_id = message.get("taskId")
        # what a slow page gives late completes a takeover after the task's result too (Stop on a busy page)
        late = message.get("type") == "task.amended"
        for client in list(self.clients):
            if task_id in client.tasks or (late and task_id in client.started):
                client.send(message)
                if message.get("type") == "task.result":
                    client.tasks.discard(str(task_id))


def _forget_waiting(client: LocalClient, key: str, _handler: object) -> None:
    client.waiting.pop(key, None)


class Refused(RequestFailed):
    """A local task.start the host refuses (code `not_allowed`): the message is for the program that sent it,
    `for_the_person` what the record says."""

    def __init__(self, message: str, for_the_person: str) -> None:
        super().__init__(message, "not_allowed")
        self.for_the_person = for_the_person


def _admit(client: LocalClient, request: TaskStart) -> str:
    """A local client's task.start runs only a task the person allowed on this connection, once per yes,
    and never over all the user's tabs (nobody was asked about those). Returns who asked for it, as the person
    was told (the record names the task's requester so)."""
    allowed = next((yes for yes in client.consented if yes.fits(request, client.opened_tabs)), None)
    if allowed is None:
        if any(yes.task == request.task for yes in client.consented):
            raise Refused(NOT_IN_THAT_TAB, "it tried to run it in another tab or page than the one you were asked "
                                           "about")
        raise Refused(NOT_CONSENTED, "it tried to start it without asking you first")
    if request.config is not None and request.config.experimental_include_all_tabs:
        raise Refused("a local program's task works in its own tab and the tabs it opens, never in all the "
                      "user's tabs (experimentalIncludeAllTabs)", "it asked to see all your tabs, which a local "
                                                                  "program never may")
    client.consented.remove(allowed)
    return allowed.requester


ASKED_AS = ("tabs.query", "page.read", "task.get", "task.list", "history.get")  # reads that take `requester`


def _asking_as(client: LocalClient, frame: dict[str, Any]) -> dict[str, Any]:
    """A read sent as `requester` (tabpilot mcp names the MCP client that calls it): a client the person always
    allows sees as such from its first read, as approval.ask would have answered it `always` without asking."""
    from ..store.sites import SiteError, client_allowed

    name = display_name(frame.get("requester"), "")
    try:
        if name and client_allowed(name, client.program):
            client.always_for.add(name)
    except SiteError:
        pass
    return {key: value for key, value in frame.items() if key != "requester"}


ONLY_ITS_OWN = ("a local program sees only the tasks it started on this connection (their taskId is in task.start's "
                "reply) and the tabs it opened or ran a task in; the person sees every task in the tabpilot popup, "
                "and may always allow this client (Always allow, when it asks about a task) to let it see theirs too")


def _own_task_only(client: LocalClient, request: Any) -> Any:
    """A task.get or history.get of a client not always allowed, narrowed to its own tasks: a taskId (or an
    unambiguous prefix of one, as history.get takes) of a task this connection started, else refused."""
    task_id = request.task_id
    if task_id is None:  # task.get of a tab, or the latest: whatever it finds is checked after (_own_snapshots)
        if request.type == "task.get" and request.tab_id is not None and request.tab_id not in client.own_tabs:
            raise RequestFailed(f"tab {request.tab_id} is not one of this connection's: {ONLY_ITS_OWN}", "not_allowed")
        return request
    own = [started for started in client.started if started.startswith(str(task_id).strip().lower())]
    if len(own) != 1 or not task_id.strip():
        raise RequestFailed(f"task {task_id} was not started on this connection: {ONLY_ITS_OWN}", "not_allowed")
    return request.model_copy(update={"task_id": own[0]})


def _own_snapshots(client: LocalClient, data: dict[str, Any]) -> dict[str, Any]:
    """task.get's and task.list's answer with only the tasks this connection started."""
    if "tasks" in data:
        return {**data, "tasks": [snap for snap in data["tasks"] if snap.get("taskId") in client.started]}
    snap = data.get("task")
    return {**data, "task": snap if snap is None or snap.get("taskId") in client.started else None}


def _always_allowed(client: LocalClient) -> bool:
    """Whether the person still always allows this connection's client (read afresh: a revoke counts at once)."""
    from ..store.sites import SiteError, client_allowed

    try:
        return any(client_allowed(name, client.program) for name in client.always_for)
    except SiteError:
        return False


def program_of(pid: int | None) -> str | None:
    """The program that started process `pid` (its parent's executable; for `tabpilot mcp`, the MCP client that
    runs it), which the person's "always" is kept for; None where the system does not tell (not Linux). Any
    process of the user can still start such a program with its own script (an Electron app as node, say): this
    keeps a name from being claimed by just any program, not the user's other programs out."""
    if pid is None or not os.path.isdir("/proc"):
        return None
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as stat:
            parent = int(stat.read().rsplit(")", 1)[1].split()[1])  # after the name, which may hold spaces
        return os.readlink(f"/proc/{parent if parent > 1 else pid}/exe")
    except (OSError, ValueError, IndexError):
        return None


def _peer(writer: asyncio.StreamWriter) -> tuple[int, int] | None:
    """The process on the other end of a Unix socket and its user (SO_PEERCRED: pid, uid), where the system says."""
    import socket
    import struct

    sock = writer.get_extra_info("socket")
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return None
    try:
        pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                            struct.calcsize("3i")))
    except OSError:
        return None
    return int(pid), int(uid)


def _peer_pid(writer: asyncio.StreamWriter) -> int | None:
    peer = _peer(writer)
    return None if peer is None else peer[0]


def _same_user(writer: asyncio.StreamWriter) -> bool:
    """Linux tells who is on the other end (SO_PEERCRED): only this user's processes, as the 0700 folder
    already ensures; elsewhere the folder and the token do it alone."""
    peer = _peer(writer)
    return peer is None or peer[1] == os.getuid()


async def _serve_pipe(name: str, serve: Any) -> asyncio.AbstractServer:  # pragma: no cover - Windows
    """A Windows named pipe with the same stream handler as the Unix socket. Written for the
    ProactorEventLoop (Windows' default) and not yet run on Windows: untested. A named pipe's default
    security lets other users open it for reading; the token is what keeps them out."""
    loop = asyncio.get_running_loop()

    def protocol() -> asyncio.StreamReaderProtocol:
        reader = asyncio.StreamReader(limit=1 << 20)
        return asyncio.StreamReaderProtocol(reader, serve)

    servers = await loop.start_serving_pipe(protocol, name)  # type: ignore[attr-defined]

    class PipeServer:
        def close(self) -> None:
            for server in servers:
                server.close()

    return PipeServer()  # type: ignore[return-value]


def _web_page(url: str) -> bool:
    """A URL a local program may open a tab on: a web page, or a blank one (never a file of this computer, the
    browser's own pages or a script), as for the model's own navigations (browser/actions.py)."""
    from urllib.parse import urlsplit

    return url == "about:blank" or urlsplit(url.strip()).scheme.lower() in ("http", "https")
