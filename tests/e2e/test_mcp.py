"""`tabpilot mcp` as an MCP client meets it: the SDK's own `ClientSession` starts the server over stdio;
the server reaches the real host that Chromium spawned for the real extension (its local endpoint under
the harness's TABPILOT_HOME), and tasks run in the browser's tabs. Each page's own script records the
input it received; a progress notification arrives for every step. Two clients at once, consent (a
deny asks no model), a host killed mid-call. `--launch`, with no extension at all: test_mcp_launch.py."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import json
import os
import re
import signal
import sqlite3
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
from e2e_support import (
    API_KEY,
    EXTENSION_ORIGIN,
    POPUP_READY,
    SCREENS,
    Harness,
    PopupPage,
    act_on,
    agent_output,
    done,
    interrupted_said,
    run_in_popup,
    task_row,
    wait_status,
    wait_until,
)
from llm_support import held_pages
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import Implementation
from test_overlay_press import (
    handed_back_page_silent,
    held_until,
    last_letter_on_a_slow_page,
    page_hangs,
    stopped_on_a_slow_page,
    typed_then_page_hangs,
)
from test_takeover import controlled_by_user
from user_support import overlay_button, user_click, wait_overlay

from tabpilot.browser.browser import Browser
from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import Delay, HTTPError, ScriptedLLMServer, ToolCall
from tabpilot.localfiles import LocalFiles

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]
CALL_TIMEOUT = 120.0


# --- an MCP client, as Claude Desktop or Cursor would start the server --------------------------------------------
class McpClient:
    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.progress: list[tuple[float, str | None]] = []

    async def call(self, tool: str, **arguments: Any) -> tuple[bool, Any]:
        """(is_error, the JSON result or the error text)."""
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            self.progress.append((progress, message))

        result = await asyncio.wait_for(
            self.session.call_tool(tool, arguments, progress_callback=on_progress), CALL_TIMEOUT
        )
        text = "\n".join(getattr(part, "text", "") for part in result.content)
        if result.is_error:
            return True, text
        return False, json.loads(text) if text else None


@contextlib.asynccontextmanager
async def mcp_client(home: Any, *options: str, name: str = "e2e-client") -> AsyncIterator[McpClient]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tabpilot", "mcp", *options],
        env={"HOME": str(home.home), "TABPILOT_HOME": str(home.tabpilot_home), "PATH": os.environ["PATH"],
             # the code under test, when it is not the installed copy (a second checkout run with PYTHONPATH)
             **{name: os.environ[name] for name in ("PYTHONPATH",) if name in os.environ}},
    )
    async with stdio_client(params) as (read, write), ClientSession(
        read, write, client_info=Implementation(name=name, version="1.0")
    ) as session:
        await session.initialize()
        yield McpClient(session)


async def ask_host(harness: Harness, message: dict[str, Any]) -> dict[str, Any]:
    """A request to the host over the worker's native port, as the popup sends it."""
    return await harness.sw(
        f"try {{ ({{ok: true, data: await requestHost({json.dumps(message)})}}) }}"
        " catch (e) { ({ok: false, message: e.message, code: e.code}) }",
        timeout=30,
    )


async def configure(harness: Harness, llm: ScriptedLLMServer) -> None:
    reply = await ask_host(harness, {"type": "settings.set", "baseURL": llm.base_url, "model": "scripted",
                                     "apiKey": API_KEY, "maxSteps": 12})
    assert reply["ok"], reply


async def tab_at(browser: Browser, url: str) -> Tab:
    """The tab the task ran in, found by its URL, to read what its page recorded."""
    async def find() -> str | None:
        return next((t.target_id for t in await browser.tabs() if t.url == url), None)

    return await browser.attach(await wait_until(find, f"a tab at {url}"))


def sign_up(problems: list[str], name: str) -> list[Any]:
    return [
        act_on("Full name", "input_text", "Type the name", problems, text=name),
        act_on("Agree to terms", "click_element_by_index", "Tick the terms box", problems),
        act_on("Sign up", "click_element_by_index", "Press Sign up", problems),
        done(f"Signed up as {name}"),
    ]


def for_task(script: dict[str, list[Any]]) -> Any:
    """One scripted reply for concurrent tasks: answered from the script of the task the request is for."""
    def reply(body: dict[str, Any]) -> Any:
        prompt = "\n".join(str(m.get("content")) for m in body["messages"])
        for task, replies in script.items():
            if f"<user_request>\n{task}\n</user_request>" in prompt:
                answer = replies.pop(0)
                return answer(body) if callable(answer) else answer
        raise AssertionError("a request for no known task")

    return reply


def task_id_in(message: str | None) -> str | None:
    """The task's id as run_task's first progress message gives it, read as a client would."""
    found = re.match(r"taskId (\S+) · ", message or "")
    return found.group(1) if found else None


async def page_record(tab: Tab) -> tuple[str, list[dict[str, Any]]]:
    return (await tab.evaluate("document.getElementById('status').textContent"),
            await tab.evaluate("window.received"))


# --- in the user's browser, through the host ---------------------------------------------------------------------
async def test_run_task_in_the_users_browser_with_a_progress_notification_per_step(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    problems: list[str] = []
    llm.add(*sign_up(problems, "Ada Lovelace"))
    await configure(harness, llm)
    url = e2e_pages.url("form.html?mcp=one")
    async with mcp_client(harness, "--approve", "always") as client:
        tools = {tool.name for tool in (await client.session.list_tools()).tools}
        assert tools == {"run_task", "get_task", "stop_task", "list_tabs", "read_page"}
        is_error, result = await client.call("run_task", task="Sign up as Ada Lovelace", url=url)
        assert not is_error, result
        assert not problems, problems
        assert (result["success"], result["data"], result["steps"]) == (True, "Signed up as Ada Lovelace", 4)
        # first the task's id, then one progress notification per step, each with its number, goal, action, result
        messages = [message or "" for _, message in client.progress]
        assert len(messages) == 5, messages
        assert task_id_in(messages[0]) == result["taskId"], messages[0]
        steps = messages[1:]
        # the action in words, as the person's cards say it, then the exact call
        assert steps[0].startswith('step 1 · Type the name · typed into "Full name" (input_text ')
        assert "Ada Lovelace" in steps[0], steps[0]
        assert steps[1].startswith("step 2 · Tick the terms box · clicked ") and "(click_element_by_index " in steps[1]
        assert steps[3].startswith("step 4 · Report the result · ended the task (done ")
        assert all("→" in m for m in steps)
        assert [p for p, _ in client.progress] == [1, 2, 3, 4, 5]

        # the page's own script saw trusted typing and clicks, in the tab the task had to itself
        status, received = await page_record(await tab_at(harness.browser, url))
        assert status == "Signed up as Ada Lovelace."
        typed = [e for e in received if e["target"] == "name" and e["type"] == "input"]
        assert typed and all(e["trusted"] for e in typed) and typed[-1]["value"] == "Ada Lovelace"

        # the same task, as get_task and the other tools see it
        is_error, task = await client.call("get_task", task_id=result["taskId"])
        assert not is_error, task
        assert task["status"] == "completed" and task["result"]["data"] == "Signed up as Ada Lovelace"
        assert [e["type"] for e in task["history"]].count("step") == 4
        assert task["history"][0]["action"]["name"] == "input_text"
        is_error, listed = await client.call("list_tabs")
        tabs = listed["tabs"]
        assert not is_error and url in [t["url"] for t in tabs], tabs
        tab_id = next(t["tabId"] for t in tabs if t["url"] == url)
        is_error, page = await client.call("read_page", tab=tab_id)
        assert not is_error, page
        assert page["url"] == url and "Signed up as Ada Lovelace." in page["text"]
        assert "Full name" in page["text"] and "[" in page["text"]  # indexed elements, as the model sees them
        is_error, active = await client.call("read_page")  # no tab named: the active one
        assert not is_error and active["tabId"] in [t["tabId"] for t in tabs if t["active"]], active
        # the record says who started it
        history = await ask_host(harness, {"type": "history.get", "taskId": result["taskId"]})
        assert history["data"]["task"]["source"] == "mcp"

        # use it twice: a second task from the same client works the same
        llm.add(*sign_up(problems, "Grace Hopper"))
        second_url = e2e_pages.url("form.html?mcp=again")
        is_error, again = await client.call("run_task", task="Sign up as Grace Hopper", url=second_url)
        assert not is_error and again["success"], again
        assert (await page_record(await tab_at(harness.browser, second_url)))[0] == "Signed up as Grace Hopper."


async def test_two_clients_at_once_each_in_its_own_tab(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    problems: list[str] = []
    dispatch = for_task({"Sign up Ada": sign_up(problems, "Ada"), "Sign up Grace": sign_up(problems, "Grace")})
    llm.add(*[dispatch] * 8)
    await configure(harness, llm)
    urls = [e2e_pages.url("form.html?client=ada"), e2e_pages.url("form.html?client=grace")]
    async with mcp_client(harness, "--approve", "always", name="first") as first, \
            mcp_client(harness, "--approve", "always", name="second") as second:
        (ada_error, ada), (grace_error, grace) = await asyncio.gather(
            first.call("run_task", task="Sign up Ada", url=urls[0]),
            second.call("run_task", task="Sign up Grace", url=urls[1]),
        )
        assert not ada_error and not grace_error, (ada, grace)
        assert not problems, problems
        assert (ada["data"], grace["data"]) == ("Signed up as Ada", "Signed up as Grace")
        assert ada["taskId"] != grace["taskId"]
        # the record names who asked for each, by the name each client gave
        assert [task_row(harness, t["taskId"])["requester"] for t in (ada, grace)] == ["first", "second"]
        # each client heard only its own task's steps
        assert len(first.progress) == 5 and len(second.progress) == 5
        assert task_id_in(first.progress[0][1]) == ada["taskId"]
        assert task_id_in(second.progress[0][1]) == grace["taskId"]
        assert all("Grace" not in (m or "") for _, m in first.progress)
        assert all("Ada" not in (m or "") for _, m in second.progress)
        ada_status, _ = await page_record(await tab_at(harness.browser, urls[0]))
        grace_status, _ = await page_record(await tab_at(harness.browser, urls[1]))
        assert (ada_status, grace_status) == ("Signed up as Ada.", "Signed up as Grace.")
        # both clients still connected and served: neither kicked the other out
        assert not (await first.call("list_tabs"))[0] and not (await second.call("list_tabs"))[0]


# --- consent: the person answers in the popup / side panel --------------------------------------------------------
WAITING = "waiting for the person using the browser to allow this task (tabpilot popup or side panel)"


async def approval_card(popup: PopupPage, requester: str) -> dict[str, Any]:
    """The prompt card the popup shows for `requester`, as the person reads it (text and buttons)."""
    card = await popup.wait_for(
        "(() => { const li = [...document.querySelectorAll('#approval-list .approval-card')]"
        f".find(c => c.innerText.includes({json.dumps(requester)})); if (!li || li.closest('[hidden]')) return null;"
        # where it would work is filled a moment after the card shows (the tab's title is asked of Chromium)
        " if (!li.querySelector('.approval-where').textContent) return null;"
        " return {id: li.dataset.approvalId, text: li.innerText,"
        " buttons: [...li.querySelectorAll('button')].map(b => [b.tagName, b.dataset.decision, b.textContent])}; })()",
        f"{requester}'s request in the popup", 60,
    )
    assert isinstance(card, dict)
    return card


async def press(popup: PopupPage, approval_id: str, decision: str) -> None:
    await popup.click(f'.approval-card[data-approval-id="{approval_id}"] button[data-decision="{decision}"]')
    await popup.wait_for(f"!document.querySelector('.approval-card[data-approval-id=\"{approval_id}\"]')",
                         "the answered card to go")


async def notification(harness: Harness, requester: str) -> dict[str, Any] | None:
    """The desktop notification raised for `requester`'s request (chrome.notifications, read in the worker)."""
    ids = [i for i in await notifications_shown(harness) if i.startswith("tabpilot-approval-")]
    for approval_id in ids:
        request = await harness.sw(f"openApprovals.get({json.dumps(approval_id[len('tabpilot-approval-'):])}) ?? null")
        if request and request["requester"] == requester:
            return {"id": approval_id, "request": request}
    return None


async def notifications_shown(harness: Harness) -> list[str]:
    return list(await harness.sw("Object.keys(await chrome.notifications.getAll())"))


async def notification_gone(harness: Harness, approval_id: str) -> bool:
    """The request's desktop notification is not shown (a moment after it went, in case one was still being raised)."""
    await asyncio.sleep(0.3)
    return f"tabpilot-approval-{approval_id}" not in await notifications_shown(harness)


async def close_popup(harness: Harness, popup: PopupPage) -> None:
    await harness.browser.close_tab(popup.tab.target_id)


async def test_deny_in_the_popup_refuses_the_task_and_asks_no_model(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    await configure(harness, llm)
    popup = await harness.open_popup()  # open before the request: the push reaches it live
    url = e2e_pages.url("form.html?mcp=denied")
    async with mcp_client(harness, "--approve-timeout", "60", name="Curious Agent") as client:
        call = asyncio.ensure_future(client.call("run_task", task="Sign up as Mallory", url=url))
        card = await approval_card(popup, "Curious Agent")
        assert "Curious Agent wants to run:" in card["text"] and "Sign up as Mallory" in card["text"], card
        assert card["buttons"] == [["BUTTON", "once", "Allow once"],
                                   ["BUTTON", "always", "Always allow for this client"], ["BUTTON", "deny", "Deny"]]
        shown = await wait_until(lambda: notification(harness, "Curious Agent"), "the desktop notification")
        assert shown["request"]["task"] == "Sign up as Mallory"
        await press(popup, card["id"], "deny")
        is_error, text = await call
    assert is_error and "Refused" in text and "refused to let Curious Agent run this task" in text, text
    assert llm.requests == []  # no model was asked
    assert url not in [t.url for t in await harness.browser.tabs()]  # and no tab was opened for it
    # answered: the notification went too (the worker hears of it on its own port, not on the client's answer's way)
    await wait_until(functools.partial(notification_gone, harness, shown["request"]["approvalId"]),
                     "the answered request's notification to go")
    await close_popup(harness, popup)


async def test_a_page_the_domains_keep_tasks_from_is_refused_before_the_person_is_asked(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    # Found in review: the person was asked to allow a task that the host then refused to start (a url on a blocked
    # domain), after a new tab had been opened for it.
    await configure(harness, llm)
    assert (await ask_host(harness, {"type": "settings.set", "blockedDomains": ["127.0.0.1"]}))["ok"]
    try:
        tabs_before = {t.target_id for t in await harness.browser.tabs()}
        async with mcp_client(harness, "--approve-timeout", "60", name="Blocked Agent") as client:
            for _ in range(2):
                is_error, text = await client.call("run_task", task="Sign up", url=e2e_pages.url("form.html?b=1"))
                assert is_error and "127.0.0.1 is on the blocked domains list" in text, text
            for url in ("javascript:alert(1)", "chrome://settings"):  # no page: refused in the client's words
                is_error, text = await client.call("run_task", task="Sign up", url=url)
                assert is_error and f"url '{url}' is" in text and "not a web page a task can work in" in text, text
        assert await notification(harness, "Blocked Agent") is None  # nobody was asked
        assert {t.target_id for t in await harness.browser.tabs()} == tabs_before  # no tab opened for it
        assert llm.requests == []
    finally:
        assert (await ask_host(harness, {"type": "settings.set", "blockedDomains": []}))["ok"]


async def test_a_long_tasks_card_shows_its_start_at_once_and_the_rest_on_asking(
    harness: Harness, llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 200,000-character task (the limit) drew for about a second before its card showed: the card shows its
    first 2,000 characters and a button saying how many more there are, which shows them all."""
    from tabpilot.mcp.hostlink import HostLink

    popup = await harness.open_popup()
    monkeypatch.setenv("TABPILOT_HOME", str(harness.tabpilot_home))
    link = HostLink("a local program")
    task = "".join(f"step {n}: check the page. " for n in range(10_000))[:199_999] + "\U0001F600"
    try:
        asking = asyncio.ensure_future(link.request("approval.ask", {
            "requester": "Long Agent", "task": task, "newTab": True}))
        card = await approval_card(popup, "Long Agent")
        selector = f'.approval-card[data-approval-id="{card["id"]}"] .approval-task'
        more = f'.approval-card[data-approval-id="{card["id"]}"] .task-more'
        shown = await popup.js(f"document.querySelector({json.dumps(selector)}).textContent")
        assert shown == task[:2000] + "…", shown[-80:]
        assert await popup.text(more) == f"Show all ({200_001 - 2000:,} more characters)"
        assert await popup.in_view(more)  # under the box: no scrolling to find it
        await popup.click(more)
        whole = await popup.js(f"document.querySelector({json.dumps(selector)}).textContent")
        assert whole == task.strip(), len(whole)
        shown_after = f"document.querySelector({json.dumps(more)}).checkVisibility({{visibilityProperty: true}})"
        assert not await popup.js(shown_after)  # its place kept
        await press(popup, card["id"], "deny")
        assert (await asking)["decision"] == "deny"
    finally:
        await link.close()


async def test_the_request_says_which_tab_the_task_gets_and_a_no_is_in_past_tasks(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person decides knowing where the task would work: the card names their tab by its title and origin,
    or says it gets a new tab and which site it opens; what they said no to is in Past tasks, from whom."""
    from urllib.parse import urlsplit

    from tabpilot.mcp.hostlink import HostLink

    await configure(harness, llm)
    url = e2e_pages.url("form.html?where")
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
    form = await harness.browser.new_tab(url)
    popup = await harness.open_popup()
    monkeypatch.setenv("TABPILOT_HOME", str(harness.tabpilot_home))  # the host's socket, as a client finds it
    link = HostLink("a local program")
    try:
        asking = asyncio.ensure_future(link.request("approval.ask", {
            "requester": "Tab Agent", "task": "Fill in my form", "tabId": await harness.chrome_tab_id(form)}))
        card = await approval_card(popup, "Tab Agent")
        assert f"In your tab “Signup form” ({origin})" in card["text"], card
        await popup.screenshot(SCREENS / "approval-card-tab.png", max_height=600)
        await press(popup, card["id"], "deny")
        assert (await asking)["decision"] == "deny"
        # the page names itself: a bidi override cannot make its title read as another site's
        await form.evaluate("document.title = 'Inbox \u202emoc.knab-ym\u202c ' + 'x'.repeat(200)")
        asking = asyncio.ensure_future(link.request("approval.ask", {
            "requester": "Tab Agent", "task": "Fill in my form", "tabId": await harness.chrome_tab_id(form)}))
        card = await approval_card(popup, "Tab Agent")
        cut = ("Inbox \u202emoc.knab-ym\u202c " + "x" * 200)[:79]  # at most 80 characters, its override shown as it is
        shown = cut.replace("\u202e", "<U+202E>").replace("\u202c", "<U+202C>") + "…"
        assert f"In your tab “{shown}” ({origin})" in card["text"], card
        await press(popup, card["id"], "deny")
        await asking
    finally:
        await link.close()
    async with mcp_client(harness, "--approve-timeout", "60", name="New Tab Agent") as client:
        call = asyncio.ensure_future(client.call("run_task", task="Sign up as Mallory", url=url))
        card = await approval_card(popup, "New Tab Agent")
        assert f"In a new tab, opening {origin}" in card["text"], card
        await popup.screenshot(SCREENS / "approval-card-new-tab.png", max_height=600)
        await press(popup, card["id"], "deny")
        assert (await call)[0]
    await popup.click("#nav-past")
    line = await popup.wait_for(
        "(() => { const li = [...document.querySelectorAll('#past-list .past-item')]"
        ".find(i => i.innerText.includes('Fill in my form')); return li ? li.innerText : null; })()",
        "the request said no to, in Past tasks")
    assert "Denied" in line and "from the MCP client Tab Agent" in line, line
    await popup.screenshot(SCREENS / "past-denied.png", max_height=600)
    await popup.click("#past-list .past-item")  # the newest: New Tab Agent's
    await popup.wait_for("!document.getElementById('past-detail').hidden", "the request's detail")
    assert await popup.text("#past-result-text") == (
        "New Tab Agent asked to run this task and you said no (or did not answer in time). It never ran.")
    assert await popup.js("document.getElementById('past-result-detail-text').textContent") == (
        "The person using the browser refused to let New Tab Agent run this task.")  # the record's why
    # what the person said no to is not one click away from running after all
    assert not await popup.visible("#past-rerun") and not await popup.visible("#past-rerun-new")
    await popup.screenshot(SCREENS / "past-denied-detail.png", max_height=600)
    assert llm.requests == []
    await close_popup(harness, popup)
    await harness.browser.close_tab(form.target_id)


async def test_a_client_sees_only_its_own_tabs_and_tasks_unless_the_person_always_allows_it(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any MCP client's tools reach the host; the person's own tab and task (its text, its result) stay theirs:
    list_tabs and get_task show a client its own, and everything to a client the person always allows."""
    from tabpilot.store.sites import allow_client, revoke_client

    await configure(harness, llm)
    persons_url, own_url = e2e_pages.url("form.html?the-persons-own"), e2e_pages.url("form.html?its-own")
    persons = await harness.browser.new_tab(persons_url)
    llm.add(done("Nothing to do on my page"))
    popup = await harness.open_popup(persons)
    persons_task = await run_in_popup(popup, "Look at my page")
    await wait_status(popup, "completed")
    problems: list[str] = []
    llm.add(*sign_up(problems, "Nosy"))
    async with mcp_client(harness, "--approve-timeout", "60", name="Nosy Agent") as client:
        is_error, listed = await client.call("list_tabs")
        assert not is_error and persons_url not in [t["url"] for t in listed["tabs"]], listed
        # an empty list is not "no tabs open" (found by a new user): it says that the person's are not shown, and why
        hidden = re.match(r"(\d+) more tabs? of the person's (is|are) not shown", listed.get("note", ""))
        assert hidden and int(hidden.group(1)) >= 1 and "Always allow for this client" in listed["note"], listed
        is_error, text = await client.call("get_task", taskId=persons_task)
        assert is_error and "only the tasks it started" in text, text
        call = asyncio.ensure_future(client.call("run_task", task="Sign up as Nosy", url=own_url))
        await press(popup, (await approval_card(popup, "Nosy Agent"))["id"], "once")
        is_error, result = await call
        assert not is_error and result["success"] and not problems, (result, problems)
        is_error, listed = await client.call("list_tabs")  # its own tab, once it has one
        assert [t["url"] for t in listed["tabs"]] == [own_url], listed
        is_error, task = await client.call("get_task", taskId=result["taskId"])
        assert not is_error and task["status"] == "completed", task

    monkeypatch.setenv("TABPILOT_HOME", str(harness.tabpilot_home))
    # the person's "Always allow for this client", earlier, to the server this program starts
    allow_client("Trusted Agent", os.readlink(f"/proc/{os.getpid()}/exe"))
    try:
        async with mcp_client(harness, name="Trusted Agent") as trusted:
            is_error, listed = await trusted.call("list_tabs")
            assert not is_error and persons_url in [t["url"] for t in listed["tabs"]], listed
            assert "note" not in listed  # it sees them all
            is_error, task = await trusted.call("get_task", taskId=persons_task)
            assert not is_error and task["task"] == "Look at my page", task
    finally:
        revoke_client("Trusted Agent")
    await close_popup(harness, popup)
    await harness.browser.close_tab(persons.target_id)


async def test_run_task_in_the_active_tab_runs_in_the_tab_the_person_was_shown(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """new_tab false: the host finds the tab the person is looking at, the card names it and the page the task
    opens there, and the task runs in that tab, which is then the client's own."""
    problems: list[str] = []
    llm.add(*sign_up(problems, "Ada Active"))
    await configure(harness, llm)
    url = e2e_pages.url("form.html?active-tab")
    popup = await harness.open_popup()
    async with mcp_client(harness, "--approve-timeout", "60", name="Active Agent") as client:
        call = asyncio.ensure_future(client.call("run_task", task="Sign up as Ada Active", url=url, new_tab=False))
        card = await approval_card(popup, "Active Agent")
        opens = url.split("/form.html")[0]
        assert "In your tab “" in card["text"] and f"It opens {opens} there first." in card["text"], card
        where = f'.approval-card[data-approval-id="{card["id"]}"] .approval-where'
        shown_tab = int(await popup.js(f"document.querySelector({json.dumps(where)}).dataset.tabId"))
        await press(popup, card["id"], "once")
        is_error, result = await call
        assert not is_error and result["success"] and not problems, (result, problems)
        assert f"started in tab {shown_tab}" in (client.progress[0][1] or ""), client.progress[0]
        assert await harness.sw(f"(await chrome.tabs.get({shown_tab})).url") == url
        is_error, listed = await client.call("list_tabs")  # the tab it ran in is now one of its own
        assert [t["tabId"] for t in listed["tabs"]] == [shown_tab], listed
    await close_popup(harness, popup)


async def test_a_client_always_allowed_is_told_its_tasks_id_first_however_long_the_host_takes_to_allow_it(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client the person always allows (`--approve always`, or Always allow in the popup) is never asked about: under
    load the host's yes took over half a second, and the client was told first that the task waited for the person's
    yes, before the task's id (a test reading the id from the first progress line sent the host a taskId of null).
    Here the host's yes is slow as the worker is busy when it looks for the tab the task gets (new_tab false)."""
    from tabpilot.store.sites import allow_client

    monkeypatch.setenv("TABPILOT_HOME", str(harness.tabpilot_home))  # the person's allowed clients, as the host reads
    allow_client("Allowed Before Agent", os.readlink("/proc/self/exe"))  # Always allow, for the server this test starts
    await configure(harness, llm)
    for options, name in ((("--approve", "always"), "Flagged Agent"), ((), "Allowed Before Agent")):
        llm.add(done(f"Looked at it for {name}"))
        url = e2e_pages.url(f"form.html?always={len(name)}")
        tab = await harness.browser.new_tab(url)
        async with mcp_client(harness, *options, name=name) as client:
            await harness.sw("setTimeout(() => { const end = Date.now() + 2000; while (Date.now() < end); }); 1")
            is_error, result = await client.call("run_task", task=f"Look at the form for {name}", url=url,
                                                 new_tab=False)
            assert not is_error and result["data"] == f"Looked at it for {name}", result
            assert task_id_in(client.progress[0][1]) == result["taskId"], client.progress
            assert not [m for _, m in client.progress if "waiting for the person" in (m or "")], client.progress
        await harness.browser.close_tab(tab.target_id)


async def test_clicking_the_notification_opens_a_view_that_shows_the_request(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """The notification's click (its handler run in the worker: a desktop notification cannot be clicked over
    CDP, and without the click's gesture Chromium refuses the side panel) opens the toolbar popup there."""
    await configure(harness, llm)
    page = await harness.browser.new_tab(e2e_pages.url("form.html?notified"))
    await harness.sw(f"const t = await chrome.tabs.get({await harness.chrome_tab_id(page)});"
                     " await chrome.windows.update(t.windowId, {focused: true}); true")
    async with mcp_client(harness, "--approve-timeout", "60", name="Noticed Agent") as client:
        call = asyncio.ensure_future(client.call("run_task", task="Sign up Nora", url=e2e_pages.url("form.html?n")))
        shown = await wait_until(lambda: notification(harness, "Noticed Agent"), "the desktop notification")
        await harness.sw(f"onApprovalNotificationClicked({json.dumps(shown['id'])}); true")
        root = harness.browser.connection.root

        async def opened() -> str | None:
            for info in (await root.send("Target.getTargets"))["targetInfos"]:
                if info["type"] == "page" and info["url"].startswith(f"{EXTENSION_ORIGIN}/popup.html"):
                    return str(info["targetId"])
            return None

        popup = PopupPage(await harness.browser.attach(await wait_until(opened, "the popup or side panel")))
        assert await popup.js("location.href") == f"{EXTENSION_ORIGIN}/popup.html"  # the toolbar popup
        card = await approval_card(popup, "Noticed Agent")
        assert "Sign up Nora" in card["text"]
        assert shown["id"] not in await notifications_shown(harness)  # clicked: it goes
        assert await harness.sw("(await chrome.action.getBadgeText({}))") == "?"  # the toolbar button says so
        await press(popup, card["id"], "deny")
        assert (await call)[0]
    assert await harness.sw("(await chrome.action.getBadgeText({}))") == ""
    assert llm.requests == []
    await harness.browser.close_tab(page.target_id)


async def test_allow_once_in_a_popup_opened_later_runs_and_no_answer_says_where_to_answer(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    problems: list[str] = []
    llm.add(*sign_up(problems, "Ada"))
    await configure(harness, llm)
    async with mcp_client(harness, "--approve-timeout", "60", name="Helpful Agent") as client:
        call = asyncio.ensure_future(client.call("run_task", task="Sign up Ada", url=e2e_pages.url("form.html?ok")))
        await wait_until(lambda: asyncio.sleep(0, len(client.progress)), "the wait for an answer to be reported")
        await wait_until(lambda: notification(harness, "Helpful Agent"), "the desktop notification")
        popup = await harness.open_popup()  # the person opens the popup after the request arrived
        card = await approval_card(popup, "Helpful Agent")
        assert "Sign up Ada" in card["text"] and "Denied automatically in" in card["text"], card
        await popup.size(400, 600)
        await popup.screenshot(SCREENS / "mcp-approval.png", max_height=600)
        await press(popup, card["id"], "once")
        is_error, result = await call
        assert not is_error and result["success"], result
        messages = [message for _, message in client.progress]
        assert messages[0] == WAITING
        assert len(messages) == 6 and task_id_in(messages[1]) == result["taskId"], messages
        assert (messages[2] or "").startswith("step 1 ·"), messages
        # once is once: the next task of the same client is asked again
        second = asyncio.ensure_future(client.call("run_task", task="Sign up Ada again",
                                                   url=e2e_pages.url("form.html?again")))
        again = await approval_card(popup, "Helpful Agent")
        assert again["id"] != card["id"] and "Sign up Ada again" in again["text"]
        await press(popup, again["id"], "deny")
        assert (await second)[0]
    async with mcp_client(harness, "--approve-timeout", "3", name="Unattended Agent") as client:
        call = asyncio.ensure_future(client.call("run_task", task="Sign up Bob", url=e2e_pages.url("form.html?none")))
        unanswered = await wait_until(lambda: notification(harness, "Unattended Agent"), "the desktop notification")
        await approval_card(popup, "Unattended Agent")
        is_error, text = await call
    assert is_error and "Nobody allowed Unattended Agent" in text and "--approve always" in text, text
    assert "tabpilot popup and side panel" in text and "press Allow there" in text, text
    # the request that timed out is gone from the popup and from the notifications
    await popup.wait_for("!document.querySelector('.approval-card')", "the timed-out card to go")
    assert await popup.visible("#approvals") is False
    assert unanswered["id"] not in await notifications_shown(harness)
    assert len(llm.requests) == 4  # only the allowed task's
    await close_popup(harness, popup)


@pytest.mark.parametrize("second_answer", ["once", "deny"])
async def test_allow_once_with_another_request_waiting_keeps_the_toolbar_popup_on_it(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles, second_answer: str
) -> None:
    """Two clients ask at once (a new user's trial). Allow once on the first opened its task's tab in front, which
    closed the toolbar popup: the second request went out of sight and was denied two minutes later. While another
    request waits, a task's new tab opens behind; the last one allowed comes forward, as a single one always did.
    If the last answer is a no, the task allowed first comes forward instead of running out of sight."""
    problems: list[str] = []
    dispatch = for_task({"Sign up Ada": sign_up(problems, "Ada"), "Sign up Grace": sign_up(problems, "Grace")})
    llm.add(*[dispatch] * 8)
    await configure(harness, llm)
    base = await harness.browser.new_tab(e2e_pages.url("form.html?looking"))  # the person's tab
    urls = [e2e_pages.url(f"form.html?asked=ada&then={second_answer}"),
            e2e_pages.url(f"form.html?asked=grace&then={second_answer}")]
    async with mcp_client(harness, "--approve-timeout", "90", name="First Agent") as first, \
            mcp_client(harness, "--approve-timeout", "90", name="Second Agent") as second:
        ada = asyncio.ensure_future(first.call("run_task", task="Sign up Ada", url=urls[0]))
        grace = asyncio.ensure_future(second.call("run_task", task="Sign up Grace", url=urls[1]))
        for requester in ("First Agent", "Second Agent"):
            await wait_until(lambda r=requester: notification(harness, r), f"{requester}'s request")
        popup = await harness.open_action_popup(base)
        await press(popup, (await approval_card(popup, "First Agent"))["id"], "once")
        # the first task runs in a tab of its own, behind: the person still sees the popup and the second request
        ada_tab = await tab_at(harness.browser, urls[0])
        waiting = await approval_card(popup, "Second Agent")
        assert "Sign up Grace" in waiting["text"], waiting
        shown = await harness.sw("(await chrome.tabs.query({active: true, lastFocusedWindow: true}))[0].url")
        assert shown.endswith("form.html?looking"), shown
        # the last one: a tab comes forward, which closes the toolbar popup (nothing is left in it to answer)
        await popup.click(f'.approval-card[data-approval-id="{waiting["id"]}"] '
                          f'button[data-decision="{second_answer}"]')
        (ada_error, ada_result), (grace_error, grace_result) = await asyncio.gather(ada, grace)
        assert not ada_error, ada_result
        assert ada_result["data"] == "Signed up as Ada"
        assert not problems, problems
        # the tab opened behind was worked in all the same: its page's own script saw the sign-up
        assert (await page_record(ada_tab))[0] == "Signed up as Ada."
        if second_answer == "once":  # the last one allowed, with no request left waiting, came forward
            assert not grace_error and grace_result["data"] == "Signed up as Grace", grace_result
            in_front = await harness.chrome_tab_id(await tab_at(harness.browser, urls[1]))
        else:  # refused: the task allowed first, in its tab behind, came forward
            assert grace_error and "refused" in str(grace_result), grace_result
            in_front = await harness.chrome_tab_id(ada_tab)
        await wait_until(lambda: harness.sw(f"(await chrome.tabs.get({in_front})).active"), "its tab in front", 10)
    await harness.browser.close_tab(base.target_id)


async def test_a_local_program_cannot_open_its_tab_behind_the_persons_back(
    harness: Harness, e2e_pages: LocalFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the host sends a client's new tab behind (while a request waits for the person, above): a local program
    that asked tabs.create with active false itself got a tab behind the one the person looks at, where a task it
    runs next works out of their sight. Its tab opens in front, twice over."""
    from tabpilot.mcp.hostlink import HostLink

    base = await harness.browser.new_tab(e2e_pages.url("form.html?looking"))  # the person's tab
    monkeypatch.setenv("TABPILOT_HOME", str(harness.tabpilot_home))  # the host's socket, as a client finds it
    link = HostLink("a local program")
    try:
        for attempt in ("first", "again"):
            url = e2e_pages.url(f"form.html?behind={attempt}")
            opened = (await link.request("tabs.create", {"url": url, "active": False}))["tab"]
            assert opened["url"] == url and opened["active"] is True, opened
            shown = await harness.sw("(await chrome.tabs.query({active: true, lastFocusedWindow: true}))[0].url")
            assert shown == url, (attempt, shown)
            await link.request("tabs.close", {"tabId": opened["tabId"]})
    finally:
        await link.close()
    await harness.browser.close_tab(base.target_id)


@contextlib.contextmanager
def held_page() -> Any:
    """A page on a server of its own that answers only once the test opens the gate: (url, asked, gate)."""
    with held_pages() as (site, asked, gate):
        yield f"{site}/held.html", asked, gate


async def test_a_tab_opening_behind_as_the_last_question_closes_with_a_no_comes_forward(
    harness: Harness, e2e_pages: LocalFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client's tab opens behind while a question waits for the person, and comes forward if the last question
    closes with a no. A tab still loading when that no came (tabs.create answers once its page loaded) was left
    behind for good, out of the person's sight, and came forward at some later question's no instead. Twice."""
    from tabpilot.mcp.hostlink import HostLink

    base = await harness.browser.new_tab(e2e_pages.url("form.html?looking"))  # the person's tab
    monkeypatch.setenv("TABPILOT_HOME", str(harness.tabpilot_home))  # the host's socket, as a client finds it
    asker, opener = HostLink("Asking Agent"), HostLink("Opening Agent")
    try:
        for attempt in ("first", "again"):
            with held_page() as (url, page_asked, gate):
                asking = asyncio.ensure_future(asker.request(
                    "approval.ask", {"task": f"Open the held page ({attempt})", "newTab": True}))
                [approval_id] = await wait_until(lambda: harness.sw("[...openApprovals.keys()]"), "the question")
                opening = asyncio.ensure_future(opener.request("tabs.create", {"url": url}))
                await wait_until(lambda: page_asked.is_set(), "the new tab to ask for its page")
                said = await ask_host(harness, {"type": "approval.answer", "approvalId": approval_id,
                                                "decision": "deny"})
                assert said["ok"], said
                with contextlib.suppress(Exception):  # a no: the request fails "denied"
                    await asking
                gate.set()  # the tab's page loads, after the question closed
                opened = (await opening)["tab"]
            tab_id = opened["tabId"]
            await wait_until(lambda: harness.sw(f"(await chrome.tabs.get({tab_id})).active"),  # noqa: B023
                             f"the tab opened as the question closed to come forward ({attempt})", 10)
            await opener.request("tabs.close", {"tabId": tab_id})
    finally:
        await asker.close()
        await opener.close()
    await harness.browser.close_tab(base.target_id)


async def test_a_question_nobody_waits_for_goes_from_the_popup_and_the_next_call_is_asked(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """Found by a new user: an MCP client that stopped waiting for the person (its call cancelled or timed out, or
    the client closed) left its question in the popup for the rest of the two minutes, and its next call, the
    same task asked again, was refused: "… already has a question waiting for the user's answer". The question
    goes with its asker, Past tasks says why it did not run, and the next call is asked afresh, twice over."""
    problems: list[str] = []
    llm.add(*sign_up(problems, "Ada"))
    await configure(harness, llm)
    popup = await harness.open_popup()
    url = e2e_pages.url("form.html?impatient")
    async with mcp_client(harness, "--approve-timeout", "60", name="Impatient Agent") as client:
        for attempt in ("first", "second"):
            call = asyncio.ensure_future(client.call("run_task", task=f"Sign up Ada ({attempt})", url=url))
            card = await approval_card(popup, "Impatient Agent")
            call.cancel()  # the client gives up (its own timeout, or its user pressed stop)
            with contextlib.suppress(asyncio.CancelledError):
                await call
            await popup.wait_for(f"!document.querySelector('.approval-card[data-approval-id=\"{card['id']}\"]')",
                                 "the question nobody waits for to go", 10)
            # its desktop notification too, also one still being raised as it was taken back
            await wait_until(functools.partial(notification_gone, harness, card["id"]),
                             "the question's notification to go", 10)
        call = asyncio.ensure_future(client.call("run_task", task="Sign up Ada", url=url))
        card = await approval_card(popup, "Impatient Agent")  # asked again, not refused as busy
        await press(popup, card["id"], "once")
        is_error, result = await call
        assert not is_error and result["success"], result
        assert not problems, problems
        # and a client that goes away altogether takes its open question with it
        leaving = asyncio.ensure_future(client.call("run_task", task="Sign up Ada (left)", url=url))
        card = await approval_card(popup, "Impatient Agent")
    leaving.cancel()
    with contextlib.suppress(BaseException):
        await leaving
    await popup.wait_for("!document.querySelector('.approval-card')", "the closed client's question to go", 10)
    await popup.click("#nav-past")
    lines = await popup.wait_for(
        "(() => { const found = [...document.querySelectorAll('#past-list .past-item')].map(i => i.innerText)"
        ".filter(t => t.includes('Sign up Ada (')); return found.length === 3 ? found : null; })()",
        "the three questions nobody answered, in Past tasks")
    assert all("from the MCP client Impatient Agent" in line and "Withdrawn" in line for line in lines), lines
    # nobody said no: Past tasks must not say the person did (it said "you said no (or did not answer in time)")
    await popup.click("#past-list .past-item")
    said = await popup.wait_for("document.querySelector('#past-result-text')?.textContent || null", "the past task")
    assert said.startswith("Impatient Agent asked to run this task, then the question was withdrawn"), said
    assert "you said no" not in said
    with sqlite3.connect(f"file:{harness.database()}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT status, requester, result FROM tasks WHERE task LIKE 'Sign up Ada (%'").fetchall()
    assert len(rows) == 3 and all(row[:2] == ("withdrawn", "Impatient Agent") for row in rows), rows
    assert all("stopped waiting for your answer" in json.loads(row[2])["data"] for row in rows), rows
    await close_popup(harness, popup)


async def test_a_question_taken_back_at_once_leaves_no_notification(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A question taken back the moment it was asked (its client's call cancelled): its approval.closed reached the
    worker while the notification was still being raised (the worker first asks which window is focused), so the
    clear found nothing and the notification stayed on screen for good (requireInteraction), pointing at nothing."""
    from tabpilot.mcp.hostlink import HostLink

    monkeypatch.setenv("TABPILOT_HOME", str(harness.tabpilot_home))  # the host's socket, as a client finds it
    before = set(await notifications_shown(harness))
    link = HostLink("a local program")
    try:
        for attempt in range(16):
            asking = asyncio.ensure_future(link.request("approval.ask", {
                "requester": "Hasty Agent", "task": f"Sign up ({attempt})", "newTab": True, "timeout": 30}))
            await asyncio.sleep(0.004 * attempt)  # taken back at once, or a moment later
            asking.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asking
        await asyncio.sleep(1.5)
        left = [i for i in set(await notifications_shown(harness)) - before if i.startswith("tabpilot-approval-")]
        assert left == [], left
    finally:
        await link.close()


async def open_view(harness: Harness, query: str) -> PopupPage:
    """The popup page (or, with mode=panel, the side panel's) in a window of the toolbar popup's size."""
    created = await harness.browser.connection.root.send(
        "Target.createTarget", {"url": f"{EXTENSION_ORIGIN}/popup.html{query}", "newWindow": True,
                                "width": 400, "height": 600})
    view = PopupPage(await harness.browser.attach(created["targetId"]))
    await view.size(400, 600)
    return view


async def test_a_request_is_in_view_when_the_view_opens_over_a_long_finished_task(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """The view opens on a long finished task (the result in view): a client's request stays in view above it all
    the same, in the popup and in the side panel, wherever the timeline is scrolled."""
    problems: list[str] = []
    llm.add(*sign_up(problems, "Ada Lovelace"))
    await configure(harness, llm)
    page = await harness.browser.new_tab(e2e_pages.url("form.html?long-timeline"))
    tab_id = await harness.chrome_tab_id(page)
    popup = await open_view(harness, f"?tabId={tab_id}")
    await popup.wait_for("ui.connected", "the popup to connect")
    await run_in_popup(popup, "Sign up as Ada Lovelace")
    assert await wait_status(popup, "completed") == "completed"
    await close_popup(harness, popup)
    async with mcp_client(harness, "--approve-timeout", "60", name="Scrolled Agent") as client:
        call = asyncio.ensure_future(client.call("run_task", task="Sign up Eve", url=e2e_pages.url("form.html?eve")))
        await wait_until(lambda: notification(harness, "Scrolled Agent"), "the desktop notification")
        for index, query in enumerate((f"?tabId={tab_id}", f"?mode=panel&tabId={tab_id}")):
            view = await open_view(harness, query)
            card = await approval_card(view, "Scrolled Agent")
            await view.wait_for("!document.getElementById('result').hidden", "the finished task's result")
            # the scene the person met: a view longer than the window, scrolled to its end
            assert await view.js("document.documentElement.scrollHeight > innerHeight + 100")
            await view.js("window.scrollTo(0, document.documentElement.scrollHeight)")
            await view.wait_for("scrollY > 0", "the view to scroll to the end of the timeline")
            selector = f'.approval-card[data-approval-id="{card["id"]}"]'
            assert await view.in_view(selector), await view.js("document.querySelector('.approval-card')"
                                                               ".getBoundingClientRect().toJSON()")
            assert await view.in_view(f"{selector} button[data-decision='once']")
            assert await view.in_view("#result") and await view.in_view("#task-status")
            await view.js("window.scrollTo(0, 0)")  # scrolled anywhere, it stays
            assert await view.in_view(selector)
            await view.js("window.scrollTo(0, document.documentElement.scrollHeight)")
            assert await view.in_view(selector)
            shot = await view.tab.send("Page.captureScreenshot", {"format": "png"})
            (SCREENS / f"mcp-approval-over-long-task-{index}.png").parent.mkdir(parents=True, exist_ok=True)
            (SCREENS / f"mcp-approval-over-long-task-{index}.png").write_bytes(base64.b64decode(shot["data"]))
            if index == 1:
                await press(view, card["id"], "deny")
            await close_popup(harness, view)
        assert (await call)[0]
    assert not problems, problems
    await harness.browser.close_tab(page.target_id)


async def test_always_allow_in_the_side_panel_is_not_asked_again_for_that_client(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    problems: list[str] = []
    llm.add(*sign_up(problems, "Ada"), *sign_up(problems, "Grace"))
    await configure(harness, llm)
    created = await harness.browser.connection.root.send(
        "Target.createTarget", {"url": f"{EXTENSION_ORIGIN}/popup.html?mode=panel", "newWindow": True})
    panel = PopupPage(await harness.browser.attach(created["targetId"]))
    await panel.wait_for(f"document.body.dataset.mode === 'panel' && {POPUP_READY}", "the side panel page")
    async with mcp_client(harness, "--approve-timeout", "60", name="Trusted Agent") as client:
        first = asyncio.ensure_future(client.call("run_task", task="Sign up Ada", url=e2e_pages.url("form.html?t1")))
        card = await approval_card(panel, "Trusted Agent")
        await panel.screenshot(SCREENS / "mcp-approval-panel.png", max_height=600)
        await press(panel, card["id"], "always")
        is_error, result = await first
        assert not is_error and result["success"], result
        asked = len(client.progress)
        url = e2e_pages.url("form.html?t2")
        is_error, result = await client.call("run_task", task="Sign up Grace", url=url)
        assert not is_error and result["success"], result
        assert WAITING not in [m for _, m in client.progress[asked:]]  # not asked: it ran at once
        assert (await page_record(await tab_at(harness.browser, url)))[0] == "Signed up as Grace."
        assert await panel.js("document.querySelectorAll('.approval-card').length") == 0
    assert not problems, problems
    # "always" is for that client only: another one is still asked
    async with mcp_client(harness, "--approve-timeout", "60", name="Stranger Agent") as client:
        call = asyncio.ensure_future(client.call("run_task", task="Sign up Eve", url=e2e_pages.url("form.html?t3")))
        card = await approval_card(panel, "Stranger Agent")
        await press(panel, card["id"], "deny")
        assert (await call)[0]
    await close_popup(harness, panel)


async def test_always_allow_outlives_the_host_and_a_revoke_in_settings_asks_again(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """"Always allow for this client" is kept with the allowed sites: a new host process does not ask that
    client again; the popup's Settings lists it beside the sites, and its Revoke asks again at the next task."""
    problems: list[str] = []
    llm.add(*sign_up(problems, "Ada"), *sign_up(problems, "Grace"))
    await configure(harness, llm)
    popup = await harness.open_popup()
    async with mcp_client(harness, "--approve-timeout", "60", name="Remembered Agent") as client:
        first = asyncio.ensure_future(client.call("run_task", task="Sign up Ada", url=e2e_pages.url("form.html?r1")))
        await press(popup, (await approval_card(popup, "Remembered Agent"))["id"], "always")
        is_error, result = await first
        assert not is_error and result["success"], result

        old_host = harness.host_pids()
        os.kill(old_host[0], signal.SIGKILL)  # the host restarts (a browser restart does the same): nothing in memory
        await harness.wait_host_connected()
        await wait_until(lambda: asyncio.sleep(0, harness.host_pids() not in ([], old_host)), "a new host process")
        await popup.js("window.cardsShown = []; new MutationObserver(() => window.cardsShown.push("
                       "...[...document.querySelectorAll('.approval-card')].map(c => c.innerText)))"
                       ".observe(document.body, {childList: true, subtree: true})")
        url = e2e_pages.url("form.html?r2")
        is_error, result = await client.call("run_task", task="Sign up Grace", url=url)
        assert not is_error and result["success"], result
        assert await popup.js("window.cardsShown") == []  # nobody was asked: it ran at once
        assert (await page_record(await tab_at(harness.browser, url)))[0] == "Signed up as Grace."

        await popup.click("#nav-settings")
        row = '#mcp-clients-list li[data-name="Remembered Agent"]'
        await popup.wait_for(f"!!document.querySelector({json.dumps(row)})", "the client in Settings")
        assert "Remembered Agent" in await popup.text(row) and await popup.visible("#mcp-clients-empty") is False
        # the grant is the name and the program that started `tabpilot mcp` (here this test's Python): both shown
        listed = (await ask_host(harness, {"type": "sites.list"}))["data"]["mcpClients"]
        [granted] = [client for client in listed if client["name"] == "Remembered Agent"]
        assert os.path.isabs(granted["program"]), granted
        program = await popup.js(f"(() => {{ const p = document.querySelector({json.dumps(row + ' .client-program')});"
                                 " return p && {text: p.innerText, title: p.title}; })()")
        assert program == {"text": f"started by {os.path.basename(granted['program'])}", "title": granted["program"]}
        await popup.screenshot(SCREENS / "mcp-clients-settings.png", max_height=1600)
        await popup.screenshot(SCREENS / "attack-mcp-client-program.png", max_height=1600)
        await popup.click(f"{row} .site-revoke")
        await popup.wait_for(f"!document.querySelector({json.dumps(row)})", "the revoked client to go")
        assert "Remembered Agent" not in await popup.text("#mcp-clients-list")

        call = asyncio.ensure_future(client.call("run_task", task="Sign up Eve", url=e2e_pages.url("form.html?r3")))
        card = await approval_card(popup, "Remembered Agent")  # asked again, at once
        assert "Sign up Eve" in card["text"]
        await press(popup, card["id"], "deny")
        assert (await call)[0]
    assert not problems, problems
    assert len(llm.requests) == 8  # the two allowed tasks' only
    await close_popup(harness, popup)


async def test_a_request_dies_with_its_host_and_the_next_one_is_shown_again(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """The host killed while the person has not answered: the card goes (nothing is left to answer), the
    client hears why, and the next request (to the new host) is shown in the same popup."""
    await configure(harness, llm)
    popup = await harness.open_popup()
    async with mcp_client(harness, "--approve-timeout", "60", name="Patient Agent") as client:
        call = asyncio.ensure_future(client.call("run_task", task="Sign up Pat", url=e2e_pages.url("form.html?k1")))
        await approval_card(popup, "Patient Agent")
        os.kill(harness.host_pids()[0], signal.SIGKILL)
        is_error, text = await call
        assert is_error and "went away" in text, text
        await popup.wait_for("!document.querySelector('.approval-card')", "the dead host's card to go")
        await harness.wait_host_connected()
        call = asyncio.ensure_future(client.call("run_task", task="Sign up Pat again",
                                                 url=e2e_pages.url("form.html?k2")))
        card = await approval_card(popup, "Patient Agent")
        assert "Sign up Pat again" in card["text"]
        await press(popup, card["id"], "deny")
        assert (await call)[0]
    assert llm.requests == []
    await close_popup(harness, popup)


async def test_a_request_dies_with_the_service_worker_and_the_reopened_view_shows_only_live_ones(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """The service worker stopped while a request waits: its native port takes the host and the question
    along, so the open popup drops the card; the popup reconnects to the new worker and shows the next one."""
    await configure(harness, llm)
    popup = await harness.open_popup()
    async with mcp_client(harness, "--approve-timeout", "60", name="Restart Agent") as client:
        call = asyncio.ensure_future(client.call("run_task", task="Sign up Ray", url=e2e_pages.url("form.html?w1")))
        await approval_card(popup, "Restart Agent")
        await harness.stop_worker()
        is_error, text = await call
        assert is_error and "went away" in text, text
        await popup.wait_for("!document.querySelector('.approval-card')", "the card of the stopped worker's host")
        await harness.attach_worker()  # the popup's reconnect woke it
        await harness.wait_host_connected()
        call = asyncio.ensure_future(client.call("run_task", task="Sign up Ray again",
                                                 url=e2e_pages.url("form.html?w2")))
        card = await approval_card(popup, "Restart Agent")
        assert "Sign up Ray again" in card["text"]
        # the stopped worker's request has no notification left on screen (found by a new user's test run: it
        # stayed, requireInteraction, and its click opened nothing): only the live one's
        # (the card and the notification come from one push; the notification is raised a moment later: waited for)
        live = f"tabpilot-approval-{card['id']}"

        async def approval_notifications() -> list[str] | None:
            shown = [i for i in await notifications_shown(harness) if i.startswith("tabpilot-approval-")]
            return shown if live in shown else None

        shown = await wait_until(approval_notifications, "the live request's notification", 10)
        assert shown == [live], shown
        await press(popup, card["id"], "deny")
        assert (await call)[0]
    assert llm.requests == []
    await close_popup(harness, popup)


async def test_no_model_configured_says_so_and_leaves_no_tab_behind(harness: Harness) -> None:
    assert (await ask_host(harness, {"type": "settings.set", "model": "", "baseURL": "", "apiKey": ""}))["ok"]
    before = len(await harness.browser.tabs())
    async with mcp_client(harness, "--approve", "always") as client:
        is_error, text = await client.call("run_task", task="Anything")
    assert is_error and "No model is configured" in text and "open Settings" in text, text
    assert len(await harness.browser.tabs()) == before


# --- a task that runs on: its first step done, its model thinking for a minute --------------------------------------
async def thinking_long(harness: Harness, llm: ScriptedLLMServer, problems: list[str]) -> None:
    llm.add(act_on("Full name", "input_text", "Type the name", problems, text="Ada"), Delay(60))
    await configure(harness, llm)


async def run_on(client: McpClient, llm: ScriptedLLMServer, task: str, url: str) -> asyncio.Future[Any]:
    """run_task called, and waited for until its first step is done and the model thinks about the next."""
    call = asyncio.ensure_future(client.call("run_task", task=task, url=url))
    await wait_until(lambda: asyncio.sleep(0, len(llm.requests) == 2), "the model's second (slow) request", 60)
    await wait_until(lambda: asyncio.sleep(0, len(client.progress) >= 2), "the first step's progress")
    return call


# --- the host goes away -----------------------------------------------------------------------------------------
async def test_a_task_waiting_for_the_person_or_a_failing_model_says_so_and_what_to_do(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """Found by a new user: a task in their browser that waited for the person (an action waiting for their yes,
    the agent's question) or for a model call tried again gave the MCP client no progress at all, and a task the
    model endpoint failed ended with only its cause, where `tabpilot run` says what to do. Each wait is a progress
    line saying what it waits for and where the person answers; a failed task's result carries a remedy. Twice."""
    problems: list[str] = []
    await configure(harness, llm)
    assert (await ask_host(harness, {"type": "settings.set", "askBefore": "every"}))["ok"]
    try:
        async with mcp_client(harness, "--approve", "always", name="Waiting Agent") as client:

            async def said(words: str) -> str | None:
                return next((m for _, m in client.progress if m and words in m), None)

            for name in ("Ada", "Grace"):
                llm.add(act_on("Full name", "input_text", "Type the name", problems, text=name),
                        ToolCall("AgentOutput", agent_output("Ask for the e-mail", {
                            "ask_user": {"question": f"Which e-mail for {name}?"}})),
                        done(f"Typed {name}"))
                client.progress.clear()
                call = asyncio.ensure_future(client.call(
                    "run_task", task=f"Type {name}", url=e2e_pages.url(f"form.html?waiting={name}")))

                allowing = "waiting for the person using the browser to allow an action"
                waits = await wait_until(functools.partial(said, allowing), "the wait for their yes, in progress")
                assert 'the agent wants to type into input "Full name" on 127.0.0.1' in waits, waits
                assert "tabpilot popup or side panel" in waits, waits
                task_id = task_id_in(client.progress[0][1])
                assert (await ask_host(harness, {"type": "task.approve", "taskId": task_id, "decision": "allow"}))["ok"]
                question = f"the agent asks the person using the browser: Which e-mail for {name}?"
                asks = await wait_until(functools.partial(said, question), "the agent's question, in the progress")
                assert "waiting for their answer" in asks, asks
                assert (await ask_host(harness, {"type": "task.answer", "taskId": task_id,
                                                 "answer": "ada@example.com"}))["ok"]
                is_error, result = await call
                assert not is_error and (result["success"], result["data"]) == (True, f"Typed {name}"), result
                assert "remedy" not in result
            assert not problems, problems
            # a model endpoint failing: each retry is said as it happens, and the result says what to do
            assert (await ask_host(harness, {"type": "settings.set", "askBefore": "never"}))["ok"]
            for attempt in ("first", "second"):
                # the server asks for 50 ms between attempts: the backoff's own 0.5-4 s waits took 10 s of this test
                llm.add(*[HTTPError(500, "overloaded", retry_after=0.05)] * 4)
                client.progress.clear()
                is_error, failed = await client.call("run_task", task=f"Type Ada ({attempt})",
                                                     url=e2e_pages.url("form.html?failing"))
                assert not is_error and failed["success"] is False, failed
                retries = [m for _, m in client.progress if m and m.startswith("retry ")]
                assert retries == [f"retry {n}/3: HTTP 500: overloaded" for n in (1, 2, 3)], client.progress
                assert failed["remedy"].startswith("The model provider is busy or failing"), failed
                assert "tabpilot popup's Settings" in failed["remedy"], failed
    finally:
        assert (await ask_host(harness, {"type": "settings.set", "askBefore": "irreversible"}))["ok"]


async def test_what_a_slow_page_gives_late_reaches_the_client_following_the_task(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """The person hands back while the page is slow: the takeover is told without the last letter they typed, then the
    page gives it (task.amended). The popup and the page bridge showed the takeover updated; `tabpilot mcp` did not
    pass the push on, and the client following the task never heard it. Now a progress line says it. Twice."""
    await configure(harness, llm)
    async with mcp_client(harness, "--approve", "always", name="Late Agent") as client:
        for city in ("Osaka", "Nara"):
            gate = threading.Event()
            llm.add(ToolCall("AgentOutput", agent_output("Ask for the city", {
                        "request_takeover": {"reason": "Please type your city"}})),
                    held_until(gate, done("City set")))  # told once the client heard the update
            client.progress.clear()
            url = e2e_pages.url(f"account.html?late={city}")
            call = asyncio.ensure_future(client.call("run_task", task=f"Set my city to {city}", url=url))
            try:
                task_id = await wait_until(lambda: asyncio.sleep(0, client.progress and task_id_in(
                    client.progress[0][1])), "the task's id")
                tab = await tab_at(harness.browser, url)
                await controlled_by_user(harness, task_id)
                box = await overlay_button(tab, "handback")
                async with last_letter_on_a_slow_page(harness, tab, task_id, city):
                    await user_click(tab, box["x"], box["y"])
                    await handed_back_page_silent(harness, task_id)

                async def said(words: str) -> str | None:
                    return next((m for _, m in client.progress if m and words in m), None)

                updated = await wait_until(functools.partial(said, "updated: the person took over"),
                                           "the update of the takeover, in the progress", 30)
                assert "the page answered late" in updated, updated
            finally:
                gate.set()
            is_error, result = await call
            assert not is_error and result["success"], result
            assert await typed_in_takeover_of(client, task_id) == [city]
            await harness.browser.close_tab(tab.target_id)


async def typed_in_takeover_of(client: McpClient, task_id: str) -> list[str | None]:
    """What the person typed in the task's one takeover, as get_task gives it."""
    is_error, task = await client.call("get_task", taskId=task_id)
    assert not is_error, task
    [takeover] = [e for e in task["history"] if e.get("type") == "user_takeover"]
    return [a.get("value") for a in takeover["actions"] if a["kind"] == "input"]


async def test_a_task_stopped_on_a_slow_page_returns_once_the_page_gave_the_persons_last_actions(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """The person takes over a task an MCP client runs, types their city and presses Stop as the page turns slow: the
    task ends with the takeover missing the last letter, and run_task returned at once, so the client never heard the
    page give it (the task.amended after task.result reached no one; only get_task had it). Now run_task waits for
    it, says it as a progress line before the result, and the result has no note that it may be missing. Twice."""
    await configure(harness, llm)
    async with mcp_client(harness, "--approve", "always", name="Late Stop Agent") as client:
        for round_, city in enumerate(("Kobe", "Nagoya")):
            llm.add(ToolCall("AgentOutput", agent_output("Ask for the city", {
                "request_takeover": {"reason": "Please type your city"}})))
            client.progress.clear()
            url = e2e_pages.url(f"account.html?stopped={round_}")  # not the city: the takeover's record has the URL
            call = asyncio.ensure_future(client.call("run_task", task=f"Set my city to {city}", url=url))
            task_id = await wait_until(lambda: asyncio.sleep(0, client.progress and task_id_in(
                client.progress[0][1])), "the task's id")
            tab = await tab_at(harness.browser, url)
            await controlled_by_user(harness, task_id)
            async with stopped_on_a_slow_page(harness, tab, task_id, city):
                pass
            is_error, result = await call
            assert not is_error and result["success"] is False and "note" not in result, result
            updated = [m for _, m in client.progress if m and m.startswith("updated: the person took over")]
            assert len(updated) == 1 and "the page answered late" in updated[0], client.progress
            assert await typed_in_takeover_of(client, task_id) == [city]
            await harness.browser.close_tab(tab.target_id)


async def test_a_task_stopped_on_a_page_that_hangs_says_the_persons_last_actions_may_be_missing(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """As above on a page whose script hangs for longer than run_task waits for it: the result says that what the
    person did last may be missing, and where the record is."""
    await configure(harness, llm)
    async with mcp_client(harness, "--approve", "always", name="Hung Stop Agent") as client:
        llm.add(ToolCall("AgentOutput", agent_output("Ask for the city", {
            "request_takeover": {"reason": "Please type your city"}})))
        url = e2e_pages.url("account.html?hangs")
        call = asyncio.ensure_future(client.call("run_task", task="Set my city to Sakai", url=url))
        task_id = await wait_until(lambda: asyncio.sleep(0, client.progress and task_id_in(
            client.progress[0][1])), "the task's id")
        tab = await tab_at(harness.browser, url)
        await controlled_by_user(harness, task_id)
        await typed_then_page_hangs(harness, tab, task_id, "Sakai")
        box = await overlay_button(tab, "stop")
        async with page_hangs(tab):
            await user_click(tab, box["x"], box["y"])
            is_error, result = await call
        assert not is_error and result["success"] is False, result
        assert result["note"].startswith("the page the person took over had not given their last actions"), result
        assert "get_task shows the record" in result["note"], result
        await harness.browser.close_tab(tab.target_id)


async def test_a_huge_task_is_refused_before_the_person_is_asked(harness: Harness, llm: ScriptedLLMServer) -> None:
    """Found by a new user: an MCP client's task of about a million characters was put to the person, and the popup
    stopped answering for over 30 s drawing it (had it run, the model would have got it whole at every step). It is
    refused at once, saying what to do, with no card or notification and no model call; twice."""
    await configure(harness, llm)
    before = set(await notifications_shown(harness))
    async with mcp_client(harness, "--approve-timeout", "30", name="Big Agent") as client:
        for filler in ("é😀\u202e" * 400_000, "x" * 200_001):
            is_error, text = await client.call("run_task", task=filler, url="https://example.com/")
            assert is_error and "a task may have at most 200,000" in text, text[:300]
            assert "put long material in a page or file" in text
        assert set(await notifications_shown(harness)) <= before  # no notification raised for it
        assert not client.progress  # not even "waiting for the person"
    assert llm.requests == []


async def test_host_killed_mid_call_fails_clearly_and_the_next_call_works(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    problems: list[str] = []
    await thinking_long(harness, llm, problems)
    async with mcp_client(harness, "--approve", "always") as client:
        call = await run_on(client, llm, "Sign up slowly", e2e_pages.url("form.html?killed"))
        hosts = harness.host_pids()
        assert len(hosts) == 1, hosts  # one host for the browser: the MCP server started none of its own
        os.kill(hosts[0], signal.SIGKILL)
        is_error, text = await call
        assert is_error and "went away" in text and "Call again once the browser is back" in text, text

        # no restart of anything: the extension brings a new host up and the next call reaches it; called at once
        # (the browser retries after 0.5 s), it is told first that it waits for that host, not left silent
        llm.add(*sign_up(problems, "Grace"))
        url = e2e_pages.url("form.html?after-kill")
        told = len(client.progress)
        again = asyncio.ensure_future(client.call("run_task", task="Sign up after the restart", url=url))
        # meanwhile the person, in the killed task's tab, is told who can run it again: the program, not their empty
        # box (the overlay of an ended task shows for 8 s: it is read now; the popup below reads the record)
        killed_tab = await tab_at(harness.browser, e2e_pages.url("form.html?killed"))
        interrupted = interrupted_said("mcp", "e2e-client")
        await wait_overlay(killed_tab, "the overlay to say what to do", lambda o: o["outcome"] == interrupted)
        is_error, result = await again
        assert not is_error and result["success"], result
        said = [message or "" for _, message in client.progress[told:]]
        assert "waiting up to 10 s for the browser to start a new one" in said[0], said
        assert said[1].startswith(f"taskId {result['taskId']} · started"), said
        # the killed task is interrupted in the record (the new host marked it), and get_task says why
        killed = re.match(r"taskId (\S+) ·", next(m for _, m in client.progress if m and m.startswith("taskId")))
        assert killed is not None, client.progress
        is_error, record = await client.call("get_task", taskId=killed[1])
        assert not is_error and record["status"] == "interrupted", record
        assert record["result"]["success"] is False and "tabpilot's host stopped" in record["result"]["data"], record
        assert not problems, problems
        assert (await page_record(await tab_at(harness.browser, url)))[0] == "Signed up as Grace."
        assert len(harness.host_pids()) == 1
        popup = await harness.open_popup(killed_tab)  # opened after the crash: the task as the record has it
        await popup.wait_for("document.body.dataset.status === 'interrupted'", "the popup to show the killed task")
        assert (await popup.text("#result-text"), await popup.js("document.getElementById('task-input').value")) == \
            (interrupted, "")
        await popup.screenshot(SCREENS / "mcp-task-interrupted.png")
        await harness.browser.close_tab(popup.tab.target_id)


async def test_cancelling_the_call_stops_the_task(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    problems: list[str] = []
    await thinking_long(harness, llm, problems)
    async with mcp_client(harness, "--approve", "always") as client:
        call = await run_on(client, llm, "Sign up, then think long", e2e_pages.url("form.html?cancel"))
        running = (await ask_host(harness, {"type": "task.list"}))["data"]["tasks"]
        assert len(running) == 1 and running[0]["task"] == "Sign up, then think long"
        is_error, text = await client.call("read_page", tab=running[0]["tabId"])  # reading would detach it
        assert is_error and f"task {running[0]['taskId']} is working in tab" in text, text
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await call

        async def ended() -> dict[str, Any] | None:
            snapshot = (await ask_host(harness, {"type": "task.get", "taskId": running[0]["taskId"]}))["data"]["task"]
            return snapshot if snapshot["status"] != "running" else None

        stopped = await wait_until(ended, "the task to stop", 30)
        assert stopped["status"] == "stopped"
        # the person watching the tab is told who stopped it: it said "Task stopped", and they had pressed nothing
        assert stopped["result"]["data"] == STOPPED_BY_CLIENT, stopped["result"]
        tab = await tab_at(harness.browser, e2e_pages.url("form.html?cancel"))
        await wait_overlay(tab, "the overlay to say who stopped it", lambda o: o["outcome"] == STOPPED_BY_CLIENT)


STOPPED_BY_CLIENT = "Stopped by the MCP client e2e-client: it cancelled its call, asked to stop the task, or closed"


async def test_the_running_task_is_stopped_by_the_id_its_first_progress_message_gives(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """A client learns the task's id while run_task still runs (from its first progress message), so it can
    look at and stop the task it is running; stopping a task that has ended says so and how it ended."""
    problems: list[str] = []
    await thinking_long(harness, llm, problems)
    async with mcp_client(harness, "--approve", "always") as client:
        call = await run_on(client, llm, "Sign up, then think long", e2e_pages.url("form.html?stop-by-id"))
        task_id = task_id_in(client.progress[0][1])
        assert task_id and not call.done(), client.progress
        is_error, running = await client.call("get_task", taskId=task_id)
        assert not is_error and running["status"] == "running" and running["task"] == "Sign up, then think long"
        is_error, stopped = await client.call("stop_task", taskId=task_id)
        assert not is_error and stopped == {"taskId": task_id, "stopped": True, "status": "stopped"}, stopped
        is_error, result = await call
        assert not is_error and (result["success"], result["taskId"], result["steps"]) == (False, task_id, 1), result
        assert result["data"] == STOPPED_BY_CLIENT, result

        # stopping it again stops nothing and says so
        is_error, again = await client.call("stop_task", taskId=task_id)
        assert not is_error and (again["stopped"], again["status"]) == (False, "stopped"), again
        assert again["message"] == f"task {task_id} had ended (stopped) already: there was nothing to stop"

        # nor does it pretend for a task that completed: its page keeps what the task did
        llm.add(*sign_up(problems, "Grace"))
        url = e2e_pages.url("form.html?completed-then-stop")
        is_error, completed = await client.call("run_task", task="Sign up Grace", url=url)
        assert not is_error and completed["success"], completed
        is_error, late = await client.call("stop_task", taskId=completed["taskId"])
        assert not is_error and (late["stopped"], late["status"]) == (False, "completed"), late
        is_error, task = await client.call("get_task", taskId=completed["taskId"])
        assert not is_error and task["status"] == "completed", task
        assert (await page_record(await tab_at(harness.browser, url)))[0] == "Signed up as Grace."
    assert not problems, problems


async def test_a_client_that_goes_away_leaves_no_task_running(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An MCP server killed mid-task (its client quit): nobody is left to hear the end, so it stops."""
    from tabpilot.mcp.hostlink import HostLink
    from tabpilot.native.endpoint import program_of
    from tabpilot.store.sites import allow_client

    problems: list[str] = []
    await thinking_long(harness, llm, problems)
    monkeypatch.setenv("TABPILOT_HOME", str(harness.tabpilot_home))  # the host's socket, as the server finds it
    link = HostLink("a server about to die")
    allow_client("a server about to die", program_of(os.getpid()))  # as `--approve always` does: the host starts
    # only an allowed task
    page = e2e_pages.url("form.html?orphan")
    asked = await link.request("approval.ask", {"task": "Sign up, then hang", "newTab": True, "url": page})
    assert asked["decision"] == "always"
    tab = (await link.request("tabs.create", {"url": "about:blank"}))["tab"]["tabId"]
    task_id = (await link.request("task.start", {"task": "Sign up, then hang", "tabId": tab, "url": page}))["taskId"]
    updates = link.updates(task_id)
    while (push := await asyncio.wait_for(updates.get(), 60)) and push.get("type") != "task.event":
        pass
    await wait_until(lambda: asyncio.sleep(0, len(llm.requests) == 2), "the model's second (slow) request", 60)
    await link.close()

    async def ended() -> dict[str, Any] | None:
        snapshot = (await ask_host(harness, {"type": "task.get", "taskId": task_id}))["data"]["task"]
        return snapshot if snapshot["status"] != "running" else None

    stopped = await wait_until(ended, "the orphaned task to stop", 30)
    assert stopped["status"] == "stopped"
    assert stopped["result"]["data"] == ("Stopped: the MCP client a server about to die that asked for this task went "
                                         "away (it closed or lost its connection)"), stopped["result"]


async def test_service_worker_restart_mid_call_fails_clearly_and_the_next_call_works(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """The extension's service worker was stopped (Chromium does that to idle workers; here it is
    closed mid-task): its native port, and with it the host, go; the worker's next start brings a host."""
    problems: list[str] = []
    await thinking_long(harness, llm, problems)
    async with mcp_client(harness, "--approve", "always") as client:
        call = await run_on(client, llm, "Sign up before the restart", e2e_pages.url("form.html?restart"))
        old_hosts = harness.host_pids()
        await harness.stop_worker()
        is_error, text = await call
        assert is_error and "went away" in text, text

        await harness.browser.new_tab(e2e_pages.url("form.html?wake"))  # a tab event wakes the worker
        await harness.attach_worker()
        await harness.wait_host_connected()
        llm.add(*sign_up(problems, "Grace"))
        url = e2e_pages.url("form.html?after-restart")
        is_error, result = await client.call("run_task", task="Sign up after the restart", url=url)
        assert not is_error and result["success"], result
        assert not problems, problems
        assert (await page_record(await tab_at(harness.browser, url)))[0] == "Signed up as Grace."
        hosts = harness.host_pids()
        assert len(hosts) == 1 and hosts != old_hosts  # the old host exited: none leaked
