"""`tabpilot mcp --launch` and `--fallback launch`: the server starts a Chromium of its own, with no extension at
all, for a user whose browser is not open (or not to be used). Its own module: none of it needs the browser with the
extension that test_mcp.py's tests share, and on its own it runs beside that module (the suite's workers take whole
modules), not after it."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from e2e_support import API_KEY, agent_output, done, wait_until
from test_mcp import McpClient, for_task, mcp_client, sign_up, task_id_in

from tabpilot.llm.scripted import Delay, ScriptedLLMServer, ToolCall
from tabpilot.localfiles import LocalFiles
from tabpilot.mcp.backends import FALLING_BACK

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


class NoBrowserHome:
    """A user whose browser is not open (no host, no socket), with a model set up."""

    def __init__(self, base: Path) -> None:
        self.home = base / "home"
        self.tabpilot_home = base / "tabpilot-home"
        self.home.mkdir()

    def configure(self, llm: ScriptedLLMServer) -> None:
        """Only the model, as a new user sets it up: what a test before set is gone. Written as `tabpilot config set`
        writes it, in this process (tests/test_config.py runs the command itself): three Python starts per test took
        seconds of a loaded CI run."""
        from tabpilot.store.settings import Settings, save_settings

        save_settings(Settings(baseURL=llm.base_url, model="scripted", apiKey=API_KEY), self.config_file)

    def set(self, key: str, value: str) -> None:
        from tabpilot.store.settings import update_settings

        update_settings({key: value}, self.config_file)

    @property
    def config_file(self) -> Path:
        return self.tabpilot_home / "config" / "config.json"


@contextlib.asynccontextmanager
async def in_a_task_of_its_own(manager: contextlib.AbstractAsyncContextManager[Any]) -> AsyncIterator[Any]:
    """`manager` entered and left in one task of its own: the MCP SDK's stdio client is an anyio task group, which
    must be left in the task that entered it, and a module fixture's set-up and teardown run in different tasks."""
    entered: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    leave = asyncio.Event()

    async def hold() -> None:
        async with manager as value:
            entered.set_result(value)
            await leave.wait()

    holder = asyncio.ensure_future(hold())
    await asyncio.wait({holder, entered}, return_when=asyncio.FIRST_COMPLETED)
    if not entered.done():
        await holder  # it failed to start: its error
    try:
        yield entered.result()
    finally:
        leave.set()
        await holder


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def launched(browser_binary: str, tmp_path_factory: pytest.TempPathFactory
                   ) -> AsyncIterator[tuple[NoBrowserHome, McpClient]]:
    """One `tabpilot mcp --launch --headless` for the tests of a browser of its own that are not about starting it
    (its start and its Chromium's took seconds a test); each test sets its own model up before its first call."""
    home = NoBrowserHome(tmp_path_factory.mktemp("launched"))
    async with in_a_task_of_its_own(mcp_client(home, "--launch", "--headless", "--browser", browser_binary)) as client:
        yield home, client


@pytest.fixture
def launched_client(launched: tuple[NoBrowserHome, McpClient], llm: ScriptedLLMServer
                    ) -> tuple[NoBrowserHome, McpClient]:
    home, client = launched
    home.configure(llm)
    client.progress.clear()
    return home, client


async def test_launch_headless_runs_the_same_task_without_the_extension(
    launched_client: tuple[NoBrowserHome, McpClient], llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    home, client = launched_client
    problems: list[str] = []
    llm.add(*sign_up(problems, "Ada Lovelace"))
    url = e2e_pages.url("form.html?launched")
    is_error, result = await client.call("run_task", task="Sign up as Ada Lovelace", url=url)
    assert not is_error, result
    assert not problems, problems
    assert (result["success"], result["data"], result["steps"]) == (True, "Signed up as Ada Lovelace", 4)
    assert len(client.progress) == 5 and task_id_in(client.progress[0][1]) == result["taskId"]
    assert (client.progress[1][1] or "").startswith("step 1 · Type the name")
    is_error, task = await client.call("get_task", task_id=result["taskId"])
    assert not is_error and task["status"] == "completed"
    is_error, late = await client.call("stop_task", taskId=result["taskId"])
    assert not is_error and (late["stopped"], late["status"]) == (False, "completed"), late
    typed = next(e for e in task["history"] if e.get("type") == "step")["action"]
    assert typed["name"] == "input_text" and typed["input"]["text"] == "Ada Lovelace"
    # the page's own record, read back through the server's read_page (the task's tab is closed when
    # headless, so a second run leaves the form filled in a tab kept open: new_tab false on the first tab)
    llm.add(*sign_up(problems, "Grace Hopper"))
    is_error, again = await client.call("run_task", task="Sign up as Grace Hopper", url=url, new_tab=False)
    assert not is_error and again["success"], again
    is_error, page = await client.call("read_page")
    assert not is_error and "Signed up as Grace Hopper." in page["text"], page
    # a tabId list_tabs gives here is a string (a DevTools target id): read_page takes it as it was given
    is_error, listed = await client.call("list_tabs")
    tab_id = next(t["tabId"] for t in listed["tabs"] if t["url"] == url)
    # as in the user's browser, one tab is marked active: the one read_page reads when given none
    assert [t["tabId"] for t in listed["tabs"] if t["active"]] == [page["tabId"]], (listed, page["tabId"])
    is_error, same = await client.call("read_page", tab=tab_id)
    assert not is_error and isinstance(tab_id, str) and same["tabId"] == tab_id, same
    assert "Signed up as Grace Hopper." in same["text"]
    # the domains the person set keep a task from the page it would open first, and from the tab it would
    # work in (new_tab false: the form on 127.0.0.1), before anything is asked of the model
    home.set("blocked-domains", "127.0.0.1")
    asked = len(llm.requests)
    for task in ({"url": url}, {"new_tab": False}):
        is_error, refused = await client.call("run_task", task="Sign up as Ada Lovelace", **task)
        assert is_error and "127.0.0.1 is on the blocked domains list" in str(refused), refused
    assert len(llm.requests) == asked


async def test_launched_tasks_at_once_never_list_each_others_tab(
    launched_client: tuple[NoBrowserHome, McpClient], llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """Several run_task calls of one `tabpilot mcp --launch` share its browser, and each task sees every tab in it:
    one task saw (and could switch into) the tab another running task worked in."""
    _, client = launched_client
    held_url, roaming_url = e2e_pages.url("form.html?held"), e2e_pages.url("form.html?roaming")
    seen: list[str] = []

    def look(body: dict[str, Any]) -> Any:
        last = [m for m in body["messages"] if m.get("role") == "user"][-1]
        seen.append(next((line for line in str(last["content"]).splitlines() if line.startswith("Other tabs:")), ""))
        return done("Looked")

    llm.add(*[for_task({"Hold the form": [Delay(60)], "Look at the tabs": [look]})] * 2)
    holding = asyncio.ensure_future(client.call("run_task", task="Hold the form", url=held_url))
    await wait_until(lambda: asyncio.sleep(0, len(llm.requests) == 1 and client.progress),
                     "the holding task asking its model")
    held_id = task_id_in(client.progress[0][1])
    is_error, result = await client.call("run_task", task="Look at the tabs", url=roaming_url)
    assert not is_error and result["success"], result
    assert seen and held_url not in seen[0], seen  # the other task's tab is not one of this task's
    assert (await client.call("stop_task", taskId=held_id))[0] is False
    is_error, stopped = await holding
    assert is_error or stopped["success"] is False, stopped


async def test_launch_offers_the_model_no_question_nobody_could_answer(
    launched_client: tuple[NoBrowserHome, McpClient], llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """With --launch there is no popup and no terminal (standard input is the MCP protocol): nobody can answer the
    agent's ask_user or hand back controls it hands over. Found by a new user: a model that asked a question left
    run_task waiting for good, with no progress at all. The tools are not offered; a model that calls one anyway
    is told it is not available and goes on, twice over."""
    _, client = launched_client
    for name in ("Ada", "Grace"):
        llm.add(ToolCall("AgentOutput", agent_output("Ask which name", {"ask_user": {"question": "Which name?"}})),
                ToolCall("AgentOutput", agent_output("Hand the controls over", {"request_takeover": {
                    "reason": "log in"}})),
                done(f"Went on without asking {name}"))
    for name in ("Ada", "Grace"):
        is_error, result = await asyncio.wait_for(
            client.call("run_task", task=f"Sign up as {name}", url=e2e_pages.url(f"form.html?ask={name}")), 60)
        assert not is_error and (result["success"], result["data"]) == (True, f"Went on without asking {name}")
    offered = json.dumps(llm.requests[0]["tools"])
    assert "ask_user" not in offered and "request_takeover" not in offered, offered
    told = json.dumps(llm.requests[1]["messages"])
    assert "unknown action 'ask_user'" in told, told[-2000:]


async def test_fallback_launch_runs_in_a_browser_of_its_own_when_the_users_is_not_open(
    browser_binary: str, tmp_path: Path, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """The user chose `--fallback launch`: with their browser closed, run_task does not fail but runs in a
    Chromium the server launches (headless here, as on a server), saying so first; and again on the next call.
    Without the choice the same call fails saying how to start the browser or to pass the flag."""
    home = NoBrowserHome(tmp_path)
    home.configure(llm)
    async with mcp_client(home, "--approve-timeout", "5") as client:
        is_error, text = await client.call("run_task", task="Sign up as Ada", url=e2e_pages.url("form.html?nofb"))
        assert is_error and "Open Chrome/Chromium" in text and "--fallback launch" in text, text
    assert llm.requests == []

    problems: list[str] = []
    llm.add(*sign_up(problems, "Ada Lovelace"), *sign_up(problems, "Grace Hopper"))
    url = e2e_pages.url("form.html?fallback")
    async with mcp_client(home, "--fallback", "launch", "--headless", "--browser", browser_binary) as client:
        is_error, result = await client.call("run_task", task="Sign up as Ada Lovelace", url=url)
        assert not is_error, result
        assert (result["success"], result["data"], result["steps"]) == (True, "Signed up as Ada Lovelace", 4)
        assert client.progress[0][1] == FALLING_BACK
        assert task_id_in(client.progress[1][1]) == result["taskId"]
        assert (client.progress[2][1] or "").startswith("step 1 · Type the name")
        is_error, task = await client.call("get_task", task_id=result["taskId"])
        assert not is_error and task["status"] == "completed", task
        is_error, again = await client.call("run_task", task="Sign up as Grace Hopper", url=url, new_tab=False)
        assert not is_error and again["success"], again
        is_error, page = await client.call("read_page")  # the launched browser's page, its own record
        assert not is_error and "Signed up as Grace Hopper." in page["text"], page
    assert not problems, problems
