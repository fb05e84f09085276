"""The first look at a page after a navigation: the walker is already in the new document's tabpilot world
(installed as the document was made), the world of the replaced document is let go, and an element's node is
looked up only when an action touches it — so a page read right after each of several navigations is read
and acted on correctly every time, and an element of a replaced document is known to be gone."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time

import pytest
from actions_support import wait_until
from llm_support import slow_file
from state_support import node_property, open_page

from tabpilot.browser import actions
from tabpilot.browser.browser import Browser
from tabpilot.browser.dom import fast
from tabpilot.browser.elements import ElementRef
from tabpilot.browser.errors import ActionError
from tabpilot.browser.state import BrowserState, get_state
from tabpilot.cdp import CDPSession

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


def _named(state: BrowserState, name: str) -> ElementRef:
    found = [ref for ref in state.elements.values()
             if name in (ref.name, ref.attributes.get("placeholder"), ref.attributes.get("name"))]
    assert len(found) == 1, (name, state.text)
    return found[0]


async def test_a_page_navigated_three_times_is_read_and_acted_on_at_each_first_look(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("speed_login.html"))
    before = await get_state(browser, tab)
    old_email = _named(before, "you@example.com")
    for visit in (1, 2, 3):
        await tab.navigate(pages.url(f"speed_flight.html?visit={visit}"))
        flights = await get_state(browser, tab)
        assert "Find flights" in flights.text and "you@example.com" not in flights.text, flights.text
        await actions.click(browser, tab, _named(flights, "direct"))
        assert await tab.evaluate("document.querySelector('[name=direct]').checked") is True

        await tab.navigate(pages.url(f"speed_login.html?visit={visit}"))
        login = await get_state(browser, tab)
        assert "Sign in" in login.text and "Find flights" not in login.text, login.text
        await actions.input_text(browser, tab, _named(login, "you@example.com"), f"user{visit}@example.org")
        assert await tab.evaluate("document.getElementById('email').value") == f"user{visit}@example.org"
        await actions.click(browser, tab, _named(login, "Sign in"))
        assert await tab.evaluate("window.submitted") is True
        # The email field read before the navigations belonged to a document that is gone.
        with pytest.raises(ActionError, match="no longer on the page"):
            await actions.input_text(browser, tab, old_email, "stale@example.org")
        assert await tab.evaluate("document.getElementById('email').value") == f"user{visit}@example.org"
    await browser.close_tab(tab.target_id)


async def _walker_in_new_document(session: CDPSession, frame_id: str | None) -> bool:
    created = await session.send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": fast.WORLD_NAME})
    reply = await session.send("Runtime.evaluate", {
        "expression": "Object.keys(globalThis).some((name) => name.startsWith('__tabpilotWalker_'))",
        "contextId": created["executionContextId"], "returnByValue": True})
    return bool(reply["result"]["value"])


async def test_the_walker_is_in_each_new_document_before_the_first_look(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("speed_login.html"))
    assert not await _walker_in_new_document(tab.session, tab.main_frame_id)  # tabpilot never read this tab yet
    await get_state(browser, tab)
    for page in ("speed_flight.html", "speed_shadow_frames.html", "speed_login.html"):
        await tab.navigate(pages.url(page))
        assert await _walker_in_new_document(tab.session, tab.main_frame_id), page
        state = await get_state(browser, tab)
        assert "[top of page]" in state.text and state.elements, state.text
    await browser.close_tab(tab.target_id)


async def test_a_cross_site_frame_has_the_walker_before_its_first_look(browser: Browser, pages) -> None:
    # A cross-site frame is a new session at each visit: its world is made and the walker installed as it
    # attaches, not during the first read of the page around it.
    tab = await open_page(browser, pages.url("speed_login.html"))
    await get_state(browser, tab)
    for visit in (1, 2):
        await tab.navigate(pages.url(f"speed_shadow_frames.html?visit={visit}"))
        await tab.track_frames()
        frames = list(tab.frames.values())
        assert len(frames) == 1, frames  # the localhost one (127.0.0.1 is the page's site)
        deadline = time.monotonic() + 10
        while not await _walker_in_new_document(frames[0].session, frames[0].frame_id):
            assert time.monotonic() < deadline, f"visit {visit}: no walker in the cross-site frame"
            await asyncio.sleep(0.05)
        state = await get_state(browser, tab)
        assert state.text.count("Card number") == 2, state.text  # the same-origin frame's and the cross-site one's
    await browser.close_tab(tab.target_id)


@pytest.mark.parametrize("lookup", ["done", "under way"])
async def test_a_cross_site_frames_iframe_is_known_before_the_first_look(browser: Browser, pages, lookup) -> None:
    # The <iframe> of a cross-site frame is looked up in its parent's document as the frame attaches, while the
    # page loads: the first look does not ask for it (three round trips after its walks), and the frame's
    # elements are still placed inside it (a click on one lands there). A lookup still under way when the look
    # starts (its DOM.resolveNode held back here) is awaited, not asked again.
    tab = await open_page(browser, pages.url("speed_login.html"))
    await get_state(browser, tab)
    sent = _Sent(tab, slow_owner=0.3 if lookup == "under way" else 0.0)
    try:
        for visit in (1, 2):
            await tab.navigate(pages.url(f"state_frames.html?visit={visit}"))
            await tab.track_frames()
            frames = list(tab.frames.values())
            assert len(frames) == 1, frames
            deadline = time.monotonic() + 10
            while lookup == "done" and frames[0].frame_id not in getattr(
                    fast._worlds(tab.session).get(tab.main_frame_id), "frame_owners", {}):
                assert time.monotonic() < deadline, f"visit {visit}: the frame's <iframe> was not looked up"
                await asyncio.sleep(0.02)
            asked_before = [m for m, *_ in sent.calls].count("DOM.getFrameOwner")
            assert asked_before == 1, (visit, asked_before)  # as the frame attached
            sent.calls.clear()
            state = await get_state(browser, tab)
            assert [m for m, *_ in sent.calls if m == "DOM.getFrameOwner"] == [], visit
            await actions.click(browser, tab, _named(state, "Pay cross"))
            paid = await frames[0].session.send("Runtime.evaluate", {"expression": "window.paid",
                                                                     "returnByValue": True})
            assert paid["result"].get("value") is True, (visit, state.text)
    finally:
        sent.close()
    await browser.close_tab(tab.target_id)


async def test_later_reads_of_a_page_whose_only_sealed_iframe_is_cross_site_ask_for_no_frame_tree(
        browser: Browser, pages) -> None:
    # The walker cannot enter a cross-site frame's <iframe>; that frame is read through its own target, so
    # the frame tree (which finds other origins' frames in this tab's process) has nothing to add. Asked at
    # every step, it cost ~0.5 ms of a ~3.5 ms later step (bench/bench_state.py --only frames).
    tab = await open_page(browser, pages.url("state_frames.html"))
    await tab.settle()
    state = await get_state(browser, tab)
    sent = _Sent(tab)
    try:
        for step in range(3):
            sent.calls.clear()
            state = await get_state(browser, tab, state)
            assert "Frame same" in state.text and "Frame cross" in state.text, (step, state.text)
            assert "Page.getFrameTree" not in [m for m, *_ in sent.calls], (step, sent.calls)
    finally:
        sent.close()
    cross = next(ref for ref in state.elements.values() if ref.name == "Pay cross")
    await actions.click(browser, tab, cross)
    assert await node_property(cross, "window.paid") is True
    await browser.close_tab(tab.target_id)


async def test_cross_site_frames_inside_a_cross_site_frame_go_with_it(browser: Browser, pages) -> None:
    # Frames of a frame of another site: their elements are placed and clicked inside them, and once the page
    # is left they are gone from the tab too (their detach came on their parent's session, already gone).
    tab = await open_page(browser, pages.url("speed_login.html"))
    for visit in (1, 2):
        await tab.navigate(pages.url(f"state_nested_frames.html?visit={visit}"))
        state = await get_state(browser, tab)
        assert len(tab.frames) == 3, tab.frames
        await actions.click(browser, tab, _named(state, "Pay inb"))
        asked = {"expression": "window.paid === true", "returnByValue": True}
        paid = [await frame.session.send("Runtime.evaluate", asked) for frame in tab.frames.values()]
        assert [p["result"]["value"] for p in paid].count(True) == 1, (visit, state.text)
        await tab.navigate(pages.url("speed_login.html"))
        await tab.track_frames()
        assert tab.frames == {}, (visit, tab.frames)
        assert "Sign in" in (await get_state(browser, tab)).text
    await browser.close_tab(tab.target_id)


async def _warmed_up(session: CDPSession, frame_id: str | None) -> bool:
    created = await session.send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": fast.WORLD_NAME})
    reply = await session.send("Runtime.evaluate", {
        "expression": f"globalThis.{fast._GLOBAL}.warmedUp()", "contextId": created["executionContextId"],
        "returnByValue": True})
    return reply["result"].get("value") is True


@pytest.mark.parametrize(("page", "shown"), [
    ("speed_shadow_frames.html", ["Gift wrap", "Promo code", "Card number"]), ("speed_modal.html", ["Accept all"])])
async def test_a_new_document_warms_its_walker_up_while_idle_and_the_first_look_reads_the_same(
        browser: Browser, pages, page: str, shown: list[str]) -> None:
    # speed_shadow_frames has open and closed shadow roots, a same-origin and a cross-site frame; speed_modal's
    # first look marks elements that only listen for clicks after its walk. A warm-up that kept anything of its
    # walk (the closed root's host asked about, a frame counted, where each element stood) would change it.
    url = pages.url(page)
    tab = await open_page(browser, url)
    cold = await get_state(browser, tab)  # a document made before the walker was installed ahead of time
    assert all(words in cold.text for words in shown), cold.text
    assert not await _warmed_up(tab.session, tab.main_frame_id)
    for visit in (1, 2):
        await tab.navigate(url)
        deadline = time.monotonic() + 10
        while not await _warmed_up(tab.session, tab.main_frame_id):
            assert time.monotonic() < deadline, f"visit {visit}: the walker of the new document never warmed up"
            await asyncio.sleep(0.05)
        await tab.track_frames()
        for frame in tab.frames.values():  # the cross-site frame's walker, installed as its session attached
            while not await _warmed_up(frame.session, frame.frame_id):
                assert time.monotonic() < deadline, f"visit {visit}: the cross-site frame's walker never warmed up"
                await asyncio.sleep(0.05)
        warm = await get_state(browser, tab)
        assert warm.text == cold.text
        later = await get_state(browser, tab, warm)
        assert later.text == cold.text
    await browser.close_tab(tab.target_id)


async def test_an_element_removed_after_the_read_is_reported_gone(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("speed_login.html"))
    state = await get_state(browser, tab)
    await tab.evaluate("document.querySelector('button[type=submit]').remove()")
    with pytest.raises(ActionError, match="no longer on the page"):
        await actions.click(browser, tab, _named(state, "Sign in"))
    assert await tab.evaluate("window.submitted") is None
    await browser.close_tab(tab.target_id)


async def test_a_document_made_without_the_walker_gets_it_at_its_first_look(browser: Browser, pages) -> None:
    # As in a browser that refuses scripts for new documents: the walker is installed when first needed.
    tab = await open_page(browser, pages.url("speed_login.html"))
    await get_state(browser, tab)
    await tab.session.send("Page.removeScriptToEvaluateOnNewDocument",
                           {"identifier": tab.session.kept[fast._PREINSTALLED]})
    await tab.navigate(pages.url("speed_flight.html"))
    assert not await _walker_in_new_document(tab.session, tab.main_frame_id)
    state = await get_state(browser, tab)
    assert "Find flights" in state.text, state.text
    await actions.click(browser, tab, _named(state, "direct"))
    assert await tab.evaluate("document.querySelector('[name=direct]').checked") is True
    await browser.close_tab(tab.target_id)


async def test_listeners_the_page_adds_while_it_loads_are_offered_at_the_first_look(browser: Browser, pages) -> None:
    # The new document's world is made as soon as it is committed, before the page's scripts run: its
    # listeners must still be read when the page is, not then. Each time: a second visit reads the same.
    tab = await open_page(browser, pages.url("speed_login.html"))
    await get_state(browser, tab)  # tabpilot reads this tab from now on
    for visit in (1, 2):
        with _slow_image(0.4) as slow:  # the load handler runs 0.4 s after the document was committed
            await tab.navigate(pages.url(f"state_listeners_during_load.html?visit={visit}&slow={slow}"))
        state = await get_state(browser, tab)
        for box in ("parsed", "ready", "loaded"):
            await actions.click(browser, tab, _named_in_text(state, f"Made clickable {_WHEN[box]}"))
        assert await tab.evaluate("window.clicks") == ["parsed", "ready", "loaded"]
        assert not [ref for ref in state.elements.values() if "Never clickable" in ref.name], state.text
    await browser.close_tab(tab.target_id)


def _slow_image(seconds: float) -> contextlib.AbstractContextManager[str]:
    """The URL of a 1×1 GIF served after `seconds` by a server of its own."""
    gif = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")
    return slow_file(seconds, gif, "image/gif", "pixel.gif")


_WHEN = {"parsed": "while the page was parsed", "ready": "when the DOM was ready", "loaded": "by the load handler"}


def _named_in_text(state: BrowserState, name: str) -> ElementRef:
    found = [ref for ref in state.elements.values() if ref.name == name]
    assert len(found) == 1, (name, state.text)
    return found[0]


async def test_a_listening_box_inside_a_far_part_of_the_page_is_counted_at_the_first_look(browser: Browser,
                                                                                          pages) -> None:
    # The first look walks while the listeners are asked for: a plain box that only listens for clicks, deep in
    # a part of the page the walk reduced to its usable elements, makes that part be walked again.
    tab = await open_page(browser, pages.url("state_far_listener.html"), height=700)
    first = await get_state(browser, tab)
    assert first.elements_below == 1, first.text
    await tab.evaluate("document.getElementById('inner-listener').scrollIntoView()")
    second = await get_state(browser, tab, first)
    listener = _named_in_text(second, "Listens, far below, inside a plain box")
    assert not listener.is_new, second.text
    await actions.click(browser, tab, listener)
    assert await tab.evaluate("window.clicked") is True
    await browser.close_tab(tab.target_id)


class _Sent:
    """The commands a read sends over the tab's connection: (method, params, sent, answered). `slow_owner`:
    seconds each lookup of a frame's <iframe> waits before its DOM.resolveNode (the one with no object group);
    `slow_ahead`: and each object of an element marked ahead of the first look before it is asked for."""

    def __init__(self, tab, *, slow_owner: float = 0.0, slow_ahead: float = 0.0) -> None:
        self.calls: list[tuple[str, dict, float, float]] = []
        self.asked: list[tuple[str, dict]] = []  # as they are sent, before any answer
        connection = tab.session.connection
        self._send = send = connection.send

        async def sending(method: str, params: dict | None = None, *args, **kwargs):
            sent = time.perf_counter()
            self.asked.append((method, params or {}))
            if slow_owner and method == "DOM.resolveNode" and "objectGroup" not in (params or {}):
                await asyncio.sleep(slow_owner)
            if slow_ahead and method == "DOM.resolveNode" and (params or {}).get("objectGroup") == fast.AHEAD:
                await asyncio.sleep(slow_ahead)
            try:
                return await send(method, params, *args, **kwargs)
            finally:
                self.calls.append((method, params or {}, sent, time.perf_counter()))

        connection.send = sending
        self._connection = connection

    def close(self) -> None:
        del self._connection.send  # the class's method again


async def _marked_ahead(tab) -> None:
    """Wait until what listened for clicks when the tab's document was parsed is marked (no read waits then)."""
    async def marked() -> bool:
        world = fast._worlds(tab.session).get(tab.main_frame_id)
        return world is not None and world.marked_ahead

    await wait_until(marked, timeout=10)


async def test_what_listens_once_the_page_is_parsed_is_marked_before_the_first_look(browser: Browser, pages) -> None:
    # While the page goes on loading, what listens for clicks is found and marked: the first look walks once, as a
    # later step does. Boxes made clickable while the page was parsed and when the DOM was ready are marked
    # ahead; the one its load handler makes clickable, 0.4 s later, is the only one the first look resolves.
    tab = await open_page(browser, pages.url("speed_login.html"))
    await get_state(browser, tab)  # tabpilot reads this tab from now on
    sent = _Sent(tab)
    try:
        for visit in (1, 2):
            await tab.navigate(pages.url(f"speed_modal.html?visit={visit}"))
            await _marked_ahead(tab)
            sent.calls.clear()
            state = await get_state(browser, tab)
            assert _asked_after_the_first_answer(sent.calls) == [], sent.calls
            await actions.click(browser, tab, _named(state, "Accept all"))
            assert await tab.evaluate("window.accepted") == "all"

            with _slow_image(0.4) as slow:
                await tab.navigate(pages.url(f"state_listeners_during_load.html?visit={visit}&slow={slow}"))
            await _marked_ahead(tab)
            sent.calls.clear()
            state = await get_state(browser, tab)
            resolved = [p for m, p, *_ in sent.calls if m == "DOM.resolveNode" and p.get("objectGroup")]
            assert len(resolved) <= 1, sent.calls  # none if the page had loaded when it was parsed, to Python
            for box in ("parsed", "ready", "loaded"):
                await actions.click(browser, tab, _named_in_text(state, f"Made clickable {_WHEN[box]}"))
            assert await tab.evaluate("window.clicks") == ["parsed", "ready", "loaded"]
    finally:
        sent.close()
    await browser.close_tab(tab.target_id)


async def test_a_first_look_that_begins_while_listeners_are_marked_ahead_marks_them_in_its_walk(
        browser: Browser, pages) -> None:
    # The page was parsed and what listens for clicks is being resolved when the first look begins (a read right
    # after a small page's load): the first look's walk marks them, rather than waiting for them to be marked
    # first (a round trip more, the last one of the first look). Twice: the second visit's world is new too.
    tab = await open_page(browser, pages.url("speed_login.html"))
    await get_state(browser, tab)  # tabpilot reads this tab from now on
    sent = _Sent(tab, slow_ahead=0.3)
    try:
        for visit in (1, 2):
            sent.calls.clear()
            sent.asked.clear()
            await tab.navigate(pages.url(f"speed_modal.html?visit={visit}"))
            await wait_until(lambda: _asked(sent, "DOM.resolveNode", fast.AHEAD), timeout=10)
            state = await get_state(browser, tab)
            calls = [p.get("functionDeclaration", "") for m, p, *_ in sent.calls if m == "Runtime.callFunctionOn"]
            assert not [c for c in calls if "markClickable(...e)" in c or "markAfterWalk" in c], calls
            walks = [p for m, p, *_ in sent.calls if m == "Runtime.callFunctionOn"
                     and "this.walk()" in p.get("functionDeclaration", "")]
            assert len(walks) == 1 and walks[0]["arguments"][0] == {"value": 2}, walks  # the two buttons, marked
            await wait_until(lambda: _asked(sent, "Runtime.releaseObjectGroup", fast.AHEAD), timeout=10)
            await actions.click(browser, tab, _named(state, "Accept all"))
            assert await tab.evaluate("window.accepted") == "all"
    finally:
        sent.close()
    await browser.close_tab(tab.target_id)


async def _asked(sent: _Sent, method: str, group: str) -> bool:
    """Whether `method` was sent for objects of `group`."""
    return any(m == method and p.get("objectGroup") == group for m, p in sent.asked)


async def test_a_first_look_asks_everything_at_once_unless_something_new_listens(browser: Browser, pages,
                                                                                monkeypatch) -> None:
    # A first look that comes before the page was parsed (nothing marked ahead) finds the listeners itself.
    monkeypatch.setattr(fast, "_mark_ahead", _nothing)
    tab = await open_page(browser, pages.url("speed_login.html"))
    await get_state(browser, tab)  # tabpilot reads this tab from now on
    sent = _Sent(tab)
    try:
        # Nothing listens for clicks: every command of the first look goes out before the first answer.
        await tab.navigate(pages.url("speed_login.html"))
        sent.calls.clear()
        state = await get_state(browser, tab)
        assert "Sign in" in state.text, state.text
        assert _asked_after_the_first_answer(sent.calls) == []
        # Two buttons listen, and a drawn empty box (the backdrop) might host a closed shadow root: the buttons'
        # objects are asked for, then marked without walking again; the box needs no question of its own.
        await tab.navigate(pages.url("speed_modal.html"))
        sent.calls.clear()
        state = await get_state(browser, tab)
        assert "Accept all" in state.text, state.text
        first_answer = _first_page_answer(sent.calls)
        later = [(m, p) for m, p, at, _ in sent.calls if at > first_answer and not m.startswith("Runtime.release")]
        assert [m for m, _ in later] == ["DOM.resolveNode", "DOM.resolveNode", "Runtime.callFunctionOn"], later
        assert "markAfterWalk" in later[-1][1]["functionDeclaration"]
        assert "DOM.describeNode" not in [m for m, *_ in sent.calls]
    finally:
        sent.close()
    await browser.close_tab(tab.target_id)



async def _nothing(*args: object) -> None:
    return None


async def test_where_a_first_look_walked_twice_the_next_ones_walk_once_the_listeners_are_known(
        browser: Browser, pages, monkeypatch) -> None:
    # 2,000 rows listen for clicks: marked after a walk, they change what it read, and walking again costs
    # more than waiting for them. The first visit learns it; the next first look walks once, with them marked,
    # until a page with few elements listening (no longer worth the wait). For first looks that come before the
    # page was parsed (nothing marked ahead).
    monkeypatch.setattr(fast, "_mark_ahead", _nothing)
    tab = await open_page(browser, pages.url("state_listeners.html"))
    first = await get_state(browser, tab)
    sent = _Sent(tab)
    try:
        for page, walk_waits in (("state_listeners.html", True), ("speed_login.html", True),
                                 ("speed_modal.html", False)):
            await tab.navigate(pages.url(page))
            sent.calls.clear()
            state = await get_state(browser, tab)
            listeners = next(answered for method, _, _, answered in sent.calls
                             if method == "DOMDebugger.getEventListeners")
            walks = [at for method, params, at, _ in sent.calls if method == "Runtime.callFunctionOn"
                     and "this.walk()" in params.get("functionDeclaration", "")]
            assert (walks[0] > listeners) is walk_waits, (page, sent.calls)
            if page == "state_listeners.html":
                assert len(walks) == 1, sent.calls
                assert state.text == first.text
                assert state.text.count("]<div>") > 10, state.text  # the rows, offered for their listeners
    finally:
        sent.close()
    await browser.close_tab(tab.target_id)



async def test_a_read_sends_the_page_its_commands_and_the_tab_list_in_one_write(browser: Browser, pages) -> None:
    # The tab list is not on the way to the answer: sent on its own before the page's commands, it had the
    # browser woken for it alone, and under load the page's commands left milliseconds later.
    tab = await open_page(browser, pages.url("speed_login.html"))
    await get_state(browser, tab)
    transport = tab.session.connection._transport
    writes: list[list[str]] = []
    send_burst = transport.send_burst

    async def writing(messages: list[dict]) -> None:
        writes.append([message["method"] for message in messages])
        await send_burst(messages)

    transport.send_burst = writing
    try:
        for navigate in (True, False):  # a first look, then a later step
            if navigate:
                await tab.navigate(pages.url("speed_login.html"))
                await _marked_ahead(tab)
            writes.clear()
            await get_state(browser, tab)
            assert len(writes) == 1 and writes[0][0] == "DOMDebugger.getEventListeners", writes
            assert writes[0][-1] == "Target.getTargets", writes
    finally:
        del transport.send_burst  # the class's method again
    await browser.close_tab(tab.target_id)


def _asked_after_the_first_answer(calls: list[tuple[str, dict, float, float]]) -> list[str]:
    """What a read asked once the page had first answered (letting go of handles aside): nothing, where it asks
    everything at once."""
    first_answer = _first_page_answer(calls)
    return [m for m, _, at, _ in calls if at > first_answer and not m.startswith("Runtime.release")]


def _first_page_answer(calls: list[tuple[str, dict, float, float]]) -> float:
    """When the first answer about the page came (the tab list, asked alongside, is not about the page)."""
    return min(answered for method, _, _, answered in calls if not method.startswith("Target."))


async def test_a_world_made_for_a_read_that_was_cancelled_fails_quietly(browser: Browser, pages) -> None:
    # A read cancelled while tabpilot's world is made (Ctrl-C as the browser closes): the world's making goes
    # on, fails with the tab, and nobody is left to see it; asyncio must not report it as never retrieved.
    import gc

    loop = asyncio.get_running_loop()
    reported: list[dict] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        tab = await open_page(browser, pages.url("speed_login.html"))
        frame_id = tab.main_frame_id
        session = tab.session
        reading = asyncio.ensure_future(fast.world_of(session, frame_id))
        await asyncio.sleep(0)  # the making has started
        reading.cancel()
        await browser.close_tab(tab.target_id)  # the making fails: its tab is gone
        for _ in range(50):
            if not session.kept.get("fast.making"):
                break
            await asyncio.sleep(0.02)
        del reading, session
        gc.collect()
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(previous)
    assert [c for c in reported if "never retrieved" in str(c.get("message"))] == []
