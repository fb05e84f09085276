"""A state read that fails does not fail the task: a crashed renderer is reloaded (and the model told so),
a walker that cannot run is replaced by whole-page DOM snapshots for that read. Each is checked on the
state the model gets and on a click the page's own JS records afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import re

import pytest
from state_support import open_page

from tabpilot.browser import actions
from tabpilot.browser.browser import Browser
from tabpilot.browser.state import CRASH_NOTE, BrowserState, get_state
from tabpilot.browser.tab import Tab

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


def _index(state: BrowserState, text: str) -> int:
    for line in state.text.splitlines():
        found = re.search(r"\[(\d+)\]<[^>]*>" + re.escape(text), line)
        if found:
            return int(found.group(1))
    raise AssertionError(f"no element {text!r} offered:\n{state.text}")


async def _click_save(browser: Browser, tab: Tab, state: BrowserState) -> None:
    await actions.click(browser, tab, state.elements[_index(state, "Save")])
    events = await tab.evaluate("window.__events")
    assert [e["id"] for e in events if e["type"] == "click"] == ["save"] and events[0]["trusted"]


async def _other_client(browser: Browser, tab: Tab) -> tuple[Browser, Tab]:
    """Another CDP client on the same page (DevTools, a test tool): the one that breaks things here."""
    assert browser.launched is not None
    other = await Browser.connect(browser.launched.ws_url)
    return other, await other.attach(tab.target_id)


async def test_a_page_that_crashed_between_steps_is_reloaded_and_read(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("actions_click.html"))
    first = await get_state(browser, tab)
    assert CRASH_NOTE not in first.text
    other, other_tab = await _other_client(browser, tab)
    crashed = asyncio.Event()
    tab.session.on("Inspector.targetCrashed", lambda _: crashed.set())
    other_tab.session.on("Inspector.targetCrashed", lambda _: crashed.set())
    asyncio.ensure_future(other_tab.session.send("Page.crash", timeout=5)).add_done_callback(lambda f: f.exception())
    await asyncio.wait_for(crashed.wait(), 10)
    await other.close()

    state = await get_state(browser, tab, first)
    assert CRASH_NOTE in state.text, state.text
    await _click_save(browser, tab, state)
    again = await get_state(browser, tab, state)
    assert CRASH_NOTE not in again.text  # said once, when it happened
    await browser.close_tab(tab.target_id)


async def test_a_page_that_crashes_while_it_is_read_is_reloaded_and_read(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("actions_click.html"))
    first = await get_state(browser, tab)
    other, other_tab = await _other_client(browser, tab)
    reading = asyncio.ensure_future(get_state(browser, tab, first))
    crash = asyncio.ensure_future(other_tab.session.send("Page.crash", timeout=5))
    crash.add_done_callback(lambda f: f.exception())
    state = await asyncio.wait_for(reading, 60)
    await other.close()
    assert CRASH_NOTE in state.text, state.text
    await _click_save(browser, tab, state)
    await browser.close_tab(tab.target_id)


async def test_a_walker_that_cannot_run_gives_way_to_dom_snapshots(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("actions_click.html"))
    first = await get_state(browser, tab)
    # Isolated worlds are shared by name: another client can break tabpilot's (pages cannot).
    other, other_tab = await _other_client(browser, tab)
    world = await other_tab.session.send(
        "Page.createIsolatedWorld", {"frameId": other_tab.main_frame_id, "worldName": "tabpilot"})
    await other_tab.session.send("Runtime.evaluate", {
        "contextId": world["executionContextId"],
        "expression": "Array.prototype.push = () => { throw new Error('broken by another client'); }"})

    state = await get_state(browser, tab, first)
    # the same page text, from DOM snapshots (which count the elements far below their own way)
    assert state.text.splitlines()[:-1] == first.text.splitlines()[:-1]
    await _click_save(browser, tab, state)
    await other.close()
    await browser.close_tab(tab.target_id)


async def test_a_takeover_of_a_crashed_page_is_not_held_up_reading_its_url(browser: Browser, pages, tmp_path) -> None:
    # The takeover's record reads the tab's URL before and after; on a crashed page location.href is never answered,
    # so taking over and handing back each waited out URL_READ_TIMEOUT (3 s) before the agent went on.
    from tabpilot.store.settings import Settings
    from tabpilot.store.tasks import TaskStore
    from tabpilot.taskrun.plan import plan_task
    from tabpilot.taskrun.run import TaskRun

    tab = await open_page(browser, pages.url("actions_click.html"))
    assert browser.launched is not None
    own = await Browser.connect(browser.launched.ws_url)  # the run's, which it closes at its end
    await own.activate(tab.target_id, focus=False)
    store = TaskStore(tmp_path / "tasks.sqlite3")
    settings = Settings.model_validate({"baseURL": "http://127.0.0.1:9/v1", "model": "m"})
    run = TaskRun(plan_task("Save it", source="popup", settings=settings), store, own, recipe={"tabId": 1})
    await run.begin(await tab.url())
    other, other_tab = await _other_client(browser, tab)
    crashed = asyncio.Event()
    tab.session.on("Inspector.targetCrashed", lambda _: crashed.set())
    asyncio.ensure_future(other_tab.session.send("Page.crash", timeout=5)).add_done_callback(lambda f: f.exception())
    await asyncio.wait_for(crashed.wait(), 10)
    await other.close()
    began = asyncio.get_running_loop().time()
    assert await run.take_over("user")
    took = asyncio.get_running_loop().time() - began
    began = asyncio.get_running_loop().time()
    event = await run.hand_back("reloaded it")
    handed = asyncio.get_running_loop().time() - began
    assert (took < 1.0, handed < 1.0) == (True, True), (took, handed)
    assert event is not None and event["type"] == "user_takeover" and event["note"] == "reloaded it"
    await run.stop()
    # the page comes back some other way than reload_after_crash (the person's Reload on the sad tab): it answers
    await tab.session.send("Page.reload")
    assert await asyncio.wait_for(tab.url(), 10) == pages.url("actions_click.html")
    store.close()
    with contextlib.suppress(Exception):
        await browser.close_tab(tab.target_id)
