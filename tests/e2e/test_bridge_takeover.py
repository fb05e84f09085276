"""User takeover of a task a web page started through `window.PAGE_AGENT_EXT` (issue 11): it works exactly as
for a popup's task, and the page hears of it through page-agent's callbacks. Real Chromium, the real
extension, the real host Chromium spawned, the scripted model. The allowed site is the account page's own
origin; "the user" is this test's own CDP connection (user_support.py): input the extension did not dispatch.
Both tests run on the same page, one task after the other (a second page task after a takeover works too)."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from bridge_support import allow, origin_of
from e2e_support import Harness, act_on, done, wait_until
from takeover_support import Person
from test_overlay_press import held_until, last_letter_on_a_slow_page
from test_takeover import agent_call, ask_host
from user_support import (
    overlay_button,
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

PAGE_KEY = "sk-page-app-key-takeover-8c1d"
AGENT_STATUSES = {"idle", "running", "completed", "error", "stopped"}  # page-agent's AgentStatus


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def app_tab(harness: Harness, e2e_pages: LocalFiles) -> AsyncIterator[Tab]:
    """The account page on an origin the user allowed, the visible tab of a window of its own."""
    await allow(harness, origin_of(e2e_pages))
    created = await harness.browser.connection.root.send(
        "Target.createTarget", {"url": e2e_pages.url("account.html"), "newWindow": True}
    )
    tab = await harness.browser.attach(created["targetId"])
    await tab.send("Emulation.setDeviceMetricsOverride",
                   {"width": 1000, "height": 700, "deviceScaleFactor": 1, "mobile": False})
    await wait_until(lambda: tab.evaluate("document.readyState === 'complete' && typeof PAGE_AGENT_EXT === 'object'"),
                     "the allowed page to load with the bridge")
    yield tab
    if not tab.closed:
        await harness.browser.close_tab(tab.target_id)


async def execute_from_page(tab: Tab, name: str, task: str, llm: ScriptedLLMServer) -> None:
    """The app's own script calls execute() with its model and all three callbacks, without waiting; each
    callback's values (copied as received) and the outcome land in window.runs[name]."""
    config = {"baseURL": llm.base_url, "model": "scripted", "apiKey": PAGE_KEY}
    await tab.evaluate(f"""(() => {{
        window.runs = window.runs || {{}};
        const run = window.runs[{json.dumps(name)}] = {{statuses: [], activities: [], histories: []}};
        const copy = (value) => JSON.parse(JSON.stringify(value));
        const config = Object.assign({json.dumps(config)}, {{
            onStatusChange: (s) => run.statuses.push(s),
            onActivity: (a) => run.activities.push(copy(a)),
            onHistoryUpdate: (h) => run.histories.push(copy(h)),
        }});
        window.PAGE_AGENT_EXT.execute({json.dumps(task)}, config).then(
            (r) => {{ run.result = r; }}, (e) => {{ run.error = String(e && e.message || e); }});
        return true;
    }})()""")


async def page_run(tab: Tab, name: str) -> dict[str, Any]:
    return await tab.evaluate(f"window.runs[{json.dumps(name)}]")


async def outcome(tab: Tab, name: str, timeout: float = 90) -> dict[str, Any]:
    return await wait_until(
        lambda: tab.evaluate("(r => r && ('result' in r || 'error' in r) ? r : null)"
                             f"(window.runs[{json.dumps(name)}])"),
        f"the page's {name} to settle", timeout,
    )


async def take_over_waiting_task(tab: Tab, name: str, llm: ScriptedLLMServer) -> None:
    """The page starts a task whose agent waits for the model; the person presses Take over meanwhile."""
    await execute_from_page(tab, name, "Wait for me, then finish", llm)
    await wait_overlay(tab, "the overlay", lambda o: o["state"] == "running")
    await wait_until(lambda: _async(len(llm.requests) >= 1), "the agent to think")
    await press_overlay(tab, "takeover")
    await wait_overlay(tab, "the overlay to say the user has the controls", lambda o: o["state"] == "user")


def takeovers(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in history if e.get("type") == "user_takeover"]


def told_after_handback(replies: list[dict[str, Any]], then: Any) -> Any:
    """A reply that keeps the request it answers (the model's first after the hand back)."""

    def reply(body: dict[str, Any]) -> Any:
        replies.append(body)
        return then(body) if callable(then) else then

    return reply


def model_read(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content")) for m in body["messages"])


def assert_told_to_the_page(run: dict[str, Any], reason: str) -> dict[str, Any]:
    """What the page's callbacks and promise got around one takeover; returns the user_takeover event."""
    assert "error" not in run, run.get("error")
    # onStatusChange: page-agent's statuses only, running throughout the takeover, then the end
    assert run["statuses"] == ["running", "completed"], run["statuses"]
    assert set(run["statuses"]) <= AGENT_STATUSES
    # onActivity: tabpilot's paused (why) and resumed reached the page, in that order, once each
    kinds = [a["type"] for a in run["activities"]]
    assert kinds.count("paused") == 1 and kinds.count("resumed") == 1, kinds
    assert kinds.index("paused") < kinds.index("resumed"), kinds
    paused = run["activities"][kinds.index("paused")]
    assert paused.get("reason"), paused
    # onHistoryUpdate: page-agent's HistoricalEvent list, one more event each time, the takeover among them
    lengths = [len(h) for h in run["histories"]]
    assert lengths == list(range(1, len(lengths) + 1)), lengths
    last = run["histories"][-1]
    assert all(isinstance(e, dict) and isinstance(e.get("type"), str) for e in last), last
    [event] = takeovers(last)
    assert event["reason"] == reason and event["actions"], event
    first_with_it = next(i for i, h in enumerate(run["histories"]) if takeovers(h))
    assert run["histories"][first_with_it][-1] == event  # pushed when handed back, as the newest event
    # the promise: page-agent's ExecutionResult, its history holding the same event
    result = run["result"]
    assert set(result) == {"success", "data", "history"} and result["success"] is True, result
    assert takeovers(result["history"]) == [event]
    assert result["history"] == last
    return event


# --- explicit: Take over in the overlay, the user types, Hand back with a note ----------------------------------
async def test_a_page_task_taken_over_in_the_overlay_tells_the_page_and_the_model(
    harness: Harness, llm: ScriptedLLMServer, app_tab: Tab
) -> None:
    problems: list[str] = []
    after_handback: list[dict[str, Any]] = []
    llm.add(
        act_on("Full name", "input_text", "Type the name", problems, text="Ada Lovelace"),
        Delay(60),  # the agent thinks; the user presses Take over meanwhile (this call is cancelled)
        told_after_handback(after_handback, done("Profile saved")),
    )
    await execute_from_page(app_tab, "explicit", "Save the profile of Ada Lovelace", llm)

    running = await wait_overlay(app_tab, "the overlay on the page's task",
                                 lambda o: o["state"] == "running" and "Type the name" in o["goal"])
    assert running["buttons"] == ["takeover", "stop"], running
    assert "Save the profile of Ada Lovelace" in running["task"]
    await wait_until(lambda: app_tab.evaluate("document.getElementById('name').value === 'Ada Lovelace'"),
                     "the agent to type the name")
    await wait_until(lambda: _async(len(llm.requests) >= 2), "the agent to ask the model for its next step")
    await press_overlay(app_tab, "takeover")
    paused = await wait_overlay(app_tab, "the overlay to say the user has the controls", lambda o: o["state"] == "user")
    assert paused["buttons"] == ["handback", "stop"] and "note" in paused["fields"], paused
    await wait_until(lambda: app_tab.evaluate("window.runs.explicit.activities.some(a => a.type === 'paused')"),
                     "the page's onActivity to hear of the pause")
    assert (await page_run(app_tab, "explicit"))["statuses"] == ["running"]  # no status of its own: still running

    await user_fill(app_tab, "#city", "Lyon")
    await type_in_overlay(app_tab, "textarea.note", "City set to Lyon, go on")
    await screenshot(app_tab, "bridge-takeover-user-has-the-controls.png")
    await press_overlay(app_tab, "handback")

    run = await outcome(app_tab, "explicit")
    assert not problems, problems
    assert llm.dropped == [1], llm.dropped  # the model call in flight when the user took over was cancelled
    event = assert_told_to_the_page(run, "user")
    assert event["note"] == "City set to Lyon, go on", event
    assert ("input", 'textbox "City"', "Lyon") in {(a["kind"], a["target"], a.get("value")) for a in event["actions"]}
    assert not any("hand back" in a["target"].lower() for a in event["actions"]), event["actions"]  # not the overlay
    assert run["result"]["data"] == "Profile saved"
    assert await app_tab.evaluate("document.getElementById('city').value") == "Lyon"
    # the model's next request (as the scripted server received it) carries the account and the note
    [told] = after_handback
    assert "Lyon" in model_read(told) and "City set to Lyon, go on" in model_read(told), model_read(told)[-3000:]
    assert told["messages"] and llm.headers[-1]["authorization"] == f"Bearer {PAGE_KEY}"  # still the page's model


# --- implicit: the user types into the page while the page's task runs -------------------------------------------
async def test_typing_into_the_page_mid_task_pauses_the_page_task_and_the_page_hears_of_it(
    harness: Harness, llm: ScriptedLLMServer, app_tab: Tab
) -> None:
    problems: list[str] = []
    after_handback: list[dict[str, Any]] = []
    await app_tab.evaluate("document.getElementById('name').value = ''; document.getElementById('city').value = ''")
    llm.add(
        act_on("Full name", "input_text", "Type the name", problems, text="Grace Hopper"),
        # the agent would type a city; the user is faster (this call is cancelled at their first input)
        Delay(60, then=act_on("City", "input_text", "Type the city", problems, text="Paris")),
        told_after_handback(after_handback, act_on("Agree to terms", "click_element_by_index", "Tick the terms",
                                                   problems)),
        done("Profile done"),
    )
    await execute_from_page(app_tab, "implicit", "Fill in the profile of Grace Hopper", llm)
    await wait_until(lambda: app_tab.evaluate("document.getElementById('name').value === 'Grace Hopper'"),
                     "the agent to type the name")
    await wait_until(lambda: _async(len(llm.requests) >= 2), "the agent to ask the model for its next step")
    await user_fill(app_tab, "#city", "Kyoto")

    paused = await wait_overlay(app_tab, "the overlay to say the user touched the page",
                                lambda o: o["state"] == "implicit")
    assert paused["buttons"] == ["handback", "stop"], paused
    await wait_until(lambda: app_tab.evaluate("window.runs.implicit.activities.some(a => a.type === 'paused')"),
                     "the page's onActivity to hear of the pause")
    await press_overlay(app_tab, "handback")

    run = await outcome(app_tab, "implicit")
    assert not problems, problems
    assert llm.dropped == [1], llm.dropped
    event = assert_told_to_the_page(run, "implicit")
    assert ("input", 'textbox "City"', "Kyoto") in {(a["kind"], a["target"], a.get("value")) for a in event["actions"]}
    assert run["result"]["data"] == "Profile done"
    assert await app_tab.evaluate("document.getElementById('city').value") == "Kyoto"  # not overwritten
    assert await app_tab.evaluate("document.getElementById('terms').checked")  # the agent went on after
    [told] = after_handback
    assert "Kyoto" in model_read(told), model_read(told)[-3000:]


# --- what the page was slow to give at Hand back reaches the page's history, in the takeover it belongs to ----------
async def test_what_a_slow_page_gives_after_hand_back_is_told_to_the_page_in_its_takeover(
    harness: Harness, llm: ScriptedLLMServer, app_tab: Tab
) -> None:
    # Hand back goes on without a page that is slow to give the field the person was typing in; what it gives a moment
    # later goes into that takeover. The page heard of the takeover only as it was at Hand back (its last letter
    # missing) until the task's result: onHistoryUpdate now gets the takeover amended, in its place, as it happens.
    gate = threading.Event()
    llm.add(Delay(60), held_until(gate, agent_call("Wait for the page", {"wait": {"seconds": 1}})), done("City set"))
    await take_over_waiting_task(app_tab, "late", llm)
    tab_id = await harness.chrome_tab_id(app_tab)
    task = (await ask_host(harness, {"type": "task.get", "tabId": tab_id}))["data"]["task"]
    box = await overlay_button(app_tab, "handback")
    try:
        async with last_letter_on_a_slow_page(harness, app_tab, task["taskId"], "Kagoshima"):
            await user_click(app_tab, box["x"], box["y"])

        async def amended() -> list[dict[str, Any]] | None:
            histories = (await page_run(app_tab, "late"))["histories"]
            told = takeovers(histories[-1]) if histories else []
            values = [a.get("value") for a in told[0]["actions"] if a["kind"] == "input"] if len(told) == 1 else []
            return histories if values == ["Kagoshima"] else None

        histories = await wait_until(amended, "the page to hear the takeover with what its page gave late", 30)
        assert len(histories[-1]) == len(histories[-2]), histories[-2:]  # in its place, not a second one
        assert "result" not in await page_run(app_tab, "late")  # as it happens, not with the result
    finally:
        gate.set()
    run = await outcome(app_tab, "late")
    assert run["result"]["success"] is True and takeovers(run["result"]["history"]) == takeovers(histories[-1])


async def _async(value: Any) -> Any:
    return value


# --- the page reloads while the user has the controls: attach() hears the rest, the takeover included -----------
async def test_a_reload_during_the_takeover_and_attach_gets_the_takeover_and_the_result(
    harness: Harness, llm: ScriptedLLMServer, app_tab: Tab
) -> None:
    problems: list[str] = []
    after_handback: list[dict[str, Any]] = []
    await app_tab.evaluate("document.getElementById('name').value = ''; document.getElementById('city').value = ''")
    llm.add(Delay(60), told_after_handback(after_handback, done("Done after the reload")))
    await take_over_waiting_task(app_tab, "reloaded", llm)
    await user_fill(app_tab, "#name", "Before reload")

    await app_tab.evaluate("location.reload(), true")
    await wait_until(lambda: app_tab.evaluate("document.readyState === 'complete' && !window.runs"
                                              " && typeof PAGE_AGENT_EXT === 'object'"), "the page to reload")
    await app_tab.evaluate("""(() => {
        const run = window.attached = {statuses: [], activities: [], histories: []};
        const copy = (value) => JSON.parse(JSON.stringify(value));
        window.PAGE_AGENT_EXT.attach({
            onStatusChange: (s) => run.statuses.push(s),
            onActivity: (a) => run.activities.push(copy(a)),
            onHistoryUpdate: (h) => run.histories.push(copy(h)),
        }).then((r) => { run.result = r; }, (e) => { run.error = String(e && e.message || e); });
        return true;
    })()""")
    await wait_until(lambda: app_tab.evaluate("window.attached.statuses.length > 0"), "attach() to re-subscribe")
    await wait_overlay(app_tab, "the overlay after the reload", lambda o: o["state"] == "user")
    await user_fill(app_tab, "#city", "After reload")
    await press_overlay(app_tab, "handback")

    run = await wait_until(lambda: app_tab.evaluate("(r => 'result' in r || 'error' in r ? r : null)(window.attached)"),
                           "attach() to resolve", 90)
    assert not problems, problems
    assert "error" not in run, run["error"]
    assert run["statuses"] == ["running", "completed"], run["statuses"]
    assert [a["type"] for a in run["activities"]].count("resumed") == 1, run["activities"]
    [event] = takeovers(run["histories"][-1])
    typed = {(a["target"], a.get("value")) for a in event["actions"] if a["kind"] == "input"}
    assert {('textbox "Full name"', "Before reload"), ('textbox "City"', "After reload")} <= typed, event["actions"]
    assert run["result"]["success"] is True and run["result"]["data"] == "Done after the reload"
    assert takeovers(run["result"]["history"]) == [event]
    [told] = after_handback
    assert "After reload" in model_read(told), model_read(told)[-3000:]


# --- another site's frame: the person's values there are theirs, not the page's ----------------------------------
async def test_what_the_person_types_in_another_sites_frame_reaches_the_model_but_not_the_page(
    harness: Harness, llm: ScriptedLLMServer, app_tab: Tab, e2e_pages: LocalFiles
) -> None:
    """The page that started the task sees what the person did in its own documents, and that they typed in another
    site's frame (a sign-in or payment widget it embeds), not what: the page cannot read that frame, and the
    takeover must not hand it over. Nor may the model's later words: it knows the value and quotes it (its goal, the
    arguments of its next action, the `done` text), in other case and spacing; the page gets ••• there. The agent
    (whose task it is) and the person's record keep the value."""
    nickname = "ada-nick-7f3e"
    finished = "Saved ADA NICK 7F3E as the name"  # the model's own spelling of the person's value
    problems: list[str] = []
    after_handback: list[dict[str, Any]] = []
    await app_tab.evaluate("document.getElementById('name').value = ''; document.getElementById('city').value = ''")
    widget = e2e_pages.url("widget.html", host="localhost")
    await app_tab.evaluate(f"""new Promise((loaded) => {{ const f = document.createElement('iframe');
        f.id = 'widget'; f.src = {json.dumps(widget)}; f.style.cssText = 'width: 260px; height: 60px';
        f.onload = () => loaded(true); document.body.prepend(f); }})""")
    llm.add(Delay(60), told_after_handback(after_handback, act_on("Full name", "input_text",
                                                                  f"Use {nickname.upper()} as the name", problems,
                                                                  text=nickname)), done(finished))
    await take_over_waiting_task(app_tab, "widget", llm)

    await user_fill(app_tab, "#city", "Oslo")
    await app_tab.track_frames()
    [frame] = [f for f in app_tab.frames.values() if "widget.html" in f.url]
    person = Person(harness.browser.connection, app_tab.session)
    await person.click_in_frame(frame.session, "document.getElementById('widget')",
                                "document.getElementById('nickname')")
    await person.type(nickname)
    await wait_until(lambda: _frame_value(frame.session, nickname), "the person's typing to reach the widget")
    await press_overlay(app_tab, "handback")

    run = await outcome(app_tab, "widget")
    try:
        assert "error" not in run, run.get("error")
        assert not problems, problems
        told_page = json.dumps([run["histories"], run["activities"], run["result"]], ensure_ascii=False).lower()
        # in no callback and not in the result: the event, the step's goal, the action's input, the done text
        assert nickname not in told_page and "ada nick 7f3e" not in told_page, told_page[-2000:]
        assert run["result"]["data"] == "Saved ••• as the name", run["result"]
        step = next(e for e in run["result"]["history"] if e["type"] == "step"
                    and e["action"]["name"] == "input_text")
        assert step["reflection"]["next_goal"] == "Use ••• as the name", step
        assert step["action"]["input"]["text"] == "•••", step
        executing = next(a for a in run["activities"] if a["type"] == "executing" and a["tool"] == "input_text")
        assert executing["input"]["text"] == "•••", executing
        [event] = takeovers(run["histories"][-1])
        shown = {(a["kind"], a["target"], a.get("value"), a["url"]) for a in event["actions"]}
        # the page's own field as typed; the widget's: that the person typed there, on which site, not what
        assert ("input", 'textbox "City"', "Oslo", e2e_pages.url("account.html")) in shown, shown
        assert ("input", 'textbox "Nickname"', "•••", origin_of(e2e_pages, "localhost")) in shown, shown
        assert takeovers(run["result"]["history"]) == [event]
        # the agent knows what the person did, value and all
        [told] = after_handback
        assert nickname in model_read(told), model_read(told)[-3000:]
        # and so does the person's record (the popup's timeline reads it)
        record = await harness.sw("const [taskId] = [...bridge.tasks].find(([, e]) => e.result"
                                  f" && e.result.data === {json.dumps(finished)});"
                                  " (await requestHost({type: 'history.get', taskId})).events")
        [kept] = takeovers(record)
        assert nickname in {a.get("value") for a in kept["actions"]}, kept["actions"]
        assert f"Use {nickname.upper()} as the name" in json.dumps(record), record
    finally:
        await app_tab.evaluate("document.getElementById('widget').remove(), true")


async def test_where_the_person_went_on_another_site_is_told_to_the_page_by_its_origin_only(harness: Harness) -> None:
    """The same rule for addresses, in the worker that tells the page: the person left the page's site for another
    (their bank) during the takeover and did things there; the page hears that, at which site, and no more."""
    page, bank = "https://shop.example", "https://bank.example"
    event = {"type": "user_takeover", "urlBefore": f"{page}/cart", "urlAfter": f"{bank}/accounts/12345?session=s3cr3t",
             "note": "paid", "actions": [
                 {"kind": "click", "target": 'link "Pay"', "url": f"{page}/cart", "description": "clicked"},
                 {"kind": "navigate", "target": "page", "value": f"{bank}/login?user=ada", "url": f"{page}/cart",
                  "description": f"went to {bank}/login?user=ada"},
                 {"kind": "input", "target": 'textbox "IBAN"', "value": "FR7630006000011234567890189",
                  "url": f"{bank}/login?user=ada", "description": "typed FR7630006000011234567890189"},
                 {"kind": "navigate", "target": "page", "value": f"{page}/thanks", "url": f"{bank}/done",
                  "description": f"went to {page}/thanks"}]}
    told = await harness.sw(f"bridgeHistoryFor([{json.dumps(event)}], {json.dumps(page)})")
    assert told == [{**event, "urlAfter": bank, "actions": [
        event["actions"][0],
        {"kind": "navigate", "target": "page", "value": bank, "url": f"{page}/cart"},
        {"kind": "input", "target": 'textbox "IBAN"', "value": "•••", "url": bank},
        {"kind": "navigate", "target": "page", "value": "•••", "url": bank}]}], told


async def test_the_persons_values_from_another_site_are_hidden_in_every_word_the_page_gets_as_a_class(
    harness: Harness,
) -> None:
    """Which of the person's values are hidden in the model's words, in the worker that tells the page: each one they
    wrote in another site's documents, from 3 characters on (a CVV; not a month "12"), whatever its case and however
    the model spaced or grouped it, only as a whole word (not inside "41234"), also in Chinese text; key names are
    not hidden; the fields the page reads as names (types, tools, times) are never rewritten; an address the event cut
    to its origin is cut in the words too. The page's own values stay."""
    page, pay = "https://shop.example", "https://pay.example"
    takeover = {"type": "user_takeover", "reason": "user", "startedAt": "2026-11-29T23:00:00Z", "urlBefore": page,
                "urlAfter": page, "actions": [
                    {"kind": "input", "target": 'textbox "Card"', "value": "4111 1111 1111 1111",
                     "url": f"{pay}/form?order=77"},
                    {"kind": "input", "target": 'textbox "CVC"', "value": "123", "url": f"{pay}/form?order=77"},
                    {"kind": "select", "target": 'combobox "Month"', "value": "12", "url": f"{pay}/form?order=77"},
                    {"kind": "key", "target": 'textbox "CVC"', "value": "Enter", "url": f"{pay}/form?order=77"},
                    {"kind": "input", "target": 'textbox "Name"', "value": "Zoë Okafor", "url": f"{pay}/form?order=77"},
                    {"kind": "input", "target": 'textbox "City"', "value": "Lyon", "url": f"{page}/cart"}]}
    words = ("Paid with 4111-1111-1111-1111 (CVC 123, not 41234) in month 12 after Enter, as zoë okafor "
             f"from Lyon on {pay}/form?order=77; 用户的卡号是4111111111111111")
    step = {"type": "step", "stepIndex": 3, "reflection": {"evaluation_previous_goal": words, "memory": words,
                                                              "next_goal": words},
            "action": {"name": "done", "input": {"done": {"text": words, "success": True}}, "output": words}}
    told = await harness.sw(f"bridgeHider({json.dumps([takeover, step])}, {json.dumps(page)})"
                            f"({{activity: {{type: 'executing', tool: 'done', input: {{text: {json.dumps(words)}}}}},"
                            f" result: {{success: true, data: {json.dumps(words)}, history: [{json.dumps(step)}]}}}})")
    hidden = ("Paid with ••• (CVC •••, not 41234) in month 12 after Enter, as ••• from Lyon on "
              f"{pay}; 用户的卡号是•••")
    assert told["activity"] == {"type": "executing", "tool": "done", "input": {"text": hidden}}, told
    assert told["result"]["data"] == hidden, told
    [kept_step] = told["result"]["history"]
    assert kept_step["stepIndex"] == 3 and kept_step["action"]["name"] == "done", kept_step
    assert set(kept_step["reflection"].values()) == {hidden} and kept_step["action"]["output"] == hidden, kept_step
    # nothing to hide without a takeover elsewhere: the page's own values and the words stay as they were
    own = {**takeover, "actions": takeover["actions"][-1:]}
    assert await harness.sw(f"bridgeHider([{json.dumps(own)}], {json.dumps(page)})({{data: {json.dumps(words)}}})"
                            ) == {"data": words}


async def test_a_part_of_the_persons_value_from_another_site_is_hidden_as_the_whole_is(harness: Harness) -> None:
    """The model quotes only part of what the person wrote in another site's frame: a reset link without its scheme,
    its host and path, its token; an e-mail address's local part and domain; a surname, a card's last four digits.
    Each is hidden from the page as the whole value is; what the page knows or ordinary words are not (the linked
    site's name alone, a domain the page is on itself, a word under 4 characters)."""
    page, pay = "https://shop.example", "https://pay.example"
    where = f"{pay}/form"

    def typed(target: str, value: str) -> dict[str, Any]:
        return {"kind": "input", "target": f'textbox "{target}"', "value": value, "url": where}

    takeover = {"type": "user_takeover", "reason": "user", "urlBefore": page, "urlAfter": page, "actions": [
        typed("Link", "https://example.com/reset?token=9f8e7d6c5b4a"), typed("Email", "zoe.okafor@mailbox.example"),
        typed("Backup email", "adalove@shop.example"), typed("Name", "Zoë Okafor"),
        typed("Card", "4111 1111 1111 1111")]}
    words = ("Open example.com/reset?token=9f8e7d6c5b4a (token 9f8e7d6c5b4a, page example.com/reset on the site "
             "example.com), mail zoe.okafor at mailbox.example or adalove at shop.example, for Zoë Okafor (Mrs "
             "Okafor), card ending 1111")
    told = await harness.sw(f"bridgeHider({json.dumps([takeover])}, {json.dumps(page)})({{data: {json.dumps(words)}}})")
    assert told["data"] == ("Open ••• (token •••, page ••• on the site example.com), mail ••• at ••• or ••• at "
                            "shop.example, for ••• (Mrs •••), card ending •••"), told


async def test_a_number_in_an_actions_arguments_that_is_the_persons_value_is_hidden(harness: Harness) -> None:
    """The model may pass what the person wrote in another site's frame as a number (a code as an amount, a card as
    an id): in an action's arguments it is hidden as in its words. Numbers outside them (steps, tokens used) and
    numbers that are no such value stay numbers."""
    page, pay = "https://shop.example", "https://pay.example"
    takeover = {"type": "user_takeover", "reason": "user", "urlBefore": page, "urlAfter": page, "actions": [
        {"kind": "input", "target": 'textbox "CVC"', "value": "123", "url": f"{pay}/form"},
        {"kind": "input", "target": 'textbox "Card"', "value": "4111 1111 1111 1111", "url": f"{pay}/form"}]}
    arguments = {"pay": {"index": 12, "code": 123, "card": 4111111111111111, "quantity": 2}}
    step = {"type": "step", "stepIndex": 123, "usage": {"promptTokens": 123, "completionTokens": 9, "totalTokens": 132},
            "action": {"name": "pay", "input": arguments, "output": "ok"}}
    told = await harness.sw(f"bridgeHider({json.dumps([takeover, step])}, {json.dumps(page)})"
                            f"({{activity: {{type: 'executing', tool: 'pay', input: {json.dumps(arguments)}}},"
                            f" history: [{json.dumps(step)}]}})")
    hidden = {"pay": {"index": 12, "code": "•••", "card": "•••", "quantity": 2}}
    assert told["activity"]["input"] == hidden, told
    [kept] = told["history"]
    assert kept["action"]["input"] == hidden and kept["stepIndex"] == 123 and kept["usage"] == step["usage"], kept


async def _frame_value(session: Any, value: str) -> bool:
    reply = await session.send("Runtime.evaluate", {"expression": "document.getElementById('nickname').value",
                                                    "returnByValue": True})
    return bool(reply["result"].get("value") == value)
