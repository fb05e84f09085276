"""The MCP tools, on the official SDK's `MCPServer`, served over stdio.

`run_task` sends a progress notification with the task's id once the task exists, then one per step (and
per takeover or pause) through the request context, and returns when the task has ended; a client
cancelling the call stops the task. Failures are `ToolError`s whose text says what to do (the SDK hides
any other exception's text from the client)."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable
from typing import Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from .. import __version__
from ..textsafety import quoted
from .backends import Backend, TaskFailed

log = logging.getLogger(__name__)
T = TypeVar("T")

INSTRUCTIONS = (
    "tabpilot runs whole tasks in a web browser with its own AI agent: give run_task a task in plain words "
    "(and a url to start from); it works step by step, reporting each step as progress, and returns the "
    "result. By default tasks run in the user's own browser, where the person can watch, take over or stop."
)


# A wrong call is told the arguments the tool takes (the SDK's own text is pydantic's), read from the tool's
# signature: each with its type in words, or what a type cannot say, and whether it is required.
SCHEMA_WORDS = {"string": "text", "boolean": "true/false"}
ARGUMENT_WORDS = {
    "taskId": "text: the taskId run_task reported or returned; task_id works too",
    "tab": "the tabId list_tabs gave, as it gave it",
}
UNTOLD_ARGUMENTS = {"task_id"}  # the name get_task and stop_task first took taskId by: still taken, not told
TYPE_WORDS = {"string": "text", "bool": "true or false", "int": "a whole number"}  # pydantic's error type → words


class TabpilotServer(MCPServer):
    """The SDK's server, but a call with arguments that do not fit is told in words which ones the tool takes."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                schemas = {tool.name: tool.input_schema for tool in await self.list_tools()}
                said = arguments_error(name, exc.__cause__, schemas.get(name))
                raise ToolError(f"Error executing tool {name}: {said}") from exc
            raise


def arguments_taken(schema: dict[str, Any]) -> str:
    """A tool's arguments as its input schema has them, in words: "task (text, required), url (text)"."""
    told = []
    for name, field in schema.get("properties", {}).items():
        if name in UNTOLD_ARGUMENTS:
            continue
        types = [kind.get("type") for kind in field.get("anyOf", [field]) if kind.get("type") != "null"]
        words = ARGUMENT_WORDS.get(name) or " or ".join(SCHEMA_WORDS.get(kind, str(kind)) for kind in types)
        told.append(f"{name} ({words}{', required' if name in schema.get('required', ()) else ''})")
    return ", ".join(told) or "none"


def arguments_error(tool: str, error: ValidationError, schema: dict[str, Any] | None) -> str:
    problems = []
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or "the arguments"
        if item["type"] == "missing":
            problems.append(f"{field} is missing")
        else:
            wanted = next((words for kind, words in TYPE_WORDS.items() if item["type"].startswith(kind)), None)
            problems.append(f"{field} must be {wanted}" if wanted else f"{field} is not valid")
    takes = arguments_taken(schema) if schema is not None else "see its description"
    return f"{'; '.join(problems)}. {tool} takes: {takes}."


def build_server(backend: Backend) -> MCPServer:
    app = TabpilotServer("tabpilot", instructions=INSTRUCTIONS, version=__version__)

    @app.tool()
    async def run_task(task: str, ctx: Context, url: str | None = None, new_tab: bool = True) -> dict[str, Any]:
        """Run a whole browser task to its end, e.g. "find the order status for #1234 on this site".

        url: open this page first. new_tab: work in a new tab (default); false uses the active tab.
        The first progress notification once the task has started says its id ("taskId <id> · started in
        tab …"): get_task and stop_task take it while this call still runs. The others report each step.
        When the person took over the tab and their page was busy as the task ended (they pressed Stop, or the agent
        finished right after they handed back), this call waits up to 12 s more for the page to give their last
        actions, said as a progress line "updated: the person took over the tab …".
        Returns {success, data, taskId, steps, note?}: note says when the page had not given them by then (what the
        person did last may be missing from the history; get_task shows the record)."""
        if not task.strip():
            raise ToolError("run_task needs a task: say in words what to do in the browser, e.g. "
                            '"find the order status for #1234 on this site".')
        from ..taskrun.plan import MAX_TASK_CHARS, task_too_long

        if len(task) > MAX_TASK_CHARS:  # before the person is asked or a browser started
            raise ToolError(f"run_task: {task_too_long(task)}")
        url = (url or "").strip() or None  # a blank url is none: the task starts on a blank tab
        counter = itertools.count(1)

        async def report(message: str) -> None:
            try:
                await ctx.report_progress(next(counter), None, message)
            except Exception:  # a client gone deaf must not end the task
                log.debug("progress notification failed", exc_info=True)

        try:
            return await backend.run_task(task, url, new_tab, _requester(ctx), report)
        except TaskFailed as exc:
            raise ToolError(str(exc)) from exc

    # taskId, as run_task returns it; task_id as this server first named it (clients written for that still work)
    @app.tool()
    async def get_task(ctx: Context, taskId: str | None = None, task_id: str | None = None) -> dict[str, Any]:
        """A task's status and its history (page-agent's event shapes: step, observation, user_takeover,
        retry, error); a user_takeover as the page completed it, when it gave the person's last actions late.
        taskId: the taskId run_task reported or returned (task_id is accepted too)."""
        return await _call(backend.get_task(_task_id("get_task", taskId, task_id), requester=_requester(ctx)))

    @app.tool()
    async def stop_task(taskId: str | None = None, task_id: str | None = None) -> dict[str, Any]:
        """Stop a running task; returns once it has ended: {taskId, stopped, status}. stopped is false (with a
        message) when the task had ended already, and status says how. taskId: the taskId run_task reported in
        its first progress notification or returned (task_id is accepted too)."""
        return await _call(backend.stop_task(_task_id("stop_task", taskId, task_id)))

    @app.tool()
    async def list_tabs(ctx: Context) -> dict[str, Any]:
        """The browser's tabs you may see: {tabs: [{tabId, url, title, active}], note?}; note says how many of the
        person's other tabs are not shown, and why. active marks the one read_page reads by default. tabId is an
        integer in your own browser and a string (a DevTools target id) in a browser the server launched (--launch)
        or attached to (--cdp-url): pass it to read_page as it is."""
        listed = await _call(backend.list_tabs(requester=_requester(ctx)))
        hidden = listed.pop("hidden", 0)
        if hidden:  # an empty list read as "no tabs open" (found by a new user): say what is not shown, and why
            tabs = f"{hidden} more tabs of the person's are" if hidden != 1 else "1 more tab of the person's is"
            listed["note"] = (f"{tabs} not shown: a client sees the tabs it opened or ran a task in, and all of them "
                              "only once the person always allows it (Always allow for this client, in the tabpilot "
                              "popup when it asks about a task). run_task opens a tab of its own (new_tab, the "
                              "default).")
        return listed

    @app.tool()
    async def read_page(ctx: Context, tab: int | str | None = None) -> dict[str, Any]:
        """Read a tab (default: the active one) as tabpilot's agent sees it: text with numbered
        interactive elements. Read only: nothing on the page is touched. tab: a tabId from list_tabs, as it
        gave it (an integer, or a string with --launch / --cdp-url)."""
        return _concealed(await _call(backend.read_page(tab, requester=_requester(ctx))))

    return app


def _task_id(tool: str, camel: str | None, snake: str | None) -> str:
    if camel and snake and camel != snake:
        raise ToolError(f"{tool} got two different task ids (taskId {quoted(camel)!r}, task_id {quoted(snake)!r}); "
                        "give one.")
    given = camel or snake
    if not given:
        raise ToolError(f"{tool} needs taskId: the taskId run_task reported or returned (task_id works too).")
    return given


def _concealed(page: dict[str, Any]) -> dict[str, Any]:
    """The page as tabpilot's own model would get it: no secret value, personal data masked as set."""
    from ..privacy.guard import guard_for
    from ..privacy.masking import PatternTooSlow
    from ..privacy.secrets import SecretError
    from ..store.settings import SettingsError, load_settings

    try:
        guard = guard_for(load_settings())
        return {**page, "text": guard.conceal(str(page.get("text", "")), page.get("url"))}
    except (SettingsError, SecretError, PatternTooSlow) as exc:
        raise ToolError(f"read_page: {exc}") from exc


async def _call(work: Awaitable[T]) -> T:
    try:
        return await work
    except TaskFailed as exc:
        raise ToolError(str(exc)) from exc


def _requester(ctx: Context) -> str:
    """The MCP client's own name (from its initialize request), as the person is asked about it."""
    try:
        info = ctx.session.client_params.client_info
        return str(info.title or info.name)
    except Exception:
        return "an MCP client"
