"""Several tasks at once through the real extension and the real host Chromium spawned: two tasks in
two tabs run together and both finish, each page's own script records its own task's typing; one is
stopped by id while the other finishes; a second task on a taken tab is refused `busy`. The requests go
the way the popup's do: through the service worker's connection to the host (`requestHost`). The popup
opened on one tab shows that tab's task only, and lists the other tabs' running tasks (Switch to, Stop)."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from e2e_support import (
    API_KEY,
    EXTENSION_ORIGIN,
    PAGE_LOADED,
    SCREENS,
    Harness,
    PopupPage,
    act_on,
    agent_output,
    done,
    run_in_popup,
    task_row,
    wait_status,
    wait_until,
)
from user_support import open_side_panel

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import Delay, ScriptedLLMServer, ToolCall
from tabpilot.localfiles import LocalFiles

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


async def ask_host(harness: Harness, message: dict[str, Any]) -> dict[str, Any]:
    """One request to the host over the worker's native port, answered as the popup gets it."""
    return await harness.sw(
        f"try {{ ({{ok: true, data: await requestHost({json.dumps(message)})}}) }}"
        " catch (e) { ({ok: false, message: e.message, code: e.code}) }",
        timeout=30,
    )


async def configure(harness: Harness, llm: ScriptedLLMServer) -> None:
    reply = await ask_host(harness, {"type": "settings.set", "baseURL": llm.base_url, "model": "scripted",
                                     "apiKey": API_KEY, "maxSteps": 12})
    assert reply["ok"], reply


async def start(harness: Harness, tab: Tab, task: str) -> str:
    reply = await ask_host(harness, {"type": "task.start", "task": task, "tabId": await harness.chrome_tab_id(tab),
                                     "source": "popup"})
    assert reply["ok"], reply
    return str(reply["data"]["taskId"])


async def ended(harness: Harness, task_id: str, timeout: float = 90) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        snapshot = (await ask_host(harness, {"type": "task.get", "taskId": task_id}))["data"]["task"]
        return snapshot if snapshot and snapshot["status"] != "running" else None

    return await wait_until(probe, f"task {task_id} to end", timeout)


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


@pytest_asyncio.fixture(loop_scope="module")
async def two_tabs(harness: Harness, e2e_pages: LocalFiles) -> AsyncIterator[list[Tab]]:
    """Two form pages, each the visible tab of its own window (input into a background tab is another
    matter: see bench/)."""
    tabs = []
    for n in (1, 2):
        created = await harness.browser.connection.root.send(
            "Target.createTarget", {"url": e2e_pages.url(f"form.html?tab={n}"), "newWindow": True}
        )
        tabs.append(await harness.browser.attach(created["targetId"]))
    for tab in tabs:
        await wait_until(lambda tab=tab: tab.evaluate(PAGE_LOADED), "the form to load")
    yield tabs
    for tab in tabs:
        if not tab.closed:
            await harness.browser.close_tab(tab.target_id)


async def typed_names(tab: Tab) -> list[str]:
    received = await tab.evaluate("window.received")
    return [e["value"] for e in received if e["target"] == "name" and e["type"] == "input" and e["trusted"]]


async def test_two_tasks_in_two_tabs_run_at_once_and_a_taken_tab_is_busy(
    harness: Harness, llm: ScriptedLLMServer, two_tabs: list[Tab]
) -> None:
    problems: list[str] = []
    first, second = two_tabs
    dispatch = for_task({
        "Type Ada": [act_on("Full name", "input_text", "Type Ada", problems, text="Ada Lovelace"), done("Ada typed")],
        "Type Grace": [act_on("Full name", "input_text", "Type Grace", problems, text="Grace Hopper"),
                       done("Grace typed")],
    })
    llm.add(*[dispatch] * 4)
    await configure(harness, llm)
    ada = await start(harness, first, "Type Ada")
    grace = await start(harness, second, "Type Grace")
    busy = await ask_host(harness, {"type": "task.start", "task": "Another", "source": "popup",
                                    "tabId": await harness.chrome_tab_id(first)})
    running = (await ask_host(harness, {"type": "task.list"}))["data"]["tasks"]
    assert busy["ok"] is False and busy["code"] == "busy", busy
    assert "already running in this tab" in busy["message"] and "another tab" in busy["message"]

    ada_end, grace_end = await ended(harness, ada), await ended(harness, grace)
    assert not problems, problems
    assert (ada_end["status"], ada_end["result"]["data"]) == ("completed", "Ada typed")
    assert (grace_end["status"], grace_end["result"]["data"]) == ("completed", "Grace typed")
    assert ada_end["tabId"] == await harness.chrome_tab_id(first)
    # each page's own script saw its own task's trusted typing, and nothing of the other's
    assert (await typed_names(first))[-1] == "Ada Lovelace" and (await typed_names(second))[-1] == "Grace Hopper"
    assert not any("Grace" in v for v in await typed_names(first))
    assert not any("Ada" in v for v in await typed_names(second))
    # both were running at the same time (the busy refusal came while the first one ran)
    assert {t["taskId"] for t in running} <= {ada, grace} and ada in {t["taskId"] for t in running}
    await wait_until(lambda: harness.sw("attachedTabs.size === 0"), "the worker to release both tabs")


def other_tabs(body: dict[str, Any]) -> str:
    """The 'Other tabs:' line of the page state the model was sent last."""
    last = [m for m in body["messages"] if m.get("role") == "user"][-1]
    return next((line for line in str(last["content"]).splitlines() if line.startswith("Other tabs:")), "")


async def test_a_task_allowed_all_tabs_neither_lists_nor_switches_into_another_tasks_tab_until_it_ends(
    harness: Harness, llm: ScriptedLLMServer, two_tabs: list[Tab]
) -> None:
    # A task with experimentalIncludeAllTabs switched into the tab another running task worked in.
    roaming_tab, held_tab = two_tabs
    seen: list[str] = []
    numbers: list[int] = []
    held, freed = threading.Event(), threading.Event()

    def switch_after(event: threading.Event) -> Any:
        def reply(body: dict[str, Any]) -> Any:
            # the number first: the test reads it as soon as `seen` has a look (this runs in the server's thread)
            listed = other_tabs(body)
            numbers.extend([] if numbers else [int(n) for n in re.findall(r"\[(\d+)\][^;]*tab=2", listed)])
            seen.append(listed)
            assert event.wait(60), "the test did not go on"
            return ToolCall("AgentOutput", agent_output("Switch", {"switch_tab": {"tab_id": numbers[0]}}))
        return reply

    llm.add(*[for_task({"Roam the tabs": [switch_after(held), switch_after(freed), done("Switched")],
                        "Hold this tab": [Delay(60)]})] * 4)
    await configure(harness, llm)
    reply = await ask_host(harness, {"type": "task.start", "task": "Roam the tabs", "source": "popup",
                                     "tabId": await harness.chrome_tab_id(roaming_tab),
                                     "config": {"experimentalIncludeAllTabs": True}})
    assert reply["ok"], reply
    roaming = str(reply["data"]["taskId"])
    await wait_until(lambda: asyncio.sleep(0, bool(seen)), "the roaming task to look at the tabs")
    assert numbers, seen  # listed while nobody else had it
    holder = await start(harness, held_tab, "Hold this tab")
    held.set()

    async def steps() -> list[dict[str, Any]]:
        task = (await ask_host(harness, {"type": "task.get", "taskId": roaming}))["data"]["task"]
        return [e for e in task["history"] if e["type"] == "step"]

    await wait_until(lambda: asyncio.sleep(0, len(seen) >= 2), "the roaming task's second look")
    refused = (await steps())[0]["action"]["output"]
    assert f"Tab {numbers[0]} is in use by another running task ({holder})" in refused, refused
    assert "tab=2" not in seen[1], seen
    assert (await ask_host(harness, {"type": "task.stop", "taskId": holder}))["ok"]
    assert (await ended(harness, holder))["status"] == "stopped"
    freed.set()
    finished = await ended(harness, roaming)
    assert finished["status"] == "completed", finished
    switched = (await steps())[1]["action"]["output"]
    assert switched.startswith(f"Switched to tab {numbers[0]} (") and "tab=2" in switched, switched
    await wait_until(lambda: harness.sw("attachedTabs.size === 0"), "the worker to release both tabs")


async def test_stop_one_task_by_id_while_the_other_finishes(
    harness: Harness, llm: ScriptedLLMServer, two_tabs: list[Tab]
) -> None:
    problems: list[str] = []
    first, second = two_tabs
    dispatch = for_task({
        "Type then think": [act_on("Full name", "input_text", "Type Ada", problems, text="Ada"), Delay(60)],
        "Think then type": [Delay(3, then=act_on("Full name", "input_text", "Type Grace", problems, text="Grace")),
                            done("Grace typed")],
    })
    llm.add(*[dispatch] * 4)
    await configure(harness, llm)
    stopped = await start(harness, first, "Type then think")
    finished = await start(harness, second, "Think then type")
    await wait_until(lambda: typed_names(first), "the first task to type")
    assert (await ask_host(harness, {"type": "task.stop"}))["code"] == "bad_request"  # two run: say which
    assert (await ask_host(harness, {"type": "task.stop", "taskId": stopped}))["ok"]
    assert (await ended(harness, stopped))["status"] == "stopped"
    assert (await ask_host(harness, {"type": "task.get", "taskId": finished}))["data"]["task"]["status"] == "running"
    end = await ended(harness, finished)
    assert not problems, problems
    assert (end["status"], end["result"]["data"]) == ("completed", "Grace typed")
    assert (await typed_names(second))[-1] == "Grace"
    hello = await ask_host(harness, {"type": "hello", "extensionVersion": "e2e"})
    assert hello["data"]["tasks"] == [] and hello["data"]["task"]["taskId"] in (stopped, finished)


def after(gate: threading.Event, reply: Any) -> Any:
    """A scripted reply held back until the test opens `gate` (the model "thinks" until then)."""

    def held(body: dict[str, Any]) -> Any:
        gate.wait(60)
        return reply(body) if callable(reply) else reply

    return held


async def steps_pushed(harness: Harness, task_id: str, count: int) -> bool:
    """Whether the host has recorded (and so pushed) `count` steps of that task."""
    snapshot = (await ask_host(harness, {"type": "task.get", "taskId": task_id}))["data"]["task"]
    return [e["type"] for e in snapshot["history"]].count("step") >= count


def other_item(task_id: str) -> str:
    return f"#other-list .other-item[data-task-id='{task_id}']"


async def listed(popup: PopupPage) -> list[dict[str, str]]:
    """The other tasks as the popup lists them: task id, status word, task, tab label and its tooltip."""
    return await popup.js(
        "[...document.querySelectorAll('#other-list .other-item')].filter(li => !li.closest('[hidden]'))"
        ".map(li => ({taskId: li.dataset.taskId, status: li.querySelector('.pill').textContent,"
        " task: li.querySelector('.other-task').textContent, tab: li.querySelector('.other-tab').textContent,"
        " url: li.querySelector('.other-tab').title}))"
    )


async def test_the_popup_shows_its_tabs_task_and_lists_the_other_tabs_tasks_to_switch_to_or_stop(
    harness: Harness, llm: ScriptedLLMServer, two_tabs: list[Tab]
) -> None:
    problems: list[str] = []
    mine, theirs = two_tabs
    theirs_tab = await harness.chrome_tab_id(theirs)
    theirs_acts, mine_ends = threading.Event(), threading.Event()
    dispatch = for_task({
        "Type Ada here": [act_on("Full name", "input_text", "Type Ada", problems, text="Ada Lovelace"),
                          after(mine_ends, done("Ada typed"))],
        "Type Grace there": [act_on("Full name", "input_text", "Type Grace", problems, text="Grace"),
                             after(theirs_acts, act_on("Full name", "input_text", "Type Grace Hopper", problems,
                                                       text="Grace Hopper")),
                             Delay(60)],
        "Type again here": [done("Ada again")],
        "Wait there": [Delay(60)],
    })
    llm.add(*[dispatch] * 7)
    await configure(harness, llm)
    popup = await harness.open_popup(mine)
    try:
        # another tab's task, begun elsewhere while the popup is open: it joins the list from its pushes,
        # and this tab, which has no task, stays idle
        theirs_id = await start(harness, theirs, "Type Grace there")
        await popup.wait_for(f"!!document.querySelector({json.dumps(other_item(theirs_id))})",
                             "the other tab's task in the popup's list")
        await wait_until(lambda: typed_names(theirs), "the other task's first step")
        assert await popup.visible("#idle-hint") and not await popup.visible("#task-head")
        assert await popup.js("ui.taskId") is None

        # Run on this tab while the other tab's task runs
        mine_id = await run_in_popup(popup, "Type Ada here")
        await popup.wait_for("document.querySelectorAll('#timeline .card-step').length >= 1", "this task's step")
        theirs_acts.set()  # the other task takes a second step while this one is shown
        await wait_until(lambda: steps_pushed(harness, theirs_id, 2), "the other task's second step")
        await popup.js("ask('ping').then(() => true)")  # the popup has had every push sent before this reply
        assert await popup.js("ui.taskId") == mine_id
        assert await popup.text("#task-title") == "Type Ada here"
        assert await popup.js("document.body.dataset.status") == "running"
        cards = await popup.cards()
        assert [c["type"] for c in cards if c["type"] == "step"] == ["step"], cards
        assert "Type Ada" in cards[0]["text"] and not any("Grace" in c["text"] for c in cards), cards
        assert await listed(popup) == [{"taskId": theirs_id, "status": "Running", "task": "Type Grace there",
                                        "tab": "Signup form", "url": await theirs.url()}]
        assert await popup.visible(other_item(theirs_id) + " .other-switch")
        await popup.screenshot(SCREENS / "tasks-list.png")

        # Switch to brings the other task's tab forward (here it was behind another tab of its window)
        window = await harness.sw(f"(await chrome.tabs.get({theirs_tab})).windowId")
        cover = await harness.sw(f"(await chrome.tabs.create({{windowId: {window}, active: true}})).id")
        assert not await harness.sw(f"(await chrome.tabs.get({theirs_tab})).active")
        await popup.click(other_item(theirs_id) + " .other-switch")
        await wait_until(lambda: harness.sw(f"(await chrome.tabs.get({theirs_tab})).active"),
                         "Switch to to bring the other task's tab forward")
        await harness.sw(f"await chrome.tabs.remove({cover}); true")

        # Stop in the list stops that task, and only it
        await popup.click(other_item(theirs_id) + " .other-stop")
        await popup.wait_for("document.getElementById('other-tasks').hidden", "the stopped task to leave the list")
        assert (await ended(harness, theirs_id))["status"] == "stopped"
        assert (await ask_host(harness, {"type": "task.get", "taskId": mine_id}))["data"]["task"]["status"] == "running"
        assert await popup.js("document.body.dataset.status") == "running"

        mine_ends.set()
        assert await wait_status(popup, "completed", "error", "stopped") == "completed"
        assert await popup.text("#result-text") == "Ada typed"
        steps = [c for c in await popup.cards() if c["type"] == "step"]
        assert len(steps) == 2 and not any("Grace" in c["text"] for c in steps), steps
        recorded = task_row(harness, mine_id)["events"]
        assert [e["type"] for e in recorded if e["type"] == "step"] == ["step", "step"]
        assert [e["type"] for e in task_row(harness, theirs_id)["events"]].count("step") == 2  # pushed, not shown

        # and again: another tab's task joins the list while a second task runs on this tab
        again_id = await start(harness, theirs, "Wait there")
        await popup.wait_for(f"!!document.querySelector({json.dumps(other_item(again_id))})", "the new task listed")
        second_id = await run_in_popup(popup, "Type again here")
        assert await wait_status(popup, "completed", "error", "stopped") == "completed"
        assert await popup.text("#result-text") == "Ada again" and await popup.js("ui.taskId") == second_id
        assert [item["taskId"] for item in await listed(popup)] == [again_id]
        await popup.click(other_item(again_id) + " .other-stop")
        await popup.wait_for("document.getElementById('other-tasks').hidden", "the second stopped task to go")
        assert (await ended(harness, again_id))["status"] == "stopped"
        assert not problems, problems
    finally:
        theirs_acts.set()
        mine_ends.set()
        await harness.browser.close_tab(popup.tab.target_id)


async def test_the_side_panel_follows_its_windows_tab_between_the_tasks_it_lists(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    """Two tasks in two tabs of one window: the real side panel shows the task of the tab in front and lists
    the other; its Switch to brings that tab forward and the panel follows it; a tab with no task shows none."""
    llm.add(*[for_task({"Think here": [Delay(60)], "Think there": [Delay(60)]})] * 2)
    await configure(harness, llm)
    here, there = await harness.sw(
        f"const w = await chrome.windows.create({{url: {json.dumps(e2e_pages.url('form.html?here'))}}});"
        f" const t = await chrome.tabs.create({{windowId: w.id, url: {json.dumps(e2e_pages.url('account.html'))},"
        " active: false}); [w.tabs[0].id, t.id]"
    )
    for tab_id in (here, there):
        await wait_until(lambda tab_id=tab_id: harness.sw(f"(await chrome.tabs.get({tab_id})).status === 'complete'"),
                         "the tab to load")
    ids = {}
    for tab_id, task in ((here, "Think here"), (there, "Think there")):
        reply = await ask_host(harness, {"type": "task.start", "task": task, "tabId": tab_id, "source": "popup"})
        assert reply["ok"], reply
        ids[tab_id] = reply["data"]["taskId"]
    await wait_until(lambda: asyncio.sleep(0, len(llm.requests) >= 2), "both tasks to think")
    await harness.sw(f"await chrome.tabs.update({here}, {{active: true}}); true")

    # the real side panel, opened from the popup by a person's click on its button
    created = await harness.browser.connection.root.send(
        "Target.createTarget", {"url": f"{EXTENSION_ORIGIN}/popup.html?tabId={here}", "newWindow": True})
    popup = PopupPage(await harness.browser.attach(created["targetId"]))
    await popup.wait_for(f"ui.taskId === {json.dumps(ids[here])}", "the popup to show this tab's task")
    panel = await open_side_panel(harness, popup)  # as a person opens it
    try:
        await panel.wait_for(f"ui.taskId === {json.dumps(ids[here])} && ui.targetTabId === {here}",
                             "the side panel to show the task of the tab in front")
        await panel.wait_for(f"!!document.querySelector({json.dumps(other_item(ids[there]))})", "the other task listed")
        assert [item["task"] for item in await listed(panel)] == ["Think there"]

        await panel.click(other_item(ids[there]) + " .other-switch")
        await panel.wait_for(f"ui.taskId === {json.dumps(ids[there])} && ui.targetTabId === {there}",
                             "the side panel to follow the tab brought forward")
        assert await panel.text("#task-title") == "Think there"
        await panel.wait_for(f"!!document.querySelector({json.dumps(other_item(ids[here]))})", "the first task listed")
        assert [item["task"] for item in await listed(panel)] == ["Think here"]

        # a tab with no task: nothing of the tab before it stays in the view; both tasks are listed
        blank = await harness.sw(f"(await chrome.tabs.create({{windowId: (await chrome.tabs.get({here})).windowId,"
                                 " active: true})).id")
        await panel.wait_for(f"ui.targetTabId === {blank} && ui.taskId === null", "the side panel to follow")
        assert await panel.visible("#idle-hint") and not await panel.visible("#task-head")
        assert await panel.js("document.querySelectorAll('#timeline .card').length") == 0
        await panel.wait_for("document.querySelectorAll('#other-list .other-item').length === 2", "both listed")
        for task_id in ids.values():
            await panel.click(other_item(task_id) + " .other-stop")
            assert (await ended(harness, task_id))["status"] == "stopped"
        await panel.wait_for("document.getElementById('other-tasks').hidden", "the list to empty")
    finally:
        await harness.sw(f"await chrome.windows.remove((await chrome.tabs.get({here})).windowId); true")
