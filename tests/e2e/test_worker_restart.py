"""A task outlives an MV3 service-worker restart (issue 10), end to end: real Chromium, the real extension,
the real host Chromium spawns, the scripted model.

Stopping the extension's service worker (DevTools' stop, Chromium's idle kill, an update) closes its native
port; Chromium closes the host's stdin and the host must exit within ~2 s. The page's overlay reconnecting
wakes a new worker, which spawns a new host: that host goes on with the task from the record (the history
is the agent's memory), with the user's takeover still under way if it was."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from e2e_support import Harness, act_on, done, wait_until
from test_takeover import (
    account_tab,  # noqa: F401  # the fixture
    account_told,
    ask_host,
    configure,
    controlled_by_user,
    ended,
    start,
    takeovers,
)
from user_support import (
    overlay,
    page_box,
    press_overlay,
    screenshot,
    type_in_overlay,
    user_click,
    user_fill,
    wait_overlay,
)

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import Delay, ScriptedLLMServer
from tabpilot.localfiles import LocalFiles

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


async def stop_worker(harness: Harness) -> list[int]:
    """Stop the extension's service worker (as DevTools' stop or Chromium's idle kill does); the hosts then."""
    old_hosts = harness.host_pids()
    assert len(old_hosts) == 1, old_hosts
    await harness.stop_worker()
    return old_hosts


async def worker_back(harness: Harness, old_hosts: list[int], watch: Tab | None = None) -> list[Any]:
    """Wait for the new worker and its new host (what wakes the worker is the page: capture.js reporting,
    or the overlay reconnecting 500 ms after its port closed). The old host must be gone: none leaks.
    Returns what the overlay in `watch` showed meanwhile, looked at every 50 ms."""
    shown: list[Any] = []

    async def new_host() -> list[int] | None:
        if watch is not None:
            shown.append(await overlay(watch))
        hosts = harness.host_pids()
        return hosts if hosts and not set(hosts) & set(old_hosts) else None

    hosts = await wait_until(new_host, "the old host to exit and a new one to start", 30)
    assert len(hosts) == 1, hosts
    await harness.attach_worker()
    await harness.wait_host_connected()
    return shown


def clicks_on(received: list[dict[str, Any]], target: str) -> int:
    return sum(1 for e in received if e["type"] == "click" and e["target"] == target)


async def test_a_takeover_and_a_step_in_flight_survive_service_worker_restarts(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab  # noqa: F811
) -> None:
    problems: list[str] = []
    after_handback: list[dict[str, Any]] = []
    llm.add(
        Delay(60),  # the agent thinks; the user takes over meanwhile (this call is cancelled)
        account_told(after_handback, act_on("Add one", "click_element_by_index", "Add one", problems)),
        Delay(60),  # the agent thinks when the worker is stopped the second time (this call dies with its host)
        act_on("Agree to terms", "click_element_by_index", "Tick the terms", problems),
        done("Profile saved"),
    )
    await configure(harness, llm)
    task_id = await start(harness, account_tab, "Save the profile, then add one and agree to the terms")
    await wait_overlay(account_tab, "the overlay", lambda o: o["state"] == "running")
    await wait_until(lambda: asyncio.sleep(0, len(llm.requests) >= 1), "the agent to think")
    await press_overlay(account_tab, "takeover")
    await controlled_by_user(harness, task_id)
    await user_fill(account_tab, "#name", "Ada Before")
    box = await page_box(account_tab, "#news")
    await user_click(account_tab, box["x"], box["y"])  # ends the name: both reach the host (250 ms batches)
    await asyncio.sleep(0.6)
    await user_fill(account_tab, "#email", "ada@example.org")  # still being typed in: capture.js holds it

    # 1. the worker stops while the user has the controls; they go on at once (their click into the next
    # field ends the email: capture.js reports it, which wakes a new worker before its host is there)
    old_hosts = await stop_worker(harness)
    await user_fill(account_tab, "#city", "Lyon After")
    meanwhile = await worker_back(harness, old_hosts, watch=account_tab)
    # the overlay never went away meanwhile, nor said anything else (the new worker waits for its host's word)
    assert {o["state"] if o else None for o in meanwhile} == {"user"}, meanwhile
    shown = await wait_overlay(account_tab, "the overlay to say the user still has the controls",
                               lambda o: o["state"] == "user")
    assert shown["notice"] == "You have the controls." and shown["buttons"] == ["handback", "stop"], shown
    await screenshot(account_tab, "takeover-after-worker-restart.png")
    assert (await controlled_by_user(harness, task_id))["reason"] == "user"
    assert await harness.sw(f"userHasControls.has({await harness.chrome_tab_id(account_tab)})")
    await type_in_overlay(account_tab, "textarea.note", "Name and city are in")
    await press_overlay(account_tab, "handback")

    # 2. the agent goes on (one click), and the worker stops again while it asks the model for the next step
    await wait_until(lambda: account_tab.evaluate("count.textContent === '1'"), "the agent's click after the hand back")
    await wait_until(lambda: asyncio.sleep(0, len(llm.requests) >= 3), "the agent to think again")
    await worker_back(harness, await stop_worker(harness))

    end = await ended(harness, task_id)
    assert not problems, problems
    assert (end["status"], end["result"]["data"]) == ("completed", "Profile saved"), end
    [event] = takeovers(end["history"])
    done_by_user = [(a["kind"], a["target"], a.get("value")) for a in event["actions"]]
    assert done_by_user == [
        ("input", 'textbox "Full name"', "Ada Before"), ("check", 'checkbox "Newsletter"', "checked"),  # the old host's
        ("input", 'textbox "Email"', "ada@example.org"),  # sent to the new worker before its host said hello
        ("input", 'textbox "City"', "Lyon After"),  # after the restart
    ], event["actions"]
    assert (event["reason"], event["note"]) == ("user", "Name and city are in"), event
    [told] = after_handback  # the request after the hand back carries the account of both
    told_text = "\n".join(str(m.get("content")) for m in told["messages"])
    assert all(text in told_text for text in ("Ada Before", "Newsletter", "ada@example.org", "Lyon After",
                                              "Name and city are in")), told_text[-3000:]
    # the page's own record: each of the agent's actions reached it exactly once
    received = await account_tab.evaluate("window.received")
    assert (clicks_on(received, "plus"), clicks_on(received, "terms")) == (1, 1), received
    assert await account_tab.evaluate("count.textContent === '1' && document.getElementById('terms').checked")
    # the record: the whole history once (the hand back's account, each step), the task completed
    record = (await ask_host(harness, {"type": "history.get", "taskId": task_id}))["data"]
    assert record["task"]["status"] == "completed", record["task"]
    assert record["events"] == end["history"]
    assert [e["action"]["name"] for e in record["events"] if e["type"] == "step"] == [
        "click_element_by_index", "click_element_by_index", "done"]


async def test_a_task_whose_tab_closed_while_the_worker_was_down_ends_with_an_error(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    llm.add(Delay(60), Delay(60))
    await configure(harness, llm)
    tab = await harness.browser.new_tab(e2e_pages.url("form.html?closing"))
    stopped_id = await start(harness, tab, "A task the user stops")  # stopped before: stays stopped
    await wait_until(lambda: asyncio.sleep(0, len(llm.requests) >= 1), "the first task to think")
    assert (await ask_host(harness, {"type": "task.stop", "taskId": stopped_id}))["ok"]
    task_id = await start(harness, tab, "Fill the form in a tab about to close")
    await wait_until(lambda: asyncio.sleep(0, len(llm.requests) >= 2), "the agent to think")
    await harness.stop_worker()
    await harness.browser.close_tab(tab.target_id)  # before the overlay could wake the worker
    await harness.browser.new_tab(e2e_pages.url("form.html?wake"))  # a tab event wakes the worker
    await harness.attach_worker()
    await harness.wait_host_connected()

    async def finished() -> dict[str, Any] | None:
        record = (await ask_host(harness, {"type": "history.get", "taskId": task_id}))["data"]
        return record if record["task"]["status"] != "running" else None

    record = await wait_until(finished, "the task to end", 30)
    assert record["task"]["status"] == "error", record["task"]
    assert "its tab" in record["result"]["data"] and "is gone" in record["result"]["data"], record["result"]
    assert record["events"][-1]["type"] == "error", record["events"]
    stopped = (await ask_host(harness, {"type": "history.get", "taskId": stopped_id}))["data"]["task"]
    assert stopped["status"] == "stopped", stopped


async def test_an_action_cut_short_by_a_restart_is_told_to_the_model_which_looks_before_repeating_it(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    problems: list[str] = []
    told: list[dict[str, Any]] = []
    llm.add(
        act_on("Place order", "click_element_by_index", "Place the order", problems),
        account_told(told, done("The order is placed once")),
    )
    await configure(harness, llm)
    # not about approvals: "Place order" would otherwise wait for the user's yes (ask-before: irreversible)
    assert (await ask_host(harness, {"type": "settings.set", "askBefore": "never"}))["ok"]
    tab = await harness.browser.new_tab(e2e_pages.url("slow_button.html"))
    task_id = await start(harness, tab, "Place one order")
    await wait_until(lambda: asyncio.sleep(0, len(llm.requests) >= 1), "the agent to ask for its first step")
    tab_id = await harness.chrome_tab_id(tab)
    await wait_until(lambda: harness.sw(f"inputWindows.get({tab_id})?.some((w) => w.end === null) ?? false"),
                     "the agent's click to be under way")
    await worker_back(harness, await stop_worker(harness))  # while the page still handles the click

    end = await ended(harness, task_id)
    assert not problems, problems
    assert (end["status"], end["result"]["data"]) == ("completed", "The order is placed once"), end
    [request] = told
    text = "\n".join(str(m.get("content")) for m in request["messages"])
    assert "click_element_by_index" in text and "may or may not have happened" in text, text[-2000:]
    # The click was under way when the worker stopped: it may have reached the page or died with the worker
    # (both seen). What must hold: the host never replays it by itself; only the model, told, may.
    assert await tab.evaluate("window.orders") <= 1
    await harness.browser.close_tab(tab.target_id)
    assert (await ask_host(harness, {"type": "settings.set", "askBefore": "irreversible"}))["ok"]
