"""The popup as a new user reads it (issue 8): Settings that show examples and test the connection, one
message with the popup's remedy when a task fails, the status and the outcome kept in view over a long
timeline, past tasks with their answer and Rerun, and a popup that did not start the running task.
Everything is asserted on what the popup shows; screenshots go to $TABPILOT_SCREENS."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
from typing import Any

import pytest
from e2e_support import (
    API_KEY,
    EXTENSION_ORIGIN,
    PAGE_LOADED,
    SCREENS,
    Harness,
    PopupPage,
    act_on,
    agent_output,
    configure,
    done,
    popup_task_id,
    prompt_text,
    run_in_popup,
    run_in_terminal,
    start_task,
    task_row,
    wait_status,
    wait_until,
)
from llm_support import slow_file
from test_overlay_press import held_until
from user_support import as_tall_as_its_panel, open_panel, open_side_panel, screenshot, wait_overlay

from tabpilot.agent.types import (
    AgentReflection,
    ExecutedActivity,
    ObservationEvent,
    StepAction,
    StepEvent,
    UserTakeoverEvent,
    WaitingActivity,
)
from tabpilot.browser.tab import Tab
from tabpilot.language import say
from tabpilot.llm.scripted import Delay, HTTPError, ScriptedLLMServer, Text, ToolCall
from tabpilot.localfiles import LocalFiles

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


async def open_settings(popup: PopupPage) -> None:
    await popup.click("#nav-settings")
    await popup.wait_for("document.getElementById('settings-form').dataset.loaded === 'true'", "settings to load")


async def press_test_connection(popup: PopupPage) -> dict[str, str]:
    """Press Test connection; what the popup then says."""
    await popup.click("#settings-test")
    await popup.wait_for("['ok', 'failed'].includes(document.getElementById('test-result').dataset.state)",
                         "the connection test's outcome")
    return {
        "state": await popup.js("document.getElementById('test-result').dataset.state"),
        "headline": await popup.text("#test-headline"),
        "remedy": await popup.text("#test-remedy") if await popup.visible("#test-remedy") else "",
        "detail": await popup.text("#test-detail") if await popup.visible("#test-detail") else "",
    }


async def test_settings_show_examples_test_the_connection_and_clear_the_key(
    harness: Harness, llm: ScriptedLLMServer
) -> None:
    popup = await harness.open_popup()
    await open_settings(popup)
    # nothing is set yet, and the placeholders say they are examples, not values
    assert await popup.js("document.getElementById('set-base-url').value") == ""
    assert await popup.js("document.getElementById('set-base-url').placeholder") == "e.g. https://api.openai.com/v1"
    assert await popup.js("document.getElementById('set-model').placeholder") == "e.g. gpt-4.1-mini"
    assert not await popup.visible("#clear-key")  # no key to clear
    await popup.screenshot(SCREENS / "settings-empty.png")
    # the language setting says what it changes, and that this popup is not one of them
    assert await popup.text("[data-i18n='language']") == "Agent and CLI language"
    assert await popup.text("[data-i18n='languageHint']") == (
        "The agent works and answers in this language, and the tabpilot command speaks it. "
        "This popup follows Chrome's language.")

    # what is typed is tested, before it is saved
    await popup.fill("#set-base-url", llm.base_url)
    await popup.fill("#set-model", "scripted")
    await popup.fill("#set-api-key", API_KEY)
    llm.add(Text("OK"))
    ok = await press_test_connection(popup)
    assert ok["state"] == "ok", ok
    assert ok["headline"] == f"OK: {llm.base_url} answers for the model scripted.", ok
    assert llm.headers[-1]["authorization"] == f"Bearer {API_KEY}"  # the typed key went to the typed endpoint
    await popup.screenshot(SCREENS / "settings-test-ok.png")

    # a closed port: the URL is what is wrong, and where to fix it
    await popup.fill("#set-base-url", closed_port_url())
    unreachable = await press_test_connection(popup)
    assert unreachable["state"] == "failed" and unreachable["headline"].startswith("Nothing answers at http://127.0.0.1:")
    # said where the person is: the Base URL field above the result (they are in Settings already)
    assert unreachable["remedy"] == "Check the Base URL above, and that the server is running."

    # a refused key
    await popup.fill("#set-base-url", llm.base_url)
    llm.add(HTTPError(401, "Incorrect API key provided", type="invalid_request_error"))
    refused = await press_test_connection(popup)
    assert refused["headline"] == "The API key was refused (HTTP 401).", refused
    assert refused["remedy"] == "Enter the right API key for this endpoint, then test again."

    # a model the endpoint does not know, and what it does offer
    await popup.fill("#set-model", "gpt-nope")
    llm.add(HTTPError(404, "The model `gpt-nope` does not exist", code="model_not_found", type="invalid_request_error"))
    unknown = await press_test_connection(popup)
    assert unknown["headline"] == "The endpoint does not know the model gpt-nope.", unknown
    assert unknown["remedy"] == "Check the Model name above."
    assert unknown["detail"] == "Models it offers: scripted"
    await popup.screenshot(SCREENS / "settings-test-model-unknown.png")
    assert API_KEY not in await popup.js("document.documentElement.outerHTML")

    # save, then clear the key: the host forgets it
    await popup.fill("#set-model", "scripted")
    await popup.click("#settings-save")
    await popup.wait_for("document.getElementById('settings-saved').textContent === 'Saved.'", "settings to save")
    assert await popup.visible("#clear-key")
    assert API_KEY[-4:] in await popup.text("#api-key-hint")
    await popup.click("#clear-key")
    await popup.wait_for("document.getElementById('settings-saved').textContent === 'Key cleared.'", "the key to clear")
    assert await popup.text("#api-key-hint") == "No key set. It is kept by the local host, never in the browser."
    assert not await popup.visible("#clear-key")
    assert not [p for p in harness.tabpilot_home.rglob("*") if p.is_file() and API_KEY in p.read_text(errors="replace")]
    # and a reopened Settings agrees (the saved state, not the form's)
    await popup.click("#nav-task")
    await open_settings(popup)
    assert await popup.js("document.getElementById('set-api-key').placeholder") == "not set"
    assert await popup.js("document.getElementById('set-base-url').value") == llm.base_url
    await harness.browser.close_tab(popup.tab.target_id)


async def test_the_settings_fields_are_locked_until_the_hosts_values_arrive(harness: Harness) -> None:
    """What is typed before the host's settings arrive was painted over by them, and a Save sent the
    defaults the popup opened with (the outside CI's Safety test lost its typed domains so): the fields
    are locked while the settings are on their way, in every section that paints them, and unlocked after."""
    popup = await harness.open_popup()
    fields = "#settings-form input, #settings-form select, #guards-form textarea, #guards-form select"
    # the click and the look in one turn of the popup's JS: the host cannot have answered yet
    locked = await popup.js(
        "(() => { document.getElementById('nav-settings').click();"
        f" return [...document.querySelectorAll({json.dumps(fields)})].map((f) => [f.id, f.disabled]); }})()")
    assert len(locked) >= 6 and all(disabled for _, disabled in locked), locked
    await popup.wait_for("document.getElementById('settings-form').dataset.loaded === 'true'"
                         " && document.getElementById('guards').dataset.loaded === 'true'", "the settings")
    unlocked = await popup.js(f"[...document.querySelectorAll({json.dumps(fields)})].map((f) => [f.id, f.disabled])")
    assert [field for field, disabled in unlocked if disabled] == [], unlocked
    await harness.browser.close_tab(popup.tab.target_id)


def config_in_terminal(harness: Harness, *args: str) -> dict[str, Any]:
    """`tabpilot config` as a user types it in a terminal, on the host's settings; the settings after it."""
    env = {**os.environ, "TABPILOT_HOME": str(harness.tabpilot_home)}
    if args:
        subprocess.run([sys.executable, "-m", "tabpilot", "config", *args], env=env, check=True, timeout=60)
    shown = subprocess.run([sys.executable, "-m", "tabpilot", "config", "--json"], env=env, check=True,
                           capture_output=True, text=True, timeout=60)
    settings: dict[str, Any] = json.loads(shown.stdout)
    return settings


async def test_a_save_in_the_popup_keeps_what_a_terminal_changed_while_it_was_open(harness: Harness) -> None:
    """The new user's trial: `tabpilot config set max-steps 30` while Settings showed 40, then only Screenshots
    changed in the popup and saved: max-steps was 40 again, without a word. A save sends what was changed."""
    config_in_terminal(harness, "set", "max-steps", "40")
    config_in_terminal(harness, "set", "allowed-domains", "shop.test")
    popup = await harness.open_popup()
    await open_settings(popup)
    await popup.wait_for("document.getElementById('guards').dataset.loaded === 'true'", "the Safety section")
    assert await popup.js("document.getElementById('set-max-steps').value") == "40"
    config_in_terminal(harness, "set", "max-steps", "30")
    config_in_terminal(harness, "set", "allowed-domains", "shop.test,docs.example")
    await popup.js("document.getElementById('set-vision').value = 'off'")
    await popup.click("#settings-save")
    await popup.wait_for("document.getElementById('settings-saved').textContent !== ''", "the settings to save")
    await popup.js("document.getElementById('guards-ask-before').value = 'every'")
    await popup.click("#guards-save")
    await popup.wait_for("document.getElementById('guards-saved').textContent !== ''", "the Safety settings to save")
    settings = config_in_terminal(harness)
    assert (settings["maxSteps"], settings["useVision"]) == (30, "off"), settings
    assert (settings["allowedDomains"], settings["askBefore"]) == (["shop.test", "docs.example"], "every"), settings
    # the popup shows what the host holds now, the terminal's change included
    assert await popup.js("document.getElementById('set-max-steps').value") == "30"
    assert await popup.js("document.getElementById('guards-allowed').value") == "shop.test\ndocs.example"
    config_in_terminal(harness, "unset", "max-steps")
    for name in ("allowed-domains", "ask-before", "use-vision"):
        config_in_terminal(harness, "unset", name)
    await harness.browser.close_tab(popup.tab.target_id)


async def test_an_unreachable_endpoint_says_check_the_base_url_once_counting_tries_one_way(
    harness: Harness, form_tab: Tab
) -> None:
    popup = await harness.open_popup(form_tab)
    await configure(popup, closed_port_url())
    await run_in_popup(popup, "Tick the terms box")
    assert await wait_status(popup, "completed", "error", "stopped") == "error"
    tries = [c["text"].splitlines()[0] for c in await popup.cards() if c["type"] == "retry"]
    # counted as page-agent's wire counts (attempt n of maxAttempts retries), as the CLI's "retry 1/3"
    assert tries == ["RETRY 1 OF 3", "RETRY 2 OF 3", "RETRY 3 OF 3"], tries  # CSS upper-cases
    assert not [c for c in await popup.cards() if c["type"] == "error"]  # said once: in the result box
    assert await popup.text("#result-text") == "The model's server could not be reached."
    assert (await popup.text("#result-remedy")).startswith("Check the Base URL in Settings")
    details = await popup.js("document.getElementById('result-detail-text').textContent")
    assert "still failed after 3 retries" in details and "could not reach" in details  # the cards' count
    assert await popup.in_view("#result") and await popup.in_view("#task-status")
    await popup.screenshot(SCREENS / "error-unreachable.png", max_height=600)
    await harness.browser.close_tab(popup.tab.target_id)


async def open_past(popup: PopupPage, task_id: str) -> None:
    """Open one task's detail in Past tasks."""
    await popup.click("#nav-past")
    item = f"#past-list .past-item[data-task-id='{task_id}']"
    await popup.wait_for(f"!!document.querySelector({json.dumps(item)})", "the task in Past tasks")
    await popup.click(item)
    await popup.wait_for("!document.getElementById('past-detail').hidden", "the past task's detail")


async def open_past_result(popup: PopupPage, task_id: str) -> dict[str, str]:
    """Open one task in Past tasks; its result box's headline and remedy."""
    await open_past(popup, task_id)
    return {"headline": await popup.text("#past-result-text"), "remedy": await popup.text("#past-result-remedy")}


async def test_a_failure_is_known_by_its_code_and_an_older_record_by_its_words(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    # a server error every time: the host's English names none of the causes the popup once looked for
    # (asking for 50 ms between attempts: the backoff's own 0.5-4 s waits are not what this test is about)
    llm.add(*[HTTPError(503, "The engine is currently overloaded", retry_after=0.05)] * 4)
    popup = await start_task(harness, form_tab, llm, "Tick the terms box")
    task_id = await popup_task_id(popup)
    assert await wait_status(popup, "completed", "error", "stopped") == "error"
    said = {"headline": "The model's server answered with an error.",
            "remedy": "Try again in a moment. If it keeps failing, check the Base URL and the Model in Settings "
                      "and press Test connection."}
    assert {"headline": await popup.text("#result-text"), "remedy": await popup.text("#result-remedy")} == said
    details = await popup.js("document.getElementById('result-detail-text').textContent")
    assert "still failed after 3 retries" in details, details
    assert "HTTP 503: The engine is currently overloaded" in details, details
    [error] = [event for event in task_row(harness, task_id)["events"] if event["type"] == "error"]
    assert error["code"] == "retries_exhausted" and error["params"]["cause"]["code"] == "server_error", error
    await popup.screenshot(SCREENS / "error-server.png", max_height=600)
    assert await open_past_result(popup, task_id) == said  # the record's code, read again

    # a task recorded before error events had a code: known by the cause its English names
    from tabpilot.store.tasks import TaskStore

    refused = ("The provider refused the API key (HTTP 401 from http://127.0.0.1:9/v1: Incorrect API key provided). "
               "Check the key: in the extension's Settings, or `tabpilot config set api-key`.")
    store = TaskStore(harness.database())
    older = store.start_task("A task from an older version", source="popup")
    store.append_event(older, {"type": "error", "message": refused})
    store.finish_task(older, status="error", result={"success": False, "data": refused})
    store.close()
    await popup.click("#nav-task")
    assert await open_past_result(popup, older) == {
        "headline": "The model provider refused the API key.",
        "remedy": "Open Settings, enter the right API key and press Test connection."}
    await harness.browser.close_tab(popup.tab.target_id)


async def failed_in_terminal(harness: Harness, llm: ScriptedLLMServer, url: str, task: str, *flags: str) -> str:
    """`tabpilot run` in a terminal that fails; the id of the task it recorded."""
    task_id, proc = await run_in_terminal(harness, llm, url, task, *flags)
    assert proc.returncode != 0, proc.stdout  # each of these fails
    return task_id


async def test_past_tasks_advise_a_terminals_task_where_it_was_started_not_in_settings(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    # A new user's trial: `tabpilot run --model gpt-typo` failed, and Past tasks said "Check the Base URL and the Model
    # in Settings", which that run had not used (it took its model from the command line). Its advice names the
    # terminal and the model it ran with; so does a terminal task that ran out of steps.
    llm.add(HTTPError(404, "The model `gpt-typo` does not exist", code="model_not_found", type="invalid_request_error"))
    typo = await failed_in_terminal(harness, llm, await form_tab.url(), "Tick the terms box", "--model", "gpt-typo")
    llm.add(ToolCall("AgentOutput", agent_output("Wait for the page", {"wait": {"seconds": 1}})))
    short = await failed_in_terminal(harness, llm, await form_tab.url(), "Tick the box, slowly", "--model", "scripted",
                                  "--max-steps", "1")
    popup = await harness.open_popup(form_tab)
    said = await open_past_result(popup, typo)
    assert said == {
        "headline": "The model's server does not know this address or model.",
        "remedy": 'This task was started in the terminal with the model "gpt-typo": check that name, and the address '
                  "and key it ran with there (tabpilot run --model, --base-url, --api-key, the OPENAI_* variables or "
                  "tabpilot config), then run it there again."}, said
    assert "Settings" not in await popup.js("document.getElementById('past-result').innerText")
    assert API_KEY not in await popup.js("document.documentElement.outerHTML")
    await popup.screenshot(SCREENS / "past-terminal-model.png", max_height=600)
    await popup.click("#nav-task")
    said = await open_past_result(popup, short)
    assert said["headline"] == "The task used up its steps before it was done.", said
    assert said["remedy"] == ("This task was started in the terminal: give it more steps there (tabpilot run "
                              "--max-steps, or tabpilot config set max-steps), then run it there again."), said
    await harness.browser.close_tab(popup.tab.target_id)


async def test_a_task_the_agent_could_not_finish_reads_not_done_not_error_everywhere(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    # done(success=false) was labelled "Error", as if tabpilot broke. It reads "Not done" in the popup, the overlay,
    # Past tasks and `tabpilot history`, while a real failure (the model endpoint gone) still reads "Error".
    # page-agent's status stays "error" on the wire and in the export.
    gave_up = "The form asks for a phone number I do not have."
    llm.add(done(gave_up, success=False))
    popup = await harness.open_popup(form_tab)
    await configure(popup, llm.base_url)
    task_id = await run_in_popup(popup, "Sign me up")
    assert await wait_status(popup, "completed", "error", "stopped") == "error"
    assert await popup.text("#task-status") == "Not done"
    assert await popup.text("#result-text") == gave_up
    assert await popup.js("document.getElementById('result').className") == "result not-done"
    await popup.screenshot(SCREENS / "not-done.png", max_height=600)
    ended = await wait_overlay(form_tab, "the overlay's end", lambda o: o["state"] == "error")
    assert (ended["pill"], ended["outcome"]) == ("Not done", gave_up), ended
    await screenshot(form_tab, "not-done-overlay.png")

    dead = closed_port_url()  # a real error: the model's endpoint is gone
    await configure(popup, dead)
    failed_id = await run_in_popup(popup, "Sign me up again")
    assert await wait_status(popup, "completed", "error", "stopped") == "error"
    assert await popup.text("#task-status") == "Error"
    await configure(popup, llm.base_url)

    for opened in range(2):  # Past tasks, and again after the popup was opened anew
        if opened:
            await harness.browser.close_tab(popup.tab.target_id)
            popup = await harness.open_popup(form_tab)
            await popup.wait_for("document.getElementById('task-status').textContent === 'Error'",
                                 "the tab's last task, the failed one")
        await popup.click("#nav-past")
        await popup.wait_for(f"!!document.querySelector('.past-item[data-task-id=\"{failed_id}\"]')", "past tasks")
        pills = await popup.js("Object.fromEntries([...document.querySelectorAll('.past-item')]"
                               ".map(li => [li.dataset.taskId, li.querySelector('.pill').textContent]))")
        assert (pills[task_id], pills[failed_id]) == ("Not done", "Error"), pills
        await popup.open_past(task_id)
        assert await popup.text("#past-status") == "Not done" and await popup.text("#past-result-text") == gave_up
        await popup.click("#nav-task")

    env = {**os.environ, "TABPILOT_HOME": str(harness.tabpilot_home)}

    def history(*args: str) -> str:
        return subprocess.run([sys.executable, "-m", "tabpilot", "history", *args], env=env, check=True, timeout=60,
                              capture_output=True, text=True).stdout

    listed = {line.split()[0]: line for line in history("--limit", "5").splitlines()[1:] if line.strip()}
    assert "not done" in listed[task_id] and "not done" not in listed[failed_id], listed
    shown = history("show", task_id)
    assert "not done" in shown and "error" not in shown, shown
    assert f"Result (not done): {gave_up}" in shown, shown
    assert "error" in history("show", failed_id)
    exported = json.loads(history("export", task_id))
    assert (exported["status"], exported["success"], exported["gaveUp"]) == ("error", False, True), exported
    await harness.browser.close_tab(popup.tab.target_id)


def typing_steps(name: str, problems: list[str], tries: range) -> list[Any]:
    """The model's replies that type `name n` into the form's name, one step for each n of `tries`."""
    return [act_on("Full name", "input_text", f"Type the name, try {n}", problems, text=f"{name} {n}") for n in tries]


async def test_a_long_timeline_keeps_the_status_and_the_result_in_view(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    problems: list[str] = []
    llm.add(*typing_steps("Ada Lovelace", problems, range(1, 10)))
    llm.add(Delay(1.5, then=done("Typed the name nine times; the last one stands: Ada Lovelace 9.")))
    popup = await harness.open_popup(form_tab)
    await popup.size(400, 600)  # the toolbar popup's height limit
    await configure(popup, llm.base_url)
    await popup.size(400, 600)
    await run_in_popup(popup, "Type the name nine times")
    await popup.wait_for("document.querySelectorAll('#timeline .card-step').length >= 9", "nine step cards")
    assert await popup.js("document.documentElement.scrollHeight > innerHeight + 300")  # it did scroll
    assert await popup.in_view("#task-status") and await popup.in_view("#task-title")
    assert await popup.text("#task-status") == "Running"
    await popup.screenshot(SCREENS / "running-long.png", max_height=600)
    assert await wait_status(popup, "completed", "error", "stopped") == "completed", problems
    assert await popup.in_view("#task-status") and await popup.in_view("#result")
    assert await popup.text("#result-text") == "Typed the name nine times; the last one stands: Ada Lovelace 9."
    await popup.screenshot(SCREENS / "completed-long.png", max_height=600)
    assert await form_tab.evaluate("document.getElementById('name').value") == "Ada Lovelace 9"
    await harness.browser.close_tab(popup.tab.target_id)


async def test_a_popup_opened_on_a_long_task_shows_its_newest_step_while_it_runs_and_its_outcome_once_it_ended(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    # A reopened popup opened at the bottom of a long timeline, or wherever it landed. Running: it shows the newest
    # step, and follows the next one only while the person has not scrolled up to read. Ended: the top (the box for the
    # next task), with the outcome in view.
    problems: list[str] = []
    llm.add(*typing_steps("Mary Shelley", problems, range(1, 9)))
    llm.add(Delay(8, then=typing_steps("Mary Shelley", problems, range(9, 10))[0]))
    llm.add(done("Typed the name nine times; the last one stands: Mary Shelley 9."))
    first = await harness.open_popup(form_tab)
    await configure(first, llm.base_url)
    await run_in_popup(first, "Type the name nine times")
    await first.wait_for("document.querySelectorAll('#timeline .card-step').length >= 8", "eight step cards")
    await harness.browser.close_tab(first.tab.target_id)

    reopened = await harness.open_popup(form_tab)
    await reopened.size(400, 600)  # the toolbar popup's height limit
    await reopened.wait_for("document.querySelectorAll('#timeline .card-step').length === 8", "the running task")
    assert await reopened.js("document.documentElement.scrollHeight > innerHeight + 300")  # it scrolls

    async def newest_in_view() -> bool:  # from the next frame on: what it shows grows as it opens (the thinking line)
        return await reopened.in_view("#timeline .card-step:last-child") and await reopened.in_view("#task-status")

    await wait_until(newest_in_view, "the newest step in view", 10)
    await reopened.screenshot(SCREENS / "reopened-running.png", max_height=600)
    await reopened.js("window.scrollTo({top: 0}), true")  # the person reads the first steps
    await reopened.wait_for("document.querySelectorAll('#timeline .card-step').length === 9", "the ninth step")
    assert await reopened.js("window.scrollY") == 0  # left where they read
    assert await wait_status(reopened, "completed", "error", "stopped") == "completed", problems
    await harness.browser.close_tab(reopened.tab.target_id)

    for _ in range(2):  # and again: each popup opened on the ended task
        ended = await harness.open_popup(form_tab)
        await ended.size(400, 600)
        await ended.wait_for("!document.getElementById('result').hidden", "the ended task's outcome")
        assert await ended.js("window.scrollY") == 0
        assert await ended.in_view("#task-input") and await ended.in_view("#result"), await ended.js("window.scrollY")
        assert await ended.text("#result-text") == "Typed the name nine times; the last one stands: Mary Shelley 9."
        await ended.screenshot(SCREENS / "reopened-ended.png", max_height=600)
        await harness.browser.close_tab(ended.tab.target_id)
    assert await form_tab.evaluate("document.getElementById('name').value") == "Mary Shelley 9"


THINKING = re.compile(r"Step (\d+) · thinking… (\d+) s")


async def thinking_everywhere(harness: Harness, popup: PopupPage, form_tab: Tab) -> tuple[PopupPage, str, str]:
    """The popup, the page's overlay and the side panel opened then, each counting the seconds of step 2's thought:
    the side panel and what the popup and it said."""
    activity = "document.getElementById('activity')"
    counting = f"/^Step 2 · thinking… ([2-9]|\\d\\d+) s$/.test({activity}.textContent)"  # 2 s and on
    said = await popup.wait_for(f"!{activity}.hidden && {counting} && {activity}.textContent",
                                "the popup to count the seconds of step 2", 30)
    await popup.screenshot(SCREENS / "thinking-popup.png", max_height=600)
    shown = await wait_overlay(form_tab, "the overlay to count the seconds of step 2",
                               lambda o: bool(THINKING.fullmatch(o["thinking"])), timeout=30)
    match = THINKING.fullmatch(shown["thinking"])
    assert match and match[1] == "2", shown
    await screenshot(form_tab, "thinking-overlay.png")
    panel = await open_panel(harness, form_tab)
    counted = await panel.wait_for(f"/^Step 2 · thinking… \\d+ s$/.test({activity}.textContent)"
                                   f" && {activity}.textContent", "the side panel to count the seconds of step 2")
    return panel, str(said), str(counted)


async def test_a_slow_model_shows_the_step_and_the_seconds_it_thinks_in_the_popup_the_side_panel_and_the_overlay(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    # A slow model left the person staring at "Thinking…". The popup, the side panel (opened while it thinks: it counts
    # on from when the step began, not from 0) and the page's overlay say which step and for how many seconds. The
    # model answers once all three were seen (a fixed 8 s delay was all a loaded machine had to open the side panel).
    problems: list[str] = []
    answer = threading.Event()
    llm.add(act_on("Full name", "input_text", "Type the name", problems, text="Ada Lovelace"),
            held_until(answer, done("Typed the name")))
    popup = await harness.open_popup(form_tab)
    await configure(popup, llm.base_url)
    try:
        await run_in_popup(popup, "Type Ada Lovelace as the name")
        panel, said, counted = await thinking_everywhere(harness, popup, form_tab)
    finally:
        answer.set()
    seconds = int(THINKING.fullmatch(said)[2])  # type: ignore[index]
    assert int(THINKING.fullmatch(counted)[2]) >= seconds, (said, counted)  # type: ignore[index]
    assert await wait_status(popup, "completed", "error", "stopped") == "completed", problems
    assert await popup.text("#result-text") == "Typed the name"
    assert not await popup.visible("#activity") and not await panel.visible("#activity")
    ended = await wait_overlay(form_tab, "the overlay to show the end", lambda o: o["state"] == "completed")
    assert ended["thinking"] == "", ended
    await harness.browser.close_tab(panel.tab.target_id)
    await harness.browser.close_tab(popup.tab.target_id)


ACTING = re.compile(r"Step (\d+) · waiting (\d+) s… \d+ s")


async def test_between_its_thoughts_the_overlay_says_which_action_the_agent_takes_in_the_same_box(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    # While a step's action ran (a wait of seconds, a page loading) the overlay's line under the task stood blank, kept
    # for the box's height: a gap in the box that looked broken. It says the step's action now, in the same box.
    problems: list[str] = []
    await harness.browser.activate(form_tab.target_id)  # the page the person watches
    for run, (steps_before, seconds) in enumerate([(0, 4), (1, 3)]):
        waits = ToolCall("AgentOutput", agent_output("Wait for the page", {"wait": {"seconds": seconds}}))
        typing = [act_on("Full name", "input_text", "Type the name", problems, text="Ada")] if steps_before else []
        llm.add(*typing, Delay(2, then=waits), Delay(2, then=done("Waited")))
        popup = await harness.open_popup(form_tab)
        await configure(popup, llm.base_url)
        await run_in_popup(popup, "Wait for the page")
        await harness.browser.activate(form_tab.target_id)
        step = steps_before + 1
        await wait_overlay(form_tab, f"step {step} to think", lambda o, s=step: o["thinking"].startswith(f"Step {s} ·"))
        thinking_box = await wait_until(lambda: as_tall_as_its_panel(form_tab), "the box to fit the thinking line")
        if run == 0:
            await screenshot(form_tab, "overlay-thinking.png")
        shown = await wait_overlay(form_tab, f"step {step}'s wait", lambda o: bool(ACTING.fullmatch(o["thinking"])))
        assert ACTING.fullmatch(shown["thinking"]).groups() == (str(step), str(seconds)), shown  # type: ignore[union-attr]
        acting_box = await wait_until(lambda: as_tall_as_its_panel(form_tab), "the box to fit the action's line")
        assert acting_box["h"] == thinking_box["h"], (thinking_box, acting_box)  # nothing above it moved under a press
        if run == 0:
            await screenshot(form_tab, "overlay-acting.png")
        await wait_overlay(form_tab, f"step {step + 1} to think",
                           lambda o, s=step + 1: o["thinking"].startswith(f"Step {s} · thinking"))
        assert await wait_status(popup, "completed", "error", "stopped") == "completed", problems
        ended = await wait_overlay(form_tab, "the overlay to show the end", lambda o: o["state"] == "completed")
        assert ended["thinking"] == "", ended
        await harness.browser.close_tab(popup.tab.target_id)
        await form_tab.navigate(await form_tab.url())  # the second task on the page loaded again


CLICKING = re.compile(r'Step 1 · clicking "Refresh the list"… (\d+) s')


async def test_the_popup_and_the_side_panel_say_the_action_and_its_element_in_words_and_count_its_seconds(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    # A new user's trial: the side panel said "Executing click_element_by_index (index: 3)" and then "Done
    # click_element_by_index in 6,742 ms", with nothing counting meanwhile. Both views say what the overlay says, on the
    # element the action is on, the seconds counting while it runs; twice, the second task after a reload.
    tab = await harness.browser.new_tab(e2e_pages.url("slow_button.html?ms=6000"))  # a click that takes 6 s
    activity = "document.getElementById('activity')"
    for run in range(2):
        await wait_until(lambda: tab.evaluate(PAGE_LOADED), "the page to load")
        problems: list[str] = []
        llm.add(act_on("Refresh the list", "click_element_by_index", "Refresh it", problems), done("Refreshed"))
        popup = await harness.open_popup(tab)
        if run == 0:
            await configure(popup, llm.base_url)
        panel = await open_panel(harness, tab)
        await run_in_popup(popup, "Refresh the list")
        for view, name in ((popup, "popup"), (panel, "side panel")):
            said = await view.wait_for(f"{activity}.dataset.type === 'executing' && !{activity}.hidden"
                                       f" && {activity}.textContent", f"the {name} to say the click", 30)
            assert CLICKING.fullmatch(said), (name, said)
            seconds = int(CLICKING.fullmatch(said)[1])  # type: ignore[index]
            later = await view.wait_for(
                f"{activity}.dataset.type === 'executing' && (() => {{ const counted = / (\\d+) s$/"
                f".exec({activity}.textContent); return counted && Number(counted[1]) > {seconds}"
                f" && {activity}.textContent; }})()", f"the {name} to count the click's seconds", 30)
            assert CLICKING.fullmatch(later), (name, later)
            if run == 0:
                await view.screenshot(SCREENS / f"acting-{name.replace(' ', '-')}.png", max_height=600)
        assert await wait_status(popup, "completed", "error", "stopped") == "completed", problems
        assert await tab.evaluate("window.refreshes") == 1  # the page's own handler saw the click (loaded anew)
        assert not problems, problems
        for view in (popup, panel):
            await harness.browser.close_tab(view.tab.target_id)
        await tab.navigate(await tab.url())  # the second task on the page loaded again
    await harness.browser.close_tab(tab.target_id)


def step_cards(timeline: str = "timeline") -> str:
    """What the step cards' action lines of a timeline say, and their tooltips."""
    return (f"[...document.querySelectorAll('#{timeline} .card-step .action')]"
            ".map((line) => [line.querySelector('.v').textContent, line.title])")


def assert_worded(cards: list[list[str]], where: str) -> None:
    [typed, clicked, finished] = cards
    assert typed[0] == 'typed into "Full name"', (where, cards)
    assert re.fullmatch(r"input_text\(index: \d+, text: Ada\)", typed[1]), (where, cards)
    assert clicked[0] == 'clicked "Sign up"', (where, cards)
    assert re.fullmatch(r"click_element_by_index\(index: \d+\)", clicked[1]), (where, cards)
    assert finished == ["ended the task", "done(text: Signed up, success: true)"], (where, cards)


async def test_the_step_cards_say_what_each_step_did_in_words_with_the_exact_call_on_hover(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles
) -> None:
    # A new user's trial: a step's card read "Action: click_element_by_index(index: 3)" in the popup, the side panel
    # and the past tasks. Its card says what the step did, on the element the record names; the exact call is the
    # line's tooltip. Twice, the second task after a reload.
    tab = await harness.browser.new_tab(e2e_pages.url("form.html"))
    for run in range(2):
        await wait_until(lambda: tab.evaluate(PAGE_LOADED), "the page to load")
        problems: list[str] = []
        llm.add(act_on("Full name", "input_text", "Type the name", problems, text="Ada"),
                act_on("Sign up", "click_element_by_index", "Sign up", problems), done("Signed up"))
        popup = await harness.open_popup(tab)
        if run == 0:
            await configure(popup, llm.base_url)
        panel = await open_panel(harness, tab)
        await run_in_popup(popup, "Sign Ada up")
        assert await wait_status(popup, "completed", "error", "stopped") == "completed", problems
        assert not problems, problems
        clicks = await tab.evaluate("window.received.filter((e) => e.type === 'click' && e.target === 'submit'"
                                    " && e.trusted).length")
        assert clicks == 1  # the page's own handler saw the click
        for view, name in ((popup, "popup"), (panel, "side panel")):
            cards = await view.wait_for(f"(() => {{ const cards = {step_cards()}; return cards.length === 3"
                                        " && cards; })()", f"the {name}'s three step cards", 30)
            assert_worded(cards, name)
            if run == 0:
                await view.screenshot(SCREENS / f"step-cards-{name.replace(' ', '-')}.png", max_height=700)
        # the same task among the past ones, read back from the record
        task_id = await popup_task_id(popup)
        await popup.click("#nav-past")
        await popup.wait_for(f"!!document.querySelector(\"#past-list .past-item[data-task-id='{task_id}']\")",
                             "the past tasks list")
        await popup.click(f"#past-list .past-item[data-task-id='{task_id}']")
        cards = await popup.wait_for(f"(() => {{ const cards = {step_cards('past-timeline')};"
                                     " return cards.length === 3 && cards; })()", "the past task's step cards", 30)
        assert_worded(cards, "past task")
        if run == 0:
            await popup.screenshot(SCREENS / "step-cards-past.png", max_height=700)
        for view in (popup, panel):
            await harness.browser.close_tab(view.tab.target_id)
        await tab.navigate(await tab.url())  # the second task on the page loaded again
    await harness.browser.close_tab(tab.target_id)


async def test_past_detail_shows_the_answer_and_rerun_runs_the_same_task_again(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    answer = "The page is a newsletter signup form."
    usage = {"prompt_tokens": 12000, "completion_tokens": 345, "total_tokens": 12345}
    llm.add(ToolCall("AgentOutput", agent_output("Report", {"done": {"text": answer, "success": True}}), usage=usage))
    popup = await start_task(harness, form_tab, llm, "Say what this page is")
    assert await wait_status(popup, "completed", "error", "stopped") == "completed"
    first_id = await popup_task_id(popup)
    from tabpilot.store.tasks import TaskStore

    store = TaskStore(harness.database())  # the record of a task `tabpilot run` ran, as it writes one
    from_terminal = store.start_task("Say what this page is", source="cli")
    store.finish_task(from_terminal, status="completed", result={"success": True, "data": answer})
    store.close()

    await popup.click("#nav-past")
    await popup.wait_for(f"!!document.querySelector(\"#past-list .past-item[data-task-id='{first_id}']\")",
                         "the past tasks list")
    row = await popup.js(f"document.querySelector(\"#past-list .past-item[data-task-id='{first_id}']\").innerText")
    assert "12,345 tokens" in row, row  # thousands separated
    # the same task run from a terminal is told apart from the popup's (a new user could not)
    terminal_row = await popup.js(
        f"document.querySelector(\"#past-list .past-item[data-task-id='{from_terminal}']\").innerText")
    assert "from the terminal" in terminal_row and "from the terminal" not in row, (terminal_row, row)
    # every title starts at the same x, whatever the width of the status word before it
    lefts = await popup.js(
        "[...document.querySelectorAll('#past-list .past-task')].map(e => e.getBoundingClientRect().left)"
    )
    assert len(set(lefts)) == 1, lefts
    await popup.screenshot(SCREENS / "past-list.png")

    await popup.click(f"#past-list .past-item[data-task-id='{first_id}']")
    await popup.wait_for("!document.getElementById('past-detail').hidden", "the past task's detail")
    assert await popup.text("#past-title") == "Say what this page is"
    assert await popup.text("#past-result-text") == answer  # the final answer, not only the steps
    assert await popup.visible("#past-rerun") and await popup.visible("#past-rerun-new")
    await popup.screenshot(SCREENS / "past-detail.png")

    # Rerun here: the same task on the tab this popup works on
    llm.add(done("Still a signup form."))
    await popup.click("#past-rerun")
    await popup.wait_for(f"ui.taskId && ui.taskId !== {json.dumps(first_id)}", "the rerun to start")
    assert await popup.js("document.body.dataset.view") == "task"
    assert await popup.text("#task-title") == "Say what this page is"
    assert await wait_status(popup, "completed", "error", "stopped") == "completed"
    assert await popup.text("#result-text") == "Still a signup form."
    rerun = task_row(harness, await popup_task_id(popup))
    assert rerun["task"] == "Say what this page is" and rerun["url"] == await form_tab.url()

    # Rerun in a new tab: the task's page opens in a tab of its own and the task runs there
    tabs_before = set(await harness.sw("(await chrome.tabs.query({})).map(t => t.id)"))
    llm.add(done("A signup form, in a new tab."))
    await open_past(popup, first_id)
    second_id = await popup_task_id(popup)
    await popup.click("#past-rerun-new")
    await popup.wait_for(f"ui.taskId !== {json.dumps(second_id)}", "the rerun in a new tab to start")
    assert await wait_status(popup, "completed", "error", "stopped") == "completed"
    assert await popup.text("#result-text") == "A signup form, in a new tab."
    opened = set(await harness.sw("(await chrome.tabs.query({})).map(t => t.id)")) - tabs_before
    assert len(opened) == 1, opened
    third = task_row(harness, await popup_task_id(popup))
    assert third["task"] == "Say what this page is" and third["url"] == await form_tab.url()
    new_tab = opened.pop()
    assert await harness.sw(f"(await chrome.tabs.get({new_tab})).active")  # brought forward once it started
    await harness.sw(f"await chrome.tabs.remove({new_tab}); true")
    await harness.browser.close_tab(popup.tab.target_id)


SLOW_SHELF = b"<!doctype html><title>Slow shelf</title><h1>The slow shelf</h1><button>Take a book</button>"


async def test_a_new_tab_of_a_slow_page_is_started_on_once_loaded_from_the_popup_and_from_a_client(
        harness: Harness, llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # A new tab is at about:blank until its page commits: a task started at once was recorded there, and its
    # model first shown an empty page (seen under load with a fast page; a slow site makes it certain).
    with slow_file(1.5, SLOW_SHELF, "text/html", "shelf.html") as url:
        shelf = await harness.browser.new_tab(url)
        llm.add(done("A shelf."))
        popup = await start_task(harness, shelf, llm, "Name the shelf")
        assert await wait_status(popup, "completed", "error", "stopped") == "completed"
        first_id = await popup_task_id(popup)
        await open_past(popup, first_id)
        asked = len(llm.requests)
        llm.add(done("The slow shelf."))
        await popup.click("#past-rerun-new")
        await popup.wait_for(f"ui.taskId !== {json.dumps(first_id)}", "the rerun in a new tab to start")
        assert await wait_status(popup, "completed", "error", "stopped") == "completed"
        rerun = task_row(harness, await popup_task_id(popup))
        assert rerun["task"] == "Name the shelf" and rerun["url"] == url, rerun["url"]
        first_look = prompt_text(llm.requests[asked])
        assert "The slow shelf" in first_look and "Take a book" in first_look, first_look
    await harness.browser.close_tab(popup.tab.target_id)

    # A client's tabs.create through the local endpoint (an MCP server's) is answered once the page is there.
    from tabpilot.mcp.hostlink import HostLink

    monkeypatch.setenv("TABPILOT_HOME", str(harness.tabpilot_home))  # the host's socket, as a client finds it
    link = HostLink("a client opening a slow page")
    try:
        with slow_file(1.5, SLOW_SHELF, "text/html", "shelf.html") as other:
            opened = (await link.request("tabs.create", {"url": other}))["tab"]
        assert opened["url"] == other and opened["title"] == "Slow shelf", opened
    finally:
        await link.close()
    for tab_id in await harness.sw("(await chrome.tabs.query({title: 'Slow shelf'})).map(t => t.id)"):
        await harness.sw(f"await chrome.tabs.remove({tab_id}); true")


async def test_a_popup_that_did_not_start_the_running_task_shows_its_title(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab
) -> None:
    watcher = await harness.open_popup(form_tab)  # open before the task exists: it learns of it from pushes
    problems: list[str] = []
    llm.add(act_on("Agree to terms", "click_element_by_index", "Tick the terms box", problems), Delay(30))
    starter = await start_task(harness, form_tab, llm, "Tick the terms box, then wait a while")
    task_id = await popup_task_id(starter)
    await watcher.wait_for(f"ui.taskId === {json.dumps(task_id)}", "the other popup to see the task")
    await watcher.wait_for("document.getElementById('task-title').textContent !== ''", "the other popup's title")
    assert await watcher.text("#task-title") == "Tick the terms box, then wait a while"
    await watcher.wait_for("document.querySelectorAll('#timeline .card-step').length >= 1", "the step card")
    await starter.click("#stop")
    assert await wait_status(watcher, "stopped", "completed", "error", timeout=15) == "stopped"
    assert not problems
    for popup in (starter, watcher):
        await harness.browser.close_tab(popup.tab.target_id)


async def test_the_timeline_reads_the_hosts_own_shapes_and_units(harness: Harness) -> None:
    """What the agent's models put on the wire, rendered by the popup's own code: a takeover's actions,
    note and epoch-millisecond times; an executed action's duration in milliseconds."""
    takeover = UserTakeoverEvent(actions=[{"kind": "click", "description": "Clicked 'Sign up'"}],
                                 started_at=1_700_000_000_000, ended_at=1_700_000_004_500, note="I signed up myself")
    executed = ExecutedActivity(tool="click_element_by_index", input={"index": 3}, output="ok", duration=1234.0)
    popup = await harness.open_popup()
    card = await popup.js(
        f"(() => {{ const card = Timeline.renderEvent({json.dumps(takeover.to_wire())});"
        " document.getElementById('timeline').append(card); return card.innerText; })()"
    )
    assert card.splitlines()[0].lower() == "you took over for 4.5 s", card
    assert "Clicked 'Sign up'" in card and "I signed up myself" in card
    activity = await popup.js(f"Timeline.activityText({json.dumps(executed.to_wire())},"
                              f" {{acting: Working.acting(null, {json.dumps(executed.to_wire())}, 3)}})")
    assert activity == "Step 3 · clicking… 1 s"
    # a tool of the caller's own (AgentConfig custom_tools) is named as it is, in a neutral line, never its input
    custom = {"type": "executing", "tool": "lookup_price", "input": {"sku": "A-1"}}
    activity = await popup.js(f"PageText.plain(Timeline.activityText({json.dumps(custom)},"  # as the popup shows it
                              f" {{acting: Working.acting(null, {json.dumps(custom)}, 2)}}))")
    assert activity == 'Step 2 · using the tool "lookup_price"… 0 s'
    waiting = WaitingActivity(seconds=30.0, message="the model has not answered for 30 s")
    activity = await popup.js(f"Timeline.activityText({json.dumps(waiting.to_wire())})")
    assert activity == "The model has not answered for 30 s; still waiting…"
    # A note to the model about its own way of working is not the person's to read; other notes are.
    notes = [ObservationEvent(content="Only 5 steps remaining.", nudge=True).to_wire(),
             ObservationEvent(content="Page navigated to → https://example.com/").to_wire()]
    shown = await popup.js(f"(() => {{ const list = document.createElement('ol'); Timeline.render(list, "
                           f"{json.dumps(notes)}); return [...list.children].map((card) => card.innerText); }})()")
    assert len(shown) == 1 and "example.com" in shown[0], shown
    # the results' status marks for the model (✅ ❌) are not the person's: an empty box without an emoji font
    results = [say("result.waited", "en", seconds=2), say("result.tool_failed", "en", tool="scroll", error="no page")]
    steps = [StepEvent(step_index=n, reflection=AgentReflection(next_goal="Go on"),
                       action=StepAction(name="wait", input={}, output=output)).to_wire()
             for n, output in enumerate(results)]
    said = await popup.js(f"(() => {{ const list = document.createElement('ol'); Timeline.render(list, "
                          f"{json.dumps(steps)}); return [...list.querySelectorAll('.output .v')]"
                          ".map((value) => value.textContent); })()")
    assert said == ["Waited for 2 seconds.", "scroll failed: no page"], said
    # A step's card says what it did; what was not done (it failed, was refused, or the person took the controls)
    # says what it was doing, its result why; a tool of the caller's own is named as it is.
    steps = [StepAction(name="wait", input={"seconds": 2}, output="ok"),
             StepAction(name="scroll", input={}, output="❌ no page", not_done=True),
             StepAction(name="click_element_by_index", input={"index": 4}, target="Buy", abandoned="took_over"),
             StepAction(name="input_text", input={"index": 2, "text": "x"}, target="Card", not_done=True),
             StepAction(name="lookup_price", input={"sku": "A-1"}, output="9.99"),
             StepAction(name="go_to_url", input={"url": "https://example.com/docs"}, target="example.com/docs")]
    events = [StepEvent(step_index=n, reflection=AgentReflection(next_goal="Go on"), action=action).to_wire()
              for n, action in enumerate(steps)]
    said = await popup.js(f"(() => {{ const list = document.createElement('ol'); Timeline.render(list, "
                          f"{json.dumps(events)}); return [...list.querySelectorAll('.action .v')]"
                          ".map((value) => value.textContent); })()")
    assert said == ["waited 2 s", "scrolling", 'clicking "Buy"', 'typing in "Card"', 'used the tool "lookup_price"',
                    "opened example.com/docs"], said
    # and a step not done is told apart at a glance, not by its words' tense alone (a new user's trial): its label
    # says so, and its card is marked in the not-done amber
    shown = await popup.js(f"(() => {{ const list = document.getElementById('timeline'); Timeline.render(list, "
                           f"{json.dumps(events)}); return [...list.querySelectorAll('.card-step')].map((card) => "
                           "[card.querySelector('.card-label').textContent, getComputedStyle(card).borderLeftColor]);"
                           " })()")
    assert [label for label, _ in shown] == ["Step 1", "Step 2 · not done", "Step 3 · not done", "Step 4 · not done",
                                             "Step 5", "Step 6"], shown
    assert {colour for _, colour in shown[1:4]} == {"rgb(199, 119, 0)"} and shown[0][1] != shown[1][1], shown
    await popup.screenshot(SCREENS / "steps-not-done.png", max_height=900)
    await harness.browser.close_tab(popup.tab.target_id)


async def test_the_extension_ships_its_icon_at_every_size(harness: Harness) -> None:
    """Chromium loads each icon the manifest names, at its size (the toolbar shows it, not a letter)."""
    popup = await harness.open_popup()
    sizes = await popup.js(
        "Promise.all(Object.entries(chrome.runtime.getManifest().icons).map(([size, path]) =>"
        " new Promise(done => { const img = new Image(); img.onload = () => done([size, img.naturalWidth,"
        " img.naturalHeight]); img.onerror = () => done([size, 0, 0]); img.src = chrome.runtime.getURL(path); })))"
    )
    assert sorted(sizes, key=lambda s: int(s[0])) == [["16", 16, 16], ["32", 32, 32], ["48", 48, 48], ["128", 128, 128]]
    assert await popup.js("chrome.runtime.getManifest().action.default_icon['16']") == "icons/icon-16.png"
    assert await popup.js("document.querySelector('header .logo').naturalWidth") == 32
    await harness.browser.close_tab(popup.tab.target_id)


async def test_a_tab_it_cannot_read_is_named_by_its_id_not_as_a_quantity(harness: Harness) -> None:
    """Opened with a ?tabId that is not (any longer) a tab: the id is shown as it is, not "1,371,197,382"."""
    created = await harness.browser.connection.root.send(
        "Target.createTarget", {"url": f"{EXTENSION_ORIGIN}/popup.html?tabId=1371197382", "newWindow": True})
    popup = PopupPage(await harness.browser.attach(created["targetId"]))
    await popup.wait_for("document.getElementById('target-tab').textContent !== ''", "the popup to name its tab")
    assert await popup.text("#target-tab") == "on: tab 1371197382"
    await harness.browser.close_tab(popup.tab.target_id)


# The text of a select's chosen option, measured in the select's own font, against the room the closed select has
# for it (its content box less the drop-down arrow): a select cuts what does not fit off mid-word.
SELECTS_THAT_CUT = """(() => {
  const canvas = document.createElement('canvas').getContext('2d');
  return [...document.querySelectorAll('#view-settings select')].filter((s) => !s.closest('[hidden]')).map((s) => {
    const style = getComputedStyle(s);
    canvas.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const text = s.options[s.selectedIndex].text;
    const room = s.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
    return {id: s.id, text, width: Math.ceil(canvas.measureText(text).width), room: Math.floor(room)};
  }).filter((s) => s.width > s.room);
})()"""


async def test_the_settings_selects_show_their_choice_whole_in_the_popup(harness: Harness) -> None:
    """Each of Settings' drop-downs shows the chosen option in full at the popup's width (Safety's default read
    "Before irreversible actions (pay, send, delete, submit a p")."""
    popup = await harness.open_popup()
    await popup.size(400, 600)
    await popup.click("#nav-settings")
    await popup.wait_for("document.getElementById('settings-form').dataset.loaded === 'true'", "settings to load")
    await popup.wait_for("document.getElementById('guards-ask-before').value === 'irreversible'", "Safety to load")
    for choice in ("irreversible", "every", "never"):
        await popup.js(f"document.getElementById('guards-ask-before').value = {json.dumps(choice)}")
        assert await popup.js(SELECTS_THAT_CUT) == [], choice
    await harness.browser.close_tab(popup.tab.target_id)


async def test_the_side_panel_follows_its_tab_to_another_site_and_to_another_tab(
    harness: Harness, e2e_pages: LocalFiles
) -> None:
    """The side panel stays open while its tab goes to another site, or another tab comes forward: the tab it names
    ("on: …") and the site "Let this site start tasks" would allow are that tab's now (they kept the first page's, so
    a tick there allowed the site the person had left)."""
    created = await harness.browser.connection.root.send(
        "Target.createTarget", {"url": e2e_pages.url("account.html"), "newWindow": True})
    first = await harness.browser.attach(created["targetId"])
    await wait_until(lambda: first.evaluate(PAGE_LOADED), "the page to load")
    popup = await harness.open_popup(first)
    panel = await open_side_panel(harness, popup)  # as a person opens it

    async def shows(title: str, origin: str) -> bool:
        return (await panel.text("#target-tab"), await panel.text("#site-origin")) == (f"on: {title}", origin)

    here, there = f"http://127.0.0.1:{e2e_pages.port}", f"http://localhost:{e2e_pages.port}"
    await wait_until(lambda: shows("Account", here), "the side panel to name its tab and site")
    await first.send("Page.navigate", {"url": f"{there}/form.html"})
    await wait_until(lambda: shows("Signup form", there), "the side panel to follow its tab to the other site", 10)
    # another tab of the window comes forward: the panel works on it, and its site is the one offered
    window_id = await harness.sw(f"(await chrome.tabs.get({await harness.chrome_tab_id(first)})).windowId")
    await harness.sw(f"await chrome.tabs.create({{windowId: {window_id}, active: true,"
                     f" url: {json.dumps(here + '/slow_button.html')}}}); true")
    title = await wait_until(lambda: harness.sw(  # once loaded: its title before that is its address
        f"(([t]) => t.status === 'complete' && t.title)"
        f"(await chrome.tabs.query({{windowId: {window_id}, active: true}}))"), "the new tab's title")
    await wait_until(lambda: shows(title, here), "the side panel to follow the tab brought forward", 10)
    await harness.sw(f"await chrome.windows.remove({window_id}); true")  # the popup closed itself, opening the panel


async def test_a_long_takeovers_card_counts_the_actions_it_does_not_show(harness: Harness) -> None:
    """A takeover of 13 actions: its card lists the last ones and says how many earlier ones it leaves out (the first
    five, the person's sign-in among them, had gone without a word: the card looked like all they did)."""
    actions = [{"kind": "input", "description": f'typed in textbox "Field {n}" → "value {n}"'} for n in range(1, 14)]
    takeover = UserTakeoverEvent(actions=actions, started_at=1_700_000_000_000, ended_at=1_700_000_009_000)
    popup = await harness.open_popup()
    lines = await popup.js(
        f"(() => {{ const card = Timeline.renderEvent({json.dumps(takeover.to_wire())});"
        " document.getElementById('timeline').append(card);"
        " return [...card.querySelectorAll('.card-actions li')].map((li) => li.textContent); })()"
    )
    assert lines[0] == "5 earlier actions not shown: Past → Export has them all", lines
    assert lines[1:] == [a["description"] for a in actions[5:]], lines
    few = UserTakeoverEvent(actions=actions[:8], started_at=1_700_000_000_000, ended_at=1_700_000_001_000)
    lines = await popup.js(f"[...Timeline.renderEvent({json.dumps(few.to_wire())})"
                           ".querySelectorAll('.card-actions li')].map((li) => li.textContent)")
    assert lines == [a["description"] for a in actions[:8]], lines  # all of them: nothing to count
    await harness.browser.close_tab(popup.tab.target_id)
