"""The in-page walker that reads the browser state: it lives in tabpilot's own isolated world, so the page's
scripts can neither see nor break it; it reads what a whole-page DOM snapshot reads; and what it learns
through CDP (click listeners, backendNodeIds) follows the page from step to step."""

from __future__ import annotations

import pytest
from state_support import ids_by_index, index_of, line_of, node_property, open_page

from tabpilot.browser import actions
from tabpilot.browser.browser import Browser
from tabpilot.browser.elements import ElementRef
from tabpilot.browser.state import build_state, get_state, read_page

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]


async def test_a_page_that_breaks_builtins_cannot_break_or_see_the_walker(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_hostile.html"))
    tampered = await tab.evaluate("(() => { try { [1].map(x => x); return 'ok'; } catch (e) { return e.message; } })()")
    assert tampered == "tampered"  # the page really did break its own world
    state = await get_state(browser, tab)
    assert "Everything here is still readable." in state.text, state.text
    ids = set((await ids_by_index(state)).values())
    assert {"q", "go"} <= ids, state.text
    assert 'placeholder="Search the shop"' in line_of(state, await index_of(state, "q"))
    assert "far" not in ids and "1 interactive element" in state.text  # counted below, not listed
    # The points the walker found are real: the page's own hit test (its elementFromPoint is broken, so ask
    # the untouched one of a fresh frame's document) lands on the element.
    go = state.elements[await index_of(state, "go")]
    assert go.point is not None
    x, y = go.point
    hit = await tab.evaluate(
        "(() => { const f = document.createElement('iframe'); document.body.append(f);"
        f" const id = f.contentWindow.Document.prototype.elementFromPoint.call(document, {x}, {y}).id;"
        " f.remove(); return id; })()"
    )
    assert hit == "go"
    # Clicking through the state works on this page too.
    await tab.evaluate("document.getElementById('go').onclick = () => { document.title = 'clicked'; }")
    await actions.click(browser, tab, go)
    assert await tab.evaluate("document.title") == "clicked"
    await browser.close_tab(tab.target_id)


async def test_walker_reads_what_the_whole_page_snapshot_reads(browser: Browser, pages) -> None:
    for page in ("state_controls.html", "state_medium.html", "state_frames.html", "state_modal.html",
                 "state_shadow.html", "state_table.html", "state_dialog.html",
                 # icon-only controls named in each style (sprites, images, generated content too), states,
                 # labels on their boxes' lines (eyes_mail.html
                 # is not here: its text area's scroll extent is known only in the page, and the snapshot
                 # reader does not offer its cursor-only toolbar spans)
                 "eyes_feed.html", "eyes_tree.html", "eyes_labels.html", "eyes_wrappers.html",
                 "eyes_field_labels.html", "eyes_icons.html", "eyes_icon_libraries.html",
                 "eyes_unnamed_fields.html", "eyes_math.html", "eyes_shown_labels.html"):
        tab = await open_page(browser, pages.url(page))
        from_snapshot = build_state(await read_page(browser, tab, snapshot=True))
        from_walker = build_state(await read_page(browser, tab, snapshot=False))
        assert from_walker.text == from_snapshot.text, page
        snapshot_ids = [await _node_id(ref) for ref in from_snapshot.elements.values()]
        walker_ids = [await _node_id(ref) for ref in from_walker.elements.values()]
        assert walker_ids == snapshot_ids, page
        await browser.close_tab(tab.target_id)


async def test_a_listener_added_later_is_offered_at_the_next_step(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_hostile.html"))
    first = await get_state(browser, tab)
    assert await index_of(first, "late") is None
    await tab.evaluate("document.getElementById('late').addEventListener('click', () => {})")
    second = await get_state(browser, tab, first)
    late = await index_of(second, "late")
    assert late is not None and line_of(second, late).startswith(f"*[{late}]<div>Becomes clickable later")
    # A new document (a reload) is read in a new world: indices start over, nothing is "new".
    # (Loaded as navigate waits for it: wait_for_load right after location.reload() could find the old document
    # still complete, and the read then walked it, under load.)
    await tab.navigate(pages.url("state_hostile.html"))
    third = await get_state(browser, tab, second)
    assert "*[" not in third.text and await index_of(third, "q") is not None
    await browser.close_tab(tab.target_id)


async def _node_id(ref: ElementRef) -> object:
    return (await node_property(ref, "this.id || this.localName"), ref.session.session_id)


async def test_the_extensions_overlay_is_not_part_of_the_page_state(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_overlay.html"))
    state = await get_state(browser, tab)
    assert "Pay now" in state.text, state.text
    for text in ("Take over", "Stop", "Agent goal", "What I did", "tabpilot", "region"):
        assert text not in state.text, state.text
    assert set((await ids_by_index(state)).values()) == {"pay"}, state.text
    await browser.close_tab(tab.target_id)
