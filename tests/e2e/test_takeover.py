"""User takeover (issue 10) end to end: real Chromium, the real extension (overlay, capture script, service
worker), the real host Chromium spawned, the scripted model. "The user" is this test acting through its
own CDP connection on the browser's debugging port: input the extension did not dispatch, so to the
extension it is a person's (user_support.py)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from e2e_support import (
    API_KEY,
    PAGE_LOADED,
    SCREENS,
    Harness,
    act_on,
    agent_output,
    done,
    prompt_text,
    wait_until,
)
from takeover_support import Person, evaluate
from user_support import (
    come_back,
    cut_in_overlay,
    cut_text,
    dumps,
    look_elsewhere,
    notified,
    open_panel,
    open_side_panel,
    overlay,
    page_box,
    press_overlay,
    screenshot,
    type_in_overlay,
    user_click,
    user_fill,
    user_press_key,
    user_type,
    wait_overlay,
)

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import Delay, HTTPError, ScriptedLLMServer, ToolCall
from tabpilot.localfiles import LocalFiles

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

PASSWORD = "hunter2-Secret!9"  # typed by "the user"; must never leave the page


# --- talking to the host the way the popup does (through the worker's native port) ------------------------------------
async def ask_host(harness: Harness, message: dict[str, Any]) -> dict[str, Any]:
    return await harness.sw(
        f"try {{ ({{ok: true, data: await requestHost({json.dumps(message)})}}) }}"
        " catch (e) { ({ok: false, message: e.message, code: e.code}) }",
        timeout=30,
    )


async def configure(harness: Harness, llm: ScriptedLLMServer, max_steps: int = 12) -> None:
    reply = await ask_host(harness, {"type": "settings.set", "baseURL": llm.base_url, "model": "scripted",
                                     "apiKey": API_KEY, "maxSteps": max_steps})
    assert reply["ok"], reply


async def start(harness: Harness, tab: Tab, task: str) -> str:
    reply = await ask_host(harness, {"type": "task.start", "task": task, "tabId": await harness.chrome_tab_id(tab),
                                     "source": "popup"})
    assert reply["ok"], reply
    return str(reply["data"]["taskId"])


async def snapshot(harness: Harness, task_id: str) -> dict[str, Any]:
    reply = await ask_host(harness, {"type": "task.get", "taskId": task_id})
    assert reply["ok"], reply
    return reply["data"]["task"]


async def ended(harness: Harness, task_id: str, timeout: float = 90) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        snap = await snapshot(harness, task_id)
        return snap if snap and snap["status"] != "running" else None

    return await wait_until(probe, f"task {task_id} to end", timeout)


async def controlled_by_user(harness: Harness, task_id: str, timeout: float = 20) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        snap = await snapshot(harness, task_id)
        return snap["control"] if snap and snap.get("control") else None

    return await wait_until(probe, "the host to say the user has the controls", timeout)


def takeovers(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in history if e.get("type") == "user_takeover"]


def leaks(harness: Harness, secret: str) -> list[str]:
    """Every stored file of the host (the sqlite database and its journal, logs, settings) holding `secret`."""
    found = []
    for path in harness.tabpilot_home.rglob("*"):
        if path.is_file() and secret.encode() in path.read_bytes():
            found.append(str(path))
    if secret in harness.chromium_log.read_text(errors="replace"):
        found.append(str(harness.chromium_log))
    return found


@pytest_asyncio.fixture(loop_scope="module")
async def account_tab(harness: Harness, e2e_pages: LocalFiles) -> AsyncIterator[Tab]:
    """The account page, the visible tab of a window of its own."""
    created = await harness.browser.connection.root.send(
        "Target.createTarget", {"url": e2e_pages.url("account.html"), "newWindow": True}
    )
    tab = await harness.browser.attach(created["targetId"])
    await tab.send("Emulation.setDeviceMetricsOverride",
                   {"width": 1000, "height": 700, "deviceScaleFactor": 1, "mobile": False})
    await wait_until(lambda: tab.evaluate(PAGE_LOADED), "the page to load")
    yield tab
    if not tab.closed:
        await harness.browser.close_tab(tab.target_id)


async def _async(value: Any) -> Any:
    return value


def account_told(replies: list[Any], then: Any) -> Any:
    """A reply that first keeps the request (the one after a hand back), then answers `then`."""

    def reply(body: dict[str, Any]) -> Any:
        replies.append(body)
        return then(body) if callable(then) else then

    return reply


# --- (a) explicit: Take over in the overlay, the user signs in, Hand back with a note ---------------------------------
async def test_explicit_takeover_from_the_overlay_is_recorded_and_told_to_the_model(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    problems: list[str] = []
    after_handback: list[dict[str, Any]] = []
    llm.add(
        act_on("Full name", "input_text", "Type the name", problems, text="Ada Lovelace"),
        Delay(60),  # the agent thinks; the user presses Take over meanwhile (this call is cancelled)
        account_told(after_handback, done("Profile saved")),
    )
    await configure(harness, llm)
    task_id = await start(harness, account_tab, "Sign in and save the profile of Ada Lovelace")

    running = await wait_overlay(account_tab, "the overlay with the agent's goal",
                                 lambda o: o["state"] == "running" and "Type the name" in o["goal"])
    assert running["buttons"] == ["takeover", "stop"], running
    # the goal of the step just taken, said as such (it read "Next: …" while the agent was on the step after it)
    assert running["goal"] == "Last step: Type the name", running
    assert "Sign in and save the profile" in running["task"]
    await wait_until(lambda: account_tab.evaluate("document.getElementById('name').value === 'Ada Lovelace'"),
                     "the agent to type the name")
    await screenshot(account_tab, "takeover-running.png")

    await wait_until(lambda: _async(len(llm.requests) >= 2), "the agent to ask the model for its next step")
    await press_overlay(account_tab, "takeover")
    control = await controlled_by_user(harness, task_id)
    assert control["reason"] == "user", control  # a press on the overlay is not an implicit takeover
    paused = await wait_overlay(account_tab, "the overlay to say the user has the controls",
                                lambda o: o["state"] == "user")
    assert paused["notice"] == "You have the controls.", paused
    assert paused["buttons"] == ["handback", "stop"] and "note" in paused["fields"], paused

    await user_fill(account_tab, "#email", "ada@example.org")
    await user_fill(account_tab, "#password", PASSWORD)
    box = await page_box(account_tab, "#signin")
    # a click beside the button, on the form's own empty space (no control there), as people click to drop focus
    right = await account_tab.evaluate("document.getElementById('login').getBoundingClientRect().right")
    await user_click(account_tab, right - 20, box["y"])
    await user_click(account_tab, box["x"], box["y"])
    assert await account_tab.evaluate("document.getElementById('status').textContent") == \
        "Signed in as ada@example.org."
    assert await account_tab.evaluate("window.received.some(e => e.type === 'click' && e.target === 'login')")
    await type_in_overlay(account_tab, "textarea.note", "Signed in for you; now save the profile")
    await screenshot(account_tab, "takeover-you-have-the-controls.png")
    await press_overlay(account_tab, "handback")

    end = await ended(harness, task_id)
    assert not problems, problems
    assert llm.dropped == [1], llm.dropped  # the model call in flight when the user took over was cancelled
    assert (end["status"], end["result"]["data"]) == ("completed", "Profile saved"), end
    [event] = takeovers(end["history"])
    assert event["reason"] == "user" and event["note"] == "Signed in for you; now save the profile", event
    assert event["urlBefore"].endswith("account.html") and event["startedAt"] <= event["endedAt"]
    kinds = [(a["kind"], a["target"]) for a in event["actions"]]
    assert any(k == "input" and "Email" in t for k, t in kinds), kinds
    assert any(k == "input" and "Password" in t for k, t in kinds), kinds
    assert any(k in ("click", "submit") and "Sign in" in t for k, t in kinds), kinds
    typed = {a["target"]: a.get("value") for a in event["actions"] if a["kind"] == "input"}
    assert any(v == "ada@example.org" for v in typed.values()), typed
    assert [v for t, v in typed.items() if "Password" in t] == ["•••"], typed
    assert not any("tabpilot" in t.lower() or "hand back" in t.lower() for _, t in kinds), kinds  # not the overlay
    # the click on the form's empty space is told as that, not as a control; the form has no name: it is told by what
    # it holds (it was "an empty area of the page")
    clicks = [(a["target"], a.get("blank"), a.get("holding")) for a in event["actions"] if a["kind"] == "click"]
    assert clicks == [("form", True, ['textbox "Email"', 'button "Sign in"']), ('button "Sign in"', None, None)], clicks
    # the popup's card says what the user did in words, as the model was told (it showed each action's raw JSON)
    popup = await harness.open_popup(account_tab)
    await popup.wait_for("document.querySelectorAll('.card-actions li').length >= 3", "the takeover card's actions")
    said = await popup.js("[...document.querySelectorAll('.card-actions li')].map((li) => li.textContent)")
    assert any(line.startswith("typed in ") and "Email" in line and '"ada@example.org"' in line for line in said), said
    assert any("Password" in line and line.endswith("(hidden)") for line in said), said
    assert not any("{" in line or '"kind"' in line for line in said), said
    await popup.screenshot(SCREENS / "takeover-card.png")
    await harness.browser.close_tab(popup.tab.target_id)

    # the model was told, in the next request, what the user did (with the email, without the password)
    [told] = after_handback
    account = "\n".join(str(m.get("content")) for m in told["messages"])
    assert "ada@example.org" in account and "Signed in for you; now save the profile" in account, account[-3000:]
    assert ('clicked an empty area of the form with textbox "Email" and button "Sign in" (no control there)'
            in account), account[-3000:]
    assert "clicked form" not in account, account[-3000:]
    # the password is nowhere: not in any request the model got, the record, the logs, the export
    exported = await ask_host(harness, {"type": "history.export", "taskId": task_id})
    assert exported["ok"], exported
    assert any(e.get("type") == "user_takeover" for e in exported["data"]["history"]), exported
    assert PASSWORD not in json.dumps(exported)
    assert PASSWORD not in json.dumps(llm.requests)
    assert leaks(harness, PASSWORD) == []
    # the overlay was never part of what the model read
    assert not any("Take over" in prompt_text(r) or "Hand back" in prompt_text(r) for r in llm.requests)


# --- (b) implicit: the user types into the page while the agent works -------------------------------------------------
async def test_typing_into_the_page_mid_task_pauses_it_at_once_and_is_recorded(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    problems: list[str] = []
    after_handback: list[dict[str, Any]] = []
    llm.add(
        act_on("Full name", "input_text", "Type the name", problems, text="Grace Hopper"),
        # the agent would type a city; the user is faster (this call is cancelled when they touch the page)
        Delay(60, then=act_on("City", "input_text", "Type the city", problems, text="Paris")),
        account_told(after_handback, act_on("Agree to terms", "click_element_by_index", "Tick the terms", problems)),
        done("Profile done"),
    )
    await configure(harness, llm)
    task_id = await start(harness, account_tab, "Fill in the profile of Grace Hopper")
    await wait_until(lambda: account_tab.evaluate("document.getElementById('name').value === 'Grace Hopper'"),
                     "the agent to type the name")
    await wait_until(lambda: _async(len(llm.requests) >= 2), "the agent to ask the model for its next step")
    dispatched_before = await harness.sw("dispatchedInput.length")
    first_user_input = await account_tab.evaluate("Date.now()")
    await user_fill(account_tab, "#city", "Lyon")

    control = await controlled_by_user(harness, task_id)
    assert control["reason"] == "implicit", control
    paused = await wait_overlay(account_tab, "the overlay to say the user touched the page",
                                lambda o: o["state"] == "implicit")
    assert paused["notice"] == "You touched the page: paused. Hand back when you're done.", paused
    assert paused["buttons"] == ["handback", "stop"], paused
    await screenshot(account_tab, "takeover-paused-implicit.png")
    await asyncio.sleep(1.5)  # the agent does nothing while the user has the controls
    assert await harness.sw(f"dispatchedInput.slice({dispatched_before}).length") == 0
    # and if the host did send input now (an action already under way), the relay would refuse it
    tab_id = await harness.chrome_tab_id(account_tab)
    refused = await harness.sw(
        f"try {{ await sendCommand({{tabId: {tab_id}, method: 'Input.insertText', params: {{text: 'AGENT'}}}});"
        " 'relayed' } catch (e) { e.message }"
    )
    assert refused == "the user took over", refused
    assert "AGENT" not in await account_tab.evaluate("document.getElementById('city').value")
    await press_overlay(account_tab, "handback")

    end = await ended(harness, task_id)
    assert not problems, problems
    assert (end["status"], end["result"]["data"]) == ("completed", "Profile done"), end
    assert llm.dropped == [1], llm.dropped  # the model call in flight was cancelled at the user's first input
    [event] = takeovers(end["history"])
    assert event["reason"] == "implicit", event
    done_by_user = {(a["kind"], a["target"], a.get("value")) for a in event["actions"]}
    assert ("input", 'textbox "City"', "Lyon") in done_by_user, event["actions"]
    # the page's own record: from the user's first input to the hand back, only the user's input reached it
    received = await account_tab.evaluate("window.received")
    # (a `change` of the agent's field when the user's click took the focus away is the user's doing too)
    between = [e for e in received if first_user_input <= e["at"] < event["endedAt"] and e["type"] != "change"]
    assert between and {e["target"] for e in between} <= {"city", "TABPILOT-OVERLAY"}, between
    assert (await account_tab.evaluate("document.getElementById('city').value")) == "Lyon"  # not overwritten
    assert await account_tab.evaluate("document.getElementById('terms').checked")  # the agent went on after
    [told] = after_handback
    assert "Lyon" in "\n".join(str(m.get("content")) for m in told["messages"])
    assert await harness.sw("takeoverStats.implicit") >= 1


async def test_the_person_typing_on_from_the_agents_typing_takes_the_controls(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    """The person types into the field the agent is typing in, from during its typing to after it: their
    keys after the agent's are reported with it in held batches, not alone at once, and still take the
    controls; the field is recorded as the page shows it."""
    problems: list[str] = []
    agents_text = "Ada Lovelace " * 30  # long enough for the person's keys to start while it is being typed
    llm.add(
        act_on("Full name", "input_text", "Type the name", problems, text=agents_text),
        Delay(8, then=done("Name typed")),  # the agent done typing asks on and waits: a takeover cancels it
        done("Name typed"),
    )
    await configure(harness, llm)
    before = await harness.sw("takeoverStats.implicit")
    task_id = await start(harness, account_tab, "Type the name of Ada Lovelace")
    await wait_until(lambda: account_tab.evaluate("document.getElementById('name').value.length > 0"),
                     "the agent to start typing the name")
    started = await account_tab.evaluate("Date.now()")
    taken = asyncio.create_task(controlled_by_user(harness, task_id))
    keys = 0
    while not taken.done() and keys < 200:  # a key every 20 ms: never the 50 ms quiet that ends a batch
        await user_type(account_tab, "Z")
        keys += 1
        await asyncio.sleep(0.02)
    control = await taken

    assert control["reason"] == "implicit", control
    assert control["startedAt"] >= started, (control, started)
    name = await account_tab.evaluate("document.getElementById('name').value")
    assert name.endswith("Z") and name.count("Z") <= keys, name  # the person's keys were the last to land
    await asyncio.sleep(1.0)
    assert await account_tab.evaluate("document.getElementById('name').value") == name  # the agent stopped
    await press_overlay(account_tab, "handback")
    end = await ended(harness, task_id)
    assert not problems, problems
    [event] = takeovers(end["history"])
    assert event["reason"] == "implicit", event
    assert [(a["kind"], a["target"], a.get("value")) for a in event["actions"]] == [
        ("input", 'textbox "Full name"', name)], event["actions"]
    assert await harness.sw("takeoverStats.implicit") == before + 1


def agent_call(next_goal: str, action: dict[str, Any]) -> ToolCall:
    return ToolCall("AgentOutput", agent_output(next_goal, action))


# --- (c) the agent asks: request_takeover (notification, overlay, side panel) and ask_user (answer box) ---------------
async def test_the_agent_asks_for_help_then_asks_a_question(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    problems: list[str] = []
    after_handback: list[dict[str, Any]] = []
    after_answer: list[dict[str, Any]] = []
    reason = "Please sign in with your account, then hand back"
    llm.add(
        agent_call("Ask the user to sign in", {"request_takeover": {"reason": reason}}),
        account_told(after_handback, agent_call("Ask for the city", {"ask_user": {"question": "Which city?"}})),
        account_told(after_answer, act_on("City", "input_text", "Type the city", problems, text="Kyoto")),
        done("Signed in, city set"),
    )
    await configure(harness, llm)
    task_id = await start(harness, account_tab, "Sign in and set my city")

    control = await controlled_by_user(harness, task_id)
    assert (control["reason"], control["message"]) == ("agent_request", reason), control
    asking = await wait_overlay(account_tab, "the overlay to show the agent's request",
                                lambda o: o["state"] == "agent_request")
    assert (asking["notice"], asking["reason"]) == ("The agent asks for your help:", reason), asking
    assert asking["buttons"] == ["handback", "stop"], asking
    await screenshot(account_tab, "takeover-agent-asking.png")
    assert not await notified(harness, task_id)  # the person is looking at the tab: the overlay asks, nothing covers it
    elsewhere = await look_elsewhere(harness, None)  # they turn to another window: the request is notified there
    await wait_until(lambda: notified(harness, task_id), "a desktop notification")
    await come_back(harness, elsewhere)

    panel = await open_panel(harness, account_tab)
    await panel.wait_for("!document.getElementById('control').hidden", "the side panel to show the request")
    assert await panel.text("#control-reason") == reason
    assert asking["pill"] == "Needs you" and await panel.text("#task-status") == "Needs you"
    assert await panel.visible("#handback") and not await panel.visible("#takeover")
    await user_fill(account_tab, "#email", "grace@example.org")
    await user_fill(account_tab, "#password", PASSWORD)
    box = await page_box(account_tab, "#signin")
    await user_click(account_tab, box["x"], box["y"])
    await panel.fill("#handback-note", "Signed in")
    await panel.screenshot(SCREENS / "takeover-side-panel.png", max_height=720)
    await panel.click("#handback")

    question = await wait_overlay(account_tab, "the overlay to show the agent's question",
                                  lambda o: o["state"] == "question")
    assert (question["notice"], question["reason"]) == ("The agent asks:", "Which city?"), question
    # (the user may also take the controls instead of answering)
    assert question["buttons"] == ["takeover", "answer", "stop"] and "answer" in question["fields"], question
    assert question["goal"] == "", question
    await panel.wait_for("!document.getElementById('answer-form').hidden", "the side panel's answer box")
    await screenshot(account_tab, "takeover-question.png")
    await type_in_overlay(account_tab, "input.answer", "Kyoto")
    await press_overlay(account_tab, "answer")

    end = await ended(harness, task_id)
    assert not problems, problems
    assert (end["status"], end["result"]["data"]) == ("completed", "Signed in, city set"), end
    [event] = takeovers(end["history"])
    assert event["reason"] == "agent_request" and event["note"] == "Signed in", event
    assert any(a["kind"] == "input" and a.get("value") == "•••" for a in event["actions"]), event["actions"]
    # what the person did, told to the model once (the takeover's note in the history), not in the step's result too
    told = prompt_text(after_handback[0])
    assert told.count('"Email" → "grace@example.org"') == 1 and told.count("Their note: Signed in") == 1, told
    assert "Kyoto" in json.dumps([m.get("content") for m in after_answer[0]["messages"]])
    assert await account_tab.evaluate("document.getElementById('city').value") == "Kyoto"
    assert not await notified(harness, task_id)  # nothing is asked any more
    assert PASSWORD not in json.dumps(llm.requests) and leaks(harness, PASSWORD) == []
    # the request's card says what the person did, not the model's instructions ("…in the user_takeover note…")
    asked = await panel.wait_for("[...document.querySelectorAll('#timeline .card-step')].map(c => c.innerText)"
                                 ".find(text => text.includes('Ask the user to sign in'))", "the request's card")
    assert "You handed the controls back" in asked and "user_takeover" not in asked, asked
    await harness.browser.close_tab(panel.tab.target_id)



async def test_a_long_address_in_the_agents_question_wraps_in_the_overlay_the_popup_and_the_side_panel(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    """Found by a new user: an agent that asked about a page by its address (a question, a request for help, an
    action to allow all name URLs) had the address run past the edge of the popup, the side panel and the overlay,
    which grew a scrollbar: the end of the question, and what it asked, was cut off."""
    address = "https://shop.example.com/checkout/" + "confirm-order-" * 10 + "?session=" + "7f3a9c" * 12
    question = f"Is {address} the page you meant?"
    llm.add(agent_call("Ask about the page", {"ask_user": {"question": question}}), done("It is"))
    await configure(harness, llm)
    task_id = await start(harness, account_tab, "Check the checkout page")
    await wait_overlay(account_tab, "the overlay to ask", lambda o: o["state"] == "question" and address in o["reason"])
    popup = await harness.open_popup(account_tab)
    await popup.size(400, 600)  # the toolbar popup's width
    panel = await open_panel(harness, account_tab)
    for page in (popup, panel):
        await page.wait_for(f"document.getElementById('control-reason').textContent === {dumps(question)}",
                            "the question in the popup")
        assert await cut_text(page) == [], f"cut off in {await page.tab.url()}"
    assert await cut_in_overlay(account_tab) == []
    await screenshot(account_tab, "long-question-overlay.png")
    await popup.screenshot(SCREENS / "long-question-popup.png", max_height=600)
    await popup.fill("#answer-input", "Yes")
    await popup.click("#answer")
    assert (await ended(harness, task_id))["status"] == "completed"
    for page in (popup, panel):
        await harness.browser.close_tab(page.tab.target_id)


async def test_a_finished_tasks_overlay_says_what_came_of_it_failed_then_done(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    """Found by a new user: a task that failed left the overlay saying "Error" and nothing else (and a finished one
    "Completed" without its answer); a person watching a page's or an MCP client's task has no popup open to learn
    what went wrong. The overlay says what the popup says: what went wrong and what to do, or the agent's answer;
    and the next task on the page says its own."""
    llm.add(HTTPError(401, "Incorrect API key provided", type="invalid_request_error", code="invalid_api_key"))
    await configure(harness, llm)
    failed = await start(harness, account_tab, "Set my city, with a refused key")
    assert (await ended(harness, failed))["status"] == "error"
    shown = await wait_overlay(account_tab, "the overlay to say the key was refused",
                               lambda o: o["state"] == "error")
    assert shown["outcome"] == "The model provider refused the API key.", shown
    assert shown["remedy"] == ("Open Settings, enter the right API key and press Test connection."
                               " More in tabpilot's popup (its toolbar button)."), shown
    await screenshot(account_tab, "overlay-failed.png")

    llm.add(done("Your city is set to Kyoto"))
    second = await start(harness, account_tab, "Set my city")
    assert (await ended(harness, second))["status"] == "completed"
    shown = await wait_overlay(account_tab, "the overlay to give the agent's answer",
                               lambda o: o["state"] == "completed" and o["task"] == "Set my city")
    assert (shown["outcome"], shown["remedy"]) == ("Your city is set to Kyoto", ""), shown
    await screenshot(account_tab, "overlay-completed.png")


# --- what the person types into the overlay is theirs: the page reads none of it -------------------------------------
# The page's own listeners and look-ups, everywhere a script can reach into a closed shadow root or a field's value
# (found attacking the overlay: its answer and note fields sat in the shadow root, so every key the person typed
# reached the page's keydown listeners, input events carried each letter, and window.find() found the words).
PAGE_LISTENS = """(() => { const heard = window.heard = {keys: [], inputs: [], copies: [], selections: []};
  for (const target of [window, document]) {
    for (const type of ['keydown', 'keypress', 'keyup'])
      target.addEventListener(type, (e) => heard.keys.push(e.key), true);
    for (const type of ['beforeinput', 'input', 'textInput', 'compositionend', 'change'])
      target.addEventListener(type, (e) => heard.inputs.push(type + ':' + (e.data ?? '')), true);
  }
  document.addEventListener('copy', () => heard.copies.push(String(getSelection())), true);
  document.addEventListener('selectionchange', () => {
    const s = String(getSelection()); if (s) heard.selections.push(s); });
})()"""
FINDS = """(words) => { getSelection().removeAllRanges();
  const found = words.filter((w) => window.find(w, false, false, true));
  getSelection().removeAllRanges(); return found; }"""
ANSWER = "Kyoto by the river"
NOTE = "Quietly signed in"


async def test_what_the_person_types_into_the_overlay_never_reaches_the_page(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    after_answer: list[dict[str, Any]] = []
    after_handback: list[dict[str, Any]] = []
    llm.add(
        agent_call("Ask for the city", {"ask_user": {"question": "Which city?"}}),
        account_told(after_answer, agent_call("Ask for the sign-in", {"request_takeover": {"reason": "Sign in"}})),
        account_told(after_handback, done("Done")),
    )
    await configure(harness, llm)
    await account_tab.evaluate(PAGE_LISTENS)
    task_id = await start(harness, account_tab, "Set my city")
    await wait_overlay(account_tab, "the question", lambda o: o["state"] == "question")
    await type_in_overlay(account_tab, "input.answer", ANSWER)
    for chord, command in (("a", "selectAll"), ("c", "copy")):  # the person selects what they typed and copies it
        await user_press_key(account_tab, chord, f"Key{chord.upper()}", ord(chord.upper()), modifiers=2,
                             commands=[command])
    await screenshot(account_tab, "overlay-answer-typed.png")
    assert await account_tab.evaluate(f"({FINDS})({dumps([ANSWER, 'Kyoto', 'river'])})") == []
    await press_overlay(account_tab, "answer")
    await wait_overlay(account_tab, "the agent's request", lambda o: o["state"] == "agent_request")
    await type_in_overlay(account_tab, "textarea.note", NOTE)
    assert await account_tab.evaluate(f"({FINDS})({dumps([NOTE, 'Quietly'])})") == []
    await press_overlay(account_tab, "handback")
    end = await ended(harness, task_id)
    assert end["status"] == "completed", end

    heard = await account_tab.evaluate("window.heard")
    assert heard == {"keys": [], "inputs": [], "copies": [], "selections": []}, heard
    # the person's words went where they meant them: to the agent, and not as input to the page
    assert ANSWER in prompt_text(after_answer[0]) and NOTE in prompt_text(after_handback[0])
    [event] = takeovers(end["history"])
    assert event["note"] == NOTE and event["actions"] == [], event


async def test_a_page_that_frames_the_overlays_panel_itself_gets_nothing(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    """The overlay's panel is a frame named with a key only the overlay and the worker know, that the worker fills. A
    page can make a frame of its own named as the panel, with a key it guesses, and look inside it (same origin, no
    sandbox): the worker puts nothing in it, and the overlay's own panel is untouched."""
    llm.add(Delay(60))
    await configure(harness, llm)
    task_id = await start(harness, account_tab, "Keep thinking")
    await wait_overlay(account_tab, "the overlay", lambda o: o["state"] == "running")
    await account_tab.evaluate("""(() => { const f = document.createElement('iframe'); f.id = 'framed-panel';
        f.name = 'tabpilot-panel:a-key-of-the-pages'; f.srcdoc = '<!doctype html><body></body>';
        f.style.cssText = 'position:fixed;left:0;top:0;width:320px;height:240px'; document.body.append(f); })()""")
    await wait_until(lambda: account_tab.evaluate(
        "document.getElementById('framed-panel').contentDocument?.readyState === 'complete'"), "the page's own frame")
    await asyncio.sleep(2)  # the worker had it said hello, and its load looked for the panel by name
    inside = await account_tab.evaluate("(() => { const d = document.getElementById('framed-panel').contentDocument;"
                                        " return [d.querySelectorAll('.panel').length, d.body.innerHTML]; })()")
    assert inside == [0, ""], inside
    assert (await overlay(account_tab) or {}).get("state") == "running"  # the overlay's own panel is untouched
    await account_tab.evaluate("document.getElementById('framed-panel').remove()")
    await press_overlay(account_tab, "stop")
    assert (await ended(harness, task_id))["status"] == "stopped"


# --- (d) the agent's own input never counts as the user's -------------------------------------------------------------
async def test_no_false_takeover_over_a_twenty_step_task(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    problems: list[str] = []

    def step(label: str, tool: str, **fields: Any) -> Any:
        return act_on(label, tool, f"{tool} on {label}", problems, **fields)

    def page_step(goal: str, action: dict[str, Any]) -> Any:
        return agent_call(goal, action)

    steps = [
        step("Full name", "input_text", text="Ada Lovelace"),
        step("City", "input_text", text="Nairobi"),
        step("Country", "select_dropdown_option", text="Kenya"),
        step("Newsletter", "click_element_by_index"),
        step("Agree to terms", "click_element_by_index"),
        step("Add one", "click_element_by_index"),
        step("Add one", "click_element_by_index"),
        step("Email", "input_text", text="ada@example.org"),
        step("Country", "select_dropdown_option", text="Japan"),
        step("Add one", "click_element_by_index"),
        page_step("Scroll down", {"scroll": {"down": True, "pixels": 600}}),
        page_step("Scroll up", {"scroll": {"down": False, "pixels": 600}}),
        step("City", "input_text", text="Tokyo"),
        step("Newsletter", "click_element_by_index"),
        step("Country", "select_dropdown_option", text="Peru"),
        step("Add one", "click_element_by_index"),
        page_step("Scroll to the end", {"scroll": {"down": True, "pixels": 1800}}),
        step("Finish", "click_element_by_index"),
        page_step("Back to the top", {"scroll": {"down": False, "pixels": 2400}}),
        step("Full name", "input_text", text="Ada King"),
    ]
    assert len(steps) == 20
    llm.add(*steps, done("All twenty steps done"))
    await configure(harness, llm, max_steps=25)
    await harness.sw("takeoverStats.maxAgentLagMs = 0")  # a person's keys right after the agent's count in it
    before = await harness.sw("({...takeoverStats})")
    task_id = await start(harness, account_tab, "Fill in the whole profile, twenty steps")
    end = await ended(harness, task_id, timeout=100)
    after = await harness.sw("({...takeoverStats})")

    assert not problems, problems
    assert (end["status"], end["result"]["data"]) == ("completed", "All twenty steps done"), end
    assert len([e for e in end["history"] if e["type"] == "step"]) == 21
    assert takeovers(end["history"]) == []
    false_takeovers = after["implicit"] - before["implicit"]
    agent_input_seen = after["agentInput"] - before["agentInput"]
    messages = after["inputMessages"] - before["inputMessages"]
    print(f"\nfalse takeovers over 20 agent steps: {false_takeovers}; agent input events capture.js reported and"
          f" the worker recognised as the agent's: {agent_input_seen}; largest lag after the Input.* call"
          f" returned: {after['maxAgentLagMs']} ms; capture.input messages: {messages}")
    assert false_takeovers == 0
    assert agent_input_seen >= 20  # capture.js was watching: the agent's clicks and typing were seen and told apart
    # the events that follow one within a moment (the agent's keys) come in one message (issue 16)
    assert messages < agent_input_seen, (before, after)
    page = await account_tab.evaluate(
        "({count: count.textContent, finished: status.textContent, country: document.getElementById('country').value,"
        " name: document.getElementById('name').value, terms: document.getElementById('terms').checked})"
    )
    assert page == {"count": "4", "finished": "Finished.", "country": "Peru", "name": "Ada King", "terms": True}, page


# --- (e) a hostile page can neither find, read, hide nor press the overlay --------------------------------------------
async def test_a_hostile_page_cannot_find_hide_or_press_the_overlay(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    created = await harness.browser.connection.root.send(
        "Target.createTarget", {"url": e2e_pages.url("hostile.html"), "newWindow": True}
    )
    tab = await harness.browser.attach(created["targetId"])
    await wait_until(lambda: tab.evaluate(PAGE_LOADED), "the hostile page to load")
    llm.add(Delay(60))  # the agent thinks the whole time
    await configure(harness, llm)
    task_id = await start(harness, tab, "Look at this page")
    await wait_overlay(tab, "the overlay", lambda o: o["state"] == "running")
    await wait_until(lambda: tab.evaluate("window.hostile.removed >= 3 && window.hostile.attempts >= 20"),
                     "the page to attack the overlay for a while")

    hostile = await tab.evaluate("window.hostile")
    assert hostile["sawHost"] and hostile["shadowRoot"] == "null", hostile  # a closed root: nothing to open
    assert hostile["capturedRoots"] == 0, hostile  # made in the extension's world, not the page's
    assert hostile["overlayText"] is False and hostile["buttons"] == ["Decoy"], hostile
    snap = await snapshot(harness, task_id)
    assert (snap["status"], snap["control"]) == ("running", None), snap  # no press of the page's counted
    # still there, still shown, after being removed three times. Put back, the panel's frame is a new document the
    # worker fills again (worker/takeover.js injectPanel): read at once, a loaded run saw it still empty.
    await wait_overlay(tab, "the overlay back after being removed three times",
                       lambda o: o["state"] == "running" and o["buttons"] == ["takeover", "stop"])
    visible = await tab.evaluate(
        "(() => { const h = document.querySelector('[data-tabpilot-overlay]');"
        " return !!h && h.checkVisibility({opacityProperty: true, visibilityProperty: true}); })()"
    )
    assert visible
    await screenshot(tab, "takeover-hostile-page.png")
    # the user's own press still works
    await press_overlay(tab, "stop")
    assert (await ended(harness, task_id))["status"] == "stopped"
    await harness.browser.close_tab(tab.target_id)


@pytest.mark.parametrize("attack", ["remove", "move"])
async def test_a_page_that_keeps_taking_the_overlay_away_neither_hangs_nor_leaves_the_person_without_a_word(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles, attack: str
) -> None:
    # A page's script that took the overlay out (or moved it) whenever it came back, and the overlay putting itself
    # back, ran each other's observers for ever: the page hung (the agent's reads failed 'the page is busy') and the
    # person saw no overlay and no word why. Now the overlay gives up for the step, the popup says why, the agent works
    # on, and once the page lets it be, it is back at the next step.
    problems: list[str] = []
    tab = await harness.browser.new_tab(e2e_pages.url(f"overlay_remover.html?{attack}"))
    await wait_until(lambda: tab.evaluate(PAGE_LOADED), "the page to load")
    llm.add(Delay(3, then=act_on("Full name", "input_text", "Type the name", problems, text="Ada")), Delay(60))
    await configure(harness, llm)
    task_id = await start(harness, tab, "Type Ada as the name")
    popup = await harness.open_popup(tab)
    await popup.wait_for("!document.getElementById('overlay-removed').hidden", "the popup to say the overlay went")
    assert "Take over, Stop" in await popup.text("#overlay-removed")
    assert await tab.evaluate("window.removals", timeout=5) > 0  # the page answers: it is not hung
    assert await overlay(tab) is None
    await popup.screenshot(SCREENS / f"overlay-removed-{attack}.png", max_height=600)

    await tab.evaluate("window.removing = false")  # the page lets it be: at the next step it is back, and filled
    shown = await wait_overlay(tab, "the overlay back", lambda o: o["state"] == "running" and bool(o["thinking"]))
    assert shown["buttons"] == ["takeover", "stop"], shown
    await popup.wait_for("document.getElementById('overlay-removed').hidden", "the popup's word to go")
    await wait_until(lambda: tab.evaluate("document.getElementById('name').value === 'Ada'"), "the agent to type")
    assert not problems, problems
    await press_overlay(tab, "stop")
    assert (await ended(harness, task_id))["status"] == "stopped"
    await harness.browser.close_tab(popup.tab.target_id)
    await harness.browser.close_tab(tab.target_id)


# --- the page's own changes of its address are the page's, not the person's ------------------------------------------
# Found attacking the takeover record: while the person had the controls, the page's script called
# history.pushState(…, '/checkout/confirmed'), and the record (and the model) said the person went there.
LINK = """((id, href, text) => { const a = document.createElement('a'); a.id = id; a.href = href;
  a.textContent = text; a.style.cssText = 'display:block;font-size:24px'; document.body.prepend(a); })"""


async def test_the_pages_own_address_changes_are_not_told_as_where_the_person_went(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles, account_tab: Tab
) -> None:
    after: list[dict[str, Any]] = []
    llm.add(Delay(60), account_told(after, done("Looked at the orders")))
    await configure(harness, llm)
    task_id = await taken_over_while_thinking(harness, llm, account_tab, "Show me my orders")
    home = e2e_pages.url("account.html")

    async def arrived(search: str) -> None:
        await wait_until(lambda: account_tab.evaluate(
            f"location.search === {search!r} && document.readyState === 'complete'"), f"the tab at {search}")
        await wait_overlay(account_tab, f"the overlay at {search}", lambda o: o["state"] == "user")

    # the page's script, with nobody's hand on the page: a pushed address, a replaced one, a new fragment
    for script in ("history.pushState({}, '', '/checkout/confirmed')",
                   "history.replaceState({}, '', '/checkout/confirmed?paid=1')", "location.hash = 'receipt'"):
        await account_tab.evaluate(script)
        await asyncio.sleep(0.1)
    # the person clicks in the page, then on a link to a part of it
    box = await page_box(account_tab, "#plus")
    await user_click(account_tab, box["x"], box["y"])
    await account_tab.evaluate(f"({LINK})('orders', '#orders', 'Your orders')")
    box = await page_box(account_tab, "#orders")
    await user_click(account_tab, box["x"], box["y"])
    await wait_until(lambda: account_tab.evaluate("location.hash === '#orders'"), "the person's link to be followed")
    # the page's script sends the tab to another document (location.assign), then a meta refresh to a third
    await account_tab.evaluate(f"setTimeout(() => location.assign({dumps(home + '?by=script')}), 50)")
    await arrived("?by=script")
    await account_tab.evaluate("document.head.insertAdjacentHTML('beforeend', '<meta http-equiv=\"refresh\""
                               f" content=\"0;url={home}?by=refresh\">')")
    await arrived("?by=refresh")
    # the person follows a link to another document
    await account_tab.evaluate(f"({LINK})('far', {dumps(home + '?by=person')}, 'Another page')")
    box = await page_box(account_tab, "#far")
    await user_click(account_tab, box["x"], box["y"])
    await arrived("?by=person")
    await press_overlay(account_tab, "handback")

    end = await ended(harness, task_id)
    assert end["status"] == "completed", end
    [event] = takeovers(end["history"])
    went = [(a["target"], a["value"]) for a in event["actions"] if a["kind"] == "navigate"]
    # where the person went: their two links, each told once; everything else was the page's own doing
    mine = [url for by, url in went if by == "page"]
    assert len(mine) == 2 and mine[0].endswith("/checkout/confirmed?paid=1#orders"), went
    assert mine[1] == home + "?by=person", went
    theirs = [url for by, url in went if by != "page"]
    assert any(url.endswith("/checkout/confirmed") for url in theirs), went
    assert any(url.endswith("/checkout/confirmed?paid=1#receipt") for url in theirs), went
    assert home + "?by=script" in theirs and home + "?by=refresh" in theirs, went
    assert [by for by, url in went if url == home + "?by=script"] == ["script"], went  # told once, as the page's
    assert event["urlAfter"] == home + "?by=person"
    # the model reads it so: the page's script moved it, the person went to two places
    account = prompt_text(after[0])
    assert "went to http" in account and "the page's own script changed its address to" in account, account[-2000:]
    assert not [url for url in theirs if f"went to {url};" in account], account[-2000:]


# The page's own script, as the person picks the first of a list: every one of its 120 long options chosen
LONG_LIST = """(() => {
  const list = document.createElement('select');
  list.id = 'many'; list.multiple = true; list.size = 3; list.setAttribute('aria-label', 'Many');
  for (let i = 0; i < 120; i++) list.add(new Option(`Option ${i} ` + 'long '.repeat(40)));
  list.addEventListener('input', () => { for (const option of list.options) option.selected = true; });
  document.body.prepend(list);
})()"""


async def test_what_the_person_does_on_a_page_at_a_very_long_address_is_recorded(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    """The host takes an action whose address is at most 10,000 characters and whose value at most 20,000, and
    refused a batch holding a longer one whole: nothing the person did was kept once they chose in a list whose
    page then chose its 120 long options, nor on a page whose address was long (a real site's long query, or one the
    page's script pushed). Twice, on the same page."""
    home = await account_tab.evaluate("location.href")
    try:
        for city in ("Lyon", "Osaka"):
            after: list[dict[str, Any]] = []
            llm.add(Delay(60), account_told(after, done("Noted")))
            await configure(harness, llm)
            task_id = await taken_over_while_thinking(harness, llm, account_tab, "Wait for me")
            await account_tab.evaluate(LONG_LIST)
            option = await page_box(account_tab, "#many option")
            await user_click(account_tab, option["x"], option["y"])
            await account_tab.evaluate(f"history.pushState({{}}, '', '?q=' + {dumps(city)} + 'x'.repeat(30000))")
            await user_fill(account_tab, "#city", city)
            await press_overlay(account_tab, "handback")

            end = await ended(harness, task_id)
            assert end["status"] == "completed", end
            assert_typed(end, city)
            [event] = takeovers(end["history"])
            [chose] = [a for a in event["actions"] if a["kind"] == "select"]
            assert chose["value"].startswith("Option 0 long") and len(chose["value"]) <= 2000, chose
            assert all(len(action["url"]) <= 10_000 for action in event["actions"]), event["actions"]
            assert f'typed in textbox "City" → "{city}"' in prompt_text(after[0])
            await account_tab.evaluate(f"history.replaceState({{}}, '', {dumps(home)})")
            await account_tab.evaluate("document.getElementById('many').remove();"
                                       " document.getElementById('city').value = ''")
    finally:
        await account_tab.evaluate(f"history.replaceState({{}}, '', {dumps(home)})")


# --- the takeover survives a reload, and the worker re-learns it from the host ----------------------------------------
async def taken_over_as_it_thinks(harness: Harness, llm: ScriptedLLMServer, tab: Tab, problems: list[str],
                                  result: str) -> str:
    """A task started on `tab` that ticks the terms once handed back (then done: `result`), whose controls the person
    took with Take over in the overlay while the agent thought about its first step."""
    asked = len(llm.requests)
    llm.add(Delay(60), act_on("Agree to terms", "click_element_by_index", "Tick the terms", problems), done(result))
    await configure(harness, llm)
    task_id = await start(harness, tab, "Tick the terms after I am done")
    await wait_overlay(tab, "the overlay", lambda o: o["state"] == "running")
    await wait_until(lambda: _async(len(llm.requests) > asked), "the agent to think")
    await press_overlay(tab, "takeover")
    await controlled_by_user(harness, task_id)
    return task_id


async def test_a_takeover_survives_a_reload_and_the_worker_forgetting_it(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    problems: list[str] = []
    task_id = await taken_over_as_it_thinks(harness, llm, account_tab, problems, "Done after the reload")
    await user_fill(account_tab, "#name", "Before reload")
    box = await page_box(account_tab, "#plus")
    await user_click(account_tab, box["x"], box["y"])

    # the page reloads: the overlay comes back as it was, and what the user does next is still recorded
    await account_tab.send("Page.reload", {})
    await wait_until(lambda: account_tab.evaluate("document.readyState === 'complete' && window.received.length === 0"),
                     "the page to reload")
    again = await wait_overlay(account_tab, "the overlay after the reload", lambda o: o["state"] == "user")
    assert again["notice"] == "You have the controls." and again["buttons"] == ["handback", "stop"], again
    await user_fill(account_tab, "#city", "After reload")

    # the worker forgets everything it knew (as a restarted worker has: no host either, until its hello is answered)
    # and asks the host, as on reconnect; the city typed just before is reported meanwhile, and kept for the task the
    # host names. (With the host still counted as there, that report was dropped: the CI run at cef835b.)
    await harness.sw(
        "tasks.clear(); userHasControls.clear(); sentModes.clear(); host.connected = false;"
        " for (const port of overlayPorts.values()) port.disconnect(); overlayPorts.clear();"
        " await new Promise((r) => setTimeout(r, 700));"
        " const said = await requestHost({type: 'hello', extensionVersion: 'e2e'});"
        " host.connected = true; learnTasks(said.tasks); true"
    )
    assert await harness.sw(f"userHasControls.has({await harness.chrome_tab_id(account_tab)})")
    await wait_overlay(account_tab, "the overlay after the worker re-learnt the task", lambda o: o["state"] == "user")
    await asyncio.sleep(0.6)  # the overlay reconnects (it retries after 500 ms)
    await press_overlay(account_tab, "handback")

    end = await ended(harness, task_id)
    assert not problems, problems
    assert end["status"] == "completed", end
    [event] = takeovers(end["history"])
    typed = [(a["target"], a.get("value")) for a in event["actions"] if a["kind"] == "input"]
    assert ('textbox "Full name"', "Before reload") in typed and ('textbox "City"', "After reload") in typed, event
    assert any(a["kind"] == "click" and "Add one" in a["target"] for a in event["actions"]), event["actions"]
    assert await account_tab.evaluate("document.getElementById('terms').checked")


async def test_a_late_push_of_the_tabs_previous_task_leaves_the_task_it_runs_now_alone(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    """The worker applied every task push to the task's tab: a late one of the task the tab ran before (its end, its
    last step, its result) turned the new task's capture off and let the agent's input through while the person had
    the controls; the field they were typing in was handed to the task before, and the new task's takeover was
    recorded with no actions at all. Such a push now changes the task it names only."""
    problems: list[str] = []
    llm.add(done("The first is done"))
    await configure(harness, llm)
    first = await start(harness, account_tab, "Say hello")
    first_end = await ended(harness, first)
    assert first_end["status"] == "completed", first_end
    second = await taken_over_as_it_thinks(harness, llm, account_tab, problems, "Done after the person")
    await user_fill(account_tab, "#name", "Before the late pushes")
    tab_id = await harness.chrome_tab_id(account_tab)

    # the first task's pushes, as the host sends them, arriving late (in the worker, as from its native port)
    step = {"type": "step", "stepIndex": 0, "reflection": {"next_goal": "Report the result"},
            "action": {"name": "done", "input": {"text": "The first is done"}, "output": "Task completed"}}
    for push in ({"type": "task.event", "taskId": first, "event": step},
                 {"type": "task.control", "taskId": first, "control": None, "question": None, "approval": None},
                 {"type": "task.status", "taskId": first, "status": "completed"},
                 {"type": "task.result", "taskId": first, "result": {"success": True, "data": "The first is done"}}):
        await harness.sw(f"onHostMessage({json.dumps(push)}); true")
    assert await harness.sw(f"userHasControls.has({tab_id}) && JSON.parse(sentModes.get({tab_id})).mode") == "record"
    assert await harness.sw(f"tasks.get({json.dumps(first)}).outcome.data") == "The first is done"  # its own, kept
    await user_fill(account_tab, "#city", "After the late pushes")
    await wait_overlay(account_tab, "the overlay of the task it runs", lambda o: o["state"] == "user")
    await press_overlay(account_tab, "handback")  # (the field being typed in is handed over as recording stops)

    end = await ended(harness, second)
    assert not problems, problems
    assert end["status"] == "completed", end
    [event] = takeovers(end["history"])
    typed = [(a["target"], a.get("value")) for a in event["actions"] if a["kind"] == "input"]
    assert ('textbox "Full name"', "Before the late pushes") in typed, event
    assert ('textbox "City"', "After the late pushes") in typed, event
    assert await account_tab.evaluate("document.getElementById('terms').checked")

    # the worker forgot the first task (it keeps the last few), and a late push of it makes it look it up again: the
    # overlay still shows how the tab's newest task ended
    await wait_overlay(account_tab, "the second task's end", lambda o: o["outcome"] == "Done after the person")
    amended = {"type": "task.amended", "taskId": first, "event": {"type": "user_takeover", "actions": []}}
    await harness.sw(f"tasks.delete({json.dumps(first)}); onHostMessage({json.dumps(amended)}); true")
    await wait_until(lambda: harness.sw(f"tasks.has({json.dumps(first)})"), "the worker to look the first task up")
    assert await harness.sw(f"overlayState({tab_id}).task.taskId") == second
    assert (await overlay(account_tab) or {}).get("outcome") == "Done after the person"


# --- the popup opens the real side panel, which follows its window's task ---------------------------------------------
async def test_the_popup_opens_the_side_panel_which_takes_over_and_hands_back(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    problems: list[str] = []
    llm.add(Delay(60), act_on("Agree to terms", "click_element_by_index", "Tick the terms", problems), done("Ticked"))
    await configure(harness, llm)
    task_id = await start(harness, account_tab, "Tick the terms, side panel")
    await wait_until(lambda: _async(len(llm.requests) >= 1), "the agent to think")
    popup = await harness.open_popup(account_tab)
    await popup.wait_for("!document.getElementById('takeover').hidden", "the popup's Take over button")
    panel = await open_side_panel(harness, popup)  # as a person opens it
    await panel.wait_for(f"ui.taskId === {json.dumps(task_id)} && document.body.dataset.status === 'running'",
                         "the side panel to show the task of its window's tab")
    await panel.wait_for("!document.getElementById('takeover').hidden", "the side panel's Take over")
    await screenshot(panel.tab, "takeover-side-panel-running.png")  # at the side panel's own size
    await panel.click("#takeover")
    assert (await controlled_by_user(harness, task_id))["reason"] == "user"
    await panel.wait_for("!document.getElementById('handback-box').hidden", "the side panel's Hand back")
    assert await panel.text("#control-title") == "You have the controls."
    # the panel's status says what the page's overlay says: paused, not "running"
    shown = await wait_overlay(account_tab, "the overlay to follow", lambda o: o["state"] == "user")
    assert shown["pill"] == "Paused" and await panel.text("#task-status") == "Paused", shown
    await screenshot(panel.tab, "takeover-real-side-panel.png")
    await panel.fill("#handback-note", "Nothing to do, go on")
    await panel.click("#handback")
    end = await ended(harness, task_id)
    assert not problems, problems
    assert end["status"] == "completed"
    [event] = takeovers(end["history"])
    assert (event["reason"], event["note"]) == ("user", "Nothing to do, go on"), event
    await panel.wait_for("document.body.dataset.status === 'completed'", "the side panel to show the end")
    assert await panel.text("#task-status") == "Completed"


# --- two frames: what the person did, in the order they did it --------------------------------------------------------
@pytest_asyncio.fixture(loop_scope="module")
async def trip_tab(harness: Harness, e2e_pages: LocalFiles) -> AsyncIterator[Tab]:
    """A page whose City field is in a frame from another site, its Submit button in the page itself."""
    tab = await harness.browser.new_tab(e2e_pages.url("trip.html"))
    city = e2e_pages.url("trip_city.html", host="localhost")
    await tab.evaluate(f"new Promise((loaded) => {{ const frame = document.getElementById('where');"
                       f" frame.onload = loaded; frame.src = {json.dumps(city)}; }})")
    await tab.track_frames()
    await wait_until(lambda: _async(any("trip_city" in f.url for f in tab.frames.values())), "the cross-site frame")
    yield tab
    if not tab.closed:
        await harness.browser.close_tab(tab.target_id)


async def test_typing_in_a_cross_site_frame_then_clicking_in_the_page_is_told_in_that_order(
    harness: Harness, llm: ScriptedLLMServer, trip_tab: Tab
) -> None:
    """A frame reports a field up to 0.2 s after its key, each frame on its own: a person who typed a city in the
    cross-site frame and clicked Submit in the page right after had the click recorded first, and the model was told
    "clicked Submit, then typed Lyon". Twice, on the same page: the record and the model's next request say the
    typing first."""
    await configure(harness, llm)
    [frame] = [f for f in trip_tab.frames.values() if "trip_city" in f.url]
    person = await Person.at(harness.browser.launched.ws_url, trip_tab.target_id)
    try:
        for city in ("Lyon", "Osaka"):
            await evaluate(frame.session, "document.getElementById('city').value = ''")
            after: list[dict[str, Any]] = []
            llm.add(Delay(60), account_told(after, done("Trip planned")))  # thinking when the person takes over
            task_id = await taken_over_while_thinking(harness, llm, trip_tab, f"Plan a trip to {city}")
            submit = await page_box(trip_tab, "#submit")
            await person.click_in_frame(frame.session, "document.getElementById('where')",
                                        "document.getElementById('city')")
            await person.type(city)
            await user_click(trip_tab, submit["x"], submit["y"])  # at once: before the frame reported the city
            await wait_until(lambda: trip_tab.evaluate("window.received.length > 0"), "the page to see the click")
            await trip_tab.evaluate("window.received.length = 0")
            await wait_until(lambda t=task_id: _async('button \\"Submit\\"' in open_takeover(harness, t)),
                             "the host to have the click")
            await press_overlay(trip_tab, "handback")

            end = await ended(harness, task_id)
            assert end["status"] == "completed", end
            [event] = takeovers(end["history"])
            assert [(a["kind"], a["target"], a.get("value")) for a in event["actions"]] == [
                ("input", 'textbox "City"', city), ("click", 'button "Submit"', None)], event["actions"]
            account = "\n".join(str(m.get("content")) for m in after[0]["messages"])
            told = account[account.index("<user_takeover>"):]
            assert told.index(f'typed in textbox "City" → "{city}"') < told.index('clicked button "Submit"'), told
    finally:
        await person.close()


# --- Stop while the user has the controls: what they did is recorded, the task ends stopped ---------------------------
async def typed_in_a_takeover(harness: Harness, llm: ScriptedLLMServer, tab: Tab, city: str) -> str:
    """A task whose model thinks for a minute; the person takes over from the overlay and types `city` into City."""
    llm.add(Delay(60))
    await configure(harness, llm)
    task_id = await start(harness, tab, "Wait for me")
    await wait_overlay(tab, "the overlay", lambda o: o["state"] == "running")
    await wait_until(lambda: _async(len(llm.requests) >= 1), "the agent to think")
    await press_overlay(tab, "takeover")
    await controlled_by_user(harness, task_id)
    await user_fill(tab, "#city", city)
    return task_id


def assert_typed(end: dict[str, Any], city: str) -> None:
    """The task's one takeover holds the person's typing of `city` into City."""
    [event] = takeovers(end["history"])
    assert ("input", 'textbox "City"', city) in {
        (a["kind"], a["target"], a.get("value")) for a in event["actions"]}, event["actions"]


async def test_stop_while_the_user_has_the_controls_records_what_they_did(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    task_id = await typed_in_a_takeover(harness, llm, account_tab, "Typed, then stopped")
    await press_overlay(account_tab, "stop")  # the field is still being typed in
    end = await ended(harness, task_id)
    assert end["status"] == "stopped", end
    assert_typed(end, "Typed, then stopped")
    finished = await wait_overlay(account_tab, "the overlay to show the end", lambda o: o["state"] == "stopped")
    assert finished["buttons"] == ["close"], finished
    await press_overlay(account_tab, "close")  # the panel asks the worker, which tells the page's overlay to go
    await wait_until(lambda: account_tab.evaluate("!document.querySelector('[data-tabpilot-overlay]')"),
                     "the overlay to go when closed", 3)  # (not the 8 s a finished one stays)


async def test_closing_the_tab_while_the_user_has_the_controls_ends_the_task_with_what_they_did(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    # The person takes over, types, and closes the tab: the task has nowhere left to work. It ends saying its tab
    # was closed, what they did recorded (it stayed paused, "running" in a tab that was gone, until Stop).
    task_id = await typed_in_a_takeover(harness, llm, account_tab, "Typed, then closed")
    await asyncio.sleep(1.5)  # the field's value goes into the record once the typing pauses for a second
    await harness.browser.close_tab(account_tab.target_id)
    end = await ended(harness, task_id, timeout=15)
    assert end["status"] == "error", end
    assert "closed" in end["history"][-1].get("message", ""), end["history"][-1]
    assert_typed(end, "Typed, then closed")
    assert len(llm.requests) == 1  # the model is not asked about a tab that is gone


# --- a tab that loaded while another tab's task ran gets the overlay for a task of its own ----------------------------
async def test_a_tab_loaded_during_another_task_gets_the_overlay_for_its_own_task(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles, account_tab: Tab
) -> None:
    llm.add(Delay(60))
    await configure(harness, llm)
    first = await start(harness, account_tab, "Keep thinking")
    await wait_overlay(account_tab, "the first task's overlay", lambda o: o["state"] == "running")
    # while the first task runs, the scripts are registered for every new document: this one gets them, idle
    created = await harness.browser.connection.root.send(
        "Target.createTarget", {"url": e2e_pages.url("account.html"), "newWindow": True}
    )
    other = await harness.browser.attach(created["targetId"])
    await wait_until(lambda: other.evaluate(PAGE_LOADED), "the second tab to load")
    await press_overlay(account_tab, "stop")
    assert (await ended(harness, first))["status"] == "stopped"

    llm.add(Delay(60))
    second = await start(harness, other, "Now this tab")
    await wait_overlay(other, "the overlay in the tab that loaded during the first task",
                       lambda o: o["state"] == "running")
    await press_overlay(other, "stop")  # and it is the working overlay: the user's Stop ends the task
    assert (await ended(harness, second))["status"] == "stopped"
    await harness.browser.close_tab(other.target_id)


# --- the host crashes while the user has the controls: what they did is in the record all the same --------------------
def open_takeover(harness: Harness, task_id: str) -> str:
    """The takeover under way of `task_id` as the record keeps it (store/tasks.py open_takeover), as JSON, or ""."""
    from tabpilot.store.tasks import TaskStore

    with TaskStore(harness.database()) as store:
        kept = store.open_takeover(task_id)
    return "" if kept is None else json.dumps(kept, ensure_ascii=False)


def history_show(harness: Harness, task_id: str) -> str:
    """`tabpilot history show ID` in a terminal, as the person reads the record."""
    result = subprocess.run([sys.executable, "-m", "tabpilot", "history", "show", task_id], capture_output=True,
                            text=True, env={**os.environ, "TABPILOT_HOME": str(harness.tabpilot_home)}, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


async def test_what_the_person_did_in_a_takeover_survives_a_host_crash(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    """The host is killed (a crash) while the person has the controls, twice: the next host finds the task
    interrupted with what they did as its takeover (the email as typed, the password hidden, even the field they
    were still typing in), said to be cut short, in `tabpilot history show` too. Then a task on the same page is
    taken over and handed back as usual: one takeover, nothing cut short, nothing left open."""
    await configure(harness, llm)
    for round_ in (1, 2):
        email = f"crash{round_}@example.org"
        await account_tab.evaluate("for (const id of ['email', 'password']) document.getElementById(id).value = ''")
        llm.add(Delay(60))  # thinking when the person takes over
        task_id = await taken_over_while_thinking(harness, llm, account_tab, f"Sign in (round {round_})")
        await user_fill(account_tab, "#email", email)
        await user_fill(account_tab, "#password", PASSWORD)  # still typing in it: no blur, no hand back
        await wait_until(lambda t=task_id: _async('textbox \\"Password\\"' in open_takeover(harness, t)),
                         "the host to keep the password field's action (once typing paused)", 20)
        [killed] = harness.host_pids()
        os.kill(killed, signal.SIGKILL)
        await wait_until(lambda k=killed: _async(harness.host_pids() not in ([], [k])), "a new host", 30)
        await harness.wait_host_connected()
        record = await wait_until(lambda t=task_id: _interrupted(harness, t), "the new host to mark it interrupted")
        [event] = takeovers(record["events"])
        typed = [(a["kind"], a.get("target"), a.get("value")) for a in event["actions"]]
        assert typed[:2] == [("input", 'textbox "Email"', email), ("input", 'textbox "Password"', "•••")], typed
        assert event["actions"][-1]["kind"] == "note" and "not known" in event["actions"][-1]["description"], typed
        assert event["urlBefore"].endswith("account.html") and "endedAt" not in event, event  # when is not known
        shown = history_show(harness, task_id)
        assert "interrupted" in shown and email in shown and "Password" in shown, shown
        assert open_takeover(harness, task_id) == ""  # settled once, into the record
        assert PASSWORD not in shown and leaks(harness, PASSWORD) == []

    after: list[dict[str, Any]] = []
    llm.add(Delay(60), account_told(after, done("Signed in")))
    task_id = await taken_over_while_thinking(harness, llm, account_tab, "Sign in after the crashes")
    await user_fill(account_tab, "#city", "Lyon")
    await press_overlay(account_tab, "handback")
    end = await ended(harness, task_id)
    assert end["status"] == "completed", end
    [event] = takeovers(end["history"])
    assert [(a["kind"], a.get("value")) for a in event["actions"]] == [("input", "Lyon")], event["actions"]
    assert open_takeover(harness, task_id) == ""
    assert "Lyon" in json.dumps(after[0]["messages"])  # the model was told


async def host_down(harness: Harness) -> Path:
    """Kill the host (a crash) and keep any other from starting: its manifest goes away (returned, to put back)."""
    manifest = harness.profile / "NativeMessagingHosts" / "com.tabpilot.host.json"
    away = manifest.with_name("away.json")
    await asyncio.to_thread(manifest.rename, away)
    [killed] = harness.host_pids()
    os.kill(killed, signal.SIGKILL)
    await wait_until(lambda: harness.sw("!host.connected"), "the worker to see the host gone", 20)
    return away


async def late_takeover(harness: Harness, task_id: str, *values: str) -> dict[str, Any]:
    """The interrupted task's takeover once it has `values`, after its host died while the person had the controls:
    the email, the city and the box they ticked, then the note that what came after is not known."""
    async def with_all() -> dict[str, Any] | None:
        record = await _interrupted(harness, task_id)
        return record if record and all(v in json.dumps(takeovers(record["events"])) for v in values) else None

    record = await wait_until(with_all, "the interrupted task's takeover to have what was done with no host", 20)
    [event] = takeovers(record["events"])
    return event


async def fill_the_profile(harness: Harness, llm: ScriptedLLMServer, tab: Tab, task: str, email: str) -> str:
    """A task taken over on the account page, where the person types `email`; its id."""
    await tab.evaluate("for (const id of ['email', 'city']) document.getElementById(id).value = '';"
                       "document.getElementById('news').checked = false")
    llm.add(Delay(60))  # thinking when the person takes over
    task_id = await taken_over_while_thinking(harness, llm, tab, task)
    await user_fill(tab, "#email", email)
    return task_id


async def with_no_host(tab: Tab, city: str) -> None:
    """What the person does with no host: types a city, ticks the newsletter box."""
    await user_fill(tab, "#city", city)
    box = await page_box(tab, "#news")
    await user_click(tab, box["x"], box["y"])
    await asyncio.sleep(0.5)  # reported (0.2 s after a key) and batched (0.1 s), to no host


def assert_late(event: dict[str, Any], email: str, city: str) -> None:
    done_ = [(a["kind"], a.get("target"), a.get("value")) for a in event["actions"]]
    assert done_[:3] == [("input", 'textbox "Email"', email), ("input", 'textbox "City"', city),
                         ("check", 'checkbox "Newsletter"', "checked")], done_
    assert len(done_) == 4 and done_[-1][0] == "note", done_  # then: what came after is not known
    assert "not known" in event["actions"][-1]["description"] and event["urlAfter"].endswith("account.html")


async def nothing_left_to_send(harness: Harness) -> None:
    """The worker keeps nothing it still has to send: once the host has answered for what reached the record (asked
    at once, a loaded machine's answer still on its way failed it: 1 left)."""
    async def drained() -> bool:
        left = await harness.sw("pendingActions.size + sending.size")
        return left == 0 and await harness.sw(
            "(await chrome.storage.session.get('takeoverOutbox')).takeoverOutbox") == {}

    await wait_until(drained, "the worker to have nothing left to send")


async def test_what_the_person_does_as_the_host_dies_and_while_none_runs_reaches_the_record(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    """The person types in a field and the host is killed at once (what it had not yet got of their typing goes with
    it), then they type on and tick a box while no host can start (its manifest is away). Once one starts again, the
    interrupted task's takeover has all of it, in order, before the note that it was cut short; in `tabpilot history
    show` too. Twice: the second task gets its own, and nothing of the first is sent again."""
    await configure(harness, llm)
    for round_ in (1, 2):
        email, city = f"late{round_}@example.org", f"Lyon {round_}"
        task_id = await fill_the_profile(harness, llm, account_tab, f"Fill the profile (round {round_})", email)
        away = await host_down(harness)
        await with_no_host(account_tab, city)
        assert not await harness.sw("host.connected")  # all that was done while none ran
        await asyncio.to_thread(away.rename, away.with_name("com.tabpilot.host.json"))
        await harness.wait_host_connected()
        assert_late(await late_takeover(harness, task_id, email, city), email, city)
        shown = history_show(harness, task_id)
        assert "interrupted" in shown and email in shown and city in shown, shown
        await nothing_left_to_send(harness)


async def test_what_the_person_did_with_no_host_outlives_the_service_worker_restarting(
    harness: Harness, llm: ScriptedLLMServer, account_tab: Tab
) -> None:
    """As above, and the extension's service worker is stopped before any host could start (as Chromium stops an
    idle one): the worker that starts next still has what the person did, and gives it to the next host."""
    await configure(harness, llm)
    email, city = "restart@example.org", "Lyon 3"
    task_id = await fill_the_profile(harness, llm, account_tab, "Fill the profile (worker restart)", email)
    away = await host_down(harness)
    await with_no_host(account_tab, city)
    await harness.stop_worker()
    await asyncio.to_thread(away.rename, away.with_name("com.tabpilot.host.json"))
    await harness.wait_host_connected()  # the overlay reconnecting (or the harness) wakes a new worker
    assert_late(await late_takeover(harness, task_id, email, city), email, city)
    await nothing_left_to_send(harness)


async def taken_over_while_thinking(harness: Harness, llm: ScriptedLLMServer, tab: Tab, task: str) -> str:
    """Start `task` in `tab` and press Take over in the overlay once the model has been asked; the task's id."""
    before = len(llm.requests)
    task_id = await start(harness, tab, task)
    await wait_until(lambda: _async(len(llm.requests) > before), "the agent to think")
    await wait_overlay(tab, "the overlay", lambda o: o["state"] == "running")
    await press_overlay(tab, "takeover")
    await controlled_by_user(harness, task_id)
    return task_id


async def _interrupted(harness: Harness, task_id: str) -> dict[str, Any] | None:
    reply = await ask_host(harness, {"type": "history.get", "taskId": task_id})
    record = reply.get("data") if reply.get("ok") else None
    return record if record and record["task"]["status"] == "interrupted" else None


async def popup_cards(harness: Harness, tab: Tab, actions: int, screen: str | None = None
                      ) -> tuple[list[str], list[dict[str, str]]]:
    """The popup of `tab` once its takeover card lists `actions` actions: those lines and every card (`screen`: a
    screenshot of it saved under that name)."""
    popup = await harness.open_popup(tab)
    try:
        await popup.wait_for(f"document.querySelectorAll('.card-actions li').length >= {actions}",
                             "the takeover card's actions")
        said = await popup.js("[...document.querySelectorAll('.card-actions li')].map((li) => li.textContent)")
        if screen:
            await popup.screenshot(SCREENS / screen)
        return said, await popup.cards()
    finally:
        await harness.browser.close_tab(popup.tab.target_id)


# --- icon-only controls: the record names them as the page state does ------------------------------------------------
ICON_CLICKS = [("delete", 'button "Delete"'), ("settings", 'link "Settings"'), ("home", 'link "Home"'),
               ("share", 'button "Share"'), ("trash", 'button "trash"'), ("archive", 'button "Archive"')]


async def test_the_icon_only_controls_the_person_clicks_are_named_in_the_record_and_to_the_model(
    harness: Harness, llm: ScriptedLLMServer, pages: LocalFiles
) -> None:
    """A new user's trial: a person's clicks on icon buttons in a takeover (aria-label, a title-only link, an <img alt>
    in a link, an SVG's <title>, an icon font's <i class="fa fa-trash">, aria-labelledby) were told with no name or by
    words the page hides ("clicked button"). The capture script the extension puts in the task's tab names each with the
    page state's rules (content/names.js): the record, the popup's card and the model's next request say the name the
    model reads on the page. Twice: a second task after the page reloaded."""
    await configure(harness, llm)
    tab = await harness.browser.new_tab(pages.url("takeover_icons.html"))
    try:
        for round_ in range(2):
            after: list[dict[str, Any]] = []
            llm.add(Delay(60), account_told(after, done("Inbox tidied")))  # thinking when the person takes over
            task_id = await taken_over_while_thinking(harness, llm, tab, f"Tidy the inbox ({round_ + 1})")
            for control, _ in ICON_CLICKS:
                box = await page_box(tab, f"#{control}")
                await user_click(tab, box["x"], box["y"])
            assert await tab.evaluate("window.clicks") == [control for control, _ in ICON_CLICKS]
            last = json.dumps(ICON_CLICKS[-1][1], ensure_ascii=False)[1:-1]  # as open_takeover's JSON holds it
            await wait_until(lambda t=task_id, last=last: _async(last in open_takeover(harness, t)),
                             "the host to have the last click")
            await press_overlay(tab, "handback")

            end = await ended(harness, task_id)
            assert end["status"] == "completed", end
            [event] = takeovers(end["history"])
            assert [(a["kind"], a["target"]) for a in event["actions"]] == [
                ("click", target) for _, target in ICON_CLICKS], event["actions"]
            account = "\n".join(str(m.get("content")) for m in after[0]["messages"])
            told = account[account.index("<user_takeover>"):]
            assert all(f"clicked {target}" in told for _, target in ICON_CLICKS), told
            # the page state the model read names them the same way
            page = prompt_text(after[0])
            assert all(name in page for name in ("Delete", "Settings", "Home", "Share", "trash", "Archive")), page
            screen = "takeover-icon-clicks.png" if round_ == 0 else None
            said, _ = await popup_cards(harness, tab, len(ICON_CLICKS), screen)
            assert said == [f"clicked {target}" for _, target in ICON_CLICKS], said
            await tab.navigate(pages.url("takeover_icons.html"))
    finally:
        await harness.browser.close_tab(tab.target_id)
