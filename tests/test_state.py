"""The page as the model sees it, on fixture pages in a real Chromium: what is offered, what is not, and
that every index points at the DOM node it claims to (asked through CDP, in the node's own session)."""

from __future__ import annotations

import itertools
import json
import re

import pytest
from state_support import ids_by_index, index_of, line_of, node_property, open_page

from tabpilot.browser.browser import Browser
from tabpilot.browser.elements import ElementRef
from tabpilot.browser.errors import BrowserError
from tabpilot.browser.state import get_state
from tabpilot.browser.tab import Tab

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module")]

PASSWORD = "Sw0rdf1sh-Zebra-9731"


async def test_native_aria_pointer_listener_and_editable_elements_are_offered(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_controls.html"))
    state = await get_state(browser, tab)
    offered = set((await ids_by_index(state)).values())
    expected = {
        "name", "email", "pw", "country", "bio", "news", "terms", "save", "locked", "help", "ext",
        "aria-button", "aria-check", "tab-a", "tab-b", "menu-item", "opt", "combo", "switch", "slider",
        "pointer-only",  # cursor:pointer only
        "listener-only",  # addEventListener('click') only: no onclick attribute, no pointer cursor
        "editor",  # contenteditable
        "scroller",  # a scrollable container
    }
    assert expected <= offered, f"missing: {expected - offered}\n{state.text}"
    summary = next(ref for ref in state.elements.values() if ref.tag == "summary")
    assert summary.name == "More options"
    aria_button = state.elements[await index_of(state, "aria-button")]
    assert "<div role=button>Archive" in line_of(state, aria_button.index)
    assert line_of(state, await index_of(state, "locked")).endswith("<button disabled>Delete account")
    assert 'role=slider aria-label=Volume value=30' in line_of(state, await index_of(state, "slider"))
    assert "role=switch checked=false>Wi-Fi" in line_of(state, await index_of(state, "switch"))
    await browser.close_tab(tab.target_id)


async def test_hidden_zero_size_and_aria_hidden_elements_are_not_offered(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_controls.html"))
    state = await get_state(browser, tab)
    offered = {str(v) for v in (await ids_by_index(state)).values()}
    assert not {i for i in offered if i.startswith("gone-")}, state.text
    assert "Gone" not in state.text
    # A visible sibling of the hidden ones proves the end of the page was read at all.
    assert "B-22 | 7.00" in state.text
    await browser.close_tab(tab.target_id)


async def test_current_values_selected_option_and_checked_state(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_controls.html"))
    await tab.evaluate(
        "document.getElementById('terms').click(); document.getElementById('bio').value = 'Tea, then coffee.'"
    )
    state = await get_state(browser, tab)
    name = line_of(state, await index_of(state, "name"))
    assert 'value="Ann Example"' in name  # set by script as a property, never as an attribute
    assert 'placeholder="Your name"' in name
    assert "value=Chile" in line_of(state, await index_of(state, "country"))
    assert "options=Austria|Belgium|Chile" in line_of(state, await index_of(state, "country"))
    assert "checked=true" in line_of(state, await index_of(state, "news"))
    assert "checked=true" in line_of(state, await index_of(state, "terms"))  # changed after load
    assert 'value="Tea, then coffee."' in line_of(state, await index_of(state, "bio"))
    assert "checked=true" in line_of(state, await index_of(state, "aria-check"))
    assert "selected=true" in line_of(state, await index_of(state, "tab-a"))
    await browser.close_tab(tab.target_id)


async def test_password_value_never_appears_anywhere(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_controls.html"))
    # As the user would type it (the property), and as a careless page might mirror it (the attribute).
    await tab.evaluate(
        f"const pw = document.getElementById('pw'); pw.value = {json.dumps(PASSWORD)};"
        f"pw.setAttribute('value', {json.dumps(PASSWORD)}); pw.setAttribute('title', 'Your password');"
        f"const shown = document.createElement('input'); shown.id = 'pw-shown'; shown.type = 'text';"
        f"shown.autocomplete = 'current-password'; shown.value = {json.dumps(PASSWORD)};"
        "document.getElementById('form').append(shown);"
    )
    state = await get_state(browser, tab)
    assert PASSWORD not in state.text
    assert PASSWORD not in json.dumps(state.to_json())
    for ref in state.elements.values():
        assert PASSWORD not in repr(ref) and PASSWORD not in ref.name
        assert all(PASSWORD not in v for v in ref.attributes.values())
    pw_line = line_of(state, await index_of(state, "pw"))
    assert "type=password" in pw_line and "filled" in pw_line  # the model may know it is filled, not with what
    shown_line = line_of(state, await index_of(state, "pw-shown"))  # a "show password" field keeps it hidden too
    assert "filled" in shown_line
    await browser.close_tab(tab.target_id)


@pytest.mark.parametrize("snapshot", [False, True], ids=["walker", "snapshots"])
async def test_a_secret_shown_elsewhere_on_the_page_is_hidden_there_too(browser: Browser, pages, snapshot) -> None:
    # The page echoes its password field (title, a strength meter, another field's value, hint and title, a
    # textarea), masks a PIN field with CSS, and has a card security code: none of those values reaches the
    # model, by either reader (DOM snapshots with the walker's rule for what is secret), and a new password
    # typed in is hidden as well the next time.
    from tabpilot.browser import actions
    from tabpilot.browser.state import build_state, read_page

    tab = await open_page(browser, pages.url("privacy_echo.html"))
    secrets = ["Correct-Horse-42", "Pin-8842-secret"]
    for typed in ("", "Battery-Staple-7"):
        state = build_state(await read_page(browser, tab, snapshot=snapshot))
        if typed:
            password = next(ref for ref in state.elements.values() if ref.attributes.get("name") == "pw")
            await actions.input_text(browser, tab, password, typed)
            assert await tab.evaluate("document.getElementById('echo').textContent") == typed
            secrets = [typed, *secrets[1:]]
            state = build_state(await read_page(browser, tab, snapshot=snapshot), state)
        shown = state.text + json.dumps(state.to_json())
        assert [s for s in secrets if s in shown] == [], state.text
        assert "Strength of [password hidden]: weak" in state.text, state.text
        assert "filled" in line_of(state, await index_of(state, "cvc")) and "127\"" not in state.text
        assert "type=password" in line_of(state, await index_of(state, "pin"))  # masked by CSS
        # A value too short to look for elsewhere (the card code 127) leaves the page's text and address whole.
        assert "Total: $127.50 for order 4127" in state.text and state.url == pages.url("privacy_echo.html")
    await browser.close_tab(tab.target_id)


async def test_modal_hides_the_page_behind_it(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_modal.html"))
    state = await get_state(browser, tab)
    offered = set((await ids_by_index(state)).values())
    assert offered == {"modal-accept", "modal-reject"}, state.text
    assert "Accept cookies?" in state.text
    # Close the modal the way a page does: the page's own controls come back, and a pointer-events:none
    # banner over one of them does not count as covering it.
    await tab.evaluate("document.getElementById('backdrop').remove(); document.getElementById('dialog').remove()")
    after = await get_state(browser, tab, state)
    offered_after = set((await ids_by_index(after)).values())
    assert offered_after == {"page-buy", "page-link", "page-search", "under-banner"}, after.text
    assert "*[" not in after.text  # they were on the page all along: not new, only uncovered
    await browser.close_tab(tab.target_id)


async def test_open_and_closed_shadow_roots(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_shadow.html"))
    state = await get_state(browser, tab)
    assert "Open shadow text" in state.text and "Closed shadow text" in state.text
    ids = set((await ids_by_index(state)).values())
    assert {"open-btn", "closed-input", "closed-listener"} <= ids, state.text
    closed_input = state.elements[await index_of(state, "closed-input")]
    assert closed_input.attributes["placeholder"] == "Closed shadow input"
    # The closed root is invisible to page scripts; the ref still reaches the node inside it.
    assert await tab.evaluate("document.querySelector('closed-widget').shadowRoot") is None
    assert await node_property(closed_input, "this.getRootNode().mode") == "closed"
    await browser.close_tab(tab.target_id)


async def _first_look_offers(browser: Browser, url: str, element_id: str) -> tuple[Tab, str, ElementRef]:
    """The tab opened on `url`, its first state's text, and the element that state offers as `element_id`."""
    tab = await open_page(browser, url)
    state = await get_state(browser, tab)
    assert element_id in set((await ids_by_index(state)).values()), state.text
    return tab, state.text, state.elements[await index_of(state, element_id)]


async def test_a_closed_shadow_root_among_many_empty_boxes_is_read_at_the_first_look(browser: Browser, pages) -> None:
    # Forty drawn boxes without content, one of them hosting a closed root: more than are asked for one by one.
    tab, _, boxed = await _first_look_offers(browser, pages.url("state_icon_boxes.html"), "boxed-btn")
    assert await node_property(boxed, "this.getRootNode().mode") == "closed"
    await browser.close_tab(tab.target_id)


async def test_a_closed_shadow_root_inside_a_closed_one_is_read_at_the_first_look(browser: Browser, pages) -> None:
    # The inner host is met only by the walk after the outer root was opened: it is asked about in the same read.
    tab, text, nested = await _first_look_offers(browser, pages.url("state_shadow.html"), "nested-btn")
    assert "Outer closed text" in text, text
    assert await node_property(nested, "this.getRootNode().host.localName") == "closed-inner"
    await browser.close_tab(tab.target_id)


async def test_same_site_and_cross_site_iframes(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_frames.html"))
    state = await get_state(browser, tab)
    assert "Frame same" in state.text and "Frame cross" in state.text, state.text
    by_name = {ref.name: ref for ref in state.elements.values()}
    same_pay, cross_pay = by_name["Pay same"], by_name["Pay cross"]
    cross_card = by_name["Card number cross"]
    # A same-site frame lives in the tab's process and session; the other site has its own target.
    assert same_pay.session is tab.session and same_pay.frame_owner is None
    assert cross_pay.session is not tab.session
    assert cross_pay.session.session_id in {f.session.session_id for f in tab.frames.values()}
    assert cross_pay.frame_owner is not None and cross_pay.frame_owner.session is tab.session
    assert await node_property(cross_pay.frame_owner) == "cross"
    assert await node_property(cross_card, "location.host") == pages.url("", host="localhost").split("/")[2]
    assert await node_property(cross_card) == "card"
    # Document order: top button, same frame, cross frame.
    order = [ref.name for ref in state.elements.values()]
    assert order.index("Top button") < order.index("Pay same") < order.index("Card number cross")
    # Visible boxes are in the tab's viewport: the cross frame's content sits below the same frame's.
    assert cross_card.bounds is not None and same_pay.bounds is not None
    assert cross_card.bounds[1] > same_pay.bounds[1] + 100
    # The reachable point of an element inside the cross-site frame is, in the tab's viewport, over that
    # frame; and inside the frame's own viewport it hits the element itself.
    assert cross_pay.point is not None
    x, y = cross_pay.point
    assert await tab.evaluate(f"document.elementFromPoint({x}, {y}).id") == "cross"
    frame_rect = await tab.evaluate(
        "(() => { const r = document.getElementById('cross').getBoundingClientRect();"
        " const s = getComputedStyle(document.getElementById('cross'));"
        " return [r.left + parseFloat(s.borderLeftWidth), r.top + parseFloat(s.borderTopWidth)]; })()"
    )
    inner_x, inner_y = x - frame_rect[0], y - frame_rect[1]
    assert await node_property(
        cross_pay, f"document.elementFromPoint({inner_x}, {inner_y}) === this"
    ), (x, y, frame_rect)
    await browser.close_tab(tab.target_id)


async def test_new_elements_marked_and_indices_stable(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_controls.html"))
    first = await get_state(browser, tab)
    assert "*[" not in first.text  # nothing is "new" without a previous state
    before = await ids_by_index(first)
    await tab.evaluate(
        "const b = document.createElement('button'); b.id = 'added'; b.textContent = 'Added later';"
        "document.querySelector('h1').after(b);"
        "document.getElementById('help').remove();"
    )
    second = await get_state(browser, tab, first)
    after = await ids_by_index(second)
    added = await index_of(second, "added")
    assert added is not None and line_of(second, added).startswith(f"*[{added}]<button>Added later")
    assert second.elements[added].is_new
    assert sum(ref.is_new for ref in second.elements.values()) == 1
    # Every element that stayed keeps its index, although one was inserted above them all.
    for index, element_id in before.items():
        if element_id != "help":
            assert after.get(index) == element_id
    assert "help" not in after.values()
    third = await get_state(browser, tab, second)
    assert "*[" not in third.text and await index_of(third, "added") == added
    await browser.close_tab(tab.target_id)


async def test_scrollable_container_says_how_far_it_scrolls(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_controls.html"))
    state = await get_state(browser, tab)
    scroller = state.elements[await index_of(state, "scroller")]
    assert scroller.scrollable
    # 10 rows of 40 px in a 120 px box with a 1 px border, scrolled by 40 px: 40 above, 240 below (± border).
    match = re.search(r'scrollable="(\d+)px above, (\d+)px below"', line_of(state, scroller.index))
    assert match, line_of(state, scroller.index)
    assert abs(int(match[1]) - 40) <= 2 and abs(int(match[2]) - 240) <= 2
    lines = state.text.splitlines()
    at = lines.index(line_of(state, scroller.index))
    # Its visible rows are indented under it; the row scrolled out of view is not shown.
    assert lines[at + 1] == "\tRow two"
    assert "Row one" not in state.text and "Row ten" not in state.text
    await browser.close_tab(tab.target_id)


async def test_text_is_readable_and_compact(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_controls.html"))
    state = await get_state(browser, tab)
    lines = state.text.splitlines()
    assert "# Account settings" in lines and "## Orders" in lines
    assert "Order | Total" in lines and "A-17 | 12.50" in lines
    assert "Change how the shop knows you. Fields marked * are required." in lines
    assert not any(line.strip() == "" for line in lines)
    assert not any(a == b for a, b in itertools.pairwise(lines))  # no repeated lines
    assert "class=" not in state.text and "id=" not in state.text and "style" not in state.text
    assert lines[0].startswith("Current tab [") and "State: controls" in lines[0] and pages.url() in lines[0]
    await browser.close_tab(tab.target_id)


async def test_large_table_is_viewport_first(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_table.html"))
    node_count = await tab.evaluate("document.getElementsByTagName('*').length")
    assert node_count > 10_000  # 2000 rows: about 20k nodes with the text nodes
    state = await get_state(browser, tab)
    assert "SKU-00001 | Nut 1" in state.text and "SKU-02000" not in state.text
    assert state.pixels_below > 10_000 and state.pixels_above == 0
    visible = len(state.elements)
    assert 5 < visible < 100
    assert state.elements_below > 1800  # the rows below are counted, not listed
    assert f"{state.pixels_below}px below: {state.elements_below} interactive elements" in state.text
    assert len(state.text) < 6000  # a 20k-node page still costs the model only a screenful
    await tab.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    bottom = await get_state(browser, tab, state)
    assert "SKU-02000" in bottom.text and "End of inventory." in bottom.text
    assert "SKU-00001 " not in bottom.text
    assert bottom.elements_above > 1800 and bottom.pixels_above > 10_000
    order_2000 = next(ref for ref in bottom.elements.values() if ref.name == "Order 2000")
    assert await node_property(order_2000, "this.dataset.row") == "2000"
    await browser.close_tab(tab.target_id)


async def test_tabs_and_json_shape(browser: Browser, pages) -> None:
    other = await open_page(browser, pages.url("basic.html"))
    tab = await open_page(browser, pages.url("state_shadow.html"))
    state = await get_state(browser, tab)
    assert [t.active for t in state.tabs].count(True) == 1
    numbers = {t.url: t.number for t in state.tabs}
    assert numbers[pages.url("basic.html")] == browser.tab_number(other.target_id)
    assert f"[{browser.tab_number(other.target_id)}] Basic page" in state.text
    data = json.loads(json.dumps(state.to_json()))
    assert data["url"] == pages.url("state_shadow.html") and data["title"] == "State: shadow DOM"
    assert data["text"] == state.text
    names = {e["name"]: e for e in data["elements"]}
    assert names["Open shadow button"]["tag"] == "button"
    assert {"index", "tag", "name", "attributes"} <= set(names["Open shadow button"])
    await browser.close_tab(tab.target_id)
    await browser.close_tab(other.target_id)


async def test_offered_elements_are_what_a_click_would_hit_under_a_sticky_header(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_medium.html"))
    # Scroll the second story's title link to 10 px below the top: under the sticky header.
    await tab.evaluate(
        "const link = document.querySelectorAll('.card h3 a')[1];"
        "window.scrollTo(0, link.getBoundingClientRect().top + window.scrollY - 10)"
    )
    state = await get_state(browser, tab)
    assert state.elements, state.text
    for ref in state.elements.values():
        assert ref.bounds is not None and ref.point is not None
        x, y = ref.point
        bx, by, bw, bh = ref.bounds
        assert bx <= x <= bx + bw and by <= y <= by + bh
        hit = await node_property(
            ref, f"(() => {{ const e = document.elementFromPoint({x}, {y});"
                 " return e === this || this.contains(e); })()"
        )
        assert hit, f"[{ref.index}] {ref.name!r} is not on top at its reachable point"
    # The story links scrolled under the sticky header are in the viewport but cannot be clicked.
    hidden_hrefs = await tab.evaluate(
        "(() => { const bottom = document.querySelector('header').getBoundingClientRect().bottom;"
        " return [...document.querySelectorAll('.card h3 a')].filter(a => { const r = a.getBoundingClientRect();"
        " return r.top >= 0 && r.bottom <= bottom; }).map(a => a.getAttribute('href')); })()"
    )
    assert hidden_hrefs, "the fixture should put a story link under the header at this scroll position"
    offered_hrefs = {await node_property(ref, "this.getAttribute('href')") for ref in state.elements.values()}
    assert not offered_hrefs & set(hidden_hrefs)
    assert "[1]<a>World</a>" in state.text  # the header's own links are offered
    await browser.close_tab(tab.target_id)


async def test_transform_rewrites_the_page_part_only(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_controls.html"))
    state = await get_state(browser, tab, transform=lambda body: body.replace("Account settings", "[redacted]"))
    assert "# [redacted]" in state.text and "Account settings" not in state.text
    assert state.text.startswith("Current tab [") and "State: controls" in state.text.splitlines()[0]
    await browser.close_tab(tab.target_id)


async def test_closed_tab_is_a_clear_error(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("basic.html"))
    await browser.close_tab(tab.target_id)
    with pytest.raises(BrowserError, match="closed"):
        await get_state(browser, tab)


async def test_native_modal_dialog_and_a_label_standing_in_for_an_invisible_checkbox(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_dialog.html"))
    state = await get_state(browser, tab)
    assert set((await ids_by_index(state)).values()) == {"dialog-discard", "dialog-keep"}, state.text
    assert "Discard your changes?" in state.text
    await tab.evaluate("document.getElementById('confirm').close()")
    after = await get_state(browser, tab, state)
    ids = await ids_by_index(after)
    assert set(ids.values()) == {"page-edit", "custom-check"}, after.text
    label = next(i for i, v in ids.items() if v == "custom-check")
    assert line_of(after, label) == f"[{label}]<label checked=false>Remember me"
    await tab.evaluate("document.getElementById('hidden-box').checked = true")
    assert "checked=true" in line_of(await get_state(browser, tab, after), label)
    await browser.close_tab(tab.target_id)


async def test_frames_behind_an_overlay_and_scrolled_frames(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_frames.html"))
    # Scroll inside the same-site frame: its elements' points must follow.
    await tab.evaluate(
        "const inner = document.getElementById('same').contentDocument;"
        "inner.body.style.height = '2000px'; inner.defaultView.scrollTo(0, 30);"
    )
    state = await get_state(browser, tab)
    same_pay = next(ref for ref in state.elements.values() if ref.name == "Pay same")
    assert same_pay.point is not None
    x, y = same_pay.point
    hit = await tab.evaluate(
        f"(() => {{ const frame = document.getElementById('same'); const r = frame.getBoundingClientRect();"
        f" const s = getComputedStyle(frame);"
        f" const e = frame.contentDocument.elementFromPoint({x} - r.left - parseFloat(s.borderLeftWidth),"
        f" {y} - r.top - parseFloat(s.borderTopWidth)); return e && e.id; }})()"
    )
    assert hit == "pay"
    # A full-page overlay covers the top page and both frames: nothing is offered.
    await tab.evaluate(
        "const o = document.createElement('div'); o.style.cssText = 'position:fixed;inset:0;background:#0003';"
        "document.body.append(o);"
    )
    covered = await get_state(browser, tab, state)
    assert covered.elements == {}, covered.text
    assert "Frame cross" in covered.text  # still readable, not clickable
    await browser.close_tab(tab.target_id)


async def test_rich_text_editor_frame_with_an_editable_body(browser: Browser, pages) -> None:
    tab = await open_page(browser, pages.url("state_editor.html"))
    state = await get_state(browser, tab)
    editors = [ref for ref in state.elements.values() if ref.tag == "body"]
    assert len(editors) == 1 and len(state.elements) == 1, state.text  # its paragraphs are text, not targets
    assert await node_property(editors[0], "this.isContentEditable") is True
    assert "Draft text" in state.text
    await browser.close_tab(tab.target_id)
