"""Several tasks at once through the real extension and the real host Chromium spawned: two tasks in
two tabs run together and both finish, each page's own script records its own task's typing; one is
stopped by id while the other finishes; a second task on a taken tab is refused `busy`. The requests go
the way the popup's do: through the service worker's connection to the host (`requestHost`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from e2e_support import API_KEY, Harness, act_on, done, wait_until

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import Delay, ScriptedLLMServer
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
        await wait_until(lambda tab=tab: tab.evaluate("document.readyState === 'complete'"), "the form to load")
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
