"""Past tasks a person can tell apart: a new user's trial showed ten identical rows "Click the Save button" in the
popup, with no outcome, no mark of their own takeover and nothing saying who started them; and `tabpilot history`
had no column for who started a task, nor a way to find one. Tasks of the same words, each started for real (the
popup, with and without a takeover; the side panel; `tabpilot run` in a terminal; a page through the bridge), read
apart in the popup, in the popup opened anew, and in `tabpilot history` and its search. Screenshots go to
$TABPILOT_SCREENS."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest
from bridge_support import allow, origin_of
from e2e_support import (
    SCREENS,
    Harness,
    PopupPage,
    agent_output,
    done,
    popup_task_id,
    run_in_popup,
    run_in_terminal,
    start_task,
    wait_status,
    wait_until,
)
from user_support import open_panel

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import ScriptedLLMServer, ToolCall
from tabpilot.localfiles import LocalFiles

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

TASK = "Click the Save button"


async def past_rows(popup: PopupPage, task_ids: list[str]) -> dict[str, str]:
    """Past tasks as the person reads them: each row's text by its task's id, once every one of `task_ids` shows."""
    await popup.click("#nav-past")
    wanted = json.dumps(task_ids)
    return dict(await popup.wait_for(
        "(() => { const rows = Object.fromEntries([...document.querySelectorAll('#past-list .past-item')]"
        ".map(li => [li.dataset.taskId, li.innerText.replace(/\\s+/g, ' ')]));"
        f" return {wanted}.every(id => id in rows) ? rows : null; }})()", "the tasks in Past tasks"))


def history(harness: Harness, *args: str) -> str:
    env = {**os.environ, "TABPILOT_HOME": str(harness.tabpilot_home)}
    done_ = subprocess.run([sys.executable, "-m", "tabpilot", "history", *args], env=env, capture_output=True,
                           text=True, timeout=60)
    assert done_.returncode == 0, done_.stderr
    return done_.stdout


def listed(text: str) -> dict[str, str]:
    """`tabpilot history`'s FROM column by task id (the first column)."""
    header, *lines = text.splitlines()
    start, end = header.index("FROM"), header.index("TASK")
    return {line.split()[0]: line[start:end].strip() for line in lines if line.strip() and not line.startswith("(")}


async def test_tasks_of_the_same_words_read_apart_by_outcome_takeover_and_who_started_them(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab, e2e_pages: LocalFiles
) -> None:
    # the popup's, which the person took over once during a wait, then handed back
    llm.add(ToolCall("AgentOutput", agent_output("Wait for the page", {"wait": {"seconds": 10}})))
    llm.add(done("Saved the draft.\nIt is in the Drafts folder."))
    popup = await start_task(harness, form_tab, llm, TASK)
    taken_over = await popup_task_id(popup)
    await popup.wait_for("document.getElementById('activity').dataset.type === 'executing'", "the wait action")
    await popup.click("#takeover")
    await popup.wait_for("!document.getElementById('handback-box').hidden", "Hand back")
    await popup.click("#handback")
    assert await wait_status(popup, "completed", "error", "stopped") == "completed"
    # the popup's again, which the agent could not finish
    llm.add(done("The Save button is greyed out.", success=False))
    not_done = await run_in_popup(popup, TASK)
    assert await wait_status(popup, "completed", "error", "stopped") == "error"
    # the side panel's, kept open beside the page
    panel = await open_panel(harness, form_tab)
    llm.add(done("Saved beside the page."))
    from_panel = await run_in_popup(panel, TASK)
    status = await wait_status(panel, "completed", "error", "stopped")
    assert status == "completed", (await panel.js("document.body.innerText"))[:3000]
    await harness.browser.close_tab(panel.tab.target_id)
    # a terminal's: `tabpilot run` in this browser
    llm.add(done("Saved by the command."))
    terminal, proc = await run_in_terminal(harness, llm, await form_tab.url(), TASK, "--model", "scripted")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # a page's, through the page bridge of a site the person allowed
    origin = origin_of(e2e_pages)
    await allow(harness, origin)
    page = await harness.browser.new_tab(e2e_pages.url("form.html"))
    try:
        await wait_until(lambda: page.evaluate("!!window.PAGE_AGENT_EXT"), "the page bridge in the allowed page")
        llm.add(done("Saved for the page."))
        config = {"baseURL": llm.base_url, "model": "scripted", "apiKey": "sk-page-own-key-0000"}
        said = await page.evaluate(f"window.PAGE_AGENT_EXT.execute({json.dumps(TASK)}, {json.dumps(config)})"
                                   ".then(r => r.data)", timeout=90)
        assert said == "Saved for the page."
    finally:
        await harness.browser.close_tab(page.target_id)
    by_page = await asyncio.to_thread(lambda: listed(history(harness, "--requester", "page")))
    [from_page] = by_page

    ids = [taken_over, not_done, from_panel, terminal, from_page]
    for opened in range(2):  # the popup that ran them, and one opened anew
        if opened:
            await harness.browser.close_tab(popup.tab.target_id)
            popup = await harness.open_popup(form_tab)
        rows = await past_rows(popup, ids)
        assert all(TASK in rows[task_id] for task_id in ids), rows
        # the outcome: the status and the first line of the result; the mark where the person took over
        assert "Completed" in rows[taken_over] and "Saved the draft." in rows[taken_over], rows
        assert "Drafts folder" not in rows[taken_over]
        assert "you took over" in rows[taken_over], rows
        assert "Not done" in rows[not_done] and "The Save button is greyed out." in rows[not_done], rows
        assert all("you took over" not in rows[task_id] for task_id in ids[1:]), rows
        # who started it, where not this popup (the side panel is its page)
        assert "from the terminal" in rows[terminal] and "Saved by the command." in rows[terminal], rows
        assert f"from the page {origin}" in rows[from_page] and "Saved for the page." in rows[from_page], rows
        assert all(" from " not in rows[task_id] for task_id in ids[:2]), rows
        assert "Saved beside the page." in rows[from_panel] and " from " not in rows[from_panel], rows
        if not opened:
            await popup.screenshot(SCREENS / "past-told-apart.png", max_height=700)
    await popup.click(f"#past-list .past-item[data-task-id='{taken_over}']")  # the detail says it too
    await popup.wait_for("!document.getElementById('past-detail').hidden", "the past task's detail")
    assert "you took over" in await popup.text("#past-meta")
    # Past tasks' search box finds one by words of its task or result, in any case, as `history --search` does
    listing = "[...document.querySelectorAll('#past-list .past-item')].map(li => li.dataset.taskId)"
    await popup.click("#past-back")
    for words, found in (("GREYED out", [not_done]), ("save COMMAND", [terminal]), ("Drafts folder", [taken_over])):
        await popup.fill("#past-search", words)
        await popup.wait_for(f"JSON.stringify({listing}) === {json.dumps(json.dumps(found))}", f"only {words!r}")
        if found == [not_done]:
            await popup.screenshot(SCREENS / "past-search.png", max_height=500)
    await popup.fill("#past-search", "Save nothing-says-this")
    await popup.wait_for(f"{listing}.length === 0 && !document.getElementById('past-empty').hidden", "no match")
    assert await popup.text("#past-empty") == "No past task has these words in its task or result."
    await popup.fill("#past-search", "")
    await popup.wait_for(f"{json.dumps(ids)}.every(id => {listing}.includes(id))", "every task listed again")
    await harness.browser.close_tab(popup.tab.target_id)

    # `tabpilot history`: who started each, and a search by a word of one result, in another case
    table = listed(await asyncio.to_thread(history, harness))
    assert [table[task_id] for task_id in ids] == ["popup", "popup", "side panel", "terminal", f"page {origin}"], table
    found = listed(await asyncio.to_thread(history, harness, "list", "--search", "GREYED"))
    assert list(found) == [not_done], found
    assert list(by_page) == [from_page] and set(listed(await asyncio.to_thread(
        history, harness, "--requester", "terminal"))) == {terminal}
