"""How the popup names the tabs and the tasks it shows, as a new user's trial found them: a task a web page started in
another tab was listed under "Running in other tabs" without the page that asked for it (the task view said "from
http://…"); a popup opened on a tab still loading said "on: tab 1234". Real Chromium, the real extension and host,
the scripted model; screenshots go to $TABPILOT_SCREENS."""

from __future__ import annotations

import json

import pytest
from bridge_support import allow, origin_of
from e2e_support import SCREENS, Harness, PopupPage, done, wait_until
from llm_support import held_pages

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import Delay, ScriptedLLMServer
from tabpilot.localfiles import LocalFiles

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


def other_item(task_id: str) -> str:
    return f"#other-list .other-item[data-task-id='{task_id}']"


async def other_lines(popup: PopupPage, task_id: str) -> list[str]:
    """The other tab's task in the popup's list, as the person reads it: its lines, once it shows."""
    text = await popup.wait_for(
        f"(() => {{ const li = document.querySelector({json.dumps(other_item(task_id))});"
        " return li && !li.closest('[hidden]') && li.querySelector('.other-text').innerText; })()",
        "the other tab's task in the popup's list")
    return [line.strip() for line in str(text).splitlines() if line.strip()]


async def test_a_task_a_page_started_in_another_tab_is_listed_with_the_page_that_asked(
    harness: Harness, llm: ScriptedLLMServer, form_tab: Tab, e2e_pages: LocalFiles
) -> None:
    origin = origin_of(e2e_pages)
    await allow(harness, origin)
    popup = await harness.open_popup(form_tab)  # open before the page asks: the task joins the list from its pushes
    page = await harness.browser.new_tab(e2e_pages.url("form.html?app"))
    try:
        await wait_until(lambda: page.evaluate("!!window.PAGE_AGENT_EXT"), "the page bridge in the allowed page")
        llm.add(Delay(60, then=done("Never said")))
        config = {"baseURL": llm.base_url, "model": "scripted", "apiKey": "sk-page-own-key-0000"}
        await page.evaluate(f"window.PAGE_AGENT_EXT.execute('Book the 9:40 slot', {json.dumps(config)}); true")
        task_id = await popup.wait_for("document.querySelector('#other-list .other-item')?.dataset.taskId",
                                       "the page's task in the popup's list of other tabs' tasks")
        for opened in range(2):  # the popup that saw it begin, and one opened anew (task.list)
            if opened:
                await harness.browser.close_tab(popup.tab.target_id)
                popup = await harness.open_popup(form_tab)
            lines = await other_lines(popup, str(task_id))
            assert lines[:2] == ["Book the 9:40 slot", f"from {origin}"], lines
            if opened:
                await popup.screenshot(SCREENS / "other-tabs-asked-by-page.png", max_height=600)
        # the task's own view says who asked in the very same words
        own = await harness.open_popup(page)
        await own.wait_for(f"ui.taskId === {json.dumps(task_id)}", "the page's task in its tab's popup")
        assert await own.text("#task-from") == f"from {origin}"
        await own.click("#stop")
        await own.wait_for("document.body.dataset.status === 'stopped'", "the page's task to stop")
        await harness.browser.close_tab(own.tab.target_id)
    finally:
        await harness.browser.close_tab(popup.tab.target_id)
        await harness.browser.close_tab(page.target_id)


async def test_the_popup_on_a_tab_still_loading_names_its_address_until_the_title_comes(harness: Harness) -> None:
    with held_pages() as (site, _, release):
        host = site.removeprefix("http://")
        for page in ("checkout", "receipt"):  # two tabs, each opened on a page that has not come yet
            release.clear()
            address = f"{site}/shop/{page}?step=2#pay"
            created = await harness.browser.connection.root.send(
                "Target.createTarget", {"url": address, "newWindow": True})
            tab = await harness.browser.attach(created["targetId"])
            popup = await harness.open_popup(tab)
            try:
                said = await popup.text("#target-tab")
                assert said == f"on: {host}/shop/{page}", said
                assert await popup.js("document.getElementById('target-tab').title") == address
                await popup.screenshot(SCREENS / f"loading-tab-{page}-before.png", max_height=320)
                release.set()
                await popup.wait_for(f"document.getElementById('target-tab').textContent === "
                                     f"{json.dumps(f'on: {page.capitalize()}')}", "the page's title")
                await popup.screenshot(SCREENS / f"loading-tab-{page}-after.png", max_height=320)
            finally:
                release.set()
                await harness.browser.close_tab(popup.tab.target_id)
                await harness.browser.close_tab(tab.target_id)
