"""The product as a user meets it: a task typed in the popup runs on another tab through the extension's
chrome.debugger relay and the native host Chromium spawned; Stop, a detached debugger and a killed host
end it the way the user expects. Screenshots of the popup's states go to /tmp/tabpilot-screens/."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3

import pytest
from e2e_support import (
    API_KEY,
    EXTENSION_ORIGIN,
    SCREENS,
    Harness,
    PopupPage,
    act_on,
    agent_output,
    configure,
    done,
    interrupted_said,
    popup_task_id,
    run_in_popup,
    start_task,
    task_row,
    wait_status,
    wait_until,
)
from user_support import user_click, user_type, wait_overlay

from tabpilot.browser.errors import TabClosed
from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import Delay, HTTPError, ScriptedLLMServer, Text, ToolCall
from tabpilot.store.settings import MAX_STEPS_LIMIT

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]



# Each step card's first line in the popup's timeline: [class, label, text].
FIRST_LINES = ("[...document.querySelectorAll('#timeline .card-step')].map((card) => {"
               " const l = card.querySelector('.card-line');"
               " return [l.className, l.querySelector('.k').textContent, l.querySelector('.v').textContent]; })")


# --- the tests ------------------------------------------------------------------------------------------------
async def test_run_without_a_model_says_where_to_set_one(harness: Harness, form_tab: Tab) -> None:
    popup = await harness.open_popup(form_tab)
    await popup.fill("#task-input", "Sign up")
    await popup.click("#run")
    await popup.wait_for("!document.getElementById('task-error').hidden", "the popup to explain")
    message = await popup.text("#task-error")
    # what to do in the popup, and nothing of the CLI's ways (commands, environment variables)
    assert message == "No model set: open Settings and enter the base URL, model and API key.", message
    assert await popup.js("document.getElementById('nav-settings').classList.contains('attention')")
    assert await popup.visible("#run") and not await popup.visible("#stop")
    await popup.screenshot(SCREENS / "not-configured.png")
    await harness.browser.close_tab(popup.tab.target_id)


async def test_a_run_refused_in_the_toolbar_popup_says_why_there_and_opens_no_side_panel(
    harness: Harness, form_tab: Tab
) -> None:
    """Found by a new user: their first Run in the toolbar popup, before choosing a model, opened the side panel at
    the press, which closed the popup before its "No model set" could show; the panel showed an empty box, and the
    task they typed was gone. The panel opens only for a task the host took; a refusal stays where it is said."""
    popup = await harness.open_action_popup(form_tab)
    await popup.fill("#task-input", "Sign up")
    run = await popup.js("(() => { const r = document.getElementById('run').getBoundingClientRect();"
                         " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()")
    await user_click(popup.tab, run["x"], run["y"])  # the person's press, which may open a side panel
    await popup.wait_for("!document.getElementById('task-error').hidden", "the popup to explain")
    assert await popup.text("#task-error") == "No model set: open Settings and enter the base URL, model and API key."
    assert await popup.js("document.getElementById('task-input').value") == "Sign up"  # to run once a model is set
    targets = (await harness.browser.connection.root.send("Target.getTargets"))["targetInfos"]
    assert not [t for t in targets if t["url"] == f"{EXTENSION_ORIGIN}/popup.html?mode=panel"]
    await harness.browser.close_tab(popup.tab.target_id)


async def test_the_toolbar_popup_opens_ready_to_type_the_task(harness: Harness, form_tab: Tab) -> None:
    """Found by a new user: they opened the popup and typed their task at once, and it went nowhere (nothing in the
    popup had the focus): they had to click into the box first."""
    popup = await harness.open_action_popup(form_tab)
    await user_type(popup.tab, "Look at the page")
    assert await popup.js("document.getElementById('task-input').value") == "Look at the page"
    await harness.browser.close_tab(popup.tab.target_id)


async def test_settings_from_popup_keep_the_key_in_the_host(harness: Harness, llm: ScriptedLLMServer) -> None:
    popup = await harness.open_popup()
    await configure(popup, llm.base_url, screenshot="settings.png")
    await popup.click("#nav-settings")
    await popup.wait_for("document.getElementById('settings-form').dataset.loaded === 'true'", "settings to load")
    assert await popup.js("document.getElementById('set-model').value") == "scripted"
    assert await popup.js("document.getElementById('set-base-url').value") == llm.base_url
    assert await popup.js("document.getElementById('set-max-steps').value") == "12"
    assert await popup.js("document.getElementById('set-max-steps').max") == str(MAX_STEPS_LIMIT)  # the host's
    hint = await popup.text("#api-key-hint")
    assert API_KEY[-4:] in hint
    assert API_KEY not in await popup.js("document.documentElement.outerHTML")
    assert await popup.js("document.getElementById('set-api-key').value") == ""
    stored = await harness.sw(
        "JSON.stringify([await chrome.storage.local.get(null), await chrome.storage.sync.get(null),"
        " await chrome.storage.session.get(null)])"
    )
    assert API_KEY not in stored
    config_files = [
        p for p in harness.tabpilot_home.rglob("*") if p.is_file() and API_KEY in p.read_text(errors="replace")
    ]
    assert config_files, "the host did not keep the key"
    for path in config_files:
        assert path.stat().st_mode & 0o077 == 0, f"{path} is readable by others"
    await harness.browser.close_tab(popup.tab.target_id)


async def test_task_from_popup_runs_steps_with_trusted_input(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    problems: list[str] = []
    llm.add(
        act_on("Full name", "input_text", "Type the name", problems, text="Ada Lovelace"),
        act_on("Agree to terms", "click_element_by_index", "Tick the terms box", problems),
        act_on("Sign up", "click_element_by_index", "Press Sign up", problems),
        done("Signed up as Ada Lovelace"),
    )
    dispatched_before = await harness.sw("dispatchedInput.length")
    popup = await harness.open_popup(form_tab)
    await configure(popup, llm.base_url)
    await popup.screenshot(SCREENS / "idle.png")
    await run_in_popup(popup, "Sign up for the newsletter as Ada Lovelace")

    assert await wait_status(popup, "completed", "error", "stopped") == "completed", problems or await popup.cards()
    assert not problems

    # the page's own JS saw trusted typing and clicks
    received = await form_tab.evaluate("window.received")
    assert await form_tab.evaluate("document.getElementById('status').textContent") == "Signed up as Ada Lovelace."
    typed = [e for e in received if e["target"] == "name" and e["type"] in ("keydown", "input")]
    assert typed and all(e["trusted"] for e in typed)
    assert typed[-1]["value"] == "Ada Lovelace"
    clicks = {e["target"]: e for e in received if e["type"] == "click"}
    assert clicks["agree"]["trusted"] and clicks["submit"]["trusted"]
    # and the relay knows that input was its own
    dispatched = await harness.sw(f"dispatchedInput.slice({dispatched_before})")
    assert "Input.dispatchMouseEvent" in {d["method"] for d in dispatched}
    assert any(d["method"] in ("Input.insertText", "Input.dispatchKeyEvent") for d in dispatched)
    assert "Ada" not in json.dumps(dispatched)  # lengths only: typed text may be a password
    assert any(d["type"] == "mousePressed" and d["x"] is not None for d in dispatched)

    # the popup shows one card per step, with goal, action and result
    cards = [c for c in await popup.cards() if c["type"] == "step"]
    assert len(cards) >= 4, cards
    assert "Type the name" in cards[0]["text"] and 'typed into "Full name"' in cards[0]["text"]
    assert "Ada Lovelace" in cards[0]["text"]  # its result says what it typed
    assert "Tick the terms box" in cards[1]["text"] and 'clicked "Agree to terms"' in cards[1]["text"]
    assert "Press Sign up" in cards[2]["text"]
    # a card opens with the model's verdict on the step before it, labelled so (not read as one on its own result);
    # step 1's has no step before it: its card opens with its goal (it said "Previous step: Success")
    first_lines = await popup.js(FIRST_LINES)
    assert first_lines[:2] == [["card-line goal", "Goal", "Type the name"],
                               ["card-line eval muted", "Previous step", "Success"]], first_lines
    assert "Signed up as Ada Lovelace" in await popup.text("#result")
    await popup.screenshot(SCREENS / "completed.png")
    assert await popup.visible("#run") and not await popup.visible("#stop")

    task_id = await popup_task_id(popup)
    row = task_row(harness, task_id)
    assert row["status"] == "completed"
    assert [e["type"] for e in row["events"] if e["type"] == "step"] == ["step"] * len(cards)
    assert API_KEY not in json.dumps(row["events"])
    # the task is over, so tabpilot lets go of the tab: no debugger attached, no "debugging" infobar
    await wait_until(lambda: harness.sw("attachedTabs.size === 0"), "the worker to release the tab")
    tab_id = await harness.chrome_tab_id(form_tab)
    # chrome.debugger itself agrees (detaching is refused when this extension is not attached)
    refusal = await harness.sw(
        f"let refusal = 'was attached'; try {{ await chrome.debugger.detach({{tabId: {tab_id}}}); }}"
        " catch (e) { refusal = String(e.message || e); } refusal"
    )
    assert "not attached" in refusal, refusal
    await harness.browser.close_tab(popup.tab.target_id)

    # a popup opened after the task ended shows how it ended, result included
    popup = await harness.open_popup(form_tab)
    await popup.wait_for("document.body.dataset.status === 'completed'", "the reopened popup to show the task")
    assert await popup.visible("#result")
    assert "Signed up as Ada Lovelace" in await popup.text("#result")
    assert len([c for c in await popup.cards() if c["type"] == "step"]) == len(cards)
    assert await popup.js(FIRST_LINES) == first_lines  # the timeline read back from the record opens the same way
    await popup.screenshot(SCREENS / "reopened-after-end.png")
    await popup.open_past(task_id)  # and so does Past tasks'
    await popup.wait_for("document.querySelectorAll('#past-timeline .card-step').length > 0", "the past steps")
    assert await popup.js(FIRST_LINES.replace("#timeline", "#past-timeline")) == first_lines
    await harness.browser.close_tab(popup.tab.target_id)


async def test_a_task_typed_on_the_new_tab_page_opens_its_page_in_that_tab(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages
) -> None:
    # A new user's first task is typed on the browser's New Tab page ("Open … and sign up"). The debugger cannot work
    # on that chrome:// page, and it was refused in Chromium's words ("Cannot access a chrome:// URL"); the task now
    # starts on a blank page in that tab, where the agent opens the address. Twice: a second New Tab page too.
    for name in ("Mary Shelley", "Grace Hopper"):  # (Past tasks' test below finds the Ada Lovelace task by name)
        problems: list[str] = []
        llm.add(
            ToolCall("AgentOutput", agent_output("Open the form", {"go_to_url": {"url": e2e_pages.url("form.html")}})),
            act_on("Full name", "input_text", "Type the name", problems, text=name),
            done(f"Typed {name}"),
        )
        created = await harness.browser.connection.root.send("Target.createTarget", {"url": "chrome://newtab/"})
        new_tab = await harness.browser.attach(created["targetId"])
        popup = await harness.open_popup(new_tab)
        await configure(popup, llm.base_url)
        await run_in_popup(popup, f"Open the sign-up form and type {name} as the name")
        assert await wait_status(popup, "completed", "error", "stopped") == "completed", \
            problems or await popup.text("#result")
        assert not problems
        page = await harness.browser.attach(created["targetId"])  # the same tab, on the form now
        assert await page.evaluate("document.getElementById('name').value") == name
        await harness.browser.close_tab(popup.tab.target_id)
        await harness.browser.close_tab(created["targetId"])


async def test_a_tab_tabpilot_cannot_work_in_says_so_before_run_and_a_start_there_says_what_to_do(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages, tmp_path
) -> None:
    # The popup offered Run on a chrome:// page (and every page the debugger refuses) and refused only after the press,
    # in Chromium's words. It says at once that tabpilot cannot work there and what to do, with Run off; a task started
    # there anyway (a client's) ends saying the same; the same tab on a web page then runs a task.
    notes = tmp_path / "notes.html"
    notes.write_text("<title>Notes</title><p>My notes</p>")
    places = [
        ("chrome://settings/", "one of the browser's own pages"),
        ("chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/page.html", "an extension's page"),
        ("https://chromewebstore.google.com/", "extension store"),
        (f"view-source:{e2e_pages.url('form.html')}", "a page's source"),
    ]
    for url, said in places:
        created = await harness.browser.connection.root.send("Target.createTarget", {"url": url})
        popup = await harness.open_popup(await harness.browser.attach(created["targetId"]))
        await popup.wait_for("!document.getElementById('tab-unworkable').hidden", f"the popup to refuse {url}")
        why, fix = await popup.text("#tab-unworkable-why"), await popup.text("#tab-unworkable-fix")
        assert why.startswith("tabpilot cannot work in this tab") and said in why, (url, why)
        if "store" in said:  # an https page itself: "open a web page (http:// or https://)" is no advice there
            assert fix.startswith("Open another site's page") and "http" not in fix, (url, fix)
        else:
            assert "Open a web page" in fix, (url, fix)
        assert await popup.js("document.getElementById('run').disabled"), url
        if url.startswith("chrome://"):
            await popup.screenshot(SCREENS / "unworkable-tab.png", max_height=600)
            settings_popup, settings_tab = popup, created["targetId"]
        else:
            await harness.browser.close_tab(popup.tab.target_id)
            await harness.browser.close_tab(created["targetId"])

    # a file is refused only without file access, which an extension loaded unpacked here has
    created = await harness.browser.connection.root.send("Target.createTarget", {"url": notes.as_uri()})
    popup = await harness.open_popup(await harness.browser.attach(created["targetId"]))
    assert await popup.js("chrome.extension.isAllowedFileSchemeAccess()")
    assert await popup.js("document.getElementById('tab-unworkable').hidden")
    assert not await popup.js("document.getElementById('run').disabled")
    await harness.browser.close_tab(popup.tab.target_id)
    await harness.browser.close_tab(created["targetId"])

    popup = settings_popup
    await configure(popup, llm.base_url)
    assert await popup.js("document.getElementById('run').disabled")  # still, back from Settings
    # a start there all the same (as a page's or a program's client may ask): the attach says it in the same words
    await popup.js("startTask('Type a name', ui.targetTabId).catch(startFailed)")
    await popup.wait_for("!document.getElementById('task-error').hidden", "the start to be refused")
    refused = await popup.text("#task-error")
    assert refused.startswith("tabpilot cannot work in this tab") and "one of the browser's own pages" in refused
    assert "Open a web page" in refused and "Cannot access" not in refused, refused

    # the same tab, now on a web page: Run is offered there, and works
    problems: list[str] = []
    llm.add(act_on("Full name", "input_text", "Type the name", problems, text="Mary Shelley"), done("Typed it"))
    page = await harness.browser.attach(settings_tab)
    await page.send("Page.navigate", {"url": e2e_pages.url("form.html")})
    await popup.wait_for("document.getElementById('tab-unworkable').hidden"
                         " && !document.getElementById('run').disabled", "Run to be offered on the web page")
    await run_in_popup(popup, "Type Mary Shelley as the name")
    assert await wait_status(popup, "completed", "error", "stopped") == "completed", problems
    assert await page.evaluate("document.getElementById('name').value") == "Mary Shelley"
    await harness.browser.close_tab(popup.tab.target_id)
    await harness.browser.close_tab(settings_tab)


async def test_the_toolbar_popup_works_on_the_active_tab(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    popup = await harness.open_action_popup(form_tab)
    assert await popup.js("ui.targetTabId") == await harness.chrome_tab_id(form_tab)
    assert await popup.text("#target-tab") == "on: Signup form"
    await configure(popup, llm.base_url)
    llm.add(done("Nothing to do here"))
    await run_in_popup(popup, "Look at the page")
    assert await wait_status(popup, "completed", "error", "stopped") == "completed"
    assert "Nothing to do here" in await popup.text("#result")
    await popup.screenshot(SCREENS / "toolbar-popup.png")
    await harness.browser.close_tab(popup.tab.target_id)


async def test_run_in_the_toolbar_popup_keeps_the_task_in_view_in_the_side_panel(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    """A new user pressed Run in the toolbar popup and saw it close at the agent's first click on the page
    (Chromium closes it when the page takes the focus): the steps they were to watch went with it. Run there
    opens the window's side panel too, which shows the task to its end; pressed again, the open panel shows the
    next task."""
    root = harness.browser.connection.root

    async def targets(url: str) -> list[str]:
        return [info["targetId"] for info in (await root.send("Target.getTargets"))["targetInfos"]
                if info["url"] == url]

    async def panel_open() -> str | None:
        found = await targets(f"{EXTENSION_ORIGIN}/popup.html?mode=panel")
        return found[0] if found else None

    panel: PopupPage | None = None
    for name in ("the first run", "the second run"):
        problems: list[str] = []
        popup = await harness.open_action_popup(form_tab)
        await configure(popup, llm.base_url)
        await popup.click("#nav-task")
        llm.add(act_on("Agree to terms", "click_element_by_index", "Tick the terms box", problems),
                done(f"Ticked for {name}"))
        await popup.fill("#task-input", f"Tick the terms box for {name}")
        box = await popup.js("(() => { const r = document.getElementById('run').getBoundingClientRect();"
                             " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()")
        # the person's press on Run; the popup may close while its release is still being handled (the side panel
        # opening takes the focus), before Chromium answers the release: seen on a loaded fresh-clone run
        with contextlib.suppress(TabClosed):
            await user_click(popup.tab, box["x"], box["y"])
        if panel is None:
            panel = PopupPage(await harness.browser.attach(await wait_until(panel_open, "the side panel to open")))
        title = json.dumps(f"Tick the terms box for {name}")
        await panel.wait_for(f"document.getElementById('task-title').textContent === {title}",
                             "the side panel to show the task")
        assert await wait_status(panel, "completed", "error", "stopped") == "completed"
        assert not problems, problems
        assert await form_tab.evaluate("document.getElementById('agree').checked") is True
        assert [c["type"] for c in await panel.cards()].count("step") == 2
        assert f"Ticked for {name}" in await panel.text("#result")
        assert await targets(f"{EXTENSION_ORIGIN}/popup.html") == []  # the popup closed at the agent's click
        await panel.screenshot(SCREENS / f"toolbar-run-side-panel-{name.split()[1]}.png", max_height=600)
        await form_tab.evaluate("document.getElementById('agree').checked = false")


async def test_the_next_task_typed_in_the_same_box_runs_on_its_own(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    """Found by a new user: in the side panel, which stays open between tasks, the box still held the task before
    once it ended, and the next task they typed there ran glued to its end ("Fill the note with what I tell
    youType bob as user"). The box empties once a task has started; the task shows above the timeline."""
    popup = await harness.open_popup(form_tab)
    await configure(popup, llm.base_url)
    for task in ("Look at the form", "Say what the form asks for"):
        llm.add(done(f"Done: {task}"))
        before = await popup.js("ui.taskId")
        box = await popup.js("(() => { const r = document.getElementById('task-input').getBoundingClientRect();"
                             " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()")
        await user_click(popup.tab, box["x"], box["y"])
        await user_type(popup.tab, task)
        await popup.click("#run")
        task_id = await popup.wait_for(f"ui.taskId !== {json.dumps(before)} && ui.taskId", "the popup to show the task")
        assert await wait_status(popup, "completed", "error", "stopped") == "completed"
        assert task_row(harness, str(task_id))["task"] == task
        assert await popup.text("#task-title") == task
        assert await popup.js("document.getElementById('task-input').value") == ""
    await harness.browser.close_tab(popup.tab.target_id)


async def test_reopened_popup_shows_the_running_task_and_stop_ends_it_stopped(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    problems: list[str] = []
    llm.add(act_on("Agree to terms", "click_element_by_index", "Tick the terms box", problems), Delay(30))
    popup = await start_task(harness, form_tab, llm, "Tick the terms box, then think for a long time")
    await popup.wait_for("document.querySelectorAll('#timeline .card-step').length >= 1", "the first step card")
    await popup.wait_for("document.getElementById('activity').dataset.type === 'thinking'", "the thinking activity")
    await popup.screenshot(SCREENS / "running.png")
    assert not problems

    # closing and reopening the popup mid-task: the host still has it, with its history and activity
    await harness.browser.close_tab(popup.tab.target_id)
    popup = await harness.open_popup(form_tab)
    await popup.wait_for("document.body.dataset.status === 'running'", "the reopened popup to show the task")
    assert await popup.text("#task-title") == "Tick the terms box, then think for a long time"
    assert [c["type"] for c in await popup.cards()].count("step") == 1
    assert await popup.js("document.getElementById('activity').dataset.type") == "thinking"
    assert await popup.visible("#stop") and not await popup.visible("#run")

    await popup.click("#stop")
    assert await wait_status(popup, "stopped", "completed", "error", timeout=15) == "stopped"
    assert not await popup.visible("#activity")
    # a Stop the person pressed is no error: its box is the pill's amber, not an error's red, here and on the page
    await popup.wait_for("!document.getElementById('result').hidden", "the stopped task's result")
    assert await popup.js("document.getElementById('result').className") == "result stopped"
    await popup.screenshot(SCREENS / "stopped.png", max_height=600)
    ended = await wait_overlay(form_tab, "the overlay's end", lambda o: o["state"] == "stopped")
    assert ended["outcomeKind"] == "stopped", ended
    row = task_row(harness, await popup_task_id(popup))
    assert row["status"] == "stopped"
    assert "step" in [e["type"] for e in row["events"]]
    assert await form_tab.evaluate("document.getElementById('agree').checked") is True
    await harness.browser.close_tab(popup.tab.target_id)


# The dot before the activity line: its CSS animation, running or not.
DOT_PULSES = ("document.getAnimations().some((a) => a.effect && a.effect.pseudoElement === '::before'"
              " && a.effect.target === document.getElementById('activity') && a.playState === 'running')")


async def test_the_activity_dot_pulses_while_the_model_thinks_and_stays_still_while_the_agent_acts(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    # A pulse draws a frame at every vsync: while the agent types into the page those frames cost the
    # machine what typing needs (bench/bench_typing.py).
    llm.add(ToolCall("AgentOutput", agent_output("Wait for the page", {"wait": {"seconds": 3}})), Delay(30))
    popup = await start_task(harness, form_tab, llm, "Wait a moment, then think for a long time")
    await popup.wait_for("document.getElementById('activity').dataset.type === 'executing'", "the wait action")
    assert await popup.visible("#activity")
    assert await popup.js(DOT_PULSES) is False
    await popup.wait_for("document.getElementById('activity').dataset.type === 'thinking'", "the model's second turn")
    assert await popup.js(DOT_PULSES) is True
    await popup.click("#stop")
    assert await wait_status(popup, "stopped", "completed", "error", timeout=15) == "stopped"
    await harness.browser.close_tab(popup.tab.target_id)


async def test_a_wait_the_person_cut_short_by_taking_over_is_told_to_them_in_their_words(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    # The popup said "Done wait in 1,147 ms" under Paused, and the step's result was the model's instructions
    # ("…so it was abandoned (not an error). … read the page as it is now before going on"). Twice: a second
    # takeover of the same task too.
    for turn in (1, 2):
        llm.add(ToolCall("AgentOutput", agent_output(f"Wait for the page {turn}", {"wait": {"seconds": 10}})))
    llm.add(done("Waited"))
    popup = await start_task(harness, form_tab, llm, "Wait for the page")
    for turn in (1, 2):
        await popup.wait_for("document.getElementById('activity').dataset.type === 'executing'", "the wait action")
        await popup.click("#takeover")
        await popup.wait_for("!document.getElementById('handback-box').hidden", "Hand back")
        await popup.wait_for("document.getElementById('activity').dataset.type === 'executed'", "the wait cut short")
        assert await popup.text("#task-status") == "Paused"
        assert not await popup.visible("#activity"), await popup.text("#activity")
        await popup.wait_for(f"document.querySelectorAll('#timeline .card-step').length === {turn}", "the step")
        steps = [card["text"] for card in await popup.cards() if card["type"] == "step"]
        assert "Not done: you took the controls" in steps[-1] and "abandoned" not in steps[-1], steps
        if turn == 1:
            await popup.screenshot(SCREENS / "popup-wait-cut-short-by-takeover.png", max_height=720)
        await popup.click("#handback")
    assert await wait_status(popup, "completed", "stopped", "error", timeout=15) == "completed"
    await harness.browser.close_tab(popup.tab.target_id)


async def test_detached_debugger_ends_the_task_stopped(harness: Harness, llm: ScriptedLLMServer, form_tab: Tab) -> None:
    problems: list[str] = []
    llm.add(act_on("Agree to terms", "click_element_by_index", "Tick the terms box", problems), Delay(30))
    popup = await start_task(harness, form_tab, llm, "Tick the terms box, then wait")
    await popup.wait_for("document.querySelectorAll('#timeline .card-step').length >= 1", "the first step card")
    tab_id = await harness.chrome_tab_id(form_tab)
    assert await harness.sw(f"attachedTabs.has({tab_id})")
    # The user presses Cancel on the "started debugging this browser" infobar: Chromium detaches the
    # debugger and fires onDetach(canceled_by_user). Headless shows no infobar, so the worker detaches
    # for real and its onDetach listener gets the same call.
    await harness.sw(
        f"await chrome.debugger.detach({{tabId: {tab_id}}});"
        f" onDebuggerDetach({{tabId: {tab_id}}}, 'canceled_by_user'); true"
    )
    assert await wait_status(popup, "stopped", "completed", "error", timeout=15) == "stopped"
    row = task_row(harness, await popup_task_id(popup))
    assert row["status"] == "stopped"
    assert not await harness.sw(f"attachedTabs.has({tab_id})")
    await harness.browser.close_tab(popup.tab.target_id)


async def test_closing_the_tasks_tab_while_the_model_thinks_ends_the_task_at_once(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    # The person closes the tab the agent works in while a (slow) model thinks: the task ends then, saying the
    # tab was closed, and the model call is dropped; it had waited for the model's answer (30 s here) first.
    problems: list[str] = []
    tab = form_tab
    llm.add(act_on("Agree to terms", "click_element_by_index", "Tick the terms box", problems),
            Delay(30, then=done("Ticked it")))
    popup = await start_task(harness, tab, llm, "Tick the terms box, then think for a long time")
    task_id = await popup_task_id(popup)
    await popup.wait_for("document.querySelectorAll('#timeline .card-step').length >= 1", "the first step card")
    await popup.wait_for("document.getElementById('activity').dataset.type === 'thinking'", "the model's second turn")
    assert not problems
    await harness.browser.close_tab(tab.target_id)

    async def ended() -> dict | None:
        row = task_row(harness, task_id)
        return row if row["status"] != "running" else None

    row = await wait_until(ended, "the task to end once its tab was closed", timeout=10)
    assert row["status"] == "error"
    assert "closed" in row["events"][-1].get("message", ""), row["events"][-1]
    await wait_until(lambda: asyncio.sleep(0, llm.dropped), "the model call to be dropped", timeout=5)
    assert len(llm.requests) == 2
    await harness.browser.close_tab(popup.tab.target_id)


async def test_a_retry_and_then_a_refused_key_say_it_once_with_the_popup_remedy(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    llm.add(
        Text("I think I should click something."),  # no tool call: the agent asks again
        HTTPError(401, "Incorrect API key provided", type="invalid_request_error"),  # no use asking again
    )
    popup = await start_task(harness, form_tab, llm, "Tick the terms box")
    assert await wait_status(popup, "completed", "error", "stopped") == "error"
    cards = [c for c in await popup.cards() if c["type"] != "observation"]  # e.g. "page navigated"
    # the refusal is said once, in the result box: the error card with the same words steps aside
    assert [c["type"] for c in cards] == ["retry"], cards
    # retries are counted one way, page-agent's (retry 1 of 3), as the final "after 3 retries" counts them
    assert cards[0]["text"].lower().startswith("retry 1 of 3") and "AgentOutput" in cards[0]["text"]
    assert await popup.in_view("#result")
    assert await popup.text("#result-text") == "The model provider refused the API key."
    assert await popup.text("#result-remedy") == "Open Settings, enter the right API key and press Test connection."
    shown = await popup.js("document.body.innerText")
    assert shown.count("refused the API key") == 1, shown
    for cli_only in ("OPENAI_API_KEY", "--api-key", "tabpilot config"):  # a terminal's remedies, not a popup's
        assert cli_only not in shown, shown
    details = await popup.js("document.getElementById('result-detail-text').textContent")  # under Details
    assert "HTTP 401" in details and "Incorrect API key provided" in details, details  # the cause, as said
    assert not any(cli_only in details for cli_only in ("OPENAI_API_KEY", "--api-key", "tabpilot config")), details
    assert not await popup.visible("#activity")
    assert await popup.visible("#run") and not await popup.visible("#stop")
    await popup.screenshot(SCREENS / "error-key-refused.png", max_height=600)
    row = task_row(harness, await popup_task_id(popup))
    assert row["status"] == "error"
    assert [e["type"] for e in row["events"] if e["type"] != "observation"] == ["retry", "error"]
    assert API_KEY not in json.dumps(row["events"]) + await popup.js("document.documentElement.outerHTML")
    await harness.browser.close_tab(popup.tab.target_id)


async def test_past_tasks_list_open_export_delete(harness: Harness) -> None:
    popup = await harness.open_popup()
    await popup.click("#nav-past")
    await popup.wait_for("document.querySelectorAll('#past-list .past-item').length >= 3", "the past tasks list")
    await popup.screenshot(SCREENS / "past-tasks.png")
    items = await popup.js(
        "[...document.querySelectorAll('#past-list .past-item')]"
        ".map(li => ({id: li.dataset.taskId, text: li.innerText}))"
    )
    completed = next(i for i in items if "Ada Lovelace" in i["text"])
    assert "Completed" in completed["text"]
    one_step = next(i for i in items if "Look at the page" in i["text"])  # done at once: one step
    assert " · 1 step" in one_step["text"] and "1 steps" not in one_step["text"], one_step
    await popup.click(f"#past-list .past-item[data-task-id='{completed['id']}']")
    await popup.wait_for("!document.getElementById('past-detail').hidden", "the past task's timeline")
    steps = await popup.js("document.querySelectorAll('#past-timeline .card-step').length")
    assert steps >= 4
    await popup.screenshot(SCREENS / "past-task-timeline.png")

    downloads = harness.home / "downloads"
    await harness.browser.connection.root.send(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
    )
    await popup.click("#past-export")
    saved = downloads / f"tabpilot-task-{completed['id']}.json"
    await wait_until(lambda: asyncio.sleep(0, saved.is_file()), "the exported file to download")
    exported = json.loads(saved.read_text())
    assert json.loads(await popup.js("ui.lastExport")) == exported
    assert "Ada Lovelace" in json.dumps(exported)
    assert API_KEY not in saved.read_text()

    await popup.click("#past-delete")
    assert await popup.text("#past-delete") == "Really delete?"
    await popup.click("#past-delete")
    await popup.wait_for(
        f"!document.querySelector(\"#past-list .past-item[data-task-id='{completed['id']}']\")"
        " && !document.getElementById('past-list-wrap').hidden",
        "the deleted task to leave the list",
    )
    with sqlite3.connect(f"file:{harness.database()}?mode=ro", uri=True) as db:
        assert db.execute("SELECT count(*) FROM tasks WHERE id = ?", (completed["id"],)).fetchone()[0] == 0
    await harness.browser.close_tab(popup.tab.target_id)


async def test_killed_host_interrupts_the_task_and_a_new_one_runs_after_reconnect(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    problems: list[str] = []
    llm.add(act_on("Agree to terms", "click_element_by_index", "Tick the terms box", problems), Delay(30))
    # (a soft hyphen, as pasted text has them: the title shows it as a code, Run it again gives back the task as typed)
    task = "Tick the terms box, then wait for ever (no news\u00adletter)"
    popup = await start_task(harness, form_tab, llm, task)
    await popup.wait_for("document.querySelectorAll('#timeline .card-step').length >= 1", "the first step card")
    # the host is now waiting on the model's second (delayed) reply, as a real task waits on a slow model
    await wait_until(lambda: asyncio.sleep(0, len(llm.requests) >= 2), "the task's second model request")
    task_id = await popup_task_id(popup)
    watcher = await harness.open_popup(form_tab)  # the popup closed and opened again: the task shown, the box empty
    await watcher.wait_for("document.body.dataset.status === 'running'", "the reopened popup to show the task")
    assert await watcher.js("document.getElementById('task-input').value") == ""
    events_before = task_row(harness, task_id)["events"]
    pids = harness.host_pids()
    assert len(pids) == 1, f"expected one host process, found {pids}"
    os.kill(pids[0], signal.SIGKILL)

    await popup.wait_for("document.body.dataset.host === 'down'", "the popup to say the host is down", 10)
    await popup.wait_for("document.body.dataset.status === 'interrupted'", "the popup to show the task interrupted")
    await watcher.wait_for("document.body.dataset.status === 'interrupted'", "the other popup to show it too")
    await popup.screenshot(SCREENS / "host-down.png")
    # a crash is not the user's to fix: no install/doctor advice, just what happened and that it reconnects
    assert await popup.text("#host-down-title") == "The host stopped"
    assert "Reconnecting" in await popup.text("#host-down-reason")
    assert await popup.js("document.getElementById('host-down-fix').hidden") is True
    assert await popup.text("#task-status") == "Interrupted"
    assert await harness.sw("attachedTabs.size") == 0  # the dead task's tab is released (no infobar left)

    # the worker reconnects by itself (backoff from 0.5 s); the new host marks the dead task interrupted
    await harness.wait_host_connected()
    await popup.wait_for("document.body.dataset.host === 'connected'", "the popup to see the host again")
    await wait_until(lambda: asyncio.to_thread(lambda: task_row(harness, task_id)["status"] == "interrupted"),
                     "the killed task to be marked interrupted")
    row = task_row(harness, task_id)
    assert row["events"][: len(events_before)] == events_before
    assert [e["type"] for e in row["events"]].count("step") >= 1
    assert harness.host_pids() and harness.host_pids() != pids
    assert await popup.js("document.body.dataset.status") == "interrupted"  # still, with the host back
    # it says what happened and what to do, here and in Past tasks (it was a bare pill)
    said = "Interrupted: tabpilot's host stopped before this task finished (it was closed or crashed)."
    assert said in await popup.text("#result") and await popup.visible("#result")
    await popup.screenshot(SCREENS / "interrupted.png")
    # "Run it again": a popup opened while the task ran (its box empty) has the task back in the box, one press
    # of Run away
    assert await watcher.js("document.getElementById('task-input').value") == task
    await harness.browser.close_tab(watcher.tab.target_id)
    reopened = await harness.open_popup(form_tab)
    await reopened.click("#nav-past")
    item = f"#past-list .past-item[data-task-id='{task_id}']"
    await reopened.wait_for(f"!!document.querySelector({json.dumps(item)})", "the task in Past tasks")
    await reopened.click(item)
    await reopened.wait_for("!document.getElementById('past-detail').hidden", "the past task's detail")
    assert said in await reopened.text("#past-result-text")
    await reopened.screenshot(SCREENS / "interrupted-past.png")
    await harness.browser.close_tab(reopened.tab.target_id)

    # and a new task works
    llm.add(done("All good again"))
    await run_in_popup(popup, "Say all good")
    assert await wait_status(popup, "completed", "error", "stopped") == "completed"
    assert "All good again" in await popup.text("#result")
    await harness.browser.close_tab(popup.tab.target_id)


# --- a popup opened after the host that ran its tab's task went --------------------------------------------------
INTERRUPTED_SAID = interrupted_said()


async def crash_mid_task(harness: Harness, llm: ScriptedLLMServer, tab: Tab, task: str, problems: list[str]) -> str:
    """`task` run from a popup, which the person then closes; its host killed while the model thinks of the second
    step; back once the worker has reconnected to a new host by itself. Returns the task's id."""
    llm.add(act_on("Agree to terms", "click_element_by_index", "Tick the terms box", problems), Delay(30))
    popup = await start_task(harness, tab, llm, task)
    await popup.wait_for("document.querySelectorAll('#timeline .card-step').length >= 1", "the first step card")
    await wait_until(lambda: asyncio.sleep(0, len(llm.requests) >= 2), "the task's second model request")
    task_id = await popup_task_id(popup)
    await harness.browser.close_tab(popup.tab.target_id)
    [killed] = harness.host_pids()
    os.kill(killed, signal.SIGKILL)
    await wait_until(lambda: asyncio.sleep(0, harness.host_pids() not in ([], [killed])), "the worker's new host")
    await harness.wait_host_connected()
    return task_id


async def restart_worker(harness: Harness) -> None:
    """Stop the extension's service worker as Chromium stops an idle one (its host exits with it); back once the next
    worker has its own new host."""
    old = harness.host_pids()
    await harness.stop_worker()
    await wait_until(lambda: asyncio.sleep(0, not set(harness.host_pids()) & set(old)), "the worker's host to exit")
    await harness.wait_host_connected()
    assert harness.host_pids() and not set(harness.host_pids()) & set(old)


async def shows_interrupted(popup: PopupPage, task_id: str, task: str) -> None:
    """The popup shows the tab's task as its host's crash left it: Interrupted, its step, what happened, and the task
    back in the box (Run it again)."""
    await popup.wait_for(f"ui.taskId === {json.dumps(task_id)} && document.body.dataset.status === 'interrupted'",
                         "the popup to show the tab's interrupted task")
    assert await popup.text("#task-title") == task
    assert await popup.text("#task-status") == "Interrupted"
    assert not await popup.visible("#task-from")  # the person's own
    steps = [card["text"] for card in await popup.cards() if card["type"] == "step"]
    assert len(steps) == 1 and "Tick the terms box" in steps[0], steps
    assert await popup.visible("#result") and await popup.text("#result-text") == INTERRUPTED_SAID
    assert await popup.js("document.getElementById('task-input').value") == task
    assert await popup.visible("#run") and not await popup.visible("#stop")


async def run_again(popup: PopupPage, llm: ScriptedLLMServer, tab: Tab, task_id: str, problems: list[str]) -> str:
    """Run pressed on the box as the popup filled it: the task again, a second one on the same page, to its end."""
    await tab.evaluate("document.getElementById('agree').checked = false")
    clicks_before = len([e for e in await tab.evaluate("window.received") if e["type"] == "click"])
    llm.add(act_on("Agree to terms", "click_element_by_index", "Tick the terms box", problems),
            done("Ticked the terms box again"))
    await popup.click("#run")
    rerun_id = str(await popup.wait_for(f"ui.taskId !== {json.dumps(task_id)} && ui.taskId", "the task to run again"))
    assert await wait_status(popup, "completed", "error", "stopped") == "completed", problems or await popup.cards()
    assert not problems, problems
    assert await popup.text("#result-text") == "Ticked the terms box again"
    clicks = [e for e in await tab.evaluate("window.received") if e["type"] == "click"][clicks_before:]
    assert [(e["target"], e["trusted"]) for e in clicks] == [("agree", True)], clicks
    assert await tab.evaluate("document.getElementById('agree').checked") is True
    return rerun_id


async def test_a_popup_opened_after_a_host_crash_shows_the_tabs_interrupted_task_to_run_again(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    """Found by a new user: they closed the popup while a task ran, tabpilot's host crashed, the worker reconnected to
    a new host by itself, and the popup they opened on that tab to see what happened was empty (a host knows only
    its own tasks' tabs, and the record keeps no tab): only Past tasks listed the task. It shows the tab's task as
    the record has it, with the task back in the box: one press of Run runs it again."""
    problems: list[str] = []
    task = "Tick the terms box, then wait for the page"
    task_id = await crash_mid_task(harness, llm, form_tab, task, problems)
    popup = await harness.open_popup(form_tab)
    await shows_interrupted(popup, task_id, task)
    await popup.screenshot(SCREENS / "reopened-after-crash.png")

    rerun_id = await run_again(popup, llm, form_tab, task_id, problems)
    assert (task_row(harness, rerun_id)["task"], task_row(harness, task_id)["status"]) == (task, "interrupted")
    await harness.browser.close_tab(popup.tab.target_id)


async def test_after_a_crash_and_a_worker_restart_the_popup_shows_the_tabs_last_task_never_an_older_one(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    """MV3 stops an idle service worker, and its host with it: the next worker still knows the tab's last task
    (chrome.storage.session), so the popup shows the interrupted task after such a restart too; and once the task ran
    again, after the next restart it shows that newer one, not the interrupted one."""
    problems: list[str] = []
    task = "Tick the terms box, then wait a while"
    task_id = await crash_mid_task(harness, llm, form_tab, task, problems)
    await restart_worker(harness)
    popup = await harness.open_popup(form_tab)
    await shows_interrupted(popup, task_id, task)
    rerun_id = await run_again(popup, llm, form_tab, task_id, problems)
    await harness.browser.close_tab(popup.tab.target_id)

    await restart_worker(harness)
    popup = await harness.open_popup(form_tab)
    await popup.wait_for(f"ui.taskId === {json.dumps(rerun_id)} && document.body.dataset.status === 'completed'",
                         "the popup to show the task run again, as it ended")
    assert await popup.text("#result-text") == "Ticked the terms box again"
    assert [card["type"] for card in await popup.cards()].count("step") == 2  # the click, and done
    assert await popup.js("document.getElementById('task-input').value") == ""  # nothing to run again
    await popup.screenshot(SCREENS / "reopened-after-worker-restart.png")
    await harness.browser.close_tab(popup.tab.target_id)
