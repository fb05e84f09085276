"""Several tasks at once through the host (a real subprocess speaking frames) on a real Chromium, the
extension's relay played by `relay_support.ExtensionStandIn`: one task per tab, `busy` on a taken tab,
stop/pause/resume by task id, every push carrying its task id, and a record that stays whole and in
order under concurrent appends. The model is the scripted server over HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
from typing import Any

import pytest
import pytest_asyncio
from relay_support import ExtensionStandIn, HostUnderTest
from test_native_relay import API_KEY, DONE, act, configure, database_rows, open_tab, output
from test_native_takeover import until

from tabpilot.llm.scripted import Delay, ScriptedLLMServer, ToolCall

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]
LOCKED_ANSWER_WAIT = 8.0  # s: the requests asked while another program holds the record


@pytest_asyncio.fixture(loop_scope="module")
async def host(stand_in, tmp_path):
    running = await HostUnderTest.start(tmp_path / "tabpilot", stand_in)
    yield running
    await running.stop()


@pytest.fixture
def llm():
    server = ScriptedLLMServer([]).start()
    yield server
    server.close()


def typed_into_name(name: str, goal: str) -> Any:
    return act("Your name", "input_text", goal, text=name)


def done(text: str) -> ToolCall:
    return ToolCall("AgentOutput", output("Report", {"done": {"text": text, "success": True}}))


def for_task(script: dict[str, list[Any]]) -> Any:
    """One scripted reply for several tasks at once: answered from the script of the task named in the
    request (the requests of concurrent tasks arrive in any order)."""

    def reply(body: dict[str, Any]) -> Any:
        prompt = "\n".join(str(m.get("content")) for m in body["messages"])
        for task, replies in script.items():
            if f"<user_request>\n{task}\n</user_request>" in prompt:
                answer = replies.pop(0)
                return answer(body) if callable(answer) else answer
        raise AssertionError("a request for no known task")

    return reply


async def page_log(stand_in: ExtensionStandIn, tab_id: int) -> list[dict[str, Any]]:
    target = stand_in._targets[tab_id]
    session = (await stand_in.cdp("Target.attachToTarget", {"targetId": target, "flatten": True}))["sessionId"]
    value = await stand_in.cdp(
        "Runtime.evaluate", {"expression": "sessionStorage.getItem('agentLog') || '[]'", "returnByValue": True}, session
    )
    await stand_in.cdp("Target.detachFromTarget", {"sessionId": session})
    return json.loads(value["result"]["value"])


async def close_tabs(stand_in: ExtensionStandIn, *tab_ids: int) -> None:
    for tab_id in tab_ids:
        await stand_in.cdp("Target.closeTarget", {"targetId": stand_in._targets[tab_id]})


def pushes_of(host: HostUnderTest, task_id: str) -> list[dict[str, Any]]:
    return [p for p in host.pushes if p.get("taskId") == task_id]


async def test_two_tasks_in_two_tabs_at_once_busy_on_a_taken_tab_and_stop_one_while_the_other_finishes(
    host, stand_in, llm, pages, tmp_path
):
    await configure(host, llm)
    first_tab = await open_tab(stand_in, pages.url("agent_form.html?task=ada"))
    second_tab = await open_tab(stand_in, pages.url("agent_form.html?task=grace"))
    dispatch = for_task({
        "Type Ada": [typed_into_name("Ada", "Type Ada"), Delay(60)],  # then thinks until stopped
        "Type Grace": [typed_into_name("Grace", "Type Grace"), done("Grace typed")],
    })
    llm.add(*[dispatch] * 4)

    first = await host.request("task.start", task="Type Ada", tabId=first_tab)
    second = await host.request("task.start", task="Type Grace", tabId=second_tab)
    assert first["ok"] and second["ok"], (first, second)
    ada, grace = first["data"]["taskId"], second["data"]["taskId"]
    # a second task on a taken tab: refused, clearly; the running ones are untouched
    busy = await host.request("task.start", task="Something else", tabId=first_tab)
    assert busy["ok"] is False and busy["error"]["code"] == "busy"
    assert "already running in this tab" in busy["error"]["message"] and ada in busy["error"]["message"]
    assert "another tab" in busy["error"]["message"]

    # both run at once: each typed into its own page; Ada's task then waits on its (delayed) model
    await host.wait_push(lambda p: any(
        q["type"] == "task.event" and q["event"]["type"] == "step" for q in pushes_of(host, ada)))
    running = (await host.request("task.list"))["data"]["tasks"]
    assert {(t["taskId"], t["tabId"]) for t in running} == {(ada, first_tab), (grace, second_tab)} or \
        {(t["taskId"], t["tabId"]) for t in running} == {(ada, first_tab)}  # Grace may be done already
    by_tab = (await host.request("task.get", tabId=first_tab))["data"]["task"]
    assert by_tab["taskId"] == ada and by_tab["tabId"] == first_tab and by_tab["status"] == "running"
    assert (await host.request("task.get", taskId=grace))["data"]["task"]["tabId"] == second_tab
    several = await host.request("task.stop")  # which one? with two running it must be said
    if len(running) == 2:
        assert several["ok"] is False and several["error"]["code"] == "bad_request"

    grace_result = await host.wait_push(lambda p: p.get("taskId") == grace and p["type"] == "task.result")
    assert grace_result["result"]["success"] is True and grace_result["result"]["data"] == "Grace typed"
    assert (await host.request("task.stop", taskId=ada, timeout=15))["ok"]
    ada_status = await host.wait_push(lambda p: p.get("taskId") == ada and p.get("type") == "task.status"
                                      and p["status"] != "running")
    assert ada_status["status"] == "stopped"

    # each page's own record has its own task's typing, and only that
    assert [e["value"] for e in await page_log(stand_in, first_tab) if e["event"] == "input"][-1] == "Ada"
    assert [e["value"] for e in await page_log(stand_in, second_tab) if e["event"] == "input"][-1] == "Grace"
    assert all(e.get("value") != "Grace" for e in await page_log(stand_in, first_tab))
    # every task push names its task; the record has each task's events as pushed, in order
    assert all("taskId" in p for p in host.pushes if p["type"].startswith("task."))
    home = tmp_path / "tabpilot"
    for task_id, status in ((ada, "stopped"), (grace, "completed")):
        stored_status, events = database_rows(home, task_id)
        assert stored_status == status
        assert events == [p["event"] for p in pushes_of(host, task_id) if p["type"] == "task.event"]
    assert (await host.request("task.list"))["data"]["tasks"] == []
    hello = (await host.request("hello", extensionVersion="0.1.0"))["data"]
    assert hello["tasks"] == [] and hello["task"]["taskId"] in (ada, grace)
    await close_tabs(stand_in, first_tab, second_tab)


async def test_a_tab_a_running_task_opened_and_works_in_is_busy_for_another_task(host, stand_in, llm, pages):
    # Only the tab a task started in counted as taken: a second task started in the tab the first one had opened
    # (a link's new tab, a sign-in popup) ran in it too, two agents typing and clicking in one page.
    await configure(host, llm)
    first_tab = await open_tab(stand_in, pages.url("agent_form.html?task=opener"))
    opened_url = pages.url("agent_form.html?task=opened")
    llm.add(ToolCall("AgentOutput", output("Open it", {"go_to_url": {"url": opened_url, "new_tab": True}})),
            Delay(60))  # then thinks until stopped
    started = await host.request("task.start", task="Open the form in a new tab", tabId=first_tab)
    assert started["ok"], started
    task_id = started["data"]["taskId"]
    await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.event"
                         and p["event"]["type"] == "step")
    [opened] = [tab_id for tab_id in stand_in._targets if tab_id != first_tab
                and any(t["url"] == opened_url for t in (await stand_in.cdp("Target.getTargets"))["targetInfos"]
                        if t["targetId"] == stand_in._targets[tab_id])]
    busy = await host.request("task.start", task="Something else", tabId=opened)
    assert busy["ok"] is False and busy["error"]["code"] == "busy", busy
    assert task_id in busy["error"]["message"]
    assert (await host.request("task.stop", taskId=task_id, timeout=15))["ok"]
    await close_tabs(stand_in, first_tab, opened)


def other_tabs(body: dict[str, Any]) -> str:
    """The 'Other tabs:' line of the page state the model was sent last."""
    last = [m for m in body["messages"] if m.get("role") == "user"][-1]
    return next((line for line in str(last["content"]).splitlines() if line.startswith("Other tabs:")), "")


async def test_an_all_tabs_task_neither_lists_nor_switches_into_another_running_tasks_tab_until_it_ends(
    host, stand_in, llm, pages
):
    # A task allowed all tabs switched into a tab another running task worked in: two agents in one page.
    await configure(host, llm)
    roaming_tab = await open_tab(stand_in, pages.url("agent_form.html?task=roaming"))
    held_tab = await open_tab(stand_in, pages.url("agent_form.html?task=held"))
    seen: list[str] = []
    numbers: list[int] = []
    holder_started, holder_ended = threading.Event(), threading.Event()

    def switch_after(event: threading.Event) -> Any:
        def reply(body: dict[str, Any]) -> Any:
            seen.append(other_tabs(body))
            if not numbers:  # the held tab's number, as listed before the other task took it
                numbers.extend(int(n) for n in re.findall(r"\[(\d+)\][^;]*task=held", seen[0]))
            assert event.wait(30), "the test did not go on"
            return ToolCall("AgentOutput", output("Switch", {"switch_tab": {"tab_id": numbers[0]}}))
        return reply

    def finish(body: dict[str, Any]) -> Any:
        seen.append(other_tabs(body))
        return done("Switched")

    llm.add(*[for_task({
        "Roam the tabs": [switch_after(holder_started), switch_after(holder_ended), finish],
        "Hold this tab": [Delay(60)],  # thinks until stopped
    })] * 4)
    roaming = await host.request("task.start", task="Roam the tabs", tabId=roaming_tab,
                                 config={"experimentalIncludeAllTabs": True})
    assert roaming["ok"], roaming
    roaming_id = roaming["data"]["taskId"]
    await until(lambda: numbers)  # the roaming task has read its page, the held tab listed (before the other task)
    holder = await host.request("task.start", task="Hold this tab", tabId=held_tab)
    assert holder["ok"], holder
    holder_id = holder["data"]["taskId"]
    holder_started.set()

    def steps() -> list[dict[str, Any]]:
        return [p["event"] for p in pushes_of(host, roaming_id)
                if p["type"] == "task.event" and p["event"]["type"] == "step"]

    await host.wait_push(lambda p: len(steps()) >= 1)
    refused = steps()[0]["action"]["output"]
    assert f"Tab {numbers[0]} is in use by another running task ({holder_id})" in refused, refused
    await until(lambda: len(seen) >= 2)  # its next look at the tabs
    assert "task=held" not in seen[1], seen
    # held by nobody once that task ends: listed and switched to again
    assert (await host.request("task.stop", taskId=holder_id, timeout=15))["ok"]
    await host.wait_push(lambda p: p.get("taskId") == holder_id and p.get("type") == "task.status"
                         and p["status"] != "running")
    holder_ended.set()
    result = await host.wait_push(lambda p: p.get("taskId") == roaming_id and p["type"] == "task.result")
    assert result["result"]["success"] is True, result
    assert steps()[1]["action"]["output"].startswith(f"Switched to tab {numbers[0]} ("), steps()
    await close_tabs(stand_in, roaming_tab, held_tab)


async def test_four_tasks_at_once_each_recorded_whole_and_in_order(host, stand_in, llm, pages, tmp_path):
    await configure(host, llm)
    names = ["Ada", "Grace", "Linus", "Barbara"]
    tabs = [await open_tab(stand_in, pages.url(f"agent_form.html?n={n}")) for n in names]
    script = {f"Type {n}": [typed_into_name(n, f"Type {n}"), typed_into_name(n + "!", "Again"), done(f"{n} typed")]
              for n in names}
    llm.add(*[for_task(script)] * (3 * len(names)))
    replies = await asyncio.gather(*(host.request("task.start", task=f"Type {n}", tabId=t)
                                     for n, t in zip(names, tabs, strict=True)))
    assert all(r["ok"] for r in replies), replies
    ids = [r["data"]["taskId"] for r in replies]
    results = [await host.wait_push(lambda p, i=i: p.get("taskId") == i and p["type"] == "task.result", timeout=120)
               for i in ids]
    assert [r["result"]["data"] for r in results] == [f"{n} typed" for n in names]
    home = tmp_path / "tabpilot"
    for task_id in ids:
        status, events = database_rows(home, task_id)
        pushed = [p["event"] for p in pushes_of(host, task_id) if p["type"] == "task.event"]
        assert status == "completed" and events == pushed
        assert [e["stepIndex"] for e in events if e["type"] == "step"] == [0, 1, 2]
    with sqlite3.connect(f"file:{home / 'data' / 'tasks.sqlite3'}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT task_id, seq FROM events ORDER BY task_id, seq").fetchall()
    for task_id in ids:
        assert [seq for t, seq in rows if t == task_id] == list(range(len(database_rows(home, task_id)[1])))
    for tab_id, name in zip(tabs, names, strict=True):
        assert [e["value"] for e in await page_log(stand_in, tab_id) if e["event"] == "input"][-1] == name + "!"
    await close_tabs(stand_in, *tabs)


async def test_a_new_task_started_on_the_final_status_push_is_not_busy(host, stand_in, llm, pages):
    await configure(host, llm)
    tab_id = await open_tab(stand_in, pages.url("agent_form.html"))
    llm.add(DONE, DONE)
    first = (await host.request("task.start", task="Say done", tabId=tab_id))["data"]["taskId"]
    started: list[asyncio.Future[dict[str, Any]]] = []
    original = host._route

    def route(message: dict[str, Any]) -> None:  # react the moment the final status arrives
        original(message)
        if message.get("taskId") == first and message.get("type") == "task.status" and message["status"] != "running":
            started.append(asyncio.ensure_future(host.request("task.start", task="Say done again", tabId=tab_id)))

    host._route = route
    try:
        await host.wait_push(lambda p: p.get("taskId") == first and p["type"] == "task.result")
        assert started, "no final status was pushed"
        again = await started[0]
    finally:
        host._route = original
    assert again["ok"], again
    second = again["data"]["taskId"]
    result = await host.wait_push(lambda p: p.get("taskId") == second and p["type"] == "task.result")
    assert result["result"]["success"] is True
    await close_tabs(stand_in, tab_id)


async def test_a_task_is_said_ended_once_its_tab_is_free_for_the_next_one(host, stand_in, llm, pages):
    """The host recorded a task's end, then let go of its tab (the extension detaches the debugger: up to seconds when
    it is slow to answer), then pushed the end. Asked meanwhile, task.get said it ended, with its result, and a task
    started on that tab was refused as busy: a popup opened then showed the end and its Run failed. Until the end is
    pushed, task.get, task.list and hello say the task runs; then a task starts on the tab at once."""
    await configure(host, llm)
    tab_id = await open_tab(stand_in, pages.url("agent_form.html"))
    llm.add(DONE, DONE)
    stand_in.held["cdp.detach"] = released = asyncio.Event()
    try:
        first = (await host.request("task.start", task="Say done", tabId=tab_id))["data"]["taskId"]
        await until(lambda: any(r["type"] == "cdp.detach" for r in stand_in.requests))  # the run lets go of the tab
        snapshot = (await host.request("task.get", taskId=first))["data"]["task"]
        assert snapshot["status"] == "running" and "result" not in snapshot, snapshot
        assert [t["taskId"] for t in (await host.request("task.list"))["data"]["tasks"]] == [first]
        assert [t["taskId"] for t in (await host.request("hello", extensionVersion="test"))["data"]["tasks"]] == [first]
        assert not [p for p in pushes_of(host, first) if p["type"] == "task.result"]  # nobody heard of the end yet
    finally:
        del stand_in.held["cdp.detach"]
        released.set()
    await host.wait_push(lambda p: p.get("taskId") == first and p["type"] == "task.result")
    snapshot = (await host.request("task.get", taskId=first))["data"]["task"]
    assert (snapshot["status"], snapshot["result"]["success"]) == ("completed", True), snapshot
    again = await host.request("task.start", task="Say done again", tabId=tab_id)
    assert again["ok"], again
    result = await host.wait_push(lambda p: p.get("taskId") == again["data"]["taskId"] and p["type"] == "task.result")
    assert result["result"]["success"] is True
    await close_tabs(stand_in, tab_id)


async def test_pause_and_resume_a_task_through_the_host(host, stand_in, llm, pages, tmp_path):
    await configure(host, llm)
    tab_id = await open_tab(stand_in, pages.url("agent_form.html"))
    llm.add(Delay(60, then=done("never acted on")), typed_into_name("Ada", "Type Ada"), done("Ada typed"))
    task_id = (await host.request("task.start", task="Type Ada", tabId=tab_id))["data"]["taskId"]
    await host.wait_push(lambda p: p.get("taskId") == task_id and p.get("activity", {}).get("type") == "thinking")
    for _ in range(200):
        if llm.requests:
            break
        await asyncio.sleep(0.05)
    assert (await host.request("task.pause", taskId=task_id))["ok"]
    paused = await host.wait_push(
        lambda p: p.get("taskId") == task_id and p.get("activity", {}).get("type") == "paused")
    assert paused["activity"]["reason"]
    for _ in range(200):  # the model call in flight is hung up
        if llm.dropped:
            break
        await asyncio.sleep(0.05)
    assert llm.dropped == [0]
    await asyncio.sleep(0.5)
    assert len(llm.requests) == 1 and await page_log(stand_in, tab_id) == []  # nothing asked, nothing done
    snapshot = (await host.request("task.get", taskId=task_id))["data"]["task"]
    assert snapshot["status"] == "running" and snapshot["activity"]["type"] == "paused"
    assert (await host.request("task.resume", taskId=task_id))["ok"]
    result = await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.result")
    assert result["result"]["success"] is True and len(llm.requests) == 3
    assert [e["value"] for e in await page_log(stand_in, tab_id) if e["event"] == "input"][-1] == "Ada"
    resumed = [p for p in pushes_of(host, task_id) if p.get("activity", {}).get("type") == "resumed"]
    assert len(resumed) == 1
    # a task that has ended cannot be paused; an unknown one is not found
    ended = await host.request("task.pause", taskId=task_id)
    assert ended["ok"] is False and ended["error"]["code"] == "bad_request"
    unknown = await host.request("task.resume", taskId="nope")
    assert unknown["ok"] is False and unknown["error"]["code"] == "not_found"
    assert (await host.request("task.pause"))["error"]["code"] == "bad_request"  # taskId is required
    await close_tabs(stand_in, tab_id)


async def test_an_event_the_record_refuses_fails_the_task_and_the_record_says_so(host, stand_in, llm, pages, tmp_path):
    await configure(host, llm)
    tab_id = await open_tab(stand_in, pages.url("agent_form.html"))
    database = tmp_path / "tabpilot" / "data" / "tasks.sqlite3"
    assert (await host.request("history.list"))["ok"]  # the record exists
    with sqlite3.connect(database) as db:  # the disk refuses every step row from now on
        db.execute("CREATE TRIGGER refuse_steps BEFORE INSERT ON events WHEN NEW.type = 'step'"
                   " BEGIN SELECT RAISE(ABORT, 'disk I/O error (simulated)'); END")
    llm.add(typed_into_name("Ada", "Type Ada"), typed_into_name("Ada again", "Again"), DONE)
    task_id = (await host.request("task.start", task="Type Ada", tabId=tab_id))["data"]["taskId"]
    result = await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.result")
    assert result["result"]["success"] is False
    assert "could not be saved" in result["result"]["data"] and "disk I/O error" in result["result"]["data"]
    final = [p for p in pushes_of(host, task_id) if p["type"] == "task.status"][-1]
    assert final["status"] == "error"
    status, events = database_rows(tmp_path / "tabpilot", task_id)
    assert status == "error"
    assert events[-1]["type"] == "error" and "could not be saved" in events[-1]["message"]
    assert events[-1]["code"] == "not_saved" and "disk I/O error" in events[-1]["params"]["reason"]
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as db:
        stored = json.loads(db.execute("SELECT result FROM tasks WHERE id = ?", (task_id,)).fetchone()[0])
    assert stored["success"] is False and "could not be saved" in stored["data"]
    assert len(llm.requests) == 1  # stopped at once: no further step went unrecorded
    with sqlite3.connect(database) as db:
        db.execute("DROP TRIGGER refuse_steps")
    assert API_KEY not in json.dumps(host.pushes)
    await close_tabs(stand_in, tab_id)


async def test_another_program_locking_the_record_holds_up_no_request_and_loses_no_event(
    host, stand_in, llm, pages, tmp_path
):
    # Found attacking the record: a program holding the database's write lock (a backup, the sqlite3 shell, a long
    # `tabpilot history delete`) froze the whole host while a task ran: each event was written on the event loop,
    # waiting out SQLite's 10 s busy timeout, so ping, the relay and every other task stalled with it (and a lock
    # held over 10 s failed the task, its step lost). Now only the record's writes wait; the tasks go on after.
    await configure(host, llm)
    database = tmp_path / "tabpilot" / "data" / "tasks.sqlite3"
    assert (await host.request("history.list"))["ok"]  # the record exists
    locked, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        with contextlib.closing(sqlite3.connect(database, isolation_level=None)) as db:
            db.execute("BEGIN EXCLUSIVE")
            locked.set()
            release.wait(30)
            db.execute("COMMIT")

    def lock_then_type(body: dict[str, Any]) -> Any:  # the model answers while another program takes the lock
        threading.Thread(target=hold_the_lock, daemon=True).start()
        locked.wait(10)
        return typed_into_name("Ada", "Type Ada")(body)

    ada_tab = await open_tab(stand_in, pages.url("agent_form.html?locked=ada"))
    grace_tab = await open_tab(stand_in, pages.url("agent_form.html?locked=grace"))
    dispatch = for_task({"Type Ada": [lock_then_type, done("Ada typed")],
                         "Type Grace": [typed_into_name("Grace", "Type Grace"), done("Grace typed")]})
    llm.add(*[dispatch] * 4)
    ada = (await host.request("task.start", task="Type Ada", tabId=ada_tab))["data"]["taskId"]
    await host.wait_push(lambda p: p.get("taskId") == ada and p["type"] == "task.event" and
                         p["event"]["type"] == "step")  # its step is told; its write waits on the lock
    grace_start = asyncio.ensure_future(host.request("task.start", task="Type Grace", tabId=grace_tab))
    for _ in range(3):
        # answered while the record is locked (until `release`, which comes after these): a host that waited for
        # the record would leave them unanswered past their timeout
        assert (await host.request("ping", timeout=LOCKED_ANSWER_WAIT))["ok"]
        task = (await host.request("task.get", taskId=ada, timeout=LOCKED_ANSWER_WAIT))["data"]["task"]
        assert task["status"] == "running"
        await asyncio.sleep(0.3)
    assert locked.is_set() and not release.is_set()
    await asyncio.sleep(9.5)  # over SQLite's own 10 s wait: the writes wait longer, the task does not fail
    release.set()
    assert (await grace_start)["ok"]
    grace = (await grace_start)["data"]["taskId"]
    for task_id, text in ((ada, "Ada typed"), (grace, "Grace typed")):
        result = await host.wait_push(lambda p, t=task_id: p.get("taskId") == t and p["type"] == "task.result")
        assert result["result"] == {**result["result"], "success": True, "data": text}
        status, events = database_rows(tmp_path / "tabpilot", task_id)
        assert status == "completed"
        assert events == [p["event"] for p in pushes_of(host, task_id) if p["type"] == "task.event"]
        assert [e["action"]["name"] for e in events if e["type"] == "step"] == ["input_text", "done"]
    await close_tabs(stand_in, ada_tab, grace_tab)


async def test_a_detach_in_one_tasks_tab_stops_that_task_only(host, stand_in, llm, pages, tmp_path):
    await configure(host, llm)
    kept_tab = await open_tab(stand_in, pages.url("agent_form.html?kept"))
    cancelled_tab = await open_tab(stand_in, pages.url("agent_form.html?cancelled"))
    dispatch = for_task({
        "Keep going": [Delay(3, then=typed_into_name("Ada", "Type Ada")), done("kept going")],
        "Be cancelled": [Delay(60)],
    })
    llm.add(*[dispatch] * 3)
    kept = (await host.request("task.start", task="Keep going", tabId=kept_tab))["data"]["taskId"]
    cancelled = (await host.request("task.start", task="Be cancelled", tabId=cancelled_tab))["data"]["taskId"]
    for _ in range(200):
        if len(llm.requests) >= 2:
            break
        await asyncio.sleep(0.05)
    await stand_in.detach_by_user(cancelled_tab)  # Cancel pressed for that tab's debugger only
    stopped = await host.wait_push(lambda p: p.get("taskId") == cancelled and p["type"] == "task.result")
    assert "Cancel" in stopped["result"]["data"]
    result = await host.wait_push(lambda p: p.get("taskId") == kept and p["type"] == "task.result", timeout=60)
    assert result["result"]["success"] is True and result["result"]["data"] == "kept going"
    assert [e["value"] for e in await page_log(stand_in, kept_tab) if e["event"] == "input"][-1] == "Ada"
    home = tmp_path / "tabpilot"
    assert database_rows(home, cancelled)[0] == "stopped" and database_rows(home, kept)[0] == "completed"
    await close_tabs(stand_in, kept_tab, cancelled_tab)


def record_without_timing(home: Any, task_id: str) -> dict[str, Any]:
    """A task's record as the store keeps it, minus what differs run to run: ids, times, who started
    it, and token counts (the scripted server estimates them from the prompt, which lists the
    browser's other tabs)."""
    with sqlite3.connect(f"file:{home / 'data' / 'tasks.sqlite3'}?mode=ro", uri=True) as db:
        db.row_factory = sqlite3.Row
        row = db.execute("SELECT task, status, url, model, steps, result FROM tasks WHERE id = ?",
                         (task_id,)).fetchone()
        events = [json.loads(r[0]) for r in db.execute("SELECT body FROM events WHERE task_id = ? ORDER BY seq",
                                                       (task_id,))]
    for event in events:
        event.pop("usage", None)
    return {**dict(row), "result": json.loads(row["result"]), "events": events}


async def test_the_same_task_gives_the_same_record_from_the_host_and_from_tabpilot_run(
    browser, host, stand_in, llm, pages, tmp_path
):
    home = tmp_path / "tabpilot"
    await configure(host, llm)  # the one settings file both read
    url = pages.url("agent_form.html?same")
    task = "Type Grace Hopper as the name"

    def script() -> list[Any]:
        return [typed_into_name("Grace Hopper", "Type the name"), typed_into_name("", "Clear it"), done("Typed")]

    llm.add(*script())
    tab_id = await open_tab(stand_in, url)
    host_task = (await host.request("task.start", task=task, tabId=tab_id))["data"]["taskId"]
    await host.wait_push(lambda p: p.get("taskId") == host_task and p["type"] == "task.result")
    await close_tabs(stand_in, tab_id)

    llm.add(*script())
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(TABPILOT_HOME=str(home), PYTHONUNBUFFERED="1")
    proc = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "tabpilot", "run", task, "--cdp-url", browser.launched.ws_url,
                         "--url", url], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with sqlite3.connect(f"file:{home / 'data' / 'tasks.sqlite3'}?mode=ro", uri=True) as db:
        cli_task = db.execute("SELECT id FROM tasks WHERE source = 'cli'").fetchone()[0]

    from_host, from_cli = record_without_timing(home, host_task), record_without_timing(home, cli_task)
    assert from_host["status"] == "completed" and [e["type"] for e in from_host["events"]] == ["step"] * 3
    assert from_cli == from_host
    for info in await browser.tabs():
        if info.url == url:
            await browser.close_tab(info.target_id)


async def test_the_hosts_refusals_about_running_tasks_are_in_the_popups_language(host, stand_in, llm, pages):
    """What the popup (or a page, an MCP client) is told when a request about running tasks cannot be done: a
    taken tab, Stop without saying which of two, actions or a hand-back with nobody at the controls, a page that
    will not open — in the extension's language (its hello), the English to an English extension."""
    await configure(host, llm)
    first_tab = await open_tab(stand_in, pages.url("agent_form.html?words=1"))
    second_tab = await open_tab(stand_in, pages.url("agent_form.html?words=2"))
    third_tab = await open_tab(stand_in, pages.url("agent_form.html?words=3"))
    llm.add(Delay(60, then=done("never")), Delay(60, then=done("never")))  # both think until stopped
    first = (await host.request("task.start", task="Think one", tabId=first_tab))["data"]["taskId"]
    second = (await host.request("task.start", task="Think two", tabId=second_tab))["data"]["taskId"]
    action = {"kind": "click", "target": 'button "Go"', "url": "https://x.example/", "at": 1}
    words = {
        "zh-CN": (f"这个标签页中已经有任务在运行（{first}）；请先停止它，或换一个标签页",
                  f"有 2 个任务在运行（{first}, {second}）；请指明要停止哪一个（taskId）",
                  f"用户没有任务 {first} 的控制权（没有 task.takeover，或已经交还）：这些操作没有被记录",
                  f"用户没有任务 {first} 的控制权",
                  "无法打开 http://127.0.0.1:1/："),
        "en": (f"a task is already running in this tab ({first}); stop it or use another tab",
               f"2 tasks are running ({first}, {second}); say which one to stop (taskId)",
               f"the user does not have the controls of task {first} (no task.takeover, or it was handed back): "
               "these actions were not recorded",
               f"the user does not have the controls of task {first}",
               "could not open http://127.0.0.1:1/: "),
    }
    for language, (busy, which, actions, hand_back, cannot_open) in words.items():
        assert (await host.request("hello", extensionVersion="0.1.0", uiLanguage=language))["ok"]
        said = await host.request("task.start", task="Another", tabId=first_tab)
        assert said["error"] == {"message": busy, "code": "busy"}, said
        said = await host.request("task.stop")
        assert said["error"] == {"message": which, "code": "bad_request"}, said
        said = await host.request("takeover.actions", taskId=first, actions=[action])
        assert said["error"] == {"message": actions, "code": "bad_request"}, said
        said = await host.request("task.handback", taskId=first)
        assert said["error"] == {"message": hand_back, "code": "bad_request"}, said
        said = await host.request("task.start", task="Open it", tabId=third_tab, url="http://127.0.0.1:1/")
        assert said["error"]["code"] == "tab" and said["error"]["message"].startswith(cannot_open), said
    for task_id in (first, second):
        assert (await host.request("task.stop", taskId=task_id, timeout=15))["ok"]
    await close_tabs(stand_in, first_tab, second_tab, third_tab)


async def test_a_task_on_a_page_its_domains_keep_the_agent_from_is_refused_before_anything_runs(
    host, stand_in, llm, pages
):
    # Found by a new user: with 127.0.0.1 blocked (or only example.org allowed), a task started from the popup on a
    # 127.0.0.1 page ran there and typed into it; the guard only stopped going somewhere. Each is refused, twice,
    # with what to do, before any model call; a task on a page it may use still runs.
    await configure(host, llm)
    tab = await open_tab(stand_in, pages.url("agent_form.html?start=refused"))
    refusals = [
        ({"blockedDomains": ["127.0.0.1"]}, "127.0.0.1 is on the blocked domains list (127.0.0.1)"),
        ({"blockedDomains": [], "allowedDomains": ["example.org"]},
         "not among this task's allowed domains (example.org)"),
    ]
    for settings, words in refusals:
        assert (await host.request("settings.set", **settings))["ok"]
        for _ in range(2):
            refused = await host.request("task.start", task="Type Ada", tabId=tab)
            assert refused["ok"] is False and refused["error"]["code"] == "not_allowed", refused
            assert words in refused["error"]["message"] and "Start the task on" in refused["error"]["message"]
    # an MCP client's page to open first is checked before it opens
    opened = await host.request("task.start", task="Type Ada", tabId=tab, url="https://elsewhere.test/")
    assert opened["ok"] is False and "elsewhere.test is not among" in opened["error"]["message"], opened
    for broken in ("javascript:alert(1)", "   ", "http://[::1"):  # the client's to fix: said so, not a host bug
        said = await host.request("task.start", task="Type Ada", tabId=tab, url=broken)
        assert said["ok"] is False and said["error"]["code"] == "tab", said
    assert llm.requests == [] and await page_log(stand_in, tab) == []
    assert (await host.request("history.list"))["data"]["tasks"] == []  # nothing recorded
    assert (await host.request("settings.set", allowedDomains=[]))["ok"]
    llm.add(typed_into_name("Ada", "Type Ada"), done("Ada typed"))
    started = await host.request("task.start", task="Type Ada", tabId=tab)
    assert started["ok"], started
    task_id = started["data"]["taskId"]
    await host.wait_push(lambda p: p.get("taskId") == task_id and p["type"] == "task.result")
    assert [entry.get("value") for entry in await page_log(stand_in, tab) if entry.get("value")][-1:] == ["Ada"]
    await close_tabs(stand_in, tab)
