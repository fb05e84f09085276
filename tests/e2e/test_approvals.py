"""Approval before irreversible actions, end to end (issue 13): the real extension, the host Chromium spawned,
the scripted model. The agent wants to press "Place order": the task waits, the in-page overlay and the side
panel ask "The agent wants to click button "Place order" on 127.0.0.1 — Allow / Deny / Take over". The user
(trusted input from the test's own CDP connection, user_support.py) answers; the shop page's own record
(window.shopLog) shows whether the click reached it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from e2e_support import PAGE_LOADED, SCREENS, Harness, act_on, done, prompt_text, wait_until
from test_takeover import account_told, configure, ended, start
from user_support import (
    NOT_SEEN,
    TOO_SOON,
    as_tall_as_its_panel,
    come_back,
    in_panel,
    look_elsewhere,
    notified,
    open_panel,
    overlay,
    press_overlay,
    press_until_it_counts,
    screenshot,
    wait_overlay,
)

from tabpilot.browser.tab import Tab
from tabpilot.llm.scripted import ScriptedLLMServer
from tabpilot.localfiles import LocalFiles

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]

WANTS = 'The agent wants to click button "Place order" on 127.0.0.1'


@pytest_asyncio.fixture(loop_scope="module")
async def shop_tab(harness: Harness, pages: LocalFiles) -> AsyncIterator[Tab]:
    created = await harness.browser.connection.root.send(
        "Target.createTarget", {"url": pages.url("guard_shop.html"), "newWindow": True})
    tab = await harness.browser.attach(created["targetId"])
    await tab.send("Emulation.setDeviceMetricsOverride",
                   {"width": 1000, "height": 700, "deviceScaleFactor": 1, "mobile": False})
    # the new tab is about:blank (and complete) for a moment before the shop page: wait for the shop's own record
    await wait_until(lambda: tab.evaluate("Array.isArray(window.shopLog) && document.readyState === 'complete'"),
                     "the shop page to load")
    yield tab
    if not tab.closed:
        await harness.browser.close_tab(tab.target_id)


async def asking(shop_tab: Tab) -> dict[str, Any]:
    return await wait_overlay(shop_tab, "the overlay to ask about the order",
                              lambda o: o["state"] == "approval" and WANTS in o["reason"])


async def order_asked(harness: Harness, llm: ScriptedLLMServer, shop_tab: Tab, then: Any
                      ) -> tuple[str, list[str], list[dict[str, Any]]]:
    """A task whose model wants "Place order", then answers `then`; returns once the overlay asks: the task id,
    the scripted model's problems, and the request the model gets after the user's answer."""
    problems: list[str] = []
    after: list[dict[str, Any]] = []
    llm.add(act_on("Place order", "click_element_by_index", "Place the order", problems), account_told(after, then))
    await configure(harness, llm)
    task_id = await start(harness, shop_tab, "Buy this book")
    await asking(shop_tab)
    return task_id, problems, after


def recorded_and_told(snap: dict[str, Any], after: list[dict[str, Any]], guard: str, words: str) -> None:
    """The task's history has the `guard` observation saying `words`, and the model's next request has it."""
    assert [e for e in snap["history"] if e["type"] == "observation" and e.get("guard") == guard
            and words in e["content"]], snap["history"]
    assert after and words in prompt_text(after[0])


async def test_allow_in_the_overlay_lets_the_click_reach_the_page(
    harness: Harness, llm: ScriptedLLMServer, shop_tab: Tab
) -> None:
    task_id, problems, after = await order_asked(harness, llm, shop_tab, done("Ordered"))
    shown = await asking(shop_tab)
    assert {"allow", "deny", "takeover"} <= set(shown["buttons"]), shown
    assert shown["why"] == 'Asked because its name says "order".', shown
    assert await shop_tab.evaluate("window.shopLog") == []  # nothing happens until the user says so
    # the person is looking at the shop: the overlay asks there, and no desktop notification covers it
    assert not await notified(harness, task_id)
    await screenshot(shop_tab, "approval-overlay.png")
    panel = await open_panel(harness, shop_tab)  # the side panel shows the same question
    await panel.wait_for(f"document.getElementById('control-reason').innerText.includes({WANTS!r})",
                         "the side panel to ask")
    assert await panel.visible("#approve-allow") and await panel.visible("#approve-deny")
    assert await panel.in_view("#approve-allow") and await panel.in_view("#approve-deny")
    await panel.screenshot(SCREENS / "approval-panel.png")
    # Allow takes clicks from 0.4 s after it is seen whole; a press before (under load the overlay may not have been
    # seen whole yet: the suite once waited here for ever after one press) is told so, and the person presses again
    await press_until_it_counts(shop_tab, "allow")
    snap = await ended(harness, task_id)
    assert snap["status"] == "completed", snap
    assert not problems, problems
    assert await shop_tab.evaluate("window.shopLog") == [{"event": "click", "id": "order", "trusted": True}]
    assert not await notified(harness, task_id)
    await panel.wait_for("!document.getElementById('approve-box').offsetParent", "the question to go from the panel")
    # the yes is in the record as a no is (who let the agent place the order), and in the panel's timeline
    allowed = 'The user allowed this action: click button "Place order" on 127.0.0.1'
    recorded_and_told(snap, after, "allowed", allowed)
    await panel.wait_for("!!document.querySelector('#timeline .card[data-type=\"allowed\"]')", "the allowed card")
    cards = await panel.cards()  # said to the person, not as the model is told it
    said = 'You said yes: click button "Place order" on 127.0.0.1.'
    assert any(card["type"] == "allowed" and said in card["text"] for card in cards), cards
    assert not any(allowed in card["text"] for card in cards), cards
    await harness.browser.close_tab(panel.tab.target_id)


async def test_deny_in_the_side_panel_keeps_the_click_from_the_page_and_tells_the_model(
    harness: Harness, llm: ScriptedLLMServer, shop_tab: Tab
) -> None:
    task_id, problems, after = await order_asked(harness, llm, shop_tab,
                                                 done("The user did not want the order", success=False))
    panel = await open_panel(harness, shop_tab)
    await panel.wait_for(f"document.getElementById('control-reason').innerText.includes({WANTS!r})",
                         "the side panel to ask")
    # the agent waits for a yes: nothing says it is doing the action ("Executing click_element_by_index (index: 3)")
    await panel.wait_for("document.getElementById('activity').textContent !== ''", "the agent's activity to arrive")
    assert not await panel.visible("#activity"), await panel.text("#activity")
    await panel.click("#approve-deny")
    snap = await ended(harness, task_id)
    assert not problems, problems
    assert await shop_tab.evaluate("window.shopLog") == []  # the page never got the click
    denial = 'The user denied this action: click button "Place order" on 127.0.0.1'
    recorded_and_told(snap, after, "denied", denial)
    # the host has it; the panel hears of it on the worker's port, after (read at once, it had not yet)
    await panel.wait_for("!!document.querySelector('#timeline .card[data-type=\"denied\"]')", "the denied card")
    cards = await panel.cards()  # said to the person, without the model's "do not try to do it another way…"
    said = 'You said no: click button "Place order" on 127.0.0.1. It was not done.'
    assert any(card["type"] == "denied" and card["text"].endswith(said) for card in cards), cards
    assert not any("another way" in card["text"] for card in cards if card["type"] == "denied"), cards
    await harness.browser.close_tab(panel.tab.target_id)


async def test_closing_the_tab_while_an_action_waits_for_a_yes_ends_the_question_and_the_task(
    harness: Harness, llm: ScriptedLLMServer, shop_tab: Tab
) -> None:
    # The person closes the shop tab instead of answering: nothing is left to allow. The question and its
    # notification go, and the task ends saying its tab was closed (it waited up to 5 minutes, "running").
    task_id, problems, after = await order_asked(harness, llm, shop_tab, done("Ordered"))
    elsewhere = await look_elsewhere(harness, None)  # so the question is notified
    await wait_until(lambda: notified(harness, task_id), "the desktop notification")
    await harness.browser.close_tab(shop_tab.target_id)
    snap = await ended(harness, task_id, timeout=10)
    assert snap["status"] == "error", snap
    assert "closed" in snap["history"][-1].get("message", ""), snap["history"][-1]
    assert not snap.get("approval"), snap
    assert not problems and not after, after  # the model is not asked again about a tab that is gone
    await wait_until(lambda: _not(notified(harness, task_id)), "the desktop notification to go")
    await come_back(harness, elsewhere)


async def test_a_question_is_notified_only_while_the_person_looks_at_another_tab_or_window(
    harness: Harness, llm: ScriptedLLMServer, shop_tab: Tab
) -> None:
    """On Linux without a notification daemon Chromium draws its own notification over the bottom right of the page,
    where the overlay's Allow / Deny are. The person looking at the task's tab sees the overlay ask: nothing is raised
    over it. They turn to another tab of that window: the question is notified; back, it goes; the same for another
    window, a second time. Then they answer in the overlay and the click reaches the page."""
    task_id, problems, _ = await order_asked(harness, llm, shop_tab, done("Ordered"))
    assert not await notified(harness, task_id)
    for beside in (shop_tab, None):  # another tab in its window, then another window
        elsewhere = await look_elsewhere(harness, beside)
        await wait_until(lambda: notified(harness, task_id), "the notification while the person looks elsewhere")
        await come_back(harness, elsewhere)
        await wait_until(lambda: _not(notified(harness, task_id)), "the notification to go when they come back")
    await press_until_it_counts(shop_tab, "allow")
    snap = await ended(harness, task_id)
    assert snap["status"] == "completed" and not problems, (snap, problems)
    assert await shop_tab.evaluate("window.shopLog") == [{"event": "click", "id": "order", "trusted": True}]
    assert not await notified(harness, task_id)


async def _not(probe: Any) -> bool:
    return not await probe


async def test_a_side_panel_left_on_settings_marks_the_task_tab_when_an_action_waits(
    harness: Harness, llm: ScriptedLLMServer, shop_tab: Tab
) -> None:
    """The side panel stays open on Settings while a task runs: when the agent waits for a yes, the Task tab
    says so; there the question is in view, and Allow in the panel lets the click reach the page."""
    panel = await open_panel(harness, shop_tab)
    await panel.click("#nav-settings")
    task_id, problems, _ = await order_asked(harness, llm, shop_tab, done("Ordered"))
    await panel.wait_for("document.getElementById('nav-task').classList.contains('attention')",
                         "the Task tab to ask for attention")
    await panel.screenshot(SCREENS / "approval-panel-on-settings.png", max_height=720)
    await panel.click("#nav-task")
    assert not await panel.js("document.getElementById('nav-task').classList.contains('attention')")
    assert await panel.in_view("#approve-allow") and WANTS in await panel.text("#control-reason")
    await panel.click("#approve-allow")
    snap = await ended(harness, task_id)
    assert snap["status"] == "completed" and not problems, (snap, problems)
    assert await shop_tab.evaluate("window.shopLog") == [{"event": "click", "id": "order", "trusted": True}]
    await harness.browser.close_tab(panel.tab.target_id)


async def test_take_over_from_the_question_abandons_the_action_and_gives_the_user_the_controls(
    harness: Harness, llm: ScriptedLLMServer, shop_tab: Tab
) -> None:
    task_id, problems, _ = await order_asked(harness, llm, shop_tab, done("The user placed the order themselves"))
    await press_overlay(shop_tab, "takeover")
    await wait_overlay(shop_tab, "the overlay to say the user has the controls",
                       lambda o: o["state"] == "user" and "handback" in o["buttons"] and "allow" not in o["buttons"])
    assert await shop_tab.evaluate("window.shopLog") == []  # the agent's click never happened
    await press_overlay(shop_tab, "handback")
    snap = await ended(harness, task_id)
    assert not problems, problems
    [order] = [e for e in snap["history"] if e["type"] == "step" and e["action"]["name"] == "click_element_by_index"]
    assert "The user took the controls before this action finished, so it was abandoned" in order["action"]["output"]
    assert order["action"]["abandoned"] == "took_over", order
    assert [e for e in snap["history"] if e["type"] == "user_takeover"], snap["history"]
    assert await shop_tab.evaluate("window.shopLog") == []
    # the person reads what came of it in their words; the model's instructions are the model's
    popup = await harness.open_popup(shop_tab)
    await popup.wait_for("document.querySelectorAll('#timeline .card-step').length >= 1", "the step cards")
    steps = [card["text"] for card in await popup.cards() if card["type"] == "step"]
    assert any("Not done: you took the controls" in text for text in steps), steps
    assert not any("took the controls before this action finished" in text for text in steps), steps


# A page that wants its irreversible action allowed (it steered the agent there with its own text) lays a
# click-through layer over the overlay, drawing a decoy where Allow is: the person's real click meant for the decoy
# reached Allow (found attacking the overlay, as with the bridge's prompt). The page can tell when to: the overlay's
# host element, which it can observe, grows when the question comes.
COVER = """(() => { const cover = document.createElement('div'); cover.id = 'decoy'; cover.popover = 'manual';
  cover.style.cssText = 'inset:0;width:100vw;height:100vh;margin:0;border:0;background:#fff;pointer-events:none';
  cover.textContent = 'Click Continue reading at the bottom right'; document.body.append(cover); cover.showPopover();
})()"""


# What the page's own IntersectionObserver v2 says of an element of its own, in plain view: [isVisible]
PAGE_SEES_ITS_OWN = """new Promise((done) => { const box = document.createElement('div');
  box.style.cssText = 'position:fixed;left:300px;top:300px;width:50px;height:50px;background:red';
  document.body.append(box); const seen = [];
  const observer = new IntersectionObserver((es) => seen.push(...es.map((e) => e.isVisible)),
    {trackVisibility: true, delay: 100});
  observer.observe(box); setTimeout(() => { observer.disconnect(); box.remove(); done(seen); }, 600); })"""


async def test_a_click_on_allow_counts_only_when_the_person_could_see_the_overlay(
    harness: Harness, llm: ScriptedLLMServer, shop_tab: Tab
) -> None:
    task_id, problems, _ = await order_asked(harness, llm, shop_tab, done("Ordered"))
    await shop_tab.evaluate(COVER)
    await asyncio.sleep(0.8)  # well past the overlay's click grace
    await press_overlay(shop_tab, "allow")
    # not in silence: the overlay says why the press did nothing, in a line a screen reader reads out
    told = await wait_overlay(shop_tab, "the overlay to say the press did not count", lambda o: o["hint"] == NOT_SEEN)
    assert told["state"] == "approval" and told["hintRole"] == "status" and told["refused"] == 1, told
    assert await shop_tab.evaluate("window.shopLog") == [], "a click on the covered overlay allowed the order"
    # The page hides it (hidePopover) or takes it out of the top layer, and dims the rest: it is back on top at once
    await shop_tab.evaluate("document.getElementById('decoy').remove()")
    await screenshot(shop_tab, "approval-press-not-seen.png")  # the cover gone: what the person then reads
    await shop_tab.evaluate("(() => { const o = document.querySelector('tabpilot-overlay');"
                            " try { o.hidePopover(); } catch (_) {} o.removeAttribute('popover'); })()")
    # A page-wide effect is no trick (a grayscale day of mourning, a dark-mode filter): the overlay is above the
    # page, seen whole, and the person's click counts.
    await shop_tab.evaluate("document.documentElement.style.filter = 'grayscale(1)';"
                            " document.documentElement.style.opacity = '0.97'")
    await asyncio.sleep(0.8)
    await press_until_it_counts(shop_tab, "allow")  # (refused each time, were the filter taken for a cover)
    snap = await ended(harness, task_id)
    assert snap["status"] == "completed" and not problems, (snap, problems)
    assert await shop_tab.evaluate("window.shopLog") == [{"event": "click", "id": "order", "trusted": True}]
    await shop_tab.evaluate("document.documentElement.style.filter = ''; document.documentElement.style.opacity = ''")
    # Answered, the overlay leaves the top layer: while anything is there, the page's own IntersectionObserver v2
    # (a sign-in or payment frame guarding its clicks) sees none of its elements visible, and refuses the agent's
    await wait_overlay(shop_tab, "the overlay to say the task ended", lambda o: o["state"] == "completed")
    assert await shop_tab.evaluate(PAGE_SEES_ITS_OWN) == [True], "the page's elements are not visible to the page"


LOWERED = "document.getElementById('overlay-lowered')"


@pytest.mark.parametrize("fight", ["attribute", "toggle"])
async def test_a_page_that_keeps_the_question_out_of_the_top_layer_stops_the_guard_and_the_panel_says_so(
    harness: Harness, llm: ScriptedLLMServer, e2e_pages: LocalFiles, fight: str
) -> None:
    # While the overlay asks to allow, its guard raised it again whenever its popover attribute changed or it was
    # hidden. A page undoing that each time ran its observer and the guard in turn for ever (?attribute: the page hung,
    # as with the overlay taken away before PUT_BACK_LIMIT), or hid and raised it for ever (?toggle). Now the overlay
    # gives up after the limit, and the side panel says the question can be answered there; twice, the second time
    # with the page letting it be.
    tab = await harness.browser.new_tab(e2e_pages.url(f"popover_fighter.html?{fight}"))
    await wait_until(lambda: tab.evaluate(PAGE_LOADED), "the page to load")
    await configure(harness, llm)
    for run in range(2):
        problems: list[str] = []
        llm.add(act_on("Place order", "click_element_by_index", "Place the order", problems), done("Ordered"))
        task_id = await start(harness, tab, "Buy this book")
        panel = await open_panel(harness, tab)
        await panel.wait_for("document.getElementById('control-reason').innerText.includes('\"Place order\"')",
                             "the side panel to ask")
        if run == 0:
            # the page answers (it is not hung); the overlay gives up after the limit, says so, and the fight ends
            await wait_until(lambda: tab.evaluate("window.fights > 0", timeout=5), "the page to fight the overlay")
            await panel.wait_for(f"!{LOWERED}.hidden", "the side panel to say the page keeps the question down")
            assert "answer it here" in await panel.text("#overlay-lowered")
            fights = await tab.evaluate("window.fights", timeout=5)
            await asyncio.sleep(1)
            assert await tab.evaluate("window.fights", timeout=5) == fights, "the page and the overlay still fight"
            await panel.screenshot(SCREENS / f"overlay-lowered-{fight}.png", max_height=600)
        else:  # the page lets it be: the question is on top, and nothing is said
            await wait_overlay(tab, "the overlay to ask", lambda o: o["state"] == "approval")
            assert await tab.evaluate("document.querySelector('tabpilot-overlay').matches(':popover-open')")
            assert not await panel.visible("#overlay-lowered")
        await panel.click("#approve-allow")
        snap = await ended(harness, task_id)
        assert snap["status"] == "completed" and not problems, (snap, problems)
        assert await tab.evaluate("window.orders") == run + 1  # the page's own button saw the allowed click
        await panel.wait_for(f"{LOWERED}.hidden", "the side panel's word to go with the question")
        await harness.browser.close_tab(panel.tab.target_id)
        await tab.evaluate("window.fighting = false")
    await harness.browser.close_tab(tab.target_id)


async def test_a_press_on_allow_that_came_too_soon_is_told_so_and_the_next_one_counts(
    harness: Harness, llm: ScriptedLLMServer, shop_tab: Tab
) -> None:
    """A person pressing Allow a moment after it came where it is now (here: the window made shorter, the overlay
    with it) is not ignored in silence: the overlay says to press again; the next press, a moment later, counts."""
    task_id, problems, _ = await order_asked(harness, llm, shop_tab, done("Ordered"))
    await asyncio.sleep(0.8)  # seen whole, for long enough
    try:
        # shorter than the overlay needs (70% of it): its box, and the buttons in it, move
        await shop_tab.send("Emulation.setDeviceMetricsOverride",
                            {"width": 1000, "height": 280, "deviceScaleFactor": 1, "mobile": False})
        await press_overlay(shop_tab, "allow")
        # Chromium says Allow is out of view for the frame or two it takes to lay the overlay out at the new size: a
        # press then is still told it came too soon (it moved), not that it was covered or off screen
        told = await wait_overlay(shop_tab, "the overlay to say the press came too soon",
                                  lambda o: o["hint"] in (TOO_SOON, NOT_SEEN))
        assert told["hint"] == TOO_SOON, told
        assert told["state"] == "approval" and told["hintRole"] == "status" and told["refused"] == 1, told
        await screenshot(shop_tab, "approval-press-too-soon.png")
        assert await shop_tab.evaluate("window.shopLog") == []
        await asyncio.sleep(0.6)  # the person reads it, and presses again
        await press_until_it_counts(shop_tab, "allow")
        snap = await ended(harness, task_id)
    finally:
        await shop_tab.send("Emulation.setDeviceMetricsOverride",
                            {"width": 1000, "height": 700, "deviceScaleFactor": 1, "mobile": False})
    assert snap["status"] == "completed" and not problems, (snap, problems)
    assert await shop_tab.evaluate("window.shopLog") == [{"event": "click", "id": "order", "trusted": True}]
    shown = await overlay(shop_tab)
    assert shown is not None and shown["hint"] == "", shown  # answered: the line went with the question


async def test_the_page_cannot_find_what_the_overlay_says(
    harness: Harness, llm: ScriptedLLMServer, shop_tab: Tab
) -> None:
    # Found attacking the overlay: window.find() searches closed shadow roots too, so the page read the task's text
    # (the person's own words, when the task came from the popup), the agent's goals and questions, a letter at a
    # time ("Buy this boo" found: try the next letter). What the overlay says is drawn as generated content.
    task_id, problems, _ = await order_asked(harness, llm, shop_tab, done("Ordered"))
    words = ["Buy this book", "Buy this boo", "The agent wants", "Place order"]
    found = await shop_tab.evaluate(f"""(() => {{ const found = {{}};
        for (const w of {words!r}) {{
          getSelection().removeAllRanges(); found[w] = window.find(w, false, false, true); }}
        getSelection().removeAllRanges(); return found; }})()""")
    # "Place order" is the page's own button; the rest is only in the overlay
    assert found == {"Buy this book": False, "Buy this boo": False, "The agent wants": False, "Place order": True}
    shown = await asking(shop_tab)  # the person still reads all of it
    assert shown["task"] == "Buy this book" and WANTS in shown["reason"], shown
    await press_overlay(shop_tab, "deny")
    snap = await ended(harness, task_id)
    assert not problems and await shop_tab.evaluate("window.shopLog") == [], (snap, problems)


# The overlay's box covers the page where it is drawn: the agent cannot use what lies under it, and a fixed box in
# the page's bottom right corner (a cookie notice, a sticky button) stays under it. It is as tall as its panel needs in
# each state, measured here as the page can (its host element's box, every 20 ms): one box for every state (tried, to
# hide from the page when a question comes, which the top layer tells it anyway) covered 264 px of every page.
WATCH_HOST = """(() => { const heights = window.hostHeights = [];
  setInterval(() => { const host = document.querySelector('[data-tabpilot-overlay]'); if (!host) return;
    const h = Math.round(host.getBoundingClientRect().height);
    if (heights[heights.length - 1] !== h) heights.push(h); }, 20); })()"""
# Whether the panel shows all it has without scrolling (its body scrolls what does not fit).
FITS = "function () { const body = this.querySelector('.body'); return body.scrollHeight <= body.clientHeight + 1; }"


async def test_the_overlay_covers_only_what_it_needs_of_the_page_in_each_state(
    harness: Harness, llm: ScriptedLLMServer, shop_tab: Tab
) -> None:
    await shop_tab.evaluate(WATCH_HOST)
    task_id, problems, _ = await order_asked(harness, llm, shop_tab, done("Ordered by the person"))
    await wait_until(lambda: in_panel(shop_tab, FITS), "the question to fit the overlay")
    # the host's height once it has taken the question's, as the page reads it (its 20 ms sampler may not have run
    # since, on a loaded machine: it once still held the running height, 96 px)
    asking_height = round((await wait_until(lambda: as_tall_as_its_panel(shop_tab), "the question's height"))["h"])
    await press_overlay(shop_tab, "takeover")  # the question to allow gives way to the person's controls
    await wait_overlay(shop_tab, "the overlay to give the person the controls", lambda o: o["state"] == "user")
    await wait_until(lambda: in_panel(shop_tab, FITS), "the person's controls to fit the overlay")
    await screenshot(shop_tab, "overlay-user-has-the-controls.png")
    await press_overlay(shop_tab, "handback")
    snap = await ended(harness, task_id)
    assert snap["status"] == "completed" and not problems, (snap, problems)
    await wait_overlay(shop_tab, "the overlay to say the task ended", lambda o: o["state"] == "completed")
    await wait_until(lambda: in_panel(shop_tab, FITS), "the end to fit the overlay")
    ended_height = round((await wait_until(lambda: as_tall_as_its_panel(shop_tab), "the end's height"))["h"])
    heights = await wait_until(lambda: shop_tab.evaluate(
        f"window.hostHeights.at(-1) === {ended_height} && window.hostHeights"), "the page to see the end's height")
    # running (the task and the last step), then the question with its buttons, then the end: each its own height
    assert heights[0] <= 130 and asking_height > heights[0] + 40 and heights[-1] < asking_height, heights
